"""Run folders (issue 37): a folder that holds a run is not overwritten unless asked, a resume
with changed settings is refused unless asked (and then takes effect, and ``config.json`` says
so), resume finds the newest intact checkpoint and says which, a torn history line is
dropped, the pipeline never restarts a stage that has checkpoints without saying so, every
float of a training config is finite, and a run that diverges stops before saving NaN weights.
(The kills and the Ctrl-C are ``test_faults.py``.)"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from pathlib import Path

import pytest

from helpers.training import FAST, SMOKE, one_thread  # noqa: F401

torch = pytest.importorskip("torch")

from safetensors.torch import load_file  # noqa: E402

from training import runs  # noqa: E402
from training.bc import BCConfig, load_bc_config  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.ppo import TrainConfig, load_train_config, main, train  # noqa: E402
from training.rollouts import RolloutConfig, load_rollout_config  # noqa: E402
from training.runs import NonFiniteError, RunFolderError  # noqa: E402

SMALL = [*FAST, "num_envs=4", "num_steps=8", "num_minibatches=2", "hidden=[16]", "critic_hidden=[16]", "total_updates=4"]


def cfg_of(*extra: str) -> TrainConfig:
    return load_train_config(SMOKE, [*SMALL, *extra])


@pytest.fixture
def done_run(tmp_path) -> Path:
    run = tmp_path / "run"
    train(cfg_of(), run, log=lambda _: None)
    return run


def snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def test_a_folder_that_holds_a_run_is_refused(done_run):
    before = snapshot(done_run)
    with pytest.raises(RunFolderError, match=r"holds a run.*--resume.*--overwrite"):
        train(cfg_of("seed=5"), done_run, log=lambda _: None)
    assert snapshot(done_run) == before  # nothing written, nothing deleted
    logs: list[str] = []
    train(cfg_of("seed=5"), done_run, overwrite=True, log=logs.append)
    assert any("deleted the run it held" in m for m in logs)
    assert json.loads((done_run / "config.json").read_text())["seed"] == 5
    assert len(runs.read_history(done_run / "history.jsonl")[0]) == 4


def test_the_command_refuses_a_held_folder(done_run, capsys):
    argv = ["--config", str(SMOKE), "--run-dir", str(done_run)] + [x for o in SMALL for x in ("--set", o)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds a run" in err[0] and "--overwrite" in err[0]


def test_a_resume_with_changed_settings_is_refused_unless_allowed(tmp_path):
    run = tmp_path / "run"
    train(cfg_of(), run, stop_update=2, log=lambda _: None)
    config = (run / "config.json").read_text()
    with pytest.raises(RunFolderError, match=r"learning_rate 0.001 -> 0.5.*--allow-changes"):
        train(cfg_of("learning_rate=0.5"), run, resume=True, log=lambda _: None)
    assert (run / "config.json").read_text() == config  # config.json still tells the truth
    with pytest.raises(RunFolderError, match=r"cannot change seed"):
        train(cfg_of("seed=3"), run, resume=True, allow_changes=True, log=lambda _: None)
    logs: list[str] = []
    tr = train(cfg_of("learning_rate=0.5"), run, resume=True, allow_changes=True, log=logs.append)
    assert any("learning_rate 0.001 -> 0.5" in m for m in logs)
    assert tr.optimizer.param_groups[0]["lr"] == 0.5  # the new value took effect
    assert json.loads((run / "config.json").read_text())["learning_rate"] == 0.5
    final = json.loads((run / "final" / "meta.json").read_text())
    assert final["config"]["learning_rate"] == 0.5
    # keys that only show or pace the run may change freely
    train(cfg_of("learning_rate=0.5", "keep_checkpoints=1"), run, resume=True, log=lambda _: None)


def test_resume_finds_the_newest_intact_checkpoint_and_says_so(tmp_path):
    run = tmp_path / "run"
    train(cfg_of("checkpoint_every=1", "keep_checkpoints=3"), run, stop_update=3, log=lambda _: None)
    (run / "checkpoints" / "ckpt_000003" / "model.safetensors").write_bytes(b"\x00" * 10)  # corrupt
    with (run / "history.jsonl").open("a") as f:
        f.write('{"update": 4, "loss/v_lo')  # a torn last line
    logs: list[str] = []
    tr = train(cfg_of("checkpoint_every=1", "keep_checkpoints=3"), run, resume="latest", log=logs.append)
    text = "\n".join(logs)
    assert "ckpt_000003" in text and "set aside as ckpt_000003.broken" in text
    assert "resuming from" in text and "ckpt_000002 (update 2), the newest intact checkpoint" in text
    assert "dropped 1 rows after update 2" in text and "dropped 1 torn line" in text
    assert tr.update == 4
    rows, bad = runs.read_history(run / "history.jsonl")
    assert bad == 0 and [r["update"] for r in rows] == [1, 2, 3, 4]
    # an explicit checkpoint before newer ones: refused unless --overwrite
    with pytest.raises(RunFolderError, match=r"checkpoints after update 2"):
        train(cfg_of("checkpoint_every=1", "keep_checkpoints=3"), run, resume=run / "checkpoints" / "ckpt_000002")


def test_resume_with_nothing_to_resume_from(tmp_path, capsys):
    run = tmp_path / "empty"
    run.mkdir()
    (run / "config.json").write_text("{}")
    with pytest.raises(RunFolderError, match=r"no intact checkpoint.*--overwrite"):
        train(cfg_of(), run, resume=True, log=lambda _: None)
    argv = ["--config", str(SMOKE), "--run-dir", str(run), "--resume"] + [x for o in SMALL for x in ("--set", o)]
    assert main(argv) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_latest_is_a_pointer_and_final_a_whole_copy(done_run):
    latest = done_run / "checkpoints" / "latest"
    assert latest.is_symlink() and latest.resolve() == (done_run / "checkpoints" / "ckpt_000004").resolve()
    assert runs.check_intact(done_run / "final") == 4
    assert not [p for p in done_run.rglob(".*")]  # no temporary leftovers


def test_the_pipeline_resumes_a_stage_whose_latest_is_gone_and_says_so(tmp_path):
    from training.pipeline import load_pipeline, run_stage

    p = tmp_path / "pipe.yaml"
    fast = "set: [tensorboard=false, eval_boards=0, progress=false, num_envs=4, num_steps=8, num_minibatches=2, total_updates=4]"
    p.write_text(f"runs: {tmp_path / 'runs'}\nstages:\n  - {{name: a, kind: ppo, config: {SMOKE}, {fast}}}\n")
    pl = load_pipeline(p)
    from training.pipeline import stage_config

    run = tmp_path / "runs" / "a"
    train(stage_config(pl, pl.stages[0]), run, stop_update=2, log=lambda _: None)
    (run / "checkpoints" / "latest").unlink()  # as a kill while latest moved once left it
    logs: list[str] = []
    run_stage(pl, pl.stages[0], log=logs.append)
    assert any("resuming from" in m and "ckpt_000002 (update 2)" in m for m in logs), logs
    assert runs.check_intact(run / "final") == 4
    # a stage folder with no checkpoint at all: started over, and the log says so
    run2 = tmp_path / "runs2" / "a"
    run2.mkdir(parents=True)
    (run2 / "history.jsonl").write_text('{"update": 1}\n')
    logs.clear()
    run_stage(load_pipeline(p, runs=tmp_path / "runs2"), pl.stages[0], log=logs.append)
    assert any("starting it over" in m for m in logs), logs


def _float_keys(cls) -> list[str]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        args = typing.get_args(tp)
        if tp is float or float in args or (typing.get_origin(tp) is tuple and args and args[0] is float):
            out.append(f.name)
    return out


@pytest.mark.parametrize(
    "cls,load,path",
    [
        (TrainConfig, load_train_config, SMOKE),
        (BCConfig, load_bc_config, None),
        (RolloutConfig, load_rollout_config, None),
    ],
)
@pytest.mark.parametrize("bad", ["nan", ".nan", ".inf", "-.inf", "inf", "1e999"])
def test_every_float_of_a_config_is_finite(cls, load, path, bad):
    keys = _float_keys(cls)
    assert keys
    for key in keys:
        tp = typing.get_type_hints(cls)[key]
        value = f"[{bad}]" if typing.get_origin(tp) is tuple else bad
        with pytest.raises(ConfigError, match=rf"key '{key}' must be a finite number"):
            load(path, [f"{key}={value}"])


def test_a_huge_integer_is_refused_without_formatting_it(tmp_path):
    with pytest.raises(ConfigError, match=r"num_envs.*an integer of 4000 digits") as exc:
        load_train_config(SMOKE, ["num_envs=" + "9" * 4000])
    assert len(str(exc.value)) < 400
    for digits in (5000, 10**5):  # past Python's own limit: still a ConfigError, still short
        with pytest.raises(ConfigError) as exc:
            load_train_config(SMOKE, ["learning_rate=" + "9" * digits])
        assert len(str(exc.value)) < 600
        f = tmp_path / "big.yaml"
        f.write_text("seed: " + "9" * digits + "\n")
        with pytest.raises(ConfigError, match="big.yaml") as exc:
            load_train_config(f)
        assert len(str(exc.value)) < 600


def test_a_diverging_run_stops_before_saving_nan_weights(tmp_path, capsys):
    run = tmp_path / "run"
    with pytest.raises(NonFiniteError, match=r"diverged"):
        train(cfg_of("learning_rate=1e30", "checkpoint_every=1"), run, log=lambda _: None)
    for _, ckpt in runs.numbered(run / "checkpoints"):
        for name, w in load_file(str(ckpt / "model.safetensors")).items():
            assert torch.isfinite(w).all(), (ckpt, name)
    argv = ["--config", str(SMOKE), "--run-dir", str(tmp_path / "cli")] + [
        x for o in [*SMALL, "learning_rate=1e30"] for x in ("--set", o)
    ]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "diverged" in err[0]
    assert math.isfinite(1e30)  # (a finite learning rate: the weights, not the config, blow up)
