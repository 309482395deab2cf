"""Rollout-valued bids: what each alternative bid would have scored, played out on the true deal.

Run::

    python -m training.rollouts --config configs/train/rollouts_bids.yaml [--set key=value ...] [--out runs/rollouts_bids]
    python -m training.rollouts --report runs/rollouts_bids/data      # what each change of bid scores

1. **Play.** A checkpoint policy (``policy``, deterministic) plays one team of ``num_envs``
   games on the batched engine against ``opponents`` (one per game slot in turn: bots names,
   or ``self`` for the policy itself), with a scripted partner (``partner``) in
   ``partner_share`` of the slots; the rules are drawn per game from ``rules_family``.
2. **Label.** At each of the policy's bids, every candidate bid (the legal bids within
   ``bid_window`` of its own, and Nil with ``nil``) is tried on the *true deal*: the rest of
   the hand is played out by the same players, and the bid's value is the hand's margin (the
   team's score change minus the other team's: sets, bags and Nils included). The seat never
   sees the deal: one deal is one sample of a bid's value given what the seat knows, and a fit
   averages over many. All the candidates of a decision share the deal, so their differences
   are far less noisy than their values. A share ``keep_play`` of the policy's other decisions
   is kept with its own action as the label (what anchors a fit to the policy elsewhere).
3. **Save.** Chunks in ``training.bc``'s format (``obs``, ``mask``, ``action``, ``values``: NaN
   where not valued) under ``<out>/data``, for a ``training.bc`` fit with ``data_from`` (its
   ``soft_temperature`` and ``regret_coef`` read the values; ``init_from`` the policy). A
   stopped run made again keeps the chunks it has.

``--report DATA`` prints, from saved data, what changing the policy's bid by -2..+2 tricks or to
Nil would have changed in the hand's margin on average, by bidding situation (a policy whose
every change loses has bids that are locally optimal against these players).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.cli.common import ListOption
from spades_env.core import layout as L
from spades_env.core.actions import BID_BASE, NUM_ACTIONS
from spades_env.core.observation import public_bids
from spades_env.io.atomic import write_text
from training.config import ConfigError, config_to_dict, load_config
from training.rules_family import load_family, validate_family


@dataclass(frozen=True)
class RolloutConfig:
    """Every knob of a rollout labelling run (``configs/train/rollouts_*.yaml``)."""

    run_name: str = "rollouts"
    """Name of the run: the default output directory is ``runs/<run_name>``."""
    seed: int = 0
    """Seed of the games (deals, dealers, rules drawn per game)."""
    policy: str = "checkpoints/spades4_net_v1"
    """Checkpoint path of the policy whose decisions are labelled (played deterministically)."""
    rules_family: tuple[Any, ...] = ("tournament",)
    """The rules, one drawn per game (``training.rules_family``)."""
    rules_weights: tuple[float, ...] = ()
    """Weights of the ``rules_family`` members (empty: equal)."""
    opponents: tuple[str, ...] = ("heuristic", "blind", "self")
    """The other team in each game slot, in turn: a bots name, or ``self`` (the policy)."""
    partner: str = "heuristic"
    """The policy's partner in ``partner_share`` of the slots (a bots name)."""
    partner_share: float = 0.2
    """Share of the game slots where the policy's partner is ``partner``."""
    hands: int = 20_000
    """Hands to play."""
    chunk_hands: int = 2_000
    """Hands per saved chunk."""
    bid_window: int = 2
    """Candidate bids: the policy's bid +- this many tricks (legal ones)."""
    nil: bool = True
    """Also try Nil where it is legal."""
    keep_play: float = 0.05
    """Share of the policy's other decisions kept, labelled with its own action."""
    num_envs: int = 256
    """Games played together."""
    rollout_batch: int = 4096
    """Candidate actions played out together."""
    workers: int = 1
    """Processes making chunks at once (the data does not depend on it)."""
    progress: bool = True
    """Show a progress bar."""

    def validate(self) -> tuple[str, str] | None:
        """The first bad key and why, or None (``training.config`` raises it, naming the file)."""
        checks = (
            ("policy", bool(self.policy), "must name a checkpoint"),
            ("hands", self.hands >= 1, "must be >= 1"),
            ("chunk_hands", self.chunk_hands >= 1, "must be >= 1"),
            ("bid_window", 0 <= self.bid_window <= 13, "must be 0..13"),
            ("keep_play", 0.0 <= self.keep_play <= 1.0, "must be in [0, 1]"),
            ("partner_share", 0.0 <= self.partner_share <= 1.0, "must be in [0, 1]"),
            ("num_envs", self.num_envs >= 2, "must be >= 2"),
            ("rollout_batch", self.rollout_batch >= 16, "must be >= 16"),
            ("workers", self.workers >= 1, "must be >= 1"),
            ("opponents", len(self.opponents) >= 1, "must name at least one opponent"),
        )
        for key, ok, why in checks:
            if not ok:
                return key, why
        return validate_family(self.rules_family, self.rules_weights)


def load_rollout_config(path: str | Path | None, overrides: list[str] | None = None) -> RolloutConfig:
    """The config of ``path`` (defaults if None) with ``key=value`` overrides, checked."""
    return load_config(RolloutConfig, path, overrides)


# ---- players ------------------------------------------------------------------------------------
class Table:
    """Who plays each seat of each game slot: ``kind[slot, seat]`` indexes ``players``
    (0: the policy), the policy's team is ``team[slot]``."""

    def __init__(self, cfg: RolloutConfig, rules: Any) -> None:
        from spades_env.policies.base import batch_key_of
        from spades_env.policies.registry import resolve_policy

        self.policy = resolve_policy(cfg.policy, cfg.seed, rules)
        if batch_key_of(self.policy) is None:
            raise ConfigError(
                f"policy: {cfg.policy!r} has no batched form (BatchPolicy): give a checkpoint, an agent or L2"
            )
        names = ["policy"] + sorted({n for n in (*cfg.opponents, cfg.partner) if n != "self"})
        self.players = [self.policy] + [resolve_policy(n, cfg.seed, rules) for n in names[1:]]
        index = {n: i for i, n in enumerate(names)}
        index["self"] = 0
        b = cfg.num_envs
        self.team = np.arange(b) % 2
        self.kind = np.zeros((b, 4), dtype=np.int64)
        n_partner = round(cfg.partner_share * b)
        for slot in range(b):
            t = self.team[slot]
            opp = index[cfg.opponents[(slot // 2) % len(cfg.opponents)]]
            self.kind[slot, 1 - t] = self.kind[slot, 3 - t] = opp
            if slot >= b - n_partner:
                self.kind[slot, t + 2] = index[cfg.partner]

    def learner(self, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Which (slot, seat to act) pairs are the labelled policy's decisions."""
        return (seats % 2 == self.team[slots]) & (self.kind[slots, seats] == 0)

    def actions(self, kinds: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Each row's action by player ``kinds[row]``, one batched call per player."""
        from spades_env.policies.base import act_rows

        out = np.empty(len(kinds), dtype=np.int64)
        for k in np.unique(kinds).tolist():
            rows = np.flatnonzero(kinds == k)
            out[rows] = act_rows([self.players[k]] * rows.size, obs[rows], mask[rows])
        return out


def candidate_bids(own: int, mask: np.ndarray, window: int, nil: bool) -> list[int]:
    """The legal bid actions within ``window`` of ``own`` (an action id), and Nil with ``nil``."""
    bid = own - BID_BASE
    out = [BID_BASE + b for b in range(max(0, bid - window), min(13, bid + window) + 1) if mask[BID_BASE + b]]
    if nil and mask[BID_BASE] and BID_BASE not in out:
        out.insert(0, BID_BASE)
    return out


def valued_rows(mask: np.ndarray) -> np.ndarray:
    """Which of the policy's decisions (rows of action masks) are valued: its bids."""
    return mask[:, BID_BASE : BID_BASE + 14].any(axis=1)


def _blind_nil(bids: np.ndarray) -> dict[str, np.ndarray]:
    """Rows of ``public_bids`` where the opponents (relative seats 1, 3) or the partner (2)
    declared Blind Nil."""
    bn = bids == L.BID_BLIND_NIL
    return {"opponents": bn[:, 1] | bn[:, 3], "partner": bn[:, 2]}


# ---- 1. play ------------------------------------------------------------------------------------
def play(cfg: RolloutConfig, table: Table, hands: int, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``hands`` hands of fresh games: the policy's kept decisions (``obs``, ``mask``,
    ``action``) and its valued decisions with their state rows (``state``, ``params``,
    ``ridx``, ``slot``, plus ``obs``, ``mask``, ``action``, and ``played``: the margin of the
    hand as it was played)."""
    from spades_env.envs.vector import VectorSpades

    family = load_family(list(cfg.rules_family))
    eng = VectorSpades(cfg.num_envs, family, episode="game", seed=seed, rules_weights=cfg.rules_weights or None)
    res = eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    slots = np.arange(cfg.num_envs)
    kept: dict[str, list] = {"obs": [], "mask": [], "action": []}
    valued: dict[str, list] = {"obs": [], "mask": [], "action": [], "state": [], "params": [], "ridx": [], "slot": []}
    played: list[float] = []  # per valued decision, the margin of its hand as played
    waiting: dict[int, list[int]] = {}  # slot -> its valued decisions whose hand is not scored yet
    done = 0
    while done < hands or waiting:  # once enough hands are scored, only the hands begun go on
        seats = res.seat.copy()
        obs, mask = res.obs, res.mask
        acts = table.actions(table.kind[slots, seats], obs, mask)
        mine = table.learner(slots, seats) & (done < hands)
        chosen = mine & valued_rows(mask)
        keep = mine & ~chosen & (rng.random(cfg.num_envs) < cfg.keep_play) & (mask.sum(axis=1) > 1)
        for part, rows in ((valued, np.flatnonzero(chosen)), (kept, np.flatnonzero(keep))):
            part["obs"].append(obs[rows].astype(np.float16))
            part["mask"].append(mask[rows].astype(np.bool_))
            part["action"].append(acts[rows].astype(np.int8))
        rows = np.flatnonzero(chosen)
        valued["state"].append(eng.states[rows].copy())
        valued["params"].append(eng.game_params[rows].copy())
        valued["ridx"].append(eng.rules_index[rows].copy())
        valued["slot"].append(rows)
        for slot in rows.tolist():
            waiting.setdefault(slot, []).append(len(played))
            played.append(np.nan)
        res = eng.step(acts)
        for slot in np.flatnonzero(eng.hand_done).tolist():
            hd = eng.hand_end_states[slot, L.HAND_DELTA : L.HAND_DELTA + 2]
            t = table.team[slot]
            for j in waiting.pop(slot, []):
                played[j] = float(hd[t] - hd[1 - t])
        done += int(eng.hand_done.sum())
    out_bids = {k: np.concatenate(v) for k, v in valued.items()}
    out_bids["played"] = np.asarray(played, dtype=np.float32)
    return {k: np.concatenate(v) for k, v in kept.items()}, out_bids


# ---- 2. label -----------------------------------------------------------------------------------
def rollout_values(cfg: RolloutConfig, table: Table, valued: dict[str, np.ndarray]) -> np.ndarray:
    """``float32 [n, 70]``: for each valued bid, the hand margin of each candidate bid played
    out on the true deal by the same players (NaN for the other actions)."""
    from spades_env.envs.vector import VectorSpades

    n = len(valued["action"])
    values = np.full((n, NUM_ACTIONS), np.nan, dtype=np.float32)
    jobs = [
        (i, a)
        for i in range(n)
        for a in candidate_bids(int(valued["action"][i]), valued["mask"][i], cfg.bid_window, cfg.nil)
    ]
    family = load_family(list(cfg.rules_family))
    size = min(cfg.rollout_batch, max(len(jobs), 1))
    eng = VectorSpades(size, family, episode="game", seed=0)
    for lo in range(0, len(jobs), size):
        part = jobs[lo : lo + size]
        m = len(part)
        idx = np.array([i for i, _ in part], dtype=np.int64)
        active = np.zeros(size, dtype=np.bool_)
        active[:m] = True
        eng.states[:m] = valued["state"][idx]
        eng.game_params[:m] = valued["params"][idx]
        eng.rules_index[:m] = valued["ridx"][idx]
        eng.refresh()  # seats and masks of the restored rows (the first step checks the candidate)
        slot = valued["slot"][idx]
        team = table.team[slot]
        acts = np.zeros(size, dtype=np.int64)  # rows past m stay inactive: never stepped or checked
        acts[:m] = [a for _, a in part]
        out = np.full(m, np.nan, dtype=np.float32)
        for _ in range(80):  # the rest of a hand: at most 3 Blind Nil choices, 3 valued, 6 passes, 52 cards
            res = eng.step(acts, active)
            ended = np.flatnonzero(eng.hand_done[:m] & active[:m])
            if ended.size:
                hd = eng.hand_end_states[ended, L.HAND_DELTA : L.HAND_DELTA + 2]
                t = team[ended]
                out[ended] = hd[np.arange(ended.size), t] - hd[np.arange(ended.size), 1 - t]
                active[ended] = False
            if not active.any():
                break
            rows = np.flatnonzero(active[:m])
            seats = res.seat[rows]
            acts[rows] = table.actions(table.kind[slot[rows], seats], res.obs[rows], res.mask[rows])
        if active.any():
            raise RuntimeError("a rollout did not reach the end of its hand")
        values[idx, np.array([a for _, a in part])] = out
    return values


# ---- the report ---------------------------------------------------------------------------------
DEVIATIONS = (-2, -1, 1, 2)
"""The bid changes the report prices (in tricks; Nil is its own column)."""


def _situations(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Rows of each bidding situation, read from the observations' public bids."""
    bn = _blind_nil(public_bids(obs))
    opp_bn, partner_bn = bn["opponents"], bn["partner"]
    return {
        "every bid": np.ones(len(obs), dtype=np.bool_),
        "no Blind Nil declared": ~opp_bn & ~partner_bn,
        "an opponent declared Blind Nil": opp_bn,
        "the partner declared Blind Nil": partner_bn,
    }


def deviation_report(folders: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
    """Per bidding situation, what changing the labelled policy's bid would have changed in
    the hand's margin, on average over the saved decisions: for each change in
    :data:`DEVIATIONS` and for Nil, the mean of (value of that bid - value of the own bid)
    over the decisions where that bid was a candidate, its standard error and count. The
    policy's own Nil bids are left out (their neighbours are not the same kind of bid)."""
    from training.bc import saved_data

    for folder in folders:
        if not sorted(Path(folder).glob("chunk_*.npz")):
            raise ConfigError(f"--report: no rollout chunks (chunk_*.npz) in {folder}")
    d = saved_data(folders, values=True)
    valued = np.isfinite(d["values"].astype(np.float32)).any(axis=1)
    obs = d["obs"][valued].astype(np.float32)
    act = d["action"][valued].astype(np.int64)
    val = d["values"][valued].astype(np.float32)
    own = val[np.arange(len(act)), act]
    rows = []
    for name, sel in _situations(obs).items():
        sel = sel & (act != BID_BASE)
        row: dict[str, Any] = {"situation": name, "bids": int(sel.sum())}
        for label, target in [(f"{d:+d}", act + d) for d in DEVIATIONS] + [("Nil", np.full_like(act, BID_BASE))]:
            ok = sel & (target >= BID_BASE) & (target < BID_BASE + 14)
            idx = np.flatnonzero(ok)
            diff = val[idx, target[idx]] - own[idx]
            diff = diff[np.isfinite(diff)]
            se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
            row[label] = (float(diff.mean()) if diff.size else float("nan"), se, int(diff.size))
        rows.append(row)
    return rows


def format_report(rows: list[dict[str, Any]]) -> str:
    """The report as a markdown table: mean points per hand [+- standard error]."""
    labels = [f"{d:+d}" for d in DEVIATIONS] + ["Nil"]
    lines = [
        "| situation | bids | " + " | ".join(f"bid {x}" if x != "Nil" else "Nil" for x in labels) + " |",
        "|---|---:|" + "---:|" * len(labels),
    ]
    for r in rows:
        cells = [f"{r[x][0]:+.1f} [+-{r[x][1]:.1f}]" if r[x][2] else "-" for x in labels]
        lines.append(f"| {r['situation']} | {r['bids']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---- 3. the run ---------------------------------------------------------------------------------
def chunk_task(cfg: RolloutConfig, k: int, hands: int) -> list[Any]:
    """What chunk ``k`` (of ``hands`` hands) is a function of: the config but for the total
    ``hands`` and the display knobs, so that a longer run keeps the chunks of a shorter one."""
    keys = {key: v for key, v in config_to_dict(cfg).items() if key not in ("run_name", "hands", "progress", "workers")}
    return [keys, k, hands]


def make_chunk(cfg: RolloutConfig, table: Table, k: int, hands: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Chunk ``k`` (``hands`` hands) in ``training.bc``'s format, and a line of figures on it."""
    t0 = time.time()
    kept, valued = play(cfg, table, hands, cfg.seed * 100_003 + k)
    values = rollout_values(cfg, table, valued)
    own = values[np.arange(len(values)), valued["action"].astype(np.int64)]
    check = {"own_replayed": float(np.mean(own == valued["played"]))}  # 1.0: the rollouts replay the games
    part = {key: np.concatenate([valued[key], kept[key]]) for key in ("obs", "mask", "action")}
    part["values"] = np.concatenate(
        [values, np.full((len(kept["action"]), NUM_ACTIONS), np.nan, dtype=np.float32)]
    ).astype(np.float16)
    info = {"chunk": k, "valued": len(valued["action"]), "kept": len(kept["action"]), **check}
    return part, {**info, "seconds": round(time.time() - t0, 1)}


_TABLES: dict[str, Table] = {}  # per process: the Table of each config, built on its first chunk


def _chunk_job(args: tuple[RolloutConfig, int, int]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    cfg, k, hands = args
    key = json.dumps(config_to_dict(cfg), sort_keys=True, default=str)
    if key not in _TABLES:
        _TABLES.clear()  # one config at a time: the last run's players are let go
        _TABLES[key] = Table(cfg, load_family(list(cfg.rules_family))[0])
    return make_chunk(cfg, _TABLES[key], k, hands)


def run(cfg: RolloutConfig, out: str | Path | None = None, overwrite: bool = False) -> Path:
    """Play, label and save every chunk (``cfg.workers`` processes); returns the data folder
    ``<out>/data``. A folder holding a run with other settings is refused unless
    ``overwrite`` (:func:`training.runs.claim_data_folder`)."""
    from training.bc import cached_chunk, save_chunk
    from training.runs import claim_data_folder

    out_dir = Path(out) if out is not None else Path("runs") / cfg.run_name
    claim_data_folder(out_dir, config_to_dict(cfg), overwrite, "rollout", extend=frozenset({"hands"}))
    data = out_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    write_text(out_dir / "config.json", json.dumps(config_to_dict(cfg), indent=2, default=str))
    n_chunks = -(-cfg.hands // cfg.chunk_hands)
    sizes = {k: min(cfg.chunk_hands, cfg.hands - k * cfg.chunk_hands) for k in range(n_chunks)}
    todo = [k for k in range(n_chunks) if cached_chunk(data, k, chunk_task(cfg, k, sizes[k])) is None]
    bar = None
    if cfg.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_chunks, initial=n_chunks - len(todo), desc="chunks", unit="chunk")
    jobs = [(cfg, k, sizes[k]) for k in todo]
    if cfg.workers == 1 or len(jobs) <= 1:
        done: Any = map(_chunk_job, jobs)
        pool = None
    else:
        from multiprocessing import get_context

        pool = get_context("spawn").Pool(min(cfg.workers, len(jobs)))
        done = pool.imap(_chunk_job, jobs)  # ordered
    try:
        for k, (part, info) in zip(todo, done, strict=True):
            save_chunk(data, k, chunk_task(cfg, k, sizes[k]), part)
            print(json.dumps(info), flush=True)
            if bar is not None:
                bar.update(1)
    finally:
        if pool is not None:
            pool.terminate()
        if bar is not None:
            bar.close()
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=None, help="YAML config (configs/train/rollouts_*.yaml)")
    p.add_argument(  # repeated --set flags add up (with "store", the last one silently replaced the others)
        "--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE", help="override config keys"
    )
    p.add_argument("--out", default=None, help="output folder (default runs/<run_name>)")
    p.add_argument("--overwrite", action="store_true", help="replace a run with other settings in --out")
    p.add_argument(
        "--report", nargs="+", action=ListOption, default=None, metavar="DATA",
        help="print what changing each bid would have scored, from saved data folders (no run)",
    )
    args = p.parse_args(argv)
    try:
        if args.report:
            print(format_report(deviation_report(args.report)))
            return 0
        cfg = load_rollout_config(args.config, args.set)
        run(cfg, args.out, overwrite=args.overwrite)
    except ConfigError as exc:
        print(f"training.rollouts: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

