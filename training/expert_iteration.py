"""Expert iteration: the network trained on its own search's action values, round after round.

Run::

    python -m training.expert_iteration configs/train/expert_iteration.yaml [--set key=value ...] [--runs DIR]

Each round ``r = 1 .. rounds`` writes ``<runs>/round_<r>``:

1. **Data.** Self-play positions: the current network (``start`` for round 1, then the last
   round's ``final``) plays every seat (``play_share`` of the decisions; the search plays the
   rest), and at every decision the search with that network (``search`` with
   ``net=<current network>``, :mod:`spades_env.policies.bots.netsearch`) records its action
   and its candidates' values (points). Made by ``training.bc``'s chunked generator: each
   chunk is saved under ``<round>/data`` as it is made and a rerun reuses the chunks it has
   (resumable by chunk; a chunk is a function of its task).
2. **Fit.** The network, from the current one, is trained on the search's chosen actions
   (``targets: action``: the network's own choice wherever the search was not confident of a
   better one) or on soft targets (``targets: values``: the softmax of the search's values /
   ``soft_temperature`` over the searched actions, :func:`~training.bc.soft_targets`), plus
   ``replay_rounds`` earlier rounds' data, at a small learning rate (the start is a converged
   network); the forwards run in ``precision`` (``bfloat16``: torch's CPU autocast,
   :func:`training.network.matmul_precision`). Soft targets on 70,000 decisions made the
   network lose 13 to 44 points a hand to its start (the values of 16 playouts are too noisy
   to imitate everywhere); the chosen actions kept it level.
3. **Save and check.** ``<round>/final`` (a checkpoint the search and the arena take by path),
   ``<round>/round.json`` (the round's config, decisions, wall times, fit history, ``retest``:
   ``retest`` of the search's overrides and as many kept rows searched again with another
   seed, the share it reproduces (:mod:`training.retest`: the signal in the labels), and
   ``vs_start``: the new network against the run's ``start`` on house, Blind Nil off and
   tournament rules, 1,000 duplicate single hands each) and ``<runs>/rounds.png`` (those
   margins round by round). A rerun skips a finished round; a finished round whose config
   changed since is an error (delete its folder to make it again), and so is remaking a round
   while later rounds exist (their data came from the network it replaces).

The next round's search runs with the new network. Nothing here plays on a clock: every round
ends by count (``decisions``, ``epochs``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from training.config import ConfigError, config_to_dict, load_config

TARGETS = ("action", "values")
"""What a round fits: the search's chosen actions, or the softmax of its values."""


@dataclass(frozen=True)
class ExpertIterationConfig:
    """Every knob of an expert-iteration run (``configs/train/expert_iteration*.yaml``)."""

    runs: str = "runs/expert_iteration"
    """Folder of the rounds (``--runs`` overrides)."""
    start: str = "spades4_net_v1"
    """The first round's network: a shipped network agent id or a checkpoint folder."""
    rounds: int = 3
    """Rounds of search-then-train."""
    search: str = "netsearch:samples=16,bids=4"
    """The searching teacher (a ``netsearch`` registry name; ``net=`` is set to each round's
    current network)."""
    seed: int = 0
    """Seed of the games, the searches and the fit (round ``r`` uses ``seed + r``)."""
    rules: str = "tournament"
    """Rules preset name or YAML path of the self-play games (unused when ``rules_family`` is set)."""
    rules_family: tuple[Any, ...] = ()
    """A family of rules, one drawn per self-play game (:mod:`training.rules_family`); empty:
    every game plays ``rules``."""
    rules_weights: tuple[float, ...] = ()
    """Weights of the ``rules_family`` members (one each; empty: equal)."""
    label: str = "all"
    """Which decisions the search labels (``training.bc.LABELS``): ``all``, or ``nil_cards``,
    only the card plays of hands where a seat bid Nil or Blind Nil (where the search gains;
    the network plays the rest unlabelled, and ``play_share`` of the labelled ones: with
    ``play_share: 0`` the search plays every card it labels, and the data follows its line)."""
    decisions: int = 200_000
    """Decisions labelled per round."""
    chunk_decisions: int = 5_000
    """Decisions per data chunk (the unit of resumption)."""
    num_envs: int = 64
    """Games in lockstep per chunk."""
    workers: int = 2
    """Processes generating data."""
    play_share: float = 1.0
    """Share of the decisions the current network plays (the search labels every decision):
    1.0, the network's self-play positions; 0.0, the search's own games."""
    targets: str = "action"
    """What the network is fitted to: ``"action"``, the search's chosen action (the network's own
    choice unless the search was confident of a better one); ``"values"``, the softmax of the
    search's values / ``soft_temperature`` over the searched actions."""
    soft_temperature: float = 10.0
    """Soft targets (``targets: values``): softmax of the search's values (points) / this."""
    regret_coef: float = 0.0
    """Added expected regret of the network's choice, in points (``training.bc``)."""
    suit_augment: bool = False
    """Fit every row under a random relabelling of the side suits (``training.bc``)."""
    bidding_weight: float = 1.0
    """Loss weight of the decisions outside the card play."""
    replay_rounds: int = 1
    """Earlier rounds whose data is fitted again with this round's."""
    epochs: int = 2
    """Passes over the data per round."""
    batch_size: int = 2048
    """Minibatch size."""
    learning_rate: float = 3e-4
    """Adam learning rate, decayed to 0 along a cosine within each round."""
    precision: str = "float32"
    """``float32`` or ``bfloat16`` (the forwards under torch's CPU autocast)."""
    torch_threads: int = 2
    """``torch.set_num_threads`` for the fit."""
    val_share: float = 0.02
    """Share of each round's data held out for the accuracy and the regret: its last rows
    (:func:`training.bc.holdout_split`)."""
    retest: int = 200
    """Override rows, and as many kept rows, of each round searched again with another seed
    (``training.retest``: how many of the search's overrides it reproduces; ``round.json``'s
    ``retest``); 0: none."""
    progress: bool = True
    """Progress bars."""

    def validate(self) -> tuple[str, str] | None:
        from spades_env.policies.bots import PolicyNameError, parse_policy_name
        from training.bc import LABELS
        from training.network import PRECISIONS
        from training.rules_family import validate_family

        try:
            base, opts = parse_policy_name(self.search)
        except PolicyNameError as exc:
            return "search", str(exc)
        checks = [
            ("search", base == "netsearch", "must be a netsearch registry name"),
            ("search", "net" not in opts, "must not name net= (each round sets it)"),
            ("rounds", self.rounds >= 1, "must be >= 1"),
            ("decisions", self.decisions >= 1, "must be >= 1"),
            ("chunk_decisions", self.chunk_decisions >= 1, "must be >= 1"),
            ("num_envs", self.num_envs >= 1, "must be >= 1"),
            ("workers", self.workers >= 1, "must be >= 1"),
            ("play_share", 0.0 <= self.play_share <= 1.0, "must be in [0, 1]"),
            ("targets", self.targets in TARGETS, f"must be one of {list(TARGETS)}"),
            ("soft_temperature", self.soft_temperature > 0, "must be > 0"),
            ("regret_coef", self.regret_coef >= 0, "must be >= 0"),
            ("replay_rounds", self.replay_rounds >= 0, "must be >= 0"),
            ("epochs", self.epochs >= 1, "must be >= 1"),
            ("batch_size", self.batch_size >= 1, "must be >= 1"),
            ("learning_rate", self.learning_rate > 0, "must be > 0"),
            ("precision", self.precision in PRECISIONS, f"must be one of {list(PRECISIONS)}"),
            ("val_share", 0.0 <= self.val_share < 1.0, "must be in [0, 1)"),
            ("retest", self.retest >= 0, "must be >= 0"),
            ("label", self.label in LABELS, f"must be one of {list(LABELS)}"),
        ]
        for key, ok, msg in checks:
            if not ok:
                return key, msg
        return validate_family(self.rules_family, self.rules_weights)


def load_ei_config(path: str | Path | None, overrides: list[str] | None = None) -> ExpertIterationConfig:
    """A validated :class:`ExpertIterationConfig` from a YAML file and ``key=value`` overrides."""
    return load_config(ExpertIterationConfig, path, overrides)


def network_dir(spec: str) -> Path:
    """The checkpoint folder of a network agent id or folder."""
    from spades_env.policies.agents import AgentError, network_folder

    try:
        return network_folder(spec, "start:").resolve()
    except AgentError as exc:
        raise ConfigError(str(exc)) from None


def round_bc_config(cfg: ExpertIterationConfig, r: int, net: Path) -> Any:
    """The ``training.bc`` config of round ``r``'s data (its ``teacher`` is the search with
    ``net``; its network shapes are ``net``'s)."""
    from spades_env.policies.checkpoint import load_meta
    from training.bc import BCConfig

    arch = load_meta(net)["arch"]
    return BCConfig(
        run_name=f"round_{r}",
        seed=cfg.seed + r,
        rules=cfg.rules,
        rules_family=cfg.rules_family,
        rules_weights=cfg.rules_weights,
        label=cfg.label,
        teacher=f"{cfg.search},net={net}",
        init_from=str(net),
        bidding_weight=cfg.bidding_weight,
        play_by=str(net) if cfg.play_share > 0 or cfg.label != "all" else "",
        play_share=cfg.play_share,
        soft_temperature=cfg.soft_temperature,
        regret_coef=cfg.regret_coef,
        suit_augment=cfg.suit_augment,
        decisions=cfg.decisions,
        chunk_decisions=cfg.chunk_decisions,
        num_envs=cfg.num_envs,
        workers=cfg.workers,
        val_share=cfg.val_share,
        hidden=tuple(arch["hidden"]),
        critic_hidden=tuple(arch["critic_hidden"]),
        score_clip=arch.get("score_clip"),
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        torch_threads=cfg.torch_threads,
        progress=cfg.progress,
    )


def fit(
    bcfg: Any, data: dict[str, np.ndarray], precision: str, targets: str = "action"
) -> tuple[Any, list[dict[str, Any]]]:
    """``training.bc``'s imitation fit with the forwards in ``precision``: cross-entropy against
    the search's actions (``targets="action"``) or its soft targets (``"values"``)."""
    import torch

    from spades_env.core.actions import NUM_ACTIONS
    from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE
    from training.bc import batch_loss, card_play_regret, holdout_split, relabel_suits
    from training.network import ActorCritic, masked_logits, matmul_precision, run_mlp
    from training.resume import init_weights
    from training.sparse_input import SparseRows

    if bcfg.torch_threads > 0:
        torch.set_num_threads(bcfg.torch_threads)
    torch.manual_seed(bcfg.seed)
    gen = torch.Generator().manual_seed(bcfg.seed)
    model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, bcfg.hidden, bcfg.critic_hidden, bcfg.score_clip)
    init_weights(model, bcfg, bcfg.init_from)
    obs = torch.from_numpy(data["obs"])
    mask = torch.from_numpy(data["mask"])
    action = torch.from_numpy(data["action"].astype(np.int64))
    values = torch.from_numpy(data["values"])
    n = len(action)
    val, train_idx = holdout_split(n, bcfg.val_share)
    opt = torch.optim.Adam(model.actor.parameters(), lr=bcfg.learning_rate)
    steps = max(1, bcfg.epochs * -(-len(train_idx) // bcfg.batch_size))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    history: list[dict[str, float]] = []
    for epoch in range(bcfg.epochs):
        perm = train_idx[torch.randperm(len(train_idx), generator=gen)]
        total, count = 0.0, 0
        for s in range(0, len(perm), bcfg.batch_size):
            mb = perm[s : s + bcfg.batch_size]
            x, m, a, v = obs[mb], mask[mb], action[mb], values[mb]
            if bcfg.suit_augment:
                x, m, a, v = relabel_suits(x, m, a, v, gen)
            with matmul_precision(precision):
                out = run_mlp(model.actor, SparseRows.from_dense(x.float().numpy()))
            logits = masked_logits(out.float(), m)
            temperature = bcfg.soft_temperature if targets == "values" else 0.0
            loss = batch_loss(logits, x, m, a, v, temperature, bcfg.regret_coef, bcfg.bidding_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(mb)
            count += len(mb)
        row: dict[str, Any] = {"epoch": epoch + 1, "loss": total / max(count, 1)}
        if len(val):
            with torch.no_grad():
                lv = masked_logits(model.actor(obs[val].float()), mask[val])
            row["val_agreement"] = float((lv.argmax(-1) == action[val]).float().mean())
            row["val_regret_card_play"] = card_play_regret(model, obs[val], mask[val], values[val])
        row = {k: (v if np.isfinite(v) else None) for k, v in row.items()}  # JSON: finite numbers only
        history.append(row)
        print(json.dumps(row), flush=True)
    return model, history


def _round_folders(root: Path) -> dict[int, Path]:
    """The ``round_<n>`` folders under ``root`` by round number (other names ignored)."""
    return {int(q.name[6:]): q for q in root.glob("round_*") if q.is_dir() and q.name[6:].isdigit()}


CHECK_RULES = ("house", "no_blind", "tournament")
"""The presets each round's network is played on against the run's start (``vs_start``)."""
CHECK_BOARDS = 500
"""Duplicate boards (two single hands each) of that check, per preset."""


def vs_start(net: Path, start: Path, *, boards: int | None = None, seed: int = 0) -> dict[str, Any]:
    """``net``'s margin per hand (mean, 95% CI) against ``start`` on each of :data:`CHECK_RULES`:
    ``boards`` (default :data:`CHECK_BOARDS`) duplicate boards of single hands, both networks
    batched (seconds)."""
    boards = CHECK_BOARDS if boards is None else boards
    from spades_env.core.rules import rules_item
    from spades_env.eval.duplicate import run_duplicate
    from spades_env.eval.stats import summarize

    out: dict[str, Any] = {}
    for item in CHECK_RULES:
        label, rules = rules_item(item)
        res = run_duplicate((str(net), str(net)), (str(start), str(start)), boards, seed=seed, rules=rules,
                            fmt="hand", batched=True)
        m = summarize(res, "hand", ("round", "start"), seed=seed)["margin_per_hand"]
        out[label] = {"mean": float(m["mean"]), "ci95": [float(x) for x in m["ci95"]], "hands": 2 * boards}
    return out


def plot_rounds(root: Path, out_png: Path | None = None) -> Path | None:
    """The rounds' ``vs_start`` margins (one line per preset, 95% CI bars) as ``<root>/rounds.png``;
    None without matplotlib or finished rounds."""
    from spades_env.eval.report import pyplot, save_figure

    rows = []
    for r, folder in sorted(_round_folders(root).items()):
        f = folder / "round.json"
        rec = json.loads(f.read_text()) if f.is_file() else {}
        if rec.get("vs_start"):
            rows.append((r, rec["vs_start"]))
    plt = pyplot()
    if plt is None or not rows:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, label in enumerate(rows[0][1]):
        xs = [x + 0.04 * (i - 1) for x in [0] + [r for r, _ in rows]]  # side by side
        ms = [0.0] + [v[label]["mean"] for _, v in rows]
        lo = [0.0] + [v[label]["mean"] - v[label]["ci95"][0] for _, v in rows]
        hi = [0.0] + [v[label]["ci95"][1] - v[label]["mean"] for _, v in rows]
        ax.errorbar(xs, ms, yerr=[lo, hi], marker="o", capsize=3, label=label)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("round (0: the start)")
    ax.set_ylabel("margin per hand against the start")
    ax.set_xticks([0] + [r for r, _ in rows])
    ax.set_title("Expert iteration: each round's network against the start")
    ax.legend()
    return save_figure(fig, out_png or root / "rounds.png")


def _round_config(cfg: ExpertIterationConfig, r: int, net: Path) -> dict[str, Any]:
    d = config_to_dict(cfg)
    d.pop("runs", None)
    d.pop("progress", None)
    d.pop("workers", None)  # how many processes make a chunk does not change it
    d.pop("rounds", None)  # nor how many rounds follow (a run extended by more rounds keeps its first)
    d.pop("retest", None)  # a measurement of the data, not a change to it
    for k, default in (("rules_family", []), ("rules_weights", []), ("label", "all")):
        if d.get(k) == default:  # (rounds made before these knobs keep their key)
            d.pop(k)
    return {"round": r, "net": str(net), "config": d}


def run_round(cfg: ExpertIterationConfig, r: int, net: Path, folder: Path, start: Path | None = None) -> Path:
    """Round ``r`` from network ``net`` into ``folder``; returns its final checkpoint. With
    ``start``, the new network is also played against it (``vs_start`` in ``round.json``)."""
    from training.bc import generate, saved_data
    from training.checkpoint import save_checkpoint

    done = folder / "round.json"
    key = _round_config(cfg, r, net)
    if done.is_file():
        old = json.loads(done.read_text())
        if old.get("key") != key:
            raise ConfigError(
                f"{folder}: round {r} was made under another config or network; delete the folder to make it again"
            )
        print(f"round {r}: done ({folder / 'final'})", flush=True)
        return folder / "final"
    later = [q.name for n, q in sorted(_round_folders(folder.parent).items()) if n > r]
    if later:  # their data was made by the searches of networks this round replaces
        raise ConfigError(
            f"{folder}: round {r} is to be made again but later rounds exist ({', '.join(later)}), made with "
            "its old network; delete them first"
        )
    folder.mkdir(parents=True, exist_ok=True)
    bcfg = round_bc_config(cfg, r, net)
    t0 = time.monotonic()
    data = generate(bcfg, folder / "data")
    own = len(data["action"])
    earlier = [str(folder.parent / f"round_{q}" / "data") for q in range(max(1, r - cfg.replay_rounds), r)]
    if earlier:
        data = saved_data(earlier, True, last=data)  # this round's games last: the held-out tail
    mine = slice(len(data["action"]) - own, None)  # this round's own rows
    t1 = time.monotonic()
    valued = int(np.isfinite(data["values"][mine].astype(np.float32)).any(axis=1).sum())
    print(f"round {r}: {own} decisions ({valued} valued) in {t1 - t0:.0f} s; fitting {len(data['action'])}", flush=True)
    model, history = fit(bcfg, data, cfg.precision, cfg.targets)
    t2 = time.monotonic()
    from training.bc import rules_meta

    meta = {
        **rules_meta(cfg.rules, cfg.rules_family),
        "config": config_to_dict(bcfg),
        "trainer": "training.expert_iteration",
        "policy": {"deterministic": True},
        "bc": {  # the round's fit (the metadata's key for a fit on a teacher's labels)
            "teacher": bcfg.teacher,
            "init_from": str(net),
            "expert_iteration_round": r,
            "decisions": own,
            "fitted": int(len(data["action"])),
            "history": history,
            "data_seconds": round(t1 - t0, 1),
            "fit_seconds": round(t2 - t1, 1),
        },
        "decisions": own,
        "evaluation": [],
    }
    path = save_checkpoint(folder / "final", model, meta)
    check = vs_start(path, start, seed=cfg.seed) if start is not None else None
    retest = retest_round(cfg, r, net, {k: v[mine] for k, v in data.items()}) if cfg.retest > 0 else None
    tmp = folder / ".round.json.tmp"
    record = {"key": key, "decisions": own, "valued": valued, "data_seconds": round(t1 - t0, 1),
              "fit_seconds": round(t2 - t1, 1), "history": history, "retest": retest, "vs_start": check}
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    tmp.replace(done)
    print(f"round {r}: saved {path} ({t2 - t0:.0f} s)", flush=True)
    if check:
        print(f"round {r} against the start: " + ", ".join(
            f"{k} {v['mean']:+.1f} [{v['ci95'][0]:+.1f}, {v['ci95'][1]:+.1f}]" for k, v in check.items()), flush=True)
    plot_rounds(folder.parent)
    return path


def retest_round(cfg: ExpertIterationConfig, r: int, net: Path, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Round ``r``'s labels searched again (``training.retest``): ``cfg.retest`` of the search's
    overrides of ``net`` and as many kept rows, by the same search under another seed."""
    from spades_env.core.rules import load_rules
    from spades_env.policies.bots import make_policy
    from spades_env.policies.bots.netsearch import load_actor_of
    from training.retest import network_choices, retest_labels

    seed = 1_000_003 * (cfg.seed + r) + 17  # not a seed the round's chunks use
    search = make_policy(f"{cfg.search},net={net}", seed=seed, rules=load_rules(cfg.rules))
    choice = network_choices(load_actor_of(str(net)), data["obs"], data["mask"])
    out = retest_labels(data, choice, search, cfg.retest, seed=seed)
    print(f"round {r}: the search overrode its network on {out['overrides']} of {out['searched']} searched rows; "
          f"searched again, {out['reproduced']} of {out['retested_overrides']} overrides reproduced, "
          f"{out['kept']} of {out['retested_kept']} kept rows kept ({out['seconds']} s)", flush=True)
    return out


def run(cfg: ExpertIterationConfig, runs: str | Path | None = None) -> Path:
    """Every round in turn (finished ones skipped); returns the last round's checkpoint."""
    if cfg.workers > 1:  # the data workers' NumPy (spawned, loaded after this): one BLAS thread
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    root = Path(runs if runs is not None else cfg.runs)
    start = net = network_dir(cfg.start)
    for r in range(1, cfg.rounds + 1):
        net = run_round(cfg, r, net, root / f"round_{r}", start).resolve()
    return net


def main(argv: list[str] | None = None) -> int:
    """``python -m training.expert_iteration CONFIG [--set key=value ...] [--runs DIR]``."""
    p = argparse.ArgumentParser(prog="python -m training.expert_iteration", description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="expert-iteration config YAML")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--runs", default=None, help="folder of the rounds (default: the config's runs)")
    args = p.parse_args(argv)
    try:
        cfg = load_ei_config(args.config, args.overrides)
        run(cfg, args.runs)
    except ConfigError as exc:
        print(f"training.expert_iteration: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("training.expert_iteration: stopped; run the same command again to resume (finished chunks and rounds are kept)",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CHECK_RULES", "TARGETS", "ExpertIterationConfig", "fit", "load_ei_config", "main", "round_bc_config", "plot_rounds", "retest_round", "run", "run_round", "vs_start"]
