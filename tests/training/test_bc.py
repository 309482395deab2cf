"""Behaviour cloning (training.bc) and PPO's warm start from it (init_from, policy warm-up)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

ROOT = Path(__file__).resolve().parents[2]

from spades_env.core.observation import O_SCORES, OBS_SIZE, obs_bounds  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from spades_env.core.symmetry import (  # noqa: E402
    SIDE_SUIT_PERMUTATIONS,
    action_columns,
    observation_columns,
    relabel_action,
)
from training.bc import fit, holdout_split, load_bc_config, relabel_suits, run, teacher_chunk  # noqa: E402
from training.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.network import masked_logits  # noqa: E402
from training.ppo import load_train_config, train  # noqa: E402

SMOKE = ROOT / "configs" / "train" / "smoke.yaml"
BC = ROOT / "configs" / "train" / "bc.yaml"
TINY = [
    "decisions=3000",
    "chunk_decisions=1500",
    "num_envs=16",
    "workers=1",
    "hidden=[32, 32]",
    "critic_hidden=[32, 32]",
    "epochs=2",
    "batch_size=256",
    "progress=false",
    "torch_threads=1",
    "teacher=greedy",
]


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_bc_config_loads_and_rejects_bad_values():
    cfg = load_bc_config(BC)
    assert cfg.teacher == "heuristic" and cfg.hidden == (512, 512)
    with pytest.raises(ConfigError, match="'teacher'"):
        load_bc_config(BC, ["teacher=nobody"])
    with pytest.raises(ConfigError, match="'val_share'"):
        load_bc_config(BC, ["val_share=0.9"])
    with pytest.raises(ConfigError, match="unknown key 'epoch'"):
        load_bc_config(BC, ["epoch=3"])


def test_teacher_data_is_legal_deterministic_and_the_teachers_choice():
    a = teacher_chunk("tournament", "heuristic", 500, 8, seed=3)
    b = teacher_chunk("tournament", "heuristic", 500, 8, seed=3)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    assert a["obs"].shape == (500, OBS_SIZE) and a["mask"].shape == (500, 70)
    acts = a["action"].astype(np.int64)
    assert a["mask"][np.arange(500), acts].all()  # every recorded action is legal
    low, high = obs_bounds("tournament")
    x = a["obs"].astype(np.float32)
    assert (x >= low - 1e-3).all() and (x <= high + 1e-3).all()
    c = teacher_chunk("tournament", "heuristic", 500, 8, seed=4)
    assert not np.array_equal(a["obs"], c["obs"])  # another seed, other deals


def test_fit_learns_the_teacher():
    cfg = load_bc_config(BC, TINY + ["decisions=6000", "epochs=6", "learning_rate=0.003"])
    data = teacher_chunk(cfg.rules, cfg.teacher, cfg.decisions, cfg.num_envs, seed=1)
    model, history = fit(cfg, data)
    # imitation is far better than the masked uniform choice on held-out decisions
    legal = data["mask"].sum(1)
    uniform = float(np.mean(1.0 / legal))
    assert history[-1]["val_accuracy"] > uniform + 0.25
    assert history[-1]["loss"] < history[0]["loss"]


def test_holdout_is_the_last_rows():
    val, train_rows = holdout_split(1000, 0.05)
    assert val.tolist() == list(range(950, 1000))
    assert train_rows.tolist() == list(range(950))
    val, train_rows = holdout_split(7, 0.0)
    assert len(val) == 0 and len(train_rows) == 7


def test_fit_validates_on_rows_it_never_trained_on():
    # Changing the labels of the held-out tail leaves the training exactly as it was (the fit
    # never reads those rows) and moves only the validation accuracy.
    cfg = load_bc_config(BC, TINY + ["decisions=3000", "epochs=3", "learning_rate=0.003", "val_share=0.2"])
    data = teacher_chunk(cfg.rules, cfg.teacher, cfg.decisions, cfg.num_envs, seed=7)
    changed = {k: v.copy() for k, v in data.items()}
    val, _ = holdout_split(len(data["action"]), cfg.val_share)
    for i in val.tolist():
        other = [a for a in np.flatnonzero(data["mask"][i]) if a != data["action"][i]]
        if other:
            changed["action"][i] = other[0]
    _, plain = fit(cfg, data)
    _, moved = fit(cfg, changed)
    assert [h["loss"] for h in moved] == [h["loss"] for h in plain]
    assert [h["train_accuracy"] for h in moved] == [h["train_accuracy"] for h in plain]
    assert moved[-1]["val_accuracy"] < plain[-1]["val_accuracy"] - 0.2


def test_relabel_suits_gives_each_row_one_relabelling_of_its_position():
    data = teacher_chunk("tournament", "greedy", 600, 8, seed=5)
    obs, mask = torch.from_numpy(data["obs"]), torch.from_numpy(data["mask"])
    action = torch.from_numpy(data["action"].astype(np.int64))
    values = torch.where(mask, torch.randn(mask.shape, generator=torch.Generator().manual_seed(1)), float("nan"))
    x, m, a, v = relabel_suits(obs, mask, action, values, torch.Generator().manual_seed(0))
    used = set()
    for i in range(len(action)):
        fits = [
            k
            for k, p in enumerate(SIDE_SUIT_PERMUTATIONS)
            if torch.equal(x[i], obs[i][observation_columns(p)])
            and torch.equal(m[i], mask[i][action_columns(p)])
            and int(a[i]) == relabel_action(int(action[i]), p)
            and torch.equal(v[i].isnan(), values[i][action_columns(p)].isnan())
            and torch.equal(v[i].nan_to_num(), values[i][action_columns(p)].nan_to_num())
        ]
        assert fits, i
        used.update(fits)
        assert m[i, a[i]] and v[i, a[i]] == values[i, action[i]]  # the same legal action, the same value
    assert used == set(range(6))  # every relabelling is drawn
    assert relabel_suits(obs, mask, action, None, torch.Generator().manual_seed(0))[3] is None


def test_suit_augment_fits_a_network_that_treats_the_side_suits_alike():
    # Trained on every row under random relabellings, the network's choice on a relabelled
    # position is closer to the relabelled choice than without (total variation distance
    # between its probabilities on the position and, mapped back, on its relabelling).
    cfg = load_bc_config(BC, TINY + ["epochs=6", "learning_rate=0.003"])
    data = teacher_chunk(cfg.rules, cfg.teacher, cfg.decisions, cfg.num_envs, seed=1)
    perm = (2, 0, 1, 3)
    x0, m0 = torch.from_numpy(data["obs"].astype(np.float32)), torch.from_numpy(data["mask"])
    x1, m1 = x0[:, observation_columns(perm)], m0[:, action_columns(perm)]
    back = np.argsort(action_columns(perm))  # column of each original action among the relabelled
    distance = {}
    for augment in (False, True):
        model, _ = fit(dataclasses.replace(cfg, suit_augment=augment), data)
        with torch.no_grad():
            p0 = torch.softmax(masked_logits(model.actor(x0), m0), -1)
            p1 = torch.softmax(masked_logits(model.actor(x1), m1), -1)[:, back]
        distance[augment] = float(0.5 * (p1 - p0).abs().sum(-1).mean())
    assert distance[True] < 0.7 * distance[False], distance


def test_fit_same_with_sparse_and_dense_inputs():
    base = load_bc_config(BC, TINY + ["score_clip=0.5"])
    data = teacher_chunk(base.rules, base.teacher, 2000, base.num_envs, seed=2)
    runs = [fit(dataclasses.replace(base, sparse_input=sparse), data) for sparse in (False, True)]
    (dense, hd), (sparse, hs) = runs
    for a, b in zip(hd, hs, strict=True):
        for k in a:
            assert b[k] == pytest.approx(a[k], rel=1e-4, nan_ok=True), k
    # Two epochs of Adam amplify float rounding where a ReLU unit sits at its kink: on an
    # AVX-512 Xeon one hidden unit of 32 took another path (its row off by up to 1.2e-3, 124 of
    # 25,696 first-layer weights, 1 of 32 biases), on the AMD EPYC none. So: 95% of each
    # tensor to 1e-4, all of it to 5e-3 (tests/training/test_sparse_input.py checks one step exactly).
    for (name, p), (_, q) in zip(dense.actor.named_parameters(), sparse.actor.named_parameters(), strict=True):
        p, q = p.detach(), q.detach()
        close = (q - p).abs() <= 1e-5 + 1e-4 * p.abs()
        assert float(close.float().mean()) >= 0.95, name
        torch.testing.assert_close(q, p, rtol=0, atol=5e-3, msg=name)


def test_bc_run_saves_a_deterministic_policy_and_ppo_starts_from_it(tmp_path):
    ck = run(load_bc_config(BC, TINY), tmp_path / "bc")
    model, meta = load_checkpoint(ck)
    assert meta["bc"]["teacher"] == "greedy" and meta["policy"]["deterministic"] is True
    from spades_env.policies.registry import resolve_policy

    pol = resolve_policy(str(ck), 0, load_rules("tournament"))
    assert pol.deterministic

    ov = [
        "tensorboard=false",
        "eval_boards=0",
        "progress=false",
        f"init_from={ck}",
        "policy_warmup_updates=2",
        "total_decisions=2048",
    ]
    # the warm-up updates train the critic only: the actor still equals the BC actor
    tr = train(load_train_config(SMOKE, ov), tmp_path / "ppo", stop_update=2)
    for k, v in model.actor.state_dict().items():
        assert torch.equal(tr.model.actor.state_dict()[k], v), k
    assert any(
        not torch.equal(tr.model.critic.state_dict()[k], v) for k, v in model.critic.state_dict().items()
    )
    tr = train(load_train_config(SMOKE, ov), tmp_path / "ppo2")  # then the policy moves
    assert any(
        not torch.equal(tr.model.actor.state_dict()[k], v) for k, v in model.actor.state_dict().items()
    )


def test_init_from_checks_the_path_and_shapes(tmp_path):
    missing = load_train_config(SMOKE, ["progress=false", f"init_from={tmp_path / 'missing'}"])
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        train(missing, tmp_path / "nowhere")
    ck = run(load_bc_config(BC, TINY + ["decisions=200", "chunk_decisions=200"]), tmp_path / "bc")
    cfg = load_train_config(SMOKE, ["progress=false", "tensorboard=false", f"init_from={ck}", "hidden=[16]"])
    with pytest.raises(CheckpointError, match="init_from network shapes"):
        train(cfg, tmp_path / "ppo")


def test_teacher_data_from_l3_over_a_rules_family_is_l3s_choice():
    """A one-decision-at-a-time teacher (L3) over a rules family: each recorded action is what
    that seat's L3 chooses from the recorded observation."""
    from spades_env.policies.bots import make_policy

    family = ["tournament", {"name": "no_blind", "blind_nil": False, "blind_nil_exchange": 0}]
    data = teacher_chunk(family, "search:samples=4", 300, 4, seed=9, rules_weights=[1.0, 1.0])
    acts = data["action"].astype(np.int64)
    assert data["mask"][np.arange(300), acts].all()
    assert np.array_equal(data["action"], teacher_chunk(family, "search:samples=4", 300, 4, 9, [1.0, 1.0])["action"])
    # card play with one legal card is forced; elsewhere L3 and L2 disagree somewhere
    l2 = make_policy("heuristic")
    differs = sum(
        int(l2.act(data["obs"][i].astype(np.float32), data["mask"][i]) != acts[i]) for i in range(300)
    )
    assert differs > 0


def test_a_shipped_agent_teaches_over_a_rules_family():
    """``teacher`` may be a shipped agent id (cloning an agent, e.g. a search agent): each
    recorded action is that network's own choice, and its rules features let it play a family."""
    from spades_env.policies import load

    family = ["tournament", "house"]
    data = teacher_chunk(family, "spades4_net_v1", 300, 8, seed=3, rules_weights=[1.0, 1.0])
    net = load("spades4_net_v1", rules="tournament", seed=0)  # deterministic: any seed, any seat
    acts = data["action"].astype(np.int64)
    assert data["mask"][np.arange(300), acts].all()
    chosen = [net.act(data["obs"][i].astype(np.float32), data["mask"][i]) for i in range(300)]
    assert np.array_equal(acts, chosen)
    cfg = load_bc_config(BC, TINY + ["teacher=spades4_v3", "rules_family=[tournament, house]"])
    assert cfg.teacher == "spades4_v3"
    load_bc_config(BC, TINY + ["teacher=spades4_v3", "soft_temperature=2.0"])  # a search: values
    with pytest.raises(ConfigError, match="'soft_temperature'.*values its actions"):
        load_bc_config(BC, TINY + ["teacher=spades4_net_v1", "soft_temperature=2.0"])
    with pytest.raises(ConfigError, match="'teacher'.*spades4_vx"):
        load_bc_config(BC, TINY + ["teacher=spades4_vx"])


def test_teacher_chunks_are_saved_and_reused(tmp_path, monkeypatch):
    from training import bc as bc_mod

    cfg = load_bc_config(BC, TINY + ["decisions=900", "chunk_decisions=400"])
    first = bc_mod.generate(cfg, tmp_path / "data")
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "chunk_00000.npz",
        "chunk_00001.npz",
        "chunk_00002.npz",
    ]
    calls = []
    real = bc_mod._chunk_task
    monkeypatch.setattr(bc_mod, "_chunk_task", lambda task: calls.append(task) or real(task))
    (tmp_path / "data" / "chunk_00001.npz").write_bytes(b"cut short")  # a chunk a stop broke
    again = bc_mod.generate(cfg, tmp_path / "data")
    assert len(calls) == 1 and calls[0][2] == 400  # only the broken chunk is made again
    for k in first:
        assert np.array_equal(first[k], again[k]), k
    other = load_bc_config(BC, TINY + ["decisions=900", "chunk_decisions=400", "seed=5"])
    calls.clear()
    bc_mod.generate(other, tmp_path / "data")  # another config: no chunk is reused
    assert len(calls) == 3


def test_bc_init_from_and_bidding_weight(tmp_path):
    ck = run(load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=600"]), tmp_path / "bc")
    start, _ = load_checkpoint(ck)
    cfg = load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=600", f"init_from={ck}", "epochs=1",
                                     "learning_rate=1e-9", "bidding_weight=3.0", "seed=4"])
    data = teacher_chunk(cfg.rules, cfg.teacher, cfg.decisions, cfg.num_envs, seed=2)
    model, history = fit(cfg, data)
    # a tiny step from the start, not fresh weights
    for k, v in start.actor.state_dict().items():
        assert torch.allclose(model.actor.state_dict()[k], v, atol=1e-5), k
    assert {"val_accuracy_card_play", "val_accuracy_bidding"} <= set(history[0])
    with pytest.raises(ConfigError, match="'bidding_weight'"):
        load_bc_config(BC, TINY + ["bidding_weight=0"])
    wrong = load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=600", f"init_from={ck}",
                                       "hidden=[16]", "critic_hidden=[16]"])
    with pytest.raises(CheckpointError, match="init_from network shapes"):
        run(wrong, tmp_path / "wrong")
    assert not (tmp_path / "wrong").exists()  # refused before any teacher data


def test_dagger_data_labels_the_students_states_with_the_teachers_actions(tmp_path):
    """``play_by``: the student plays a share of the decisions; every label is the teacher's."""
    from spades_env.policies.bots import make_policy

    plain = teacher_chunk("tournament", "heuristic", 800, 8, seed=6)
    mixed = teacher_chunk("tournament", "heuristic", 800, 8, seed=6, play_by="random", play_share=0.5)
    assert not np.array_equal(plain["obs"], mixed["obs"])  # the random student led elsewhere
    l2 = make_policy("heuristic")
    for i in range(0, 800, 7):
        assert mixed["action"][i] == l2.act(mixed["obs"][i].astype(np.float32), mixed["mask"][i])
    none = teacher_chunk("tournament", "heuristic", 800, 8, seed=6, play_by="random", play_share=0.0)
    assert np.array_equal(plain["obs"], none["obs"]) and np.array_equal(plain["action"], none["action"])
    with pytest.raises(ConfigError, match="'play_by'"):
        load_bc_config(BC, TINY + ["play_by=nobody"])
    with pytest.raises(ConfigError, match="'play_share'"):
        load_bc_config(BC, TINY + ["play_by=random", "play_share=1.5"])


def test_plot_bc_stages_draws_the_lineage(tmp_path):
    pytest.importorskip("matplotlib")
    from training.plots import plot_bc_stages

    rows = [{"epoch": 1, "loss": 0.9, "train_accuracy": 0.6, "val_accuracy": 0.62,
             "val_accuracy_card_play": 0.64, "val_accuracy_bidding": 0.5}]
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(__import__("json").dumps(rows * 2))
    out = plot_bc_stages({"a": tmp_path / "a.json", "b": tmp_path / "b.json"}, tmp_path / "p.png")
    assert out is not None and out.stat().st_size > 5000
    assert plot_bc_stages({"none": tmp_path / "missing.json"}, tmp_path / "q.png") is None
    from PIL import Image

    narrow = Image.open(out).size[0]
    (tmp_path / "c.json").write_text(__import__("json").dumps([{**r, "val_regret_card_play": 4.2} for r in rows]))
    wide = plot_bc_stages({"a": tmp_path / "a.json", "c": tmp_path / "c.json"}, tmp_path / "r.png")
    assert Image.open(wide).size[0] > narrow  # the regret panel, where a stage recorded it


def test_plot_stage_strength_reads_the_stages_matrix_reports(tmp_path):
    pytest.importorskip("matplotlib")
    import json

    from training.plots import plot_stage_strength

    def report(margin):
        mm = {"mean": margin, "ci95": [margin - 2, margin + 2]}
        return {"rules": [{"label": r, "matchups": [
            {"team_a": "policy", "team_b": "heuristic", "margin_per_hand": mm},
            {"team_a": "policy", "team_b": "random", "margin_per_hand": mm}]} for r in ("tournament", "house")]}

    for name, m in (("a", 1.0), ("b", 4.0)):
        (tmp_path / f"{name}.json").write_text(json.dumps(report(m)))
    out = plot_stage_strength({"a": tmp_path / "a.json", "b": tmp_path / "b.json"}, tmp_path / "s.png")
    assert out is not None and out.stat().st_size > 5000
    assert plot_stage_strength({"a": tmp_path / "a.json"}, tmp_path / "t.png", opponent="blind") is None
    assert plot_stage_strength({"x": tmp_path / "missing.json"}, tmp_path / "u.png") is None


def test_soft_targets_are_the_softmax_of_the_valued_legal_actions():
    from training.bc import imitation_loss, soft_targets

    nan = float("nan")
    values = torch.full((3, 70), nan)
    values[0, [1, 2]] = torch.tensor([0.0, 2.0])
    values[0, 5] = 50.0  # valued but illegal: ignored
    mask = torch.zeros(3, 70, dtype=torch.bool)
    mask[0, [1, 2, 3]] = True
    mask[1, [4, 6]] = True  # legal, nothing valued: the one label
    mask[2, 7] = True
    values[2, 7] = -3.0  # one valued action: all its mass
    target, has = soft_targets(values, mask, temperature=2.0)
    e = float(np.e)
    assert has.tolist() == [True, False, True]
    assert torch.allclose(target[0, [1, 2]], torch.tensor([1 / (1 + e), e / (1 + e)]))
    assert float(target[0, 3]) == 0.0 and float(target[0, 5]) == 0.0  # legal unvalued, illegal
    assert float(target[2, 7]) == 1.0
    logits = torch.randn(3, 70)
    action = torch.tensor([2, 6, 7])
    loss = imitation_loss(logits, action, target, has)
    hard = torch.nn.functional.cross_entropy(logits, action, reduction="none")
    assert torch.allclose(loss[1:], hard[1:])  # no value: the label; one value: the same thing
    soft0 = -(target[0] * torch.log_softmax(logits[0], -1)).sum()
    assert torch.allclose(loss[0], soft0) and not torch.allclose(loss[0], hard[0])
    assert torch.equal(imitation_loss(logits, action, None, None), hard)


def test_expected_regret_weighs_each_valued_action_by_the_networks_probability():
    from training.bc import expected_regret

    nan = float("nan")
    values = torch.full((3, 70), nan)
    mask = torch.zeros(3, 70, dtype=torch.bool)
    mask[0, [1, 2, 3]] = True
    values[0, [1, 2]] = torch.tensor([10.0, 4.0])  # action 3 legal but unvalued: left out
    values[0, 9] = -100.0  # valued but illegal: left out
    mask[1, [4, 6]] = True  # nothing valued: 0
    mask[2, [7, 8]] = True
    values[2, [7, 8]] = torch.tensor([1.0, 1.0])  # a tie: nothing to give up
    logits = torch.zeros(3, 70)
    logits[0, 2] = float(np.log(3.0))  # p = 1/4 on action 1, 3/4 on action 2 (action 3 dropped)
    logits[0, 3] = 50.0
    reg = expected_regret(logits, values, mask)
    assert torch.allclose(reg, torch.tensor([0.75 * 6.0, 0.0, 0.0]))
    logits[0, 1] = 30.0  # all mass on the best: no regret
    assert float(expected_regret(logits, values, mask)[0]) < 1e-6
    cfg = load_bc_config(BC, TINY + ["teacher=search:samples=2", "soft_temperature=2.0", "regret_coef=0.05"])
    assert cfg.regret_coef == 0.05
    with pytest.raises(ConfigError, match="'regret_coef'"):
        load_bc_config(BC, TINY + ["teacher=search:samples=2", "regret_coef=0.05"])  # no values
    with pytest.raises(ConfigError, match="'regret_coef'"):
        load_bc_config(BC, TINY + ["teacher=search:samples=2", "soft_temperature=2.0", "regret_coef=-1"])


def test_l3_values_are_its_searched_margins_and_soft_data_records_them(tmp_path):
    """L3's ``last_values`` hold a mean margin for each searched legal action (its choice the
    best card), and a soft-target chunk records them beside the label."""
    from spades_env.core import layout as L
    from spades_env.core.observation import O_PHASE
    from training import bc as bc_mod

    data = teacher_chunk("tournament", "search:samples=4", 240, 4, seed=2, values=True)
    v = data["values"].astype(np.float64)
    valued = np.isfinite(v)
    assert (valued <= data["mask"]).all()  # only legal actions are valued
    play = data["obs"][:, O_PHASE + L.PH_PLAY] > 0.5
    choice = play & (data["mask"].sum(1) > 1)
    assert choice.sum() > 50
    rows = np.flatnonzero(choice)
    assert valued[rows].sum(1).tolist() == data["mask"][rows].sum(1).tolist()  # every legal card
    best = np.array([v[r][valued[r]].max() for r in rows])
    picked = v[rows, data["action"][rows].astype(np.int64)]
    assert np.allclose(picked, best, atol=0.1)  # L3 plays its best mean margin (float16 values)
    forced = play & (data["mask"].sum(1) == 1)
    assert not valued[forced].any()  # nothing searched
    cfg = load_bc_config(BC, TINY + ["teacher=search:samples=2", "decisions=200", "chunk_decisions=200",
                                     "num_envs=4", "soft_temperature=2.0", "epochs=1"])
    first = bc_mod.generate(cfg, tmp_path / "data")
    again = bc_mod.generate(cfg, tmp_path / "data")  # read back, values included
    assert np.array_equal(first["values"], again["values"], equal_nan=True)
    model, history = fit(cfg, first)
    assert np.isfinite(history[0]["loss"])
    with_regret = dataclasses.replace(cfg, regret_coef=0.05)
    _, history2 = fit(with_regret, first)
    assert history2[0]["loss"] > history[0]["loss"]  # the same fit plus a positive term
    with pytest.raises(ConfigError, match="'soft_temperature'"):
        load_bc_config(BC, TINY + ["soft_temperature=2.0"])  # greedy has no values
    with pytest.raises(ConfigError, match="'soft_temperature'"):
        load_bc_config(BC, TINY + ["teacher=search:samples=2", "soft_temperature=-1"])


def test_data_from_fits_on_earlier_runs_chunks(tmp_path):
    """``data_from``: the fit reads the chunks earlier runs saved (with or without values),
    before the run's own (last, where the held-out tail is); decisions 0 fits on them alone; a folder without chunks is refused."""
    from training import bc as bc_mod

    first = load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=300"])
    made = bc_mod.generate(first, tmp_path / "a" / "data")
    soft = load_bc_config(BC, TINY + ["teacher=search:samples=2", "decisions=100", "chunk_decisions=100",
                                      "num_envs=4", "soft_temperature=2.0", "epochs=1"])
    valued = bc_mod.generate(soft, tmp_path / "b" / "data")
    both = bc_mod.saved_data([str(tmp_path / "a" / "data"), str(tmp_path / "b" / "data")], values=True)
    assert len(both["action"]) == 700
    assert np.array_equal(both["obs"][:600], made["obs"]) and np.array_equal(both["action"][600:], valued["action"])
    assert np.isnan(both["values"][:600].astype(np.float32)).all()  # made without values
    assert np.array_equal(both["values"][600:], valued["values"], equal_nan=True)
    behind = bc_mod.saved_data([str(tmp_path / "b" / "data")], values=True, last=made)  # own rows last
    assert np.array_equal(behind["obs"][100:], made["obs"]) and np.array_equal(behind["action"][:100], valued["action"])
    assert np.isnan(behind["values"][100:].astype(np.float32)).all()
    only = load_bc_config(BC, TINY + ["decisions=0", "epochs=1", "data_from=" + str([str(tmp_path / "a" / "data")])])
    ck = run(only, tmp_path / "c")
    _, meta = load_checkpoint(ck)
    assert meta["bc"]["decisions"] == 600
    mixed = load_bc_config(BC, TINY + ["decisions=300", "chunk_decisions=300", "epochs=1", "seed=3",
                                       "data_from=" + str([str(tmp_path / "a" / "data")])])
    _, meta = load_checkpoint(run(mixed, tmp_path / "d"))
    assert meta["bc"]["decisions"] == 900
    with pytest.raises(ConfigError, match="no teacher chunks"):
        run(load_bc_config(BC, TINY + ["decisions=0", f"data_from=['{tmp_path / 'none'}']"]), tmp_path / "e")
    with pytest.raises(ConfigError, match="no data to fit"):
        run(load_bc_config(BC, TINY + ["decisions=0"]), tmp_path / "f")
    assert not (tmp_path / "e").exists() and not (tmp_path / "f").exists()


def test_card_play_regret_is_the_teachers_value_given_up():
    from spades_env.core import layout as L
    from spades_env.core.observation import O_PHASE, STATE_VEC_SIZE
    from training.bc import card_play_regret
    from training.network import ActorCritic

    model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, 70, (4,), (4,))
    with torch.no_grad():
        for p in model.actor.parameters():
            p.zero_()
        model.actor[-1].bias[5] = 1.0  # always prefers action 5 where legal
    obs = torch.zeros(4, OBS_SIZE)
    obs[:3, O_PHASE + L.PH_PLAY] = 1.0
    obs[3, O_PHASE + L.PH_BID] = 1.0
    mask = torch.zeros(4, 70, dtype=torch.bool)
    values = torch.full((4, 70), float("nan"))
    for r, vals in enumerate([{5: 1.0, 7: 4.0}, {5: 2.0, 9: 1.0}, {5: 3.0}, {5: 0.0, 20: 9.0}]):
        for a, v in vals.items():
            mask[r, a] = True
            values[r, a] = v
    # row 0 gives up 3 points, row 1 none; row 2 is forced and row 3 is a bid: left out
    assert card_play_regret(model, obs, mask, values) == pytest.approx(1.5)
    assert np.isnan(card_play_regret(model, obs[2:], mask[2:], values[2:]))


# ---- opponents: other players at the other team's seats ---------------------------------------------
def test_opponents_play_the_other_team_and_every_decision_stays_labelled():
    plain = teacher_chunk("tournament", "heuristic", 2400, 4, seed=5)
    with_random = teacher_chunk("tournament", "heuristic", 2400, 4, seed=5, opponents=["random"], opponent_share=1.0)
    np.testing.assert_array_equal(plain["obs"][:4], with_random["obs"][:4])  # the same deals
    assert not np.array_equal(plain["obs"], with_random["obs"])  # other play
    # every row is still the teacher's label: legal, and L2's own choice at that state
    assert with_random["mask"][np.arange(2400), with_random["action"]].all()
    # random bidders at the other team fall far behind (L2 against L2 does not)
    assert with_random["obs"][:, O_SCORES : O_SCORES + 2].astype(np.float32).min() < -1.0
    assert plain["obs"][:, O_SCORES : O_SCORES + 2].astype(np.float32).min() > -1.0
    # share 0 is the plain chunk, bit for bit
    none = teacher_chunk("tournament", "heuristic", 2400, 4, seed=5, opponents=["random"], opponent_share=0.0)
    for k in plain:
        np.testing.assert_array_equal(plain[k], none[k])


def test_opponents_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="'opponents'"):
        load_bc_config(BC, TINY + ["opponent_share=0.25"])  # no names
    with pytest.raises(ConfigError, match="'opponents'"):
        load_bc_config(BC, TINY + ["opponents=[nobot]", "opponent_share=0.25"])
    with pytest.raises(ConfigError, match="'opponent_share'"):
        load_bc_config(BC, TINY + ["opponents=[random]", "opponent_share=1.5"])
    cfg = load_bc_config(BC, TINY + ["opponents=[random, greedy]", "opponent_share=0.25"])
    assert cfg.opponents == ("random", "greedy") and cfg.opponent_share == 0.25


def test_generate_passes_the_opponents_to_every_chunk(tmp_path):
    from training.bc import generate

    cfg = load_bc_config(BC, TINY + ["teacher=heuristic", "opponents=[random]", "opponent_share=0.5"])
    data = generate(cfg, tmp_path)
    assert len(data["action"]) == cfg.decisions and "values" not in data
    want = teacher_chunk(cfg.rules, "heuristic", 1500, 16, cfg.seed * 1_000_003, None, "", 0.5, False, ["random"], 0.5)
    np.testing.assert_array_equal(data["obs"][:1500], want["obs"])
    again = generate(cfg, tmp_path)  # read back from the saved chunks
    np.testing.assert_array_equal(again["obs"], data["obs"])


def test_a_folder_holding_another_run_is_refused_unless_overwrite(tmp_path):
    from training.runs import RunFolderError

    cfg = load_bc_config(BC, TINY + ["decisions=500", "chunk_decisions=500", "epochs=1"])
    first = run(cfg, tmp_path / "bc")
    before = (first / "model.safetensors").read_bytes()
    again = run(load_bc_config(BC, TINY + ["decisions=500", "chunk_decisions=500", "epochs=1", "progress=false"]),
                tmp_path / "bc")  # the same settings (display aside): continued, chunks reused
    assert (again / "model.safetensors").read_bytes() == before
    other = load_bc_config(BC, TINY + ["decisions=500", "chunk_decisions=500", "epochs=1", "seed=9"])
    with pytest.raises(RunFolderError, match=r"seed: .* -> 9.*--overwrite"):
        run(other, tmp_path / "bc")
    assert (first / "model.safetensors").read_bytes() == before  # nothing of it changed
    replaced = run(other, tmp_path / "bc", overwrite=True)
    assert json.loads((tmp_path / "bc" / "config.json").read_text())["seed"] == 9
    assert (replaced / "model.safetensors").read_bytes() != before


def test_label_nil_cards_keeps_only_the_card_plays_of_nil_hands():
    """``label: nil_cards``: the same games as labelling every decision (the student plays
    them all), recording only the card plays with a choice in hands with a Nil or Blind Nil."""
    from spades_env.core import layout as L
    from spades_env.core.observation import O_PHASE, public_bids
    from training.bc import nil_card_rows

    fam = ["house", {"name": "no_blind", "blind_nil": False, "blind_nil_exchange": 0}]
    every = teacher_chunk(fam, "greedy", 2400, 16, 7, None, "heuristic", 1.0)
    keep = nil_card_rows(every["obs"].astype(np.float32), every["mask"])
    assert 300 <= keep.sum() < len(keep)  # something kept, something dropped
    only = teacher_chunk(fam, "greedy", 300, 16, 7, None, "heuristic", 1.0, label="nil_cards")
    obs = only["obs"].astype(np.float32)
    bids = public_bids(obs)
    assert ((bids == 0) | (bids == L.BID_BLIND_NIL)).any(axis=1).all()
    assert (obs[:, O_PHASE + L.PH_PLAY] > 0.5).all() and (only["mask"].sum(axis=1) > 1).all()
    for k in ("obs", "mask", "action"):  # the unfiltered chunk's rows, in order
        np.testing.assert_array_equal(only[k], every[k][keep][:300], err_msg=k)
    with pytest.raises(ValueError, match="play_by"):
        teacher_chunk(fam, "greedy", 100, 16, 7, None, "", 1.0, label="nil_cards")
    with pytest.raises(ValueError, match="label must be one of"):
        teacher_chunk(fam, "greedy", 100, 16, 7, None, "heuristic", 1.0, label="nils")
    with pytest.raises(ConfigError, match="'label'"):
        load_bc_config(BC, TINY + ["label=nils"])
    with pytest.raises(ConfigError, match="'label'"):
        load_bc_config(BC, TINY + ["label=nil_cards", "play_share=1.0"])  # nobody for the rest
    shipped = load_bc_config(BC, TINY + ["label=nil_cards", "play_by=spades4_net_v1", "play_share=1.0"])
    assert shipped.play_by == "spades4_net_v1"  # a shipped agent id plays, as a bots name or a path does


def _played_after(obs: np.ndarray) -> list[tuple[int, int]]:
    """Pairs ``(row, card)`` of one game's consecutive rows where the next row shows the card
    this row's seat played (exactly one more card played, the trick still open)."""
    from spades_env.core.observation import SLICES

    played = obs[:, SLICES["played"]].sum(axis=1)
    trick = obs[:, SLICES["trick"]].reshape(len(obs), 4, 52)
    out = []
    for r in range(len(obs) - 1):
        if played[r + 1] == played[r] + 1 and trick[r + 1, 3].any():  # relative seat 3: the seat before
            out.append((r, int(trick[r + 1, 3].argmax())))
    return out


def test_student_rows_and_a_label_filter_with_the_teacher_playing_its_labels():
    """With a label filter the student plays every unlabelled decision and ``play_share`` of
    the labelled ones: at 0 the teacher's label is the card played, at 1 the student's is."""
    from training.bc import student_rows

    draws = np.array([0.1, 0.6, 0.1, 0.6])
    np.testing.assert_array_equal(student_rows(draws, 0.5), [True, False, True, False])
    np.testing.assert_array_equal(student_rows(draws, 0.5, np.array([True, True, False, False])),
                                  [True, False, True, True])
    np.testing.assert_array_equal(student_rows(draws, 0.0, np.array([True, False, True, False])),
                                  [False, True, False, True])
    fam = ["house", {"name": "no_blind", "blind_nil": False, "blind_nil_exchange": 0}]
    mismatched = {}
    for share in (0.0, 1.0):  # one game slot: the rows are one game's decisions in order
        chunk = teacher_chunk(fam, "greedy", 400, 1, 3, None, "heuristic", share, label="nil_cards")
        pairs = _played_after(chunk["obs"].astype(np.float32))
        assert len(pairs) > 50
        mismatched[share] = sum(card != int(chunk["action"][r]) for r, card in pairs)
    assert mismatched[0.0] == 0  # the teacher played every card it labelled
    assert mismatched[1.0] > 0  # the student (another bot) played them


def test_chunks_are_made_again_when_a_checkpoint_they_used_changes(tmp_path, monkeypatch):
    """The chunk cache keys a checkpoint by its weights, not its path: overwritten in place,
    the chunks it played are made again."""
    import shutil

    from training import bc as bc_mod

    ck = run(load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=600", "epochs=1"]), tmp_path / "a")
    other = run(load_bc_config(BC, TINY + ["decisions=600", "chunk_decisions=600", "epochs=1", "seed=9"]), tmp_path / "b")
    cfg = load_bc_config(BC, TINY + ["decisions=400", "chunk_decisions=200", f"play_by={ck}", "play_share=1.0"])
    first = bc_mod.generate(cfg, tmp_path / "data")
    calls = []
    real = bc_mod._chunk_task
    monkeypatch.setattr(bc_mod, "_chunk_task", lambda task: calls.append(task) or real(task))
    bc_mod.generate(cfg, tmp_path / "data")
    assert calls == []  # same weights: read back
    shutil.copyfile(other / "model.safetensors", ck / "model.safetensors")
    again = bc_mod.generate(cfg, tmp_path / "data")
    assert len(calls) == 2  # new weights at the same path: both chunks made again
    assert not np.array_equal(first["obs"], again["obs"])  # another student, other games


def test_rows_under_reads_each_rows_rules_off_its_observation():
    """``rows_under``: of rows recorded under house rules then under tournament rules (the two
    differ only in Blind Nil's deficit), exactly the house rows are house's; a family mapping
    names its rules the same way."""
    from training.bc import rows_under

    house = teacher_chunk("house", "greedy", 200, 4, seed=1)
    tour = teacher_chunk("tournament", "greedy", 200, 4, seed=1)
    obs = np.concatenate([house["obs"], tour["obs"]])
    assert np.array_equal(rows_under(obs, ["house"]), np.arange(400) < 200)
    assert np.array_equal(rows_under(obs, ["tournament"]), np.arange(400) >= 200)
    assert rows_under(obs, ["house", "tournament"]).all()
    assert not rows_under(obs, [{"name": "no_blind", "blind_nil": False, "blind_nil_exchange": 0}]).any()
    assert np.array_equal(rows_under(obs, [{"base": "tournament", "blind_nil_min_deficit": 100}]), np.arange(400) < 200)


def test_keep_start_targets_give_the_kept_rules_rows_the_start_networks_policy(tmp_path):
    """``keep_start_targets``: on the kept rules' rows the soft target softmax(values / T) is the
    start network's own policy over the legal actions and the label its likeliest action; the
    other rows keep the teacher's values and actions."""
    from training.bc import keep_start_targets, soft_targets

    start, _ = load_checkpoint(run(load_bc_config(BC, TINY + ["decisions=300", "chunk_decisions=300"]), tmp_path / "s"))
    house = teacher_chunk("house", "search:samples=2", 120, 4, seed=2, values=True)
    tour = teacher_chunk("tournament", "search:samples=2", 120, 4, seed=2, values=True)
    data = {k: np.concatenate([house[k], tour[k]]) for k in ("obs", "mask", "action", "values")}
    before = {k: v.copy() for k, v in data.items()}
    assert keep_start_targets(data, start, ["tournament"], 2.0) == 120
    for k in ("action", "values"):  # the house rows untouched
        assert np.array_equal(data[k][:120], before[k][:120], equal_nan=True)
    obs, mask = torch.from_numpy(data["obs"][120:]).float(), torch.from_numpy(data["mask"][120:])
    with torch.no_grad():
        probs = torch.softmax(masked_logits(start.actor(obs), mask), -1)
    target, has = soft_targets(torch.from_numpy(data["values"][120:]), mask, 2.0)
    assert has.all()
    assert torch.allclose(target, probs, atol=0.01)
    assert np.array_equal(data["action"][120:], probs.argmax(-1).numpy())
    assert np.isnan(data["values"][120:][~data["mask"][120:]].astype(np.float32)).all()  # illegal: no value
    assert not np.array_equal(data["action"][120:], before["action"][120:])  # L3's labels replaced


def test_keep_start_on_config_checks_and_run_records_the_kept_rows(tmp_path):
    """``keep_start_on`` needs ``init_from`` and soft targets, and each entry must be rules the
    games play; a run with it fits the start's policy on those rows and records how many."""
    start = run(load_bc_config(BC, TINY + ["decisions=300", "chunk_decisions=300"]), tmp_path / "s")
    family = "rules_family=[house, tournament]"
    soft = TINY + [family, "teacher=search:samples=2", "decisions=200", "chunk_decisions=200", "num_envs=4",
                   "soft_temperature=2.0", "epochs=1", f"init_from={start}"]
    for bad, why in [
        (["keep_start_on=[tournament]", "soft_temperature=0"], "needs soft_temperature"),
        ([f"init_from={start}", "init_from=", "keep_start_on=[tournament]"], "needs init_from"),
        (["keep_start_on=[openspiel]"], "not among the rules the games play"),
        (["keep_start_on=[nonesuch]"], "entry 0 \\(nonesuch\\)"),
    ]:
        with pytest.raises(ConfigError, match=why):
            load_bc_config(BC, soft + bad)
    ck = run(load_bc_config(BC, soft + ["keep_start_on=[tournament]"]), tmp_path / "k")
    _, meta = load_checkpoint(ck)
    data = np.load(sorted((tmp_path / "k" / "data").glob("chunk_*.npz"))[0])
    from training.bc import rows_under

    assert meta["bc"]["kept_start"] == int(rows_under(data["obs"], ["tournament"]).sum()) > 0
