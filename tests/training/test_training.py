"""Training: configs, masked policy, team-stream GAE, smoke run, checkpoints (save, reload,
exact resume, corrupt and mismatched files), checkpoint as a Policy, SB3 smoke runs, the
Gymnasium env and ``spades play`` with scripted input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from helpers.training import FAST, ROOT, SMOKE, one_thread  # noqa: E402, F401
from spades_env.core.observation import OBS_SIZE, OBS_VERSION  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from training.checkpoint import CheckpointError, load_checkpoint, load_meta  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.network import masked_entropy, masked_logits  # noqa: E402
from training.ppo import Trainer, load_train_config, train  # noqa: E402


# ---- configs -------------------------------------------------------------------------------
def test_smoke_and_shipped_configs_load():
    cfg = load_train_config(SMOKE)
    assert cfg.num_envs == 16 and cfg.hidden == (32, 32) and cfg.scripted_bots == ("greedy", "heuristic")
    shipped = load_train_config(ROOT / "configs" / "train" / "shipped.yaml")
    assert shipped.total_decisions > 10**7


def test_config_errors_name_key_and_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_envs: 4\nlearnin_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*unknown key 'learnin_rate'"):
        load_train_config(bad)
    bad.write_text("num_envs: four\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'num_envs' must be an integer"):
        load_train_config(bad)
    bad.write_text("gamma: 1.5\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'gamma'.*\[0, 1\]"):
        load_train_config(bad)
    bad.write_text("scripted_bots: [heuristc]\n")
    with pytest.raises(ConfigError, match=r"'scripted_bots'.*heuristc"):
        load_train_config(bad)
    with pytest.raises(ConfigError, match=r"smoke\.yaml with overrides.*'hidden' must be a list"):
        load_train_config(SMOKE, ["hidden=64"])
    with pytest.raises(ConfigError, match="not key=value"):
        load_train_config(SMOKE, ["hidden"])
    with pytest.raises(ConfigError, match="no such config file"):
        load_train_config(tmp_path / "missing.yaml")
    assert load_train_config(SMOKE, ["learning_rate=1e-4", "hidden=[8]"]).hidden == (8,)


# ---- masking ---------------------------------------------------------------------------------
def test_masked_entropy_ignores_illegal_actions():
    mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.int8)
    a = torch.tensor([[0.0, 0.0, 5.0, -3.0], [2.0, 9.0, 9.0, 9.0]])
    b = torch.tensor([[0.0, 0.0, -7.0, 40.0], [2.0, -1.0, 0.0, 3.0]])
    ea, eb = masked_entropy(a, mask), masked_entropy(b, mask)
    # two equally likely legal actions: ln 2; a single legal action: 0, whatever the illegal logits
    assert torch.allclose(ea, torch.tensor([np.log(2.0), 0.0], dtype=torch.float32), atol=1e-6)
    assert torch.allclose(ea, eb)
    p = torch.softmax(masked_logits(a, mask), -1)
    assert p[0, 2] == 0 and p[0, 3] == 0 and p[1, 0] == 1


# ---- GAE along (game, team) streams ---------------------------------------------------------
def test_team_stream_advantages_by_hand():
    cfg = load_train_config(
        SMOKE, [*FAST, "num_envs=1", "num_steps=3", "gamma=0.5", "gae_lambda=1.0", "num_minibatches=1"]
    )
    tr = Trainer(cfg, "/tmp/unused")
    # steps: seat 0 (team 0), seat 1 (team 1), seat 2 (team 0); critic heads = (acting team, other)
    tr.buf_seat[:, 0] = [0, 1, 2]
    tr.buf_value[:, 0] = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    tr.buf_reward[:, 0] = [[0.0, 0.0], [1.0, -1.0], [0.0, 0.0]]
    tr.buf_done[:, 0] = [False, False, False]
    tr.boot_value = np.array([[8.0, 10.0]], dtype=np.float32)  # seat 1 (team 1) to act next
    tr.boot_seat = np.array([1])
    adv, ret = tr.advantages()
    # team 0 values by step: 1, 4, 5, boot 10; rewards 0, 1, 0; gamma 0.5, lambda 1:
    # R2 = 0 + .5*10 = 5; R1 = 1 + .5*5 = 3.5; R0 = 0 + .5*3.5 = 1.75
    # team 1 values by step: 2, 3, 6, boot 8; rewards 0, -1, 0: R2 = 4, R1 = 1, R0 = .5
    assert np.allclose(ret[:, 0], [[1.75, 0.5], [1.0, 3.5], [5.0, 4.0]])
    assert np.allclose(adv[:, 0], [1.75 - 1.0, 1.0 - 3.0, 5.0 - 5.0])
    tr.buf_done[1, 0] = True  # the game ends after step 1: no bootstrapping across it
    adv, ret = tr.advantages()
    assert np.allclose(ret[1, 0], [-1.0, 1.0]) and np.isclose(ret[0, 0, 0], 0.5 * 1.0)


def test_hand_rewards_are_the_engines_plus_the_win_bonus():
    cfg = load_train_config(SMOKE, [*FAST, "num_envs=8", "num_steps=64", "max_hands=2"])
    tr = Trainer(cfg, "/tmp/unused")
    paid = []  # (the engine's team rewards, what the buffer recorded) at every step that paid one
    step = tr.engine.step

    def spy(actions, active=None):
        res = step(actions, active)
        paid.append(res.reward[:, :2].copy())
        return res

    tr.engine.step = spy
    tr.collect()
    win = tr.buf_reward - np.stack(paid)  # the buffer minus the engine own-score rewards
    engine = np.stack(paid)
    assert np.abs(engine).sum() > 0 and (engine.sum(-1) != 0).any()  # hands are not zero-sum
    # the buffer is the engine's reward plus the zero-sum win bonus (+-1 at a game's end)
    assert np.allclose(win.sum(-1), 0.0, atol=1e-6) and set(np.round(np.abs(win), 4).ravel()) <= {0.0, 1.0}


# ---- smoke run, save, reload, evaluate --------------------------------------------------------
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("smoke")
    cfg = load_train_config(SMOKE, ["progress=false"])
    tr = train(cfg, run)
    return run, tr


def test_smoke_run_saves_reloads_and_evaluates(smoke_run):
    run, tr = smoke_run
    assert tr.update == 4 and tr.decisions == 2048
    final = run / "final"
    model, meta = load_checkpoint(final)
    for k, v in tr.model.state_dict().items():
        assert torch.equal(model.state_dict()[k], v), k
    assert meta["config"]["num_envs"] == 16 and meta["rules"]["max_hands"] == 4
    assert meta["obs_version"] == OBS_VERSION and len(meta["actions"]) == 70 and meta["actions"][51] == "AS"
    ev = meta["evaluation"][-1]
    assert ev["random"]["games"] == 4 and 0.0 <= ev["random"]["game_win"] <= 1.0
    rows = [json.loads(x) for x in (run / "history.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == [1, 2, 3, 4]
    assert all(np.isfinite(r["loss/v_loss"]) and r["train/entropy"] > 0 for r in rows)
    assert (run / "learning_curve.png").stat().st_size > 1000
    assert list((run / "tb").iterdir())
    # keep_checkpoints=2: ckpt_000002 and ckpt_000004 plus latest
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["ckpt_000002", "ckpt_000004", "latest"]


def test_checkpoint_is_a_policy_by_path(smoke_run):
    from spades_env.core.game import SpadesGame
    from spades_env.core.observation import OBS_SIZE, encode_observation
    from spades_env.eval import run_duplicate, summarize
    from spades_env.policies.registry import resolve_policy

    run, _ = smoke_run
    rules = load_rules({"max_hands": 2})
    pol = resolve_policy(str(run / "final"), 3, rules)
    game = SpadesGame(rules, seed=5)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    for _ in range(30):
        encode_observation(game.state, game.params, game.current_player, obs)
        game.apply(pol.act(obs, game.legal_mask()))  # raises on an illegal action
    boards = run_duplicate((str(run / "final"), str(run / "final")), ("random", "random"), 2, rules=rules)
    s = summarize(boards, "game")
    assert s["hands"] == 2 * 2 * 2  # 2 boards x 2 seatings x 2 hands


def test_resume_is_exact(tmp_path):
    ov = [*FAST, "total_decisions=2048", "pool_every=1", "checkpoint_every=1"]
    cfg = load_train_config(SMOKE, ov)
    full = train(cfg, tmp_path / "full")
    half = train(cfg, tmp_path / "half", stop_update=2)
    assert half.update == 2
    resumed = train(cfg, tmp_path / "resumed", resume=tmp_path / "half" / "checkpoints" / "ckpt_000002")
    assert resumed.update == 4 and resumed.decisions == full.decisions
    for k, v in full.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[k], v), k
    assert np.array_equal(resumed.engine.states, full.engine.states)
    assert len(resumed.pool) == len(full.pool) == 2
    # the runs did play scripted seats mid-hand, so the restore rebuilt bots by replay
    assert (full.kind == 2).any()


# ---- corrupt and mismatched checkpoints -------------------------------------------------------
@pytest.fixture()
def ckpt_copy(smoke_run, tmp_path):
    import shutil

    dst = tmp_path / "ck"
    shutil.copytree(smoke_run[0] / "final", dst)
    return dst


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="nope.*no such checkpoint"):
        load_checkpoint(tmp_path / "nope")


def test_corrupt_weights(ckpt_copy):
    w = ckpt_copy / "model.safetensors"
    w.write_bytes(w.read_bytes()[:100])
    with pytest.raises(CheckpointError, match=r"model\.safetensors: corrupt safetensors"):
        load_checkpoint(ckpt_copy)


def test_corrupt_meta(ckpt_copy):
    (ckpt_copy / "meta.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"meta\.json: (corrupt|not valid) JSON"):
        load_checkpoint(ckpt_copy)


def test_wrong_observation_version(ckpt_copy):
    meta = json.loads((ckpt_copy / "meta.json").read_text())
    meta["obs_version"] = 99
    (ckpt_copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"meta\.json: observation version 99"):
        load_checkpoint(ckpt_copy / "model.safetensors")


def test_wrong_shapes(ckpt_copy):
    meta = json.loads((ckpt_copy / "meta.json").read_text())
    meta["arch"]["hidden"] = [64, 32]
    (ckpt_copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(
        CheckpointError, match=r"model\.safetensors: weight actor\.0\.weight has shape \(32, " + str(OBS_SIZE) + r"\)"
    ):
        load_checkpoint(ckpt_copy)


def test_init_from_needs_the_configs_shapes(smoke_run, tmp_path):
    cfg = load_train_config(SMOKE, [*FAST, f"init_from={smoke_run[0] / 'final'}", "hidden=[48,64]"])
    with pytest.raises(CheckpointError, match=r"meta\.json: init_from network shapes .* differ from the config's"):
        Trainer(cfg, tmp_path / "plain")


def test_resume_needs_train_state(ckpt_copy):
    (ckpt_copy / "train_state.safetensors").unlink()
    cfg = load_train_config(SMOKE, FAST)
    with pytest.raises(CheckpointError, match="cannot resume"):
        Trainer(cfg, "/tmp/unused", resume=ckpt_copy)


def test_loading_never_unpickles(ckpt_copy):
    # a pickle payload renamed to the weights file is rejected, never executed
    import pickle

    marker = ckpt_copy / "pwned"
    payload = pickle.dumps(eval)  # noqa: S301 - any pickle: safetensors must refuse it
    (ckpt_copy / "model.safetensors").write_bytes(payload)
    with pytest.raises(CheckpointError):
        load_checkpoint(ckpt_copy)
    assert not marker.exists()
    assert load_meta(ckpt_copy)["format"].startswith("spades_env.checkpoint/")


# ---- torch stays out of spades_env -----------------------------------------------------------
def test_spades_env_does_not_import_torch():
    # (every module: tests/test_packaging.py; spades_env.envs.vector_adapters builds its SB3 class lazily)
    code = (
        "import sys, spades_env, spades_env.envs.gym_env, spades_env.policies.checkpoint, spades_env.cli.play, "
        "spades_env.eval, spades_env.policies.bots; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# ---- Gymnasium env and SB3 -------------------------------------------------------------------
def test_gym_env_episode():
    import gymnasium

    import spades_env.envs.gym_env  # noqa: F401

    env = gymnasium.make("Spades-v0", rules={"max_hands": 1}, learner_seats=(1, 3), opponents="greedy")
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    total, steps = 0.0, 0
    while True:
        mask = env.unwrapped.action_masks()
        assert mask.any() and np.array_equal(mask, info["action_mask"].astype(bool))
        assert info["seat"] in (1, 3)
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += r
        steps += 1
        if term or trunc:
            break
    # one hand: the learner team's reward is its score change times 0.01
    scores = info["scores"]
    assert np.isclose(total, scores[1] * 0.01)
    assert 15 <= steps <= 40 and trunc and not term


def test_sb3_smoke_runs():
    pytest.importorskip("sb3_contrib")
    from training.sb3_train import evaluate_sb3, train_sb3

    rules = load_rules({"max_hands": 1})
    for kind in ("gym", "vec"):
        model, rate = train_sb3(kind, 128, 2, rules, "random", n_steps=64, batch_size=64, hidden=(16,))
        assert model.num_timesteps >= 128 and rate > 0
        assert 0.0 <= evaluate_sb3(model, kind, 1, rules, "random") <= 1.0


# ---- spades play -----------------------------------------------------------------------------
def test_play_with_scripted_input(monkeypatch, capsys, smoke_run):
    from spades_env.cli import main

    moves = iter(["see", "banana", "bid 3"] + ["#1"] * 200)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(moves))
    ckpt = str(smoke_run[0] / "final")
    rc = main(["play", "--max-hands", "1", "--partner", ckpt, "--opponents", "random+greedy", "--seed", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Legal:  1) Blind Nil  2) See cards" in out
    assert "'banana' is not a legal move here" in out
    assert "You: bid 3" in out and "Hand over:" in out
    assert "Bids:" in out and "Tricks:" in out and "You (S, partner" in out


def test_play_parse_move_and_bad_names(monkeypatch, capsys):
    from spades_env.cli import main
    from spades_env.cli.play import parse_move

    legal_bids = list(range(52, 60))
    assert parse_move("nil", legal_bids) == 52 and parse_move("4", legal_bids) == 56
    assert parse_move("bid 9", legal_bids) is None
    assert parse_move("10h", [34, 35]) == 34 and parse_move("2", [34, 35]) == 35
    assert parse_move("AS", [34]) is None
    monkeypatch.setattr("builtins.input", lambda prompt="": "q")
    assert main(["play", "--opponents", "nosuchbot"]) == 2
    assert "nosuchbot" in capsys.readouterr().err
    assert main(["play", "--max-hands", "1"]) == 0
    assert "Bye." in capsys.readouterr().out


def test_cli_takes_a_checkpoint_path_outside_the_checkout(smoke_run, tmp_path):
    # `spades eval` run from elsewhere: spades_env.policies.checkpoint loads it with NumPy, no training/ needed
    ckpt = str(smoke_run[0] / "final")
    cmd = [
        sys.executable,
        "-m",
        "spades_env.cli",
        "eval",
        ckpt,
        "random",
        "--games",
        "2",
        "--max-hands",
        "2",
        "--no-progress",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "game win rate" in out.stdout and ckpt in out.stdout


def test_two_player_rules_train_and_play(tmp_path):
    import gymnasium

    import spades_env.envs.gym_env  # noqa: F401

    cfg = load_train_config(SMOKE, [*FAST, "rules=two_player", "max_hands=2", "total_decisions=512", "eval_boards=2"])
    tr = train(cfg, tmp_path / "two")
    assert tr.update == 1 and tr.num_seats == 2
    # the final evaluation plays heads-up duplicate games (seats swapped) against each opponent
    final = tr.eval_results[-1]
    for opp in cfg.eval_opponents:
        assert final[opp]["games"] == 2 * cfg.eval_boards and 0.0 <= final[opp]["game_win"] <= 1.0
    env = gymnasium.make("Spades-v0", rules=cfg.rules_config(), opponents=str(tmp_path / "two" / "final"))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    assert info["winner"] in (-1, 0, 1)
