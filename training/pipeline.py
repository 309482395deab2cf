"""The lineage of a policy, from committed configs, with one command.

Run::

    python -m training.pipeline configs/train/pipeline.yaml [--runs DIR] [--only STAGE]

A pipeline file names a root folder and a list of stages, run in order; each stage writes the
run folder ``<runs>/<name>``::

    runs: runs/pipeline            # root of the stages' run folders (--runs overrides)
    export: ""                     # optional: copy the last stage's final checkpoint here
    search_defence: ""             # optional (with export): a bot named in the export's
                                   #   meta.json policy.search_defence (spades_env.policies.composite:
                                   #   it plays the cards after an opponent's Blind Nil)
    # search_defence_against: [blind_nil, nil]  # optional (with search_defence): the opponents'
                                   #   bids it defends (default [blind_nil])
    # search_defence_cover: [nil, blind_nil]    # optional (with search_defence): the partner's
                                   #   bids after which it plays too (default [], none)
    # both_nil_bid_shade: 1        # optional (with search_defence): tricks off the network's bid
                                   #   after the partner's and an opponent's Nil (default 0)
    stages:
      - name: bc                   # behaviour cloning (training.bc)
        kind: bc
        config: configs/train/bc_family.yaml
      - name: bc2                  # behaviour cloning again, from the first one's network
        kind: bc                   #   (init_from works for bc stages too)
        config: configs/train/bc_search.yaml
        init_from: bc
      - name: bc3                  # DAgger: bc2's network plays part of the decisions, the
        kind: bc                   #   teacher labels them all (play_by: an earlier stage)
        config: configs/train/bc_dagger.yaml
        init_from: bc2
        play_by: bc2
      - name: all                  # one fit on the teacher data of earlier bc stages (and its
        kind: bc                   #   own, if its config's decisions > 0)
        config: configs/train/bc_all.yaml
        init_from: bc
        data_from: [bc2, bc3]
      - name: ppo1                 # PPO (training.ppo) from the BC checkpoint
        kind: ppo
        config: configs/train/family.yaml
        init_from: bc              # an earlier stage: its final checkpoint; "ppo1@650": its
                                   #   checkpoint of update 650 (keep it with keep_checkpoints)
        updates: 400               # ends by update count (PPO's total_updates)
        set: [seed=2]              # optional key=value overrides of the stage config
      - name: ppo2
        kind: ppo
        config: configs/train/shipped.yaml
        init_from: ppo1
        stop_at: 650               # optional: stop at this update (the learning rate still
                                   #   anneals over the config's whole run); its checkpoint
                                   #   there is the stage's final
      - name: rollbids             # rollout-valued bids (training.rollouts) of ppo2's
        kind: rollouts             #   policy (init_from: the checkpoint whose bids are valued)
        config: configs/train/rollouts_bids.yaml
        init_from: ppo2
      - name: bids                 # a bc fit from ppo2 on that data (data_from: a bc or
        kind: bc                   #   rollouts stage's <run>/data)
        config: configs/train/bc_bids.yaml
        init_from: ppo2
        data_from: [rollbids]

* **Ends by count.** A PPO stage ends at ``stop_at`` or ``updates`` (or its config's
  ``total_updates`` / ``total_decisions``); ``max_minutes`` must be 0, so a stage is a function
  of its configs.
* **Resumable.** A finished stage leaves ``<run>/stage.json`` (its resolved config and its
  final checkpoint): a rerun skips it. A PPO stage that was stopped resumes exactly from its
  newest intact checkpoint and says which; a stage folder without any checkpoint is started
  over, and the log says so. A finished stage whose configs changed since is an error (delete its
  folder to run it again), so a lineage never mixes two versions of a stage.
* Bad files are :class:`~training.config.ConfigError` messages naming the key and the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spades_env.io.atomic import write_text
from training.checkpoint import CheckpointError
from training.config import ConfigError, config_to_dict, read_config_yaml
from training.runs import NonFiniteError

KINDS = ("bc", "ppo", "rollouts")
TRAINED = ("bc", "ppo")  # the kinds whose stages end in a checkpoint
STAGE_KEYS = ("name", "kind", "config", "init_from", "play_by", "data_from", "updates", "stop_at", "set")
TOP_KEYS = (
    "runs",
    "export",
    "search_defence",
    "search_defence_against",
    "search_defence_cover",
    "both_nil_bid_shade",
    "stages",
)
DONE = "stage.json"


@dataclass(frozen=True)
class Stage:
    name: str
    kind: str
    config: str
    init_from: str = ""
    updates: int = 0
    overrides: tuple[str, ...] = ()
    stop_at: int = 0
    play_by: str = ""
    data_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pipeline:
    runs: Path
    export: str
    stages: tuple[Stage, ...]
    where: str
    search_defence: str = ""
    search_defence_against: tuple[str, ...] = ()
    search_defence_cover: tuple[str, ...] = ()
    both_nil_bid_shade: int = 0


def load_pipeline(path: str | Path, runs: str | Path | None = None) -> Pipeline:
    """A checked pipeline file (ConfigError naming the key and the file if bad)."""
    p = Path(path)
    where = str(p)
    if not p.is_file():
        raise ConfigError(f"{where}: no such pipeline file")
    data = read_config_yaml(p, "pipeline file")
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a pipeline must be a mapping with keys {', '.join(TOP_KEYS)}")
    for k in data:
        if k not in TOP_KEYS:
            raise ConfigError(f"{where}: unknown key {k!r}; known keys: {', '.join(TOP_KEYS)}")
    root = runs if runs is not None else data.get("runs", "runs/pipeline")
    if not isinstance(root, (str, Path)) or not str(root):
        raise ConfigError(f"{where}: key 'runs' must be a folder path, got {root!r}")
    export = data.get("export") or ""
    if not isinstance(export, str):
        raise ConfigError(f"{where}: key 'export' must be a folder path, got {export!r}")
    search_defence = data.get("search_defence") or ""
    against = data.get("search_defence_against")
    cover = data.get("search_defence_cover")
    shade = data.get("both_nil_bid_shade")
    from spades_env.policies.composite import search_defence_problem

    problem = search_defence_problem(search_defence or None, against, cover=cover, bid_shade=shade)
    if problem:
        raise ConfigError(f"{where}: {problem}")
    if search_defence and not export:
        raise ConfigError(f"{where}: key 'search_defence' marks the exported checkpoint: set 'export' too")
    if search_defence and not against:
        raise ConfigError(f"{where}: key 'search_defence' needs 'search_defence_against' (the opponents' bids it searches after)")
    raw = data.get("stages")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: key 'stages' must be a non-empty list of stages")
    stages: list[Stage] = []
    for i, st in enumerate(raw):
        at = f"{where}: stages[{i}]"
        if not isinstance(st, dict):
            raise ConfigError(f"{at}: a stage must be a mapping with keys {', '.join(STAGE_KEYS)}")
        for k in st:
            if k not in STAGE_KEYS:
                raise ConfigError(f"{at}: unknown key {k!r}; known keys: {', '.join(STAGE_KEYS)}")
        name = st.get("name")
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise ConfigError(f"{at}: key 'name' must be a folder name, got {name!r}")
        if name in {s.name for s in stages}:
            raise ConfigError(f"{at}: key 'name': stage {name!r} is named twice")
        kind = st.get("kind")
        if kind not in KINDS:
            raise ConfigError(f"{at}: key 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
        config = st.get("config")
        if not isinstance(config, str) or not Path(config).is_file():
            raise ConfigError(f"{at}: key 'config': no such config file {config!r}")
        init_from = st.get("init_from") or ""
        if not isinstance(init_from, str):
            raise ConfigError(f"{at}: key 'init_from' must be a stage name, got {init_from!r}")
        if init_from:
            src, _, upd = init_from.partition("@")
            trained = [s.name for s in stages if s.kind in TRAINED]
            if src not in trained:
                raise ConfigError(
                    f"{at}: key 'init_from': {src!r} is not an earlier bc or ppo stage "
                    f"(earlier: {', '.join(trained) or 'none'})"
                )
            if upd and not upd.isdigit():
                raise ConfigError(f"{at}: key 'init_from': {init_from!r} is not STAGE or STAGE@UPDATE")
        play_by = st.get("play_by") or ""
        if not isinstance(play_by, str):
            raise ConfigError(f"{at}: key 'play_by' must be a stage name, got {play_by!r}")
        if play_by:
            if kind != "bc":
                raise ConfigError(f"{at}: key 'play_by' is for bc stages")
            if play_by.partition("@")[0] not in {s.name for s in stages if s.kind in TRAINED}:
                raise ConfigError(f"{at}: key 'play_by': {play_by!r} is not an earlier stage")
        data_from = st.get("data_from") or []
        if not isinstance(data_from, list) or not all(isinstance(x, str) for x in data_from):
            raise ConfigError(f"{at}: key 'data_from' must be a list of earlier stage names, got {data_from!r}")
        if data_from and kind != "bc":
            raise ConfigError(f"{at}: key 'data_from' is for bc stages")
        for src in data_from:
            if src not in {s.name for s in stages if s.kind in ("bc", "rollouts")}:
                raise ConfigError(f"{at}: key 'data_from': {src!r} is not an earlier bc or rollouts stage")
        updates = st.get("updates", 0)
        if isinstance(updates, bool) or not isinstance(updates, int) or updates < 0:
            raise ConfigError(f"{at}: key 'updates' must be a positive integer, got {updates!r}")
        if updates and kind != "ppo":
            raise ConfigError(f"{at}: key 'updates' is for ppo stages")
        stop_at = st.get("stop_at", 0)
        if isinstance(stop_at, bool) or not isinstance(stop_at, int) or stop_at < 0:
            raise ConfigError(f"{at}: key 'stop_at' must be a positive integer, got {stop_at!r}")
        if stop_at and kind != "ppo":
            raise ConfigError(f"{at}: key 'stop_at' is for ppo stages")
        sets = st.get("set") or []
        if not isinstance(sets, list) or not all(isinstance(x, str) for x in sets):
            raise ConfigError(f"{at}: key 'set' must be a list of key=value strings, got {sets!r}")
        stages.append(Stage(name, kind, config, init_from, updates, tuple(sets), stop_at, play_by, tuple(data_from)))
    return Pipeline(
        Path(root),
        export,
        tuple(stages),
        where,
        search_defence,
        tuple(against or ()),
        tuple(cover or ()),
        int(shade or 0),
    )


def _stage_source(pl: Pipeline, init_from: str) -> Path:
    src, _, upd = init_from.partition("@")
    run = pl.runs / src
    return run / "checkpoints" / f"ckpt_{int(upd):06d}" if upd else run / "final"


def stage_config(pl: Pipeline, st: Stage) -> Any:
    """The stage's resolved config: its file, ``set``, then ``init_from`` and ``updates``."""
    ov = list(st.overrides)
    if st.init_from:  # a rollouts stage values the decisions of that checkpoint
        key = "policy" if st.kind == "rollouts" else "init_from"
        ov.append(f"{key}={_stage_source(pl, st.init_from)}")
    if st.play_by:
        ov.append(f"play_by={_stage_source(pl, st.play_by)}")
    if st.data_from:
        ov.append("data_from=" + json.dumps([str(pl.runs / src / "data") for src in st.data_from]))
    if st.kind == "bc":
        from training.bc import load_bc_config

        return load_bc_config(st.config, ov or None)
    if st.kind == "rollouts":
        from training.rollouts import load_rollout_config

        return load_rollout_config(st.config, ov or None)
    from training.ppo import load_train_config

    if st.updates:
        ov.append(f"total_updates={st.updates}")
    cfg = load_train_config(st.config, ov or None)
    if cfg.max_minutes > 0:
        raise ConfigError(
            f"{pl.where}: stage {st.name!r}: key 'max_minutes' of {st.config} must be 0 in a pipeline "
            "(stages end by update count)"
        )
    return cfg


def run_stage(pl: Pipeline, st: Stage, log=print) -> Path:
    """Run (or skip, or resume) one stage; returns its final checkpoint (a rollouts
    stage: its data folder)."""
    run = pl.runs / st.name
    cfg = stage_config(pl, st)
    want = {"kind": st.kind, "config_file": st.config, "config": config_to_dict(cfg), "stop_at": st.stop_at}
    done = run / DONE
    if done.is_file():
        have = json.loads(done.read_text())
        if isinstance(have.get("config"), dict):  # keys added to the config since, at their defaults
            defaults = config_to_dict(type(cfg)())
            for k, v in want["config"].items():
                if k not in have["config"] and k in defaults and defaults[k] == v:
                    have["config"][k] = v
        if {k: have.get(k) for k in want} != want:
            raise ConfigError(
                f"{pl.where}: stage {st.name!r} finished in {run} under another config; "
                f"delete {run} to run it again"
            )
        log(f"stage {st.name}: done already ({have['final']})")
        return Path(have["final"])
    if st.init_from:
        src = _stage_source(pl, st.init_from)
        if not (src / "meta.json").is_file():
            raise CheckpointError(f"stage {st.name!r}: init_from {st.init_from!r}: no checkpoint {src}")
    if st.kind == "bc":
        from training.bc import run as run_bc

        log(f"stage {st.name}: behaviour cloning ({st.config}) -> {run}")
        final = run_bc(cfg, run)
        info: dict[str, Any] = {}
    elif st.kind == "rollouts":
        from training.rollouts import run as run_rollouts

        log(f"stage {st.name}: rollout-valued decisions of {cfg.policy} ({st.config}) -> {run}")
        final = run_rollouts(cfg, run)  # its data folder: what later stages read (data_from)
        info = {}
    else:
        from training import runs
        from training.ppo import train

        def note(msg: str) -> None:
            log(f"stage {st.name}: {msg}")

        found = runs.newest_intact(run, note)  # never a silent restart of a stage with checkpoints
        held = runs.holds_run(run)
        if found is not None:
            note(f"PPO ({st.config}) -> {run}, resuming from {found[0]} (update {found[1]})")
            resume: Path | None = found[0]
        else:
            resume = None
            note(
                f"PPO ({st.config}) -> {run}"
                + (f"; starting it over: the folder holds no intact checkpoint ({held})" if held else "")
            )
        tr = train(cfg, run, resume, stop_update=st.stop_at or None, overwrite=bool(held) and resume is None, log=note)
        final = run / "final"
        if st.stop_at and tr.update < cfg.updates():  # stopped early by count: its last checkpoint
            last = runs.numbered(run / "checkpoints")
            if tr.update != st.stop_at or not last or last[-1][0] != st.stop_at:
                raise CheckpointError(
                    f"stage {st.name!r}: {run} is at update {tr.update}, not stop_at {st.stop_at}"
                )
            runs.copy_dir(last[-1][1], final)
        info = {"updates": tr.update, "decisions": tr.decisions}
        if not (final / "meta.json").is_file():
            raise CheckpointError(f"stage {st.name!r}: no final checkpoint in {run} (checkpoint_every is 0?)")
    write_text(done, json.dumps({**want, "final": str(final), **info}, indent=2) + "\n")
    return final


def run_pipeline(pl: Pipeline, only: str | None = None, log=print) -> Path:
    """Every stage in order (finished ones skipped); the last stage's final checkpoint."""
    pl.runs.mkdir(parents=True, exist_ok=True)
    final = None
    for st in pl.stages:
        final = run_stage(pl, st, log)
        if only == st.name:
            return final
    assert final is not None
    if pl.export:
        from training.runs import copy_dir

        dst = Path(pl.export)
        dst.parent.mkdir(parents=True, exist_ok=True)
        copy_dir(final, dst)
        if pl.search_defence:  # the export is a composite agent: its network (here) and the bot
            from spades_env.policies.agents import SPEC_FILE, SPEC_FORMAT

            spec = {
                "format": SPEC_FORMAT,
                "kind": "composite",
                "network": ".",
                "bot": pl.search_defence,
                "search_after_opponent_bid": list(pl.search_defence_against),
                "search_after_partner_bid": list(pl.search_defence_cover),
                "both_nil_bid_shade": pl.both_nil_bid_shade,
            }
            write_text(dst / SPEC_FILE, json.dumps(spec, indent=2) + "\n")
        log(f"exported {final} to {dst}" + (f" (search_defence: {pl.search_defence})" if pl.search_defence else ""))
        final = dst
    return final


def main(argv: list[str] | None = None) -> int:
    """``python -m training.pipeline PIPELINE.yaml [--runs DIR] [--only STAGE]``."""
    p = argparse.ArgumentParser(prog="python -m training.pipeline", description=__doc__.split("\n\n")[0])
    p.add_argument("pipeline", help="pipeline YAML (configs/train/pipeline.yaml)")
    p.add_argument("--runs", default=None, help="root of the stages' run folders (overrides the file's)")
    p.add_argument("--only", default=None, metavar="STAGE", help="stop after this stage")
    args = p.parse_args(argv)
    try:
        pl = load_pipeline(args.pipeline, args.runs)
        if args.only is not None and args.only not in {s.name for s in pl.stages}:
            raise ConfigError(f"--only {args.only!r}: no such stage in {pl.where}")
        final = run_pipeline(pl, args.only)
    except (ConfigError, CheckpointError) as exc:
        print(f"training.pipeline: {exc}", file=sys.stderr)
        return 2
    except NonFiniteError as exc:
        print(f"training.pipeline: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        msg = getattr(exc, "message", "interrupted (rerun the pipeline to continue)")
        print(f"training.pipeline: {msg}", file=sys.stderr)
        return 130
    print(f"pipeline done: {final}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Pipeline", "Stage", "load_pipeline", "main", "run_pipeline", "run_stage", "stage_config"]
