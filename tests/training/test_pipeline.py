"""The lineage pipeline (BC, then PPO stages chained by run folder; a rerun skips finished
stages) and training over a family of rules (config errors, exact resume, BC teacher data)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

ROOT = Path(__file__).resolve().parents[2]

from training.bc import load_bc_config, teacher_chunk  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.pipeline import load_pipeline, run_pipeline  # noqa: E402
from training.ppo import load_train_config, train  # noqa: E402

SMOKE = ROOT / "configs" / "train" / "smoke.yaml"
PIPE_SMOKE = ROOT / "configs" / "train" / "pipeline_smoke.yaml"
FAST = ["tensorboard=false", "eval_boards=0", "progress=false"]
FAMILY = "rules_family=[tournament, house, {name: no_blind, blind_nil: false, blind_nil_exchange: 0}]"


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    torch.set_num_threads(1)
    monkeypatch.chdir(ROOT)  # stage configs are paths from the repository root


# ---- the pipeline -------------------------------------------------------------------------------
def test_pipeline_chains_stages_and_a_rerun_skips_them(tmp_path):
    logs: list[str] = []
    pl = load_pipeline(PIPE_SMOKE, runs=tmp_path)
    final = run_pipeline(pl, log=logs.append)
    assert final == tmp_path / "ppo2" / "final"
    meta = {s: json.loads((tmp_path / s / "final" / "meta.json").read_text()) for s in ("bc", "ppo1", "ppo2")}
    assert meta["bc"]["trainer"] == "training.bc" and len(meta["bc"]["rules_family"]) == 3
    # stage 2 started from stage 1's final checkpoint, stage 1 from the BC one; both ended by count
    assert meta["ppo1"]["config"]["init_from"] == str(tmp_path / "bc" / "final")
    assert meta["ppo2"]["config"]["init_from"] == str(tmp_path / "ppo1" / "final")
    assert meta["ppo1"]["update"] == 2 and meta["ppo2"]["update"] == 2
    assert [r["name"] for r in meta["ppo1"]["rules_family"]] == [
        "tournament",
        "house",
        "no_blind",
        "openspiel",
    ]
    ev = meta["ppo1"]["evaluation"][-1]
    assert {"tournament/blind", "no_blind/blind"} <= set(ev)  # evaluated on several rules
    assert all(f"stage {s}:" in " ".join(logs) and "done already" not in logs[0] for s in ("bc", "ppo1"))
    stamp = (tmp_path / "ppo2" / "final" / "meta.json").stat().st_mtime_ns
    logs.clear()
    run_pipeline(load_pipeline(PIPE_SMOKE, runs=tmp_path), log=logs.append)
    assert len(logs) == 3 and all("done already" in line for line in logs)
    assert (tmp_path / "ppo2" / "final" / "meta.json").stat().st_mtime_ns == stamp
    # a stage finished before a config key existed (the key at its default) is still done
    done = tmp_path / "bc" / "stage.json"
    old = json.loads(done.read_text())
    del old["config"]["bidding_weight"], old["config"]["play_by"]
    done.write_text(json.dumps(old))
    logs.clear()
    run_pipeline(load_pipeline(PIPE_SMOKE, runs=tmp_path), log=logs.append)
    assert all("done already" in line for line in logs)
    # a finished stage whose config changed is an error, not a silent mix of versions
    changed = tmp_path / "changed.yaml"
    changed.write_text(PIPE_SMOKE.read_text().replace("updates: 2\n", "updates: 3\n", 1))
    with pytest.raises(ConfigError, match=r"stage 'ppo1' finished.*under another config"):
        run_pipeline(load_pipeline(changed, runs=tmp_path), log=logs.append)


def test_pipeline_resumes_a_stopped_stage(tmp_path):
    pl = load_pipeline(PIPE_SMOKE, runs=tmp_path)
    from training.pipeline import run_stage, stage_config

    bc = pl.stages[0]
    run_stage(pl, bc, log=lambda _: None)
    st = pl.stages[1]
    cfg = stage_config(pl, st)
    train(cfg, tmp_path / "ppo1", stop_update=1)  # as if the stage had been stopped after update 1
    logs: list[str] = []
    run_stage(pl, st, log=logs.append)
    assert "resuming from" in logs[0]
    assert json.loads((tmp_path / "ppo1" / "final" / "meta.json").read_text())["update"] == 2


def test_pipeline_stop_at_ends_a_stage_by_count(tmp_path):
    fast = "set: [tensorboard=false, eval_boards=0, progress=false]"
    p = tmp_path / "pipe.yaml"
    p.write_text(
        f"runs: {tmp_path / 'runs'}\nstages:\n"
        f"  - {{name: a, kind: ppo, config: configs/train/smoke.yaml, stop_at: 2, {fast}}}\n"
        f"  - {{name: b, kind: ppo, config: configs/train/smoke.yaml, init_from: a, updates: 1, {fast}}}\n"
    )
    final = run_pipeline(load_pipeline(p), log=lambda _: None)
    a = json.loads((tmp_path / "runs" / "a" / "final" / "meta.json").read_text())
    assert a["update"] == 2 and a["config"]["total_decisions"] == 2048  # of a 4-update run
    b = json.loads((final / "meta.json").read_text())
    assert b["update"] == 1 and b["config"]["init_from"] == str(tmp_path / "runs" / "a" / "final")


def test_export_with_search_defence_marks_the_exported_checkpoint(tmp_path):
    from spades_env.policies import load
    from spades_env.policies.checkpoint import CheckpointPolicy, load_policy
    from spades_env.policies.composite import SearchDefencePolicy

    fast = "set: [tensorboard=false, eval_boards=0, progress=false]"
    p = tmp_path / "pipe.yaml"
    p.write_text(
        f"runs: {tmp_path / 'runs'}\nexport: {tmp_path / 'policy'}\nsearch_defence: search:samples=20\n"
        f"search_defence_against: [blind_nil, nil]\nsearch_defence_cover: [nil, blind_nil]\n"
        f"both_nil_bid_shade: 1\nstages:\n"
        f"  - {{name: a, kind: ppo, config: configs/train/smoke.yaml, updates: 1, {fast}}}\n"
    )
    final = run_pipeline(load_pipeline(p), log=lambda _: None)
    assert final == tmp_path / "policy"
    spec = json.loads((final / "agent.json").read_text())
    assert spec["bot"] == "search:samples=20" and spec["network"] == "."
    assert spec["search_after_opponent_bid"] == ["blind_nil", "nil"]
    assert spec["search_after_partner_bid"] == ["nil", "blind_nil"]
    assert spec["both_nil_bid_shade"] == 1
    assert isinstance(load_policy(final, seed=0), CheckpointPolicy)  # the network alone
    pol = load(str(final), seed=0)
    assert isinstance(pol, SearchDefencePolicy) and pol.against == ("blind_nil", "nil")
    assert pol.cover == ("nil", "blind_nil") and pol.bid_shade == 1
    stage = tmp_path / "runs" / "a" / "final"  # the stage's own checkpoint is left as trained
    assert "search_defence" not in (json.loads((stage / "meta.json").read_text()).get("policy") or {})
    assert isinstance(load_policy(stage, seed=0), CheckpointPolicy)


def test_the_committed_pipeline_marks_its_export_as_the_shipped_policy():
    from spades_env.policies.agents import SPEC_FILE, agent_dir
    from spades_env.policies.checkpoint import _SHIPPED_FOR

    pl = load_pipeline(ROOT / "configs" / "train" / "pipeline.yaml")
    shipped = json.loads((agent_dir(_SHIPPED_FOR[4]) / SPEC_FILE).read_text())
    assert pl.search_defence == shipped["bot"]
    assert list(pl.search_defence_against) == shipped["search_after_opponent_bid"]
    assert list(pl.search_defence_cover) == shipped["search_after_partner_bid"]
    assert pl.both_nil_bid_shade == shipped.get("both_nil_bid_shade", 0)


def test_the_documented_pipeline_example_loads(tmp_path):
    import training.pipeline as pipeline_mod

    doc = pipeline_mod.__doc__
    example = doc[doc.index("    runs: runs/pipeline") :]
    example = "\n".join(line[4:] for line in example.splitlines() if line.startswith("    "))
    p = tmp_path / "pipe.yaml"
    p.write_text(example)
    pl = load_pipeline(p)
    assert pl.search_defence == "" and pl.search_defence_against == () and pl.search_defence_cover == ()
    assert pl.both_nil_bid_shade == 0
    assert [st.name for st in pl.stages][:2] == ["bc", "bc2"]
    p.write_text("search_defence_cover: []\n" + "\n".join(example.splitlines()[1:]))
    assert load_pipeline(p).search_defence_cover == ()  # an empty cover needs no bot


def test_committed_pipelines_load():
    for name in ("pipeline.yaml", "pipeline_smoke.yaml", "pipeline_2p.yaml"):
        from training.pipeline import stage_config

        pl = load_pipeline(ROOT / "configs" / "train" / name)
        assert [stage_config(pl, st).__class__.__name__ for st in pl.stages][0] == "BCConfig"


@pytest.mark.parametrize(
    "text, words",
    [
        ("stages: []\n", r"'stages' must be a non-empty list"),
        (
            "stages:\n  - {name: a, kind: bc, config: configs/train/bc.yaml, stop_at: 3}\n",
            r"stages\[0\].*'stop_at' is for ppo stages",
        ),
        ("stagez: []\n", r"unknown key 'stagez'"),
        ("export: x\nsearch_defence: nobody\nstages: []\n", r"'search_defence': unknown policy 'nobody'"),
        ("search_defence: search\nstages: []\n", r"'search_defence' marks the exported checkpoint"),
        (
            "export: x\nsearch_defence: search\nsearch_defence_against: [nil, trump]\nstages: []\n",
            r"'search_defence_against': unknown bid 'trump'",
        ),
        ("export: x\nsearch_defence_against: [nil]\nstages: []\n", r"'search_defence_against' needs a bot"),
        (
            "export: x\nsearch_defence: search\nsearch_defence_cover: [nil, nil]\nstages: []\n",
            r"'search_defence_cover': a bid is listed twice",
        ),
        ("export: x\nsearch_defence_cover: [nil]\nstages: []\n", r"'search_defence_cover' needs a bot"),
        ("export: x\nboth_nil_bid_shade: 1\nstages: []\n", r"'both_nil_bid_shade' needs a bot"),
        (
            "export: x\nsearch_defence: search\nboth_nil_bid_shade: -1\nstages: []\n",
            r"'both_nil_bid_shade': expected a whole number of tricks 0..12, got -1",
        ),
        (
            "stages:\n  - {name: a, kind: ppo, config: configs/train/smoke.yaml, init_from: b}\n",
            r"stages\[0\].*'init_from': 'b' is not an earlier bc or ppo stage",
        ),
        ("stages:\n  - {name: a, kind: sft, config: configs/train/smoke.yaml}\n", r"stages\[0\].*'kind'"),
        ("stages:\n  - {name: a, kind: ppo, config: nope.yaml}\n", r"'config': no such config file"),
        (
            "stages:\n  - {name: a, kind: ppo, config: configs/train/smoke.yaml, updates: -1}\n",
            r"'updates' must be a positive integer",
        ),
    ],
)
def test_pipeline_file_errors_name_key_and_file(tmp_path, text, words):
    p = tmp_path / "pipe.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=r"pipe\.yaml.*" + words):
        load_pipeline(p)


def test_pipeline_stage_must_end_by_count(tmp_path):
    p = tmp_path / "pipe.yaml"
    p.write_text(
        "stages:\n  - {name: a, kind: ppo, config: configs/train/smoke.yaml, set: [max_minutes=5]}\n"
    )
    with pytest.raises(ConfigError, match=r"pipe\.yaml.*'max_minutes'.*must be 0"):
        run_pipeline(load_pipeline(p, runs=tmp_path / "runs"))


def test_pipeline_cli_exit_status(tmp_path):
    p = tmp_path / "pipe.yaml"
    p.write_text("stages: 3\n")
    r = subprocess.run(
        [sys.executable, "-m", "training.pipeline", str(p)], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 2 and "pipe.yaml" in r.stderr and "'stages'" in r.stderr


# ---- rules-family configs ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "lines, words",
    [
        (
            "rules_family: [tournament, tournamnt]\n",
            r"'rules_family'.*entry 1 \(tournamnt\).*unknown rules preset",
        ),
        (
            "rules_family: [tournament, {bag_limt: 7}]\n",
            r"'rules_family'.*entry 1.*unknown rule key.*bag_limt",
        ),
        (
            "rules_family: [tournament, two_player]\n",
            r"'rules_family'.*same number of players.*two_player: 2",
        ),
        ("rules_family: tournament\n", r"'rules_family' must be a list"),
        ("rules_family: [tournament, house]\nrules_weights: [1]\n", r"'rules_weights'.*one weight per"),
        ("rules_family: [tournament, house]\nrules_weights: [1, -1]\n", r"'rules_weights'.*non-negative"),
        ("rules_family: [tournament, house]\nrules_weights: [0, 0]\n", r"'rules_weights'.*not all 0"),
        ("rules_weights: [1, 2]\n", r"'rules_weights'.*without rules_family"),
        ("eval_rules: [house, nope]\n", r"'eval_rules'.*entry 1 \(nope\)"),
    ],
)
def test_rules_family_errors_name_key_and_file(tmp_path, lines, words):
    bad = tmp_path / "fam.yaml"
    bad.write_text("num_envs: 4\n" + lines)
    with pytest.raises(ConfigError, match=r"fam\.yaml.*" + words):
        load_train_config(bad)
    bc = tmp_path / "bcfam.yaml"
    bc.write_text("decisions: 100\n" + lines)
    if "eval_rules" not in lines:
        with pytest.raises(ConfigError, match=r"bcfam\.yaml.*" + words):
            load_bc_config(bc)


def test_rules_family_variants_and_bc_teacher():
    cfg = load_train_config(
        SMOKE, [*FAST, "rules_family=[house, {base: tournament, target_score: 300, bag_limit: 7}]"]
    )
    rules = cfg.rules_list()
    assert [r.target_score for r in rules] == [500, 300] and rules[1].bag_limit == 7
    assert all(r.max_hands == 4 for r in rules)  # the config's max_hands applies to every member
    with pytest.raises(ConfigError, match=r"'teacher'.*reads the rules from its observation"):
        load_bc_config(None, [FAMILY, "teacher=greedy"])
    assert load_bc_config(None, [FAMILY, "teacher=search:samples=4"]).teacher == "search:samples=4"
    data = teacher_chunk(["tournament", "house"], "heuristic", 400, 8, 3, [1.0, 1.0])
    assert data["obs"].shape[0] == 400 and data["mask"][np.arange(400), data["action"]].all()


def test_family_run_resumes_exactly(tmp_path):
    ov = [
        *FAST,
        FAMILY,
        "rules_weights=[1, 1, 2]",
        "scripted_bots=[greedy, heuristic, blind]",  # greedy: a Python bot replayed under its game's rules
        "total_decisions=2048",
        "checkpoint_every=1",
    ]
    cfg = load_train_config(SMOKE, ov)
    full = train(cfg, tmp_path / "full")
    assert len(set(full.engine.rules_index.tolist())) > 1
    train(cfg, tmp_path / "half", stop_update=2)
    resumed = train(cfg, tmp_path / "resumed", resume=tmp_path / "half" / "checkpoints" / "ckpt_000002")
    for k, v in full.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[k], v), k
    assert np.array_equal(resumed.engine.states, full.engine.states)
    assert np.array_equal(resumed.engine.rules_index, full.engine.rules_index)
    assert (full.kind == 2).any()


def test_total_updates_ends_the_run(tmp_path):
    cfg = load_train_config(SMOKE, [*FAST, "total_updates=3", "total_decisions=10000000"])
    tr = train(cfg, tmp_path / "r")
    assert tr.update == 3 and (tmp_path / "r" / "final" / "meta.json").is_file()


def test_trainer_uses_numba_workqueue(monkeypatch):
    import os

    from training.ppo import numba_workqueue

    monkeypatch.delenv("NUMBA_THREADING_LAYER", raising=False)
    numba_workqueue()
    assert os.environ["NUMBA_THREADING_LAYER"] == "workqueue"


def test_bc_stages_start_from_and_play_by_earlier_stages(tmp_path):
    from training.pipeline import stage_config

    f = tmp_path / "p.yaml"
    f.write_text(
        "runs: r\nstages:\n"
        "  - {name: a, kind: bc, config: configs/train/bc.yaml}\n"
        "  - {name: b, kind: bc, config: configs/train/bc_search.yaml, init_from: a}\n"
        "  - {name: c, kind: bc, config: configs/train/bc_dagger.yaml, init_from: b, play_by: b}\n"
    )
    pl = load_pipeline(f, runs=tmp_path / "r")
    b, c = stage_config(pl, pl.stages[1]), stage_config(pl, pl.stages[2])
    assert b.init_from == str(tmp_path / "r" / "a" / "final") and b.teacher.startswith("search")
    assert c.init_from == c.play_by == str(tmp_path / "r" / "b" / "final") and c.play_share == 0.5
    bad = tmp_path / "bad.yaml"
    bad.write_text("stages:\n  - {name: a, kind: bc, config: configs/train/bc.yaml, play_by: zz}\n")
    with pytest.raises(ConfigError, match="'play_by': 'zz' is not an earlier stage"):
        load_pipeline(bad)


def test_bc_stages_fit_on_earlier_stages_data(tmp_path):
    from training.pipeline import stage_config

    f = tmp_path / "p.yaml"
    f.write_text(
        "runs: r\nstages:\n"
        "  - {name: a, kind: bc, config: configs/train/bc.yaml}\n"
        "  - {name: b, kind: bc, config: configs/train/bc_search.yaml, init_from: a}\n"
        "  - {name: c, kind: bc, config: configs/train/bc_all.yaml, init_from: a, data_from: [a, b]}\n"
    )
    pl = load_pipeline(f, runs=tmp_path / "r")
    c = stage_config(pl, pl.stages[2])
    assert c.data_from == (str(tmp_path / "r" / "a" / "data"), str(tmp_path / "r" / "b" / "data"))
    assert c.decisions == 0 and c.soft_temperature > 0
    for text, words in (
        ("  - {name: c, kind: bc, config: configs/train/bc.yaml, data_from: [zz]}\n", "'data_from': 'zz' is not an earlier bc or rollouts stage"),
        ("  - {name: c, kind: ppo, config: configs/train/smoke.yaml, data_from: [a]}\n", "'data_from' is for bc stages"),
        ("  - {name: c, kind: bc, config: configs/train/bc.yaml, data_from: a}\n", "'data_from' must be a list"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text("stages:\n  - {name: a, kind: bc, config: configs/train/bc.yaml}\n" + text)
        with pytest.raises(ConfigError, match=words):
            load_pipeline(bad)


def test_rollouts_stage_labels_a_stage_and_feeds_a_fit(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(
        """stages:
  - name: a
    kind: bc
    config: configs/train/bc.yaml
    set: [decisions=1500, chunk_decisions=1500, num_envs=16, workers=1, epochs=1, batch_size=256,
          "hidden=[32, 32]", "critic_hidden=[32, 32]", progress=false]
  - name: r
    kind: rollouts
    config: configs/train/rollouts_bids.yaml
    init_from: a
    set: [hands=8, chunk_hands=8, num_envs=8, rollout_batch=64, "rules_family=[tournament, house]", "rules_weights=[]"]
  - name: f
    kind: bc
    config: configs/train/bc_bids.yaml
    init_from: a
    data_from: [r]
    set: ["hidden=[32, 32]", "critic_hidden=[32, 32]", epochs=1, batch_size=64, "rules_family=[tournament]", "rules_weights=[]"]
"""
    )
    pl = load_pipeline(f, runs=tmp_path / "r")
    final = run_pipeline(pl, log=lambda *_: None)
    assert final == tmp_path / "r" / "f" / "final"
    labelled = json.loads((tmp_path / "r" / "r" / "config.json").read_text())
    assert labelled["policy"] == str(tmp_path / "r" / "a" / "final")
    meta = json.loads((final / "meta.json").read_text())
    assert meta["config"]["data_from"] == [str(tmp_path / "r" / "r" / "data")]
    assert meta["config"]["init_from"] == str(tmp_path / "r" / "a" / "final")
    assert meta["bc"]["decisions"] > 16 and meta["config"]["soft_temperature"] > 0
    for text, words in (
        ("  - {name: b, kind: bc, config: configs/train/bc.yaml, init_from: r}\n", "'init_from': 'r' is not an earlier bc or ppo stage"),
        ("  - {name: b, kind: rollouts, config: configs/train/rollouts_bids.yaml, updates: 3}\n", "'updates' is for ppo stages"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(
            "stages:\n  - {name: a, kind: bc, config: configs/train/bc.yaml}\n"
            "  - {name: r, kind: rollouts, config: configs/train/rollouts_bids.yaml, init_from: a}\n" + text
        )
        with pytest.raises(ConfigError, match=words):
            load_pipeline(bad)
