"""Behaviour cloning: a warm start for PPO that imitates a scripted player.

Run::

    python -m training.bc --config configs/train/bc.yaml [--set key=value ...] [--out runs/bc]

1. **Data.** ``workers`` processes play games on the batched engine with every seat played by
   the ``teacher`` bot (a registry name, e.g. ``heuristic``, or L3 ``search:samples=100``),
   and record each decision's observation, action mask and the teacher's action. Bots are
   re-created every hand with a seed from (seed, chunk, game, seat, hand), so the data is a
   function of the config. Each chunk is saved under ``<out>/data`` as it is made: a stopped
   run made again reuses the chunks it has (the slow teachers take hours).
2. **Fit.** The actor of an :class:`~training.network.ActorCritic` (new, or ``init_from`` a
   checkpoint) is trained by cross-entropy on the masked logits (illegal actions never get
   probability), decisions outside the card play weighted ``bidding_weight`` (few, and they
   decide the contract), with a held-out share of the data for the accuracies printed after
   every epoch (all decisions, card play, the rest).
3. **Save.** A checkpoint (``<out>/final``) that the arena and the CLI take by path, and that
   ``training.ppo`` starts from with ``init_from``. Its critic is untrained: PPO's
   ``policy_warmup_updates`` fits it before the policy moves.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import (
    O_PHASE,
    O_RULES,
    OBS_SIZE,
    STATE_VEC_SIZE,
    rules_features,
    score_clip_ok,
)
from spades_env.core.rules import load_rules
from spades_env.io.atomic import write_text
from training.allocator import keep_freed_memory
from training.checkpoint import save_checkpoint
from training.config import ConfigError, config_to_dict, load_config
from training.network import ActorCritic, masked_logits, run_mlp
from training.rules_family import entry_label, load_entry, load_family, validate_family
from training.sparse_input import SparseRows


@dataclass(frozen=True)
class BCConfig:
    """Every knob of a behaviour-cloning run (``configs/train/bc*.yaml``)."""

    run_name: str = "bc"
    """Name of the run: the default output directory is ``runs/<run_name>``."""
    seed: int = 0
    """Seed of the deals, the teacher bots, the initial weights and the minibatches."""
    rules: str = "tournament"
    """Rules preset name or YAML path (unused when ``rules_family`` is set)."""
    rules_family: tuple[Any, ...] = ()
    """A family of rules, one drawn per game (as ``training.ppo``'s, :mod:`training.rules_family`);
    needs a teacher that reads each game's rules from its observation (``heuristic``, ``blind``,
    ``search``, ``netsearch``, a network or a shipped agent). Empty: every game plays ``rules``."""
    rules_weights: tuple[float, ...] = ()
    """Weights of the ``rules_family`` members (one each; empty: equal)."""
    teacher: str = "heuristic"
    """The player to imitate (plays all seats): a bots name with its options
    (``search:samples=100``), a shipped agent id (``spades4_v3``: cloning a search agent) or a
    checkpoint folder."""
    init_from: str = ""
    """Checkpoint to start the network from (its ``hidden``/``critic_hidden`` must match);
    empty: fresh weights."""
    bidding_weight: float = 1.0
    """Loss weight of the decisions outside the card play (Blind Nil, bid, exchange, draw)."""
    play_by: str = ""
    """A policy (bots name or checkpoint path) that plays ``play_share`` of the decisions in
    place of the teacher, every decision still labelled with the teacher's action (DAgger: the
    data then holds the states a student reaches). Empty: the teacher plays every decision."""
    play_share: float = 0.5
    """Share of the decisions ``play_by`` plays (drawn per decision from the chunk's seed)."""
    opponents: tuple[str, ...] = ()
    """Policies (bots names or checkpoint paths) that play the other team (seats 1 and 3) in ``opponent_share`` of the game
    slots, one name per slot in turn, every decision still labelled with the teacher's action:
    the data then holds states against players unlike the teacher (random bidders whose team
    falls thousands of points behind, say). Empty: none."""
    opponent_share: float = 0.0
    """Share of each chunk's ``num_envs`` game slots (rounded) whose other team ``opponents``
    play, for the whole chunk."""
    label: str = "all"
    """Which decisions are labelled (:data:`LABELS`): ``all``, or ``nil_cards``, only the card
    plays of hands where a seat bid Nil or Blind Nil (the teacher is asked nothing else; needs
    ``play_by``, which then plays every unlabelled decision and ``play_share`` of the labelled
    ones: ``play_share: 0`` plays the teacher's action wherever it labels, its own line)."""
    soft_temperature: float = 0.0
    """0: imitate the teacher's action (cross-entropy on one label). > 0: imitate the
    teacher's values where it has them (L3's searched mean hand margins, or the rollout
    margins of ``training.rollouts`` chunks in ``data_from``, in points): the
    target is the softmax of values / ``soft_temperature`` over the searched actions, so a
    near-tie teaches both cards and a clear gap teaches one. Decisions without values keep
    the one label."""
    regret_coef: float = 0.0
    """> 0 (with ``soft_temperature``): add ``regret_coef`` times the expected regret of the
    network's choice to each valued decision's loss, in points: the teacher's best value minus
    the value of each valued action, weighted by the network's probabilities over them. Unlike
    the cross-entropy, this weighs a decision by what is at stake in it."""
    keep_start_on: tuple[Any, ...] = ()
    """Rules (entries as in ``rules_family``: a preset name, a YAML path or a mapping) on which the
    fit imitates the start network (``init_from``) instead of the teacher: every recorded row
    whose observation shows those rules gets the start's own policy as its soft target (its
    values become ``soft_temperature`` x the start's log-probabilities) and the start's likeliest
    action as its label (:func:`keep_start_targets`). For rules where the teacher is the weaker
    player: L3 loses to ``spades4_net_v1`` by about 30 points a hand under tournament rules, and a
    fit to its labels elsewhere moved the network's tournament play too. Each entry must be one
    of ``rules_family`` (or ``rules``); needs ``init_from`` and ``soft_temperature > 0``."""
    decisions: int = 1_000_000
    """Teacher decisions to record (0: none, the fit reads ``data_from`` only)."""
    data_from: tuple[str, ...] = ()
    """Folders of teacher chunks that earlier runs saved (``<run>/data``; in a pipeline, the
    names of earlier stages), added to this run's own decisions for the fit, their values
    with them: one network fitted on every stage's labels."""
    chunk_decisions: int = 200_000
    """Decisions per data chunk (one chunk is one worker task on fresh games)."""
    num_envs: int = 128
    """Games in lockstep per chunk."""
    workers: int = 2
    """Processes generating data."""
    val_share: float = 0.02
    """Share of the data held out for the accuracy: the last rows, the games recorded last
    (:func:`holdout_split`)."""
    hidden: tuple[int, ...] = (256, 256)
    """Actor hidden layer sizes (PPO's ``hidden`` must match to start from this)."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Critic hidden layer sizes (saved untrained; PPO's ``critic_hidden`` must match)."""
    score_clip: float | None = None
    """Clip the network's two score inputs (score / target score) to ``[-score_clip,
    score_clip]`` (``training.network``; recorded in the checkpoint). None: no clip."""
    epochs: int = 3
    """Passes over the data."""
    batch_size: int = 2048
    """Minibatch size."""
    learning_rate: float = 1e-3
    """Adam learning rate, decayed to 0 along a cosine."""
    torch_threads: int = 2
    """``torch.set_num_threads`` for the fit (0: torch's default)."""
    suit_augment: bool = False
    """Show every training row under one of the six relabellings of clubs, diamonds and
    hearts, drawn afresh each time (:func:`relabel_suits`): the rules never tell the side suits
    apart, so each recorded decision stands for six. The held-out rows are not relabelled."""
    sparse_input: bool = True
    """Fit with the actor's first layer computed from the observations' non-zero entries only
    (:mod:`training.sparse_input`; the same results to float rounding, faster). ``false``: dense."""
    keep_freed_memory: bool = True
    """Keep freed memory in the process for the next tensors (glibc only;
    :mod:`training.allocator`): fewer page faults, a faster fit."""
    progress: bool = True
    """Show progress bars."""

    def validate(self) -> tuple[str, str] | None:
        checks = [
            ("decisions", self.decisions >= 0, "must be >= 0 (0: only data_from's)"),
            ("chunk_decisions", self.chunk_decisions > 0, "must be > 0"),
            ("num_envs", self.num_envs > 0, "must be > 0"),
            ("workers", self.workers > 0, "must be > 0"),
            ("val_share", 0.0 <= self.val_share < 0.5, "must be in [0, 0.5)"),
            ("epochs", self.epochs > 0, "must be > 0"),
            ("batch_size", self.batch_size > 0, "must be > 0"),
            ("learning_rate", self.learning_rate > 0, "must be > 0"),
            ("bidding_weight", self.bidding_weight > 0, "must be > 0"),
            ("play_share", 0.0 <= self.play_share <= 1.0, "must be in [0, 1]"),
            ("opponent_share", 0.0 <= self.opponent_share <= 1.0, "must be in [0, 1]"),
            ("opponents", bool(self.opponents) or self.opponent_share == 0, "needs a bots name when opponent_share > 0"),
            ("label", self.label in LABELS, f"must be one of {list(LABELS)}"),
            ("label", self.label == "all" or bool(self.play_by),
             "a filter needs play_by (the unlabelled decisions are the student's)"),
            ("soft_temperature", self.soft_temperature >= 0.0, "must be >= 0 (0: the one label)"),
            ("regret_coef", self.regret_coef >= 0.0, "must be >= 0 (0: cross-entropy only)"),
            ("regret_coef", self.regret_coef == 0 or self.soft_temperature > 0, "needs soft_temperature > 0 (the values)"),
            ("score_clip", score_clip_ok(self.score_clip), "must be a positive number or null"),
            ("hidden", len(self.hidden) > 0 and min(self.hidden) > 0, "needs positive layer sizes"),
        ]
        for name, ok, why in checks:
            if not ok:
                return name, why
        try:
            load_rules(self.rules)
        except Exception as exc:  # noqa: BLE001 - any rules problem is a config problem
            return "rules", str(exc)
        problem = validate_family(self.rules_family, self.rules_weights)
        if problem:
            return problem
        from spades_env.policies.agents import is_agent_id
        from spades_env.policies.bots import make_policy
        from spades_env.policies.registry import resolve_policy

        try:
            teacher = resolve_policy(self.teacher, seed=0, rules=load_rules(self.rules))
        except Exception as exc:  # noqa: BLE001
            return "teacher", str(exc)
        players = [("play_by", self.play_by)] if self.play_by else []
        for key, name in players + [("opponents", name) for name in self.opponents]:
            if "/" in name or Path(name).exists() or is_agent_id(name):  # a checkpoint path (perhaps
                continue  # of a stage not run yet: run() checks that it loads) or a shipped agent
            try:
                make_policy(name, seed=0, rules=load_rules(self.rules))
            except Exception as exc:  # noqa: BLE001
                return key, f"{name!r}: {exc} (a bots name, or a checkpoint path that run() loads)"
        if self.rules_family and not reads_rules(self.teacher):
            return "teacher", (
                f"a rules_family needs a teacher that reads the rules from its observation "
                f"({', '.join(RULES_READING_TEACHERS)}), got {self.teacher!r}"
            )
        problem = self._check_keep_start_on()
        if problem:
            return problem
        if self.soft_temperature > 0 and self.decisions > 0 and not hasattr(teacher, "last_values"):
            return "soft_temperature", (
                f"soft targets need a teacher that values its actions ({', '.join(VALUE_TEACHERS)} "
                "or a search agent), "
                f"got {self.teacher!r}"
            )
        return None

    def _check_keep_start_on(self) -> tuple[str, str] | None:
        if not self.keep_start_on:
            return None
        if not self.init_from:
            return "keep_start_on", "needs init_from (the start network it imitates there)"
        if self.soft_temperature <= 0:
            return "keep_start_on", "needs soft_temperature > 0 (the start's policy is a soft target)"
        played = [rules_features(r.to_params()) for r in played_rules(self.rules, self.rules_family)]
        for k, entry in enumerate(self.keep_start_on):
            try:
                rules = load_entry(entry)
            except (ValueError, OSError, TypeError) as exc:
                return "keep_start_on", f"entry {k} ({entry_label(entry)}): {exc}"
            if not any(np.array_equal(rules_features(rules.to_params()), f) for f in played):
                return "keep_start_on", f"entry {k} ({entry_label(entry)}) is not among the rules the games play"
        return None


def played_rules(rules: str, rules_family: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
    """The rules the games play: every ``rules_family`` member, or ``rules`` alone."""
    return load_family(list(rules_family)) if rules_family else [load_rules(rules)]


def rules_meta(rules: str, rules_family: tuple[Any, ...] | list[Any] = ()) -> dict[str, Any]:
    """A checkpoint metadata's rules: ``rules`` (the family's first member, where there is a
    family) and, with a family, ``rules_family`` (every member)."""
    family = played_rules(rules, rules_family)
    return {"rules": family[0].to_dict(), **({"rules_family": [r.to_dict() for r in family]} if rules_family else {})}


def load_bc_config(path: str | Path | None, overrides: list[str] | None = None) -> BCConfig:
    """A validated :class:`BCConfig` from a YAML file and ``key=value`` overrides."""
    return load_config(BCConfig, path, overrides)


# ---- 1. data ----------------------------------------------------------------------------------
BATCHED_TEACHERS = {"heuristic": "ev", "blind": "always"}
"""Teachers with a compiled batched form (:func:`spades_env.policies.bots.heuristic.heuristic_actions`)."""
RULES_READING_TEACHERS = ("heuristic", "blind", "search", "netsearch")
"""Bots that read each game's rules from its observation (any rules family works); networks
and shipped agents do too (the rules features of the observation)."""
VALUE_TEACHERS = ("search", "netsearch")
"""Bots that keep their searched actions' values (``last_values``: soft targets), as the search
agents built on them do."""


def reads_rules(teacher: str) -> bool:
    """Whether the teacher ``teacher`` reads each game's rules from its observation: the bots of
    :data:`RULES_READING_TEACHERS`, and any network or agent (not a bot: an id or a folder)."""
    from spades_env.policies.bots import PolicyNameError, parse_policy_name

    try:
        return parse_policy_name(teacher)[0] in RULES_READING_TEACHERS
    except PolicyNameError:
        return True
LABELS = ("all", "nil_cards")
"""Which decisions a chunk labels: every one, or only the card plays with a choice in hands
where a seat bid Nil or Blind Nil (:func:`nil_card_rows`)."""


def nil_card_rows(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``bool [N]``: the card plays with a choice (two or more legal cards) in hands where some
    seat (this one included) bid Nil or Blind Nil."""
    from spades_env.core.observation import O_PHASE, public_bids
    from spades_env.core.scoring import is_nil_bid

    nil = np.vectorize(is_nil_bid, otypes=[bool])(public_bids(observations)).any(axis=1)  # the rules core's test
    choice = np.asarray(masks).sum(axis=1) > 1
    return (observations[:, O_PHASE + L.PH_PLAY] > 0.5) & nil & choice


def student_rows(draws: np.ndarray, play_share: float, labelled: np.ndarray | None = None) -> np.ndarray:
    """``bool [N]``: the decisions the student (``play_by``) plays: those whose uniform
    ``draws`` fall below ``play_share``, and every decision the teacher did not label
    (``labelled`` False: it was asked nothing there)."""
    take = np.asarray(draws) < play_share
    return take if labelled is None else take | ~np.asarray(labelled, dtype=bool)


def teacher_chunk(
    rules_name: Any,
    teacher: str,
    n: int,
    num_envs: int,
    seed: int,
    rules_weights: list[float] | None = None,
    play_by: str = "",
    play_share: float = 0.5,
    values: bool = False,
    opponents: tuple[str, ...] | list[str] = (),
    opponent_share: float = 0.0,
    label: str = "all",
) -> dict[str, np.ndarray]:
    """``n`` decisions of fresh games with every seat played by ``teacher``:
    ``obs`` float16 ``[n, OBS_SIZE]``, ``mask`` bool ``[n, 70]``, ``action`` int8 ``[n]``
    (the teacher's choice). ``rules_name`` is one rules, or a list (a ``rules_family``: one
    drawn per game). ``play_by``: a policy that plays ``play_share`` of the decisions instead
    (the recorded action is still the teacher's). ``values``: also ``values`` float16
    ``[n, 70]``, the teacher's ``last_values`` per decision (NaN where it has none).
    ``opponents``: bots that play seats 1 and 3 of the first ``round(opponent_share *
    num_envs)`` game slots (one name per slot in turn), their decisions labelled too.
    ``label`` (:data:`LABELS`): ``"nil_cards"`` records only the card plays of Nil hands and
    asks the teacher nothing else (``play_by`` then plays every other decision, and
    ``play_share`` of the labelled ones: :func:`student_rows`)."""
    from spades_env.envs.vector import VectorSpades
    from spades_env.policies.driver import seated_actions
    from spades_env.policies.registry import resolve_policy

    family = load_family(rules_name) if isinstance(rules_name, (list, tuple)) else [load_rules(rules_name)]
    rules = family[0]
    eng = VectorSpades(
        num_envs, family, episode="game", reward="score", seed=seed, rules_weights=rules_weights
    )
    res = eng.reset(seed=seed)
    if label not in LABELS:
        raise ValueError(f"teacher_chunk: label must be one of {list(LABELS)}, got {label!r}")
    if label != "all" and not play_by:
        raise ValueError("teacher_chunk: a label filter needs play_by (it plays the unlabelled decisions)")
    size = -(-n // num_envs) * num_envs
    obs = np.empty((size, OBS_SIZE), dtype=np.float16)
    obs_t = torch.from_numpy(obs)
    mask = np.empty((size, NUM_ACTIONS), dtype=np.bool_)
    action = np.empty(size, dtype=np.int8)
    vals = np.full((size, NUM_ACTIONS), np.nan, dtype=np.float16) if values else None
    bots: dict[tuple[int, int], tuple[Any, int]] = {}
    acts = np.zeros(num_envs, dtype=np.int64)
    batched = BATCHED_TEACHERS.get(teacher)  # compiled bots decide for every game at once
    student = None
    opp_slots = np.arange(int(round(opponent_share * num_envs)) if opponents else 0)
    if play_by or opp_slots.size:
        from spades_env.policies.base import act_rows
    if play_by:
        student = resolve_policy(play_by, seed, rules)
        share_rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    opp_pols = [
        resolve_policy(opponents[i % len(opponents)], int(np.random.SeedSequence([seed, 2, i]).generate_state(1)[0]), rules)
        for i in opp_slots
    ]
    got, t = 0, 0
    while got < n:
        hands = eng.states[:, L.TOTAL_HANDS]
        labelled = None if label == "all" else nil_card_rows(res.obs, res.mask)
        if batched is not None:
            from spades_env.policies.bots.heuristic import heuristic_actions

            acts[:] = heuristic_actions(res.obs, res.mask, batched)
        else:

            def teacher_of(i: int, seat: int, t: int = t, hands: np.ndarray = hands) -> Any:
                key = (i, seat)
                entry = bots.get(key)
                if entry is None or entry[1] != hands[i]:
                    bseed = int(
                        np.random.SeedSequence([seed, i, seat, int(hands[i]), t]).generate_state(1)[0]
                    )
                    entry = (resolve_policy(teacher, seed=bseed, rules=rules), int(hands[i]))
                    bots[key] = entry
                return entry[0]

            # the one driver of seated policies
            seated_actions(res.obs, res.mask, res.seat, teacher_of, acts, labelled)
        idx = np.arange(num_envs) if labelled is None else np.flatnonzero(labelled)[: size - got]
        rows = slice(got, got + len(idx))
        if vals is not None:
            for j, i in enumerate(idx):
                searched = getattr(bots[(int(i), int(res.seat[i]))][0], "last_values", None)
                if searched is not None:
                    vals[got + j] = searched
        obs_t[rows].copy_(torch.from_numpy(res.obs[idx]))  # torch's float16 cast: 13x numpy's, the same bits
        mask[rows] = res.mask[idx]
        action[rows] = acts[idx]
        got += len(idx)
        played = acts.copy()  # what the seats play; the label stays the teacher's
        if student is not None:
            take = student_rows(share_rng.random(num_envs), play_share, labelled)
            if take.any():
                who = np.flatnonzero(take)
                played[who] = act_rows([student] * len(who), res.obs[who], res.mask[who])
        theirs = opp_slots[res.seat[opp_slots] % 2 == 1]  # the other team's seats to act
        if theirs.size:
            played[theirs] = act_rows([opp_pols[i] for i in theirs], res.obs[theirs], res.mask[theirs])
        res = eng.step(played)
        t += 1
    out = {"obs": obs[:n], "mask": mask[:n], "action": action[:n]}
    if vals is not None:
        out["values"] = vals[:n]
    return out


def _chunk_task(args: tuple) -> dict[str, np.ndarray]:
    torch.set_num_threads(1)
    if args and isinstance(args[-1], dict):  # keyword arguments last (tasks made before keep their form)
        return teacher_chunk(*args[:-1], **args[-1])
    return teacher_chunk(*args)


def generate(cfg: BCConfig, cache: str | Path | None = None) -> dict[str, np.ndarray]:
    """All the teacher data of a run, generated by ``cfg.workers`` processes; with ``cache``
    (a folder), each chunk is saved there as it is made, and chunks made before under the same
    task are read back instead of made again."""
    sizes = [cfg.chunk_decisions] * (cfg.decisions // cfg.chunk_decisions)
    if cfg.decisions % cfg.chunk_decisions:
        sizes.append(cfg.decisions % cfg.chunk_decisions)
    rules, weights = (list(cfg.rules_family) or cfg.rules), (list(cfg.rules_weights) or None)
    student = (cfg.play_by, cfg.play_share) if cfg.play_by or cfg.soft_temperature > 0 else ()
    values = (True,) if cfg.soft_temperature > 0 else ()  # (old chunks' tasks keep their form)
    opp: tuple = ()
    if cfg.opponent_share > 0:  # every argument up to the opponents, in place
        student, values = (cfg.play_by, cfg.play_share), (cfg.soft_temperature > 0,)
        opp = (list(cfg.opponents), cfg.opponent_share)
    kw = ({"label": cfg.label},) if cfg.label != "all" else ()  # keywords last, where set
    tasks = [
        (rules, cfg.teacher, n, cfg.num_envs, cfg.seed * 1_000_003 + k, weights, *student, *values, *opp, *kw)
        for k, n in enumerate(sizes)
    ]
    stamps = weights_stamps([cfg.teacher, cfg.play_by, *cfg.opponents])
    keys = [task if not stamps else [task, stamps] for task in tasks]  # a checkpoint's weights, not its path
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    bar = None
    if cfg.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.decisions, unit="dec", unit_scale=True, desc=f"{cfg.teacher} data")
    data = {
        "obs": np.empty((cfg.decisions, OBS_SIZE), dtype=np.float16),
        "mask": np.empty((cfg.decisions, NUM_ACTIONS), dtype=np.bool_),
        "action": np.empty(cfg.decisions, dtype=np.int8),
    }
    if cfg.soft_temperature > 0:
        data["values"] = np.empty((cfg.decisions, NUM_ACTIONS), dtype=np.float16)
    folder = Path(cache) if cache is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)

    def put(k: int, part: dict[str, np.ndarray]) -> None:  # filled in place: no second copy of the data
        for key, v in part.items():
            data[key][offsets[k] : offsets[k + 1]] = v
        if bar is not None:
            bar.update(len(part["action"]))

    todo = []
    for k, key in enumerate(keys):
        part = cached_chunk(folder, k, key) if folder is not None else None
        if part is None:
            todo.append(k)
        else:
            put(k, part)

    def made(k: int, part: dict[str, np.ndarray]) -> None:
        if folder is not None:
            save_chunk(folder, k, keys[k], part)
        put(k, part)

    if cfg.workers == 1 or len(todo) <= 1:
        for k in todo:
            made(k, _chunk_task(tasks[k]))
    else:
        with get_context("spawn").Pool(cfg.workers) as pool:
            for k, part in zip(todo, pool.imap(_chunk_task, [tasks[k] for k in todo]), strict=True):  # ordered
                made(k, part)
    if bar is not None:
        bar.close()
    return data


def saved_chunks(folder: str | Path) -> list[Path]:
    """The teacher chunks an earlier run saved in ``folder`` (name order); :class:`ConfigError`
    if there are none."""
    found = sorted(Path(folder).glob("chunk_*.npz"))
    if not found:
        raise ConfigError(f"data_from: no teacher chunks (chunk_*.npz) in {folder}")
    return found


def saved_data(
    folders: tuple[str, ...] | list[str], values: bool, last: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The rows of every teacher chunk saved in ``folders``, then those of ``last`` (this
    run's own data, if any: the held-out tail of :func:`holdout_split` is then this run's
    newest games), in one set of arrays filled in place; with ``values``, a ``values`` array
    too (NaN where a part has none)."""
    parts: list[Any] = []
    sizes: list[int] = []
    for f in [f for folder in folders for f in saved_chunks(folder)]:
        with np.load(f, allow_pickle=False) as z:
            sizes.append(len(z["action"]))
        parts.append(f)
    if last is not None:
        parts.append(last)
        sizes.append(len(last["action"]))
    n = int(sum(sizes))
    data = {
        "obs": np.empty((n, OBS_SIZE), dtype=np.float16),
        "mask": np.empty((n, NUM_ACTIONS), dtype=np.bool_),
        "action": np.empty(n, dtype=np.int8),
    }
    if values:
        data["values"] = np.full((n, NUM_ACTIONS), np.nan, dtype=np.float16)
    at = 0
    for part, k in zip(parts, sizes, strict=True):
        z = np.load(part, allow_pickle=False) if isinstance(part, Path) else part
        for key in data:
            if key in z:
                data[key][at : at + k] = z[key]
        if isinstance(part, Path):
            z.close()
        at += k
    return data


def _chunk_file(folder: Path, k: int) -> Path:
    return folder / f"chunk_{k:05d}.npz"


def weights_stamps(names: list[str]) -> dict[str, str]:
    """The checkpoint folders that the policy ``names`` play from (a path, or a search's
    ``net=`` path), each with the first 16 hex digits of its weights' SHA-256: a chunk cache
    keyed on them is not reused after a checkpoint is overwritten in place."""
    import hashlib

    from spades_env.policies.bots import PolicyNameError, parse_policy_name

    out: dict[str, str] = {}
    for name in names:
        if not name:
            continue
        paths = [name]
        try:
            paths.append(str(parse_policy_name(name)[1].get("net", "")))
        except PolicyNameError:
            pass
        for path in paths:
            weights = Path(path) / "model.safetensors" if path else None
            if weights is not None and weights.is_file():
                out[path] = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    return out


def cached_chunk(folder: Path, k: int, task: Any) -> dict[str, np.ndarray] | None:
    """Chunk ``k`` saved in ``folder`` under the same ``task`` (what it is a function of), or
    None if there is none, it was made under another task, or it was cut short."""
    path = _chunk_file(folder, k)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["task"]) != json.dumps(task, default=str):
                return None  # made under another config: made again
            return {key: z[key] for key in ("obs", "mask", "action", "values") if key in z}
    except (OSError, ValueError, KeyError):
        return None  # a chunk cut short by a stop: made again


def save_chunk(folder: Path, k: int, task: Any, part: dict[str, np.ndarray]) -> None:
    """Save chunk ``k`` with its ``task`` in ``folder``, whole or not at all."""
    tmp = folder / f".chunk_{k:05d}.tmp.npz"
    np.savez(tmp, task=np.array(json.dumps(task, default=str)), **part)
    tmp.replace(_chunk_file(folder, k))  # whole chunks only


# ---- 2. fit -------------------------------------------------------------------------------------
def _hits(model: ActorCritic, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    out = []
    with torch.no_grad():
        for s in range(0, len(action), 8192):
            logits = masked_logits(model.actor(obs[s : s + 8192].float()), mask[s : s + 8192])
            out.append(logits.argmax(-1) == action[s : s + 8192])
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.bool)


def card_play_regret(model: ActorCritic, obs: torch.Tensor, mask: torch.Tensor, values: torch.Tensor) -> float:
    """Mean points of the teacher's value given up by the network's choice (the best valued
    action's value minus the chosen one's), over card-play decisions with a choice whose
    chosen action the teacher valued; NaN if there are none."""
    total, count = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(obs), 8192):
            x, m, v = obs[s : s + 8192], mask[s : s + 8192], values[s : s + 8192].float()
            choice = masked_logits(model.actor(x.float()), m).argmax(-1)
            best = torch.where(torch.isfinite(v), v, torch.full_like(v, float("-inf"))).max(-1).values
            got = v.gather(1, choice[:, None]).squeeze(1)
            rows = card_play_rows(x) & (m.sum(-1) > 1) & torch.isfinite(got)
            total += float((best - got)[rows].sum())
            count += int(rows.sum())
    return total / count if count else float("nan")


def _share(hits: torch.Tensor) -> float:
    return float(hits.float().mean()) if len(hits) else float("nan")


@functools.cache
def _suit_columns() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per side-suit relabelling (:data:`~spades_env.core.symmetry.SIDE_SUIT_PERMUTATIONS`):
    the observation columns, the action columns, and each action's new id."""
    from spades_env.core.symmetry import SIDE_SUIT_PERMUTATIONS, action_columns, observation_columns

    obs_cols = torch.from_numpy(np.stack([observation_columns(p) for p in SIDE_SUIT_PERMUTATIONS]))
    act_cols = torch.from_numpy(np.stack([action_columns(p) for p in SIDE_SUIT_PERMUTATIONS]))
    return obs_cols, act_cols, torch.argsort(act_cols, dim=1)


def relabel_suits(
    obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor, values: torch.Tensor | None, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The rows, each under a relabelling of the side suits drawn from ``gen`` (the identity
    one time in six): observations, masks, actions and values (``None`` stays ``None``)."""
    obs_cols, act_cols, new_id = _suit_columns()
    pick = torch.randint(0, len(obs_cols), (len(action),), generator=gen)
    cols = act_cols[pick]
    out_values = None if values is None else torch.gather(values, 1, cols)
    new_action = torch.gather(new_id[pick], 1, action[:, None])[:, 0]
    return torch.gather(obs, 1, obs_cols[pick]), torch.gather(mask, 1, cols), new_action, out_values


def holdout_split(n: int, val_share: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The validation rows and the training rows of ``n`` recorded decisions: the last
    ``int(n * val_share)`` rows (the games recorded last) are held out, not random rows. The
    decisions of one hand are correlated, so random rows held out beside the rest of their
    hands overstate how well a fit carries to new deals (on 520,000 L3 labels: a card-play
    regret of 3.4 points on random rows against 4.4 on unseen games)."""
    n_val = int(n * val_share)
    return torch.arange(n - n_val, n), torch.arange(0, n - n_val)


def card_play_rows(obs: torch.Tensor) -> torch.Tensor:
    """Which observations are card-play decisions (the phase one-hot of the observation)."""
    return obs[:, O_PHASE + L.PH_PLAY] > 0.5


def _valued(values: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The values as float, which entries are valued legal actions, and which rows have any."""
    v = values.float()
    ok = torch.isfinite(v) & mask.bool()
    return v, ok, ok.any(-1)


def _softmax_over(scores: torch.Tensor, ok: torch.Tensor, has: torch.Tensor) -> torch.Tensor:
    """Softmax of ``scores`` over each row's ``ok`` entries (rows without any: meaningless)."""
    z = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
    z[~has] = 0.0
    return torch.softmax(z, -1)


def soft_targets(values: torch.Tensor, mask: torch.Tensor, temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The soft targets of a minibatch: the softmax of ``values / temperature`` over each
    row's valued legal actions (``[N, 70]``), and which rows have any value (``[N]`` bool;
    the other rows' targets are meaningless)."""
    v, ok, has = _valued(values, mask)
    return _softmax_over(v / temperature, ok, has), has


def expected_regret(logits: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, the teacher's value given up in expectation by the network's choice among the
    valued legal actions (its softmax renormalized over them): sum of p(a) * (best - v(a)), in
    the values' units; 0 for rows without values."""
    v, ok, has = _valued(values, mask)
    p = _softmax_over(logits, ok, has)
    best = torch.where(ok, v, torch.full_like(v, float("-inf"))).max(-1).values
    gap = torch.where(ok, best[:, None] - v, torch.zeros_like(v))
    return torch.where(has, (p * gap).sum(-1), torch.zeros_like(best))


def imitation_loss(
    logits: torch.Tensor, action: torch.Tensor, target: torch.Tensor | None, has: torch.Tensor | None
) -> torch.Tensor:
    """Per-row cross-entropy of masked ``logits``: against the soft ``target`` where ``has``,
    else against the one ``action``."""
    hard = torch.nn.functional.cross_entropy(logits, action, reduction="none")
    if target is None:
        return hard
    soft = -(target * torch.log_softmax(logits, -1)).sum(-1)
    return torch.where(has, soft, hard)


def batch_loss(
    logits: torch.Tensor,
    obs: torch.Tensor,
    mask: torch.Tensor,
    action: torch.Tensor,
    values: torch.Tensor | None,
    soft_temperature: float,
    regret_coef: float,
    bidding_weight: float,
) -> torch.Tensor:
    """The imitation loss of a minibatch, the one both fits (this module's and expert
    iteration's) minimize: cross-entropy against the soft targets of ``values`` where
    ``soft_temperature > 0`` (else against ``action``), plus ``regret_coef`` times the expected
    regret where there are values, each row weighted 1 in the card play and
    ``bidding_weight`` elsewhere."""
    soft = values is not None and soft_temperature > 0
    target, has = soft_targets(values, mask, soft_temperature) if soft else (None, None)
    ce = imitation_loss(logits, action, target, has)
    if regret_coef > 0 and values is not None:
        ce = ce + regret_coef * expected_regret(logits, values, mask)
    w = torch.where(card_play_rows(obs), 1.0, bidding_weight)
    return (ce * w).sum() / w.sum()


def rows_under(obs: np.ndarray, entries: tuple[Any, ...] | list[Any]) -> np.ndarray:
    """Which recorded observations (``[n, OBS_SIZE]``) were played under any of the rules
    ``entries`` (``rules_family`` entries), read off each observation's ``rules`` slice."""
    out = np.zeros(len(obs), dtype=bool)
    for entry in entries:
        want = rules_features(load_entry(entry).to_params()).astype(obs.dtype)
        out |= (obs[:, O_RULES : O_RULES + len(want)] == want).all(axis=1)
    return out


def keep_start_targets(data: dict[str, np.ndarray], start: ActorCritic, entries: tuple[Any, ...] | list[Any],
                       temperature: float) -> int:
    """In place, on the rows of ``data`` played under the rules ``entries``: the values become
    ``temperature`` x the ``start`` network's log-probabilities over the legal actions (so the
    soft target, ``softmax(values / temperature)``, is its own policy; floored at -60 points)
    and the action its likeliest one. Returns how many rows changed."""
    rows = np.flatnonzero(rows_under(data["obs"], entries))
    with torch.no_grad():
        for s in range(0, len(rows), 8192):
            r = rows[s : s + 8192]
            mask = torch.from_numpy(data["mask"][r])
            logp = torch.log_softmax(masked_logits(start.actor(torch.from_numpy(data["obs"][r]).float()), mask), -1)
            v = torch.where(mask, (temperature * logp).clamp(min=-60.0), torch.full_like(logp, float("nan")))
            data["values"][r] = v.numpy().astype(np.float16)
            data["action"][r] = logp.argmax(-1).numpy().astype(data["action"].dtype)
    return len(rows)


def fit(cfg: BCConfig, data: dict[str, np.ndarray]) -> tuple[ActorCritic, list[dict[str, float]]]:
    """Train an actor by masked cross-entropy on the teacher's actions; returns it and the
    per-epoch history (loss, train and held-out accuracy)."""
    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    if cfg.keep_freed_memory:
        keep_freed_memory()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, cfg.hidden, cfg.critic_hidden, cfg.score_clip)
    if cfg.init_from:
        from training.resume import init_weights

        init_weights(model, cfg, cfg.init_from)
    obs = torch.from_numpy(data["obs"])
    mask = torch.from_numpy(data["mask"])
    action = torch.from_numpy(data["action"].astype(np.int64))
    values = torch.from_numpy(data["values"]) if cfg.soft_temperature > 0 and "values" in data else None
    n = len(action)
    val, train_idx = holdout_split(n, cfg.val_share)
    opt = torch.optim.Adam(model.actor.parameters(), lr=cfg.learning_rate)
    steps_per_epoch = -(-len(train_idx) // cfg.batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs * steps_per_epoch)
    history: list[dict[str, float]] = []
    for epoch in range(cfg.epochs):
        perm = train_idx[torch.randperm(len(train_idx), generator=gen)]
        it = range(0, len(perm), cfg.batch_size)
        if cfg.progress:
            from tqdm.auto import tqdm

            it = tqdm(it, total=steps_per_epoch, desc=f"epoch {epoch + 1}/{cfg.epochs}", unit="batch")
        total, hits, count = 0.0, 0, 0
        for s in it:
            mb = perm[s : s + cfg.batch_size]
            x, m, a, v = obs[mb], mask[mb], action[mb], (values[mb] if values is not None else None)
            if cfg.suit_augment:
                x, m, a, v = relabel_suits(x, m, a, v, gen)
            xin = SparseRows.from_dense(x.float().numpy()) if cfg.sparse_input else x.float()
            logits = masked_logits(run_mlp(model.actor, xin), m)
            loss = batch_loss(logits, x, m, a, v, cfg.soft_temperature, cfg.regret_coef, cfg.bidding_weight)
            if not math.isfinite(loss.item()):
                from training.runs import NonFiniteError

                raise NonFiniteError(
                    f"epoch {epoch + 1}: the imitation loss is {loss.item()}; training diverged "
                    f"(learning_rate {cfg.learning_rate:g}); nothing was saved"
                )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(mb)
            hits += int((logits.detach().argmax(-1) == a).sum())
            count += len(mb)
        vh = _hits(model, obs[val], mask[val], action[val])
        play = card_play_rows(obs[val]) if len(val) else torch.zeros(0, dtype=torch.bool)
        row = {
            "epoch": epoch + 1,
            "loss": total / max(count, 1),
            "train_accuracy": hits / max(count, 1),
            "val_accuracy": _share(vh),
            "val_accuracy_card_play": _share(vh[play]),
            "val_accuracy_bidding": _share(vh[~play]),
        }
        if values is not None:  # in the teacher's own units: points per hand
            row["val_regret_card_play"] = card_play_regret(model, obs[val], mask[val], values[val])
        history.append(row)
        print(json.dumps(row), flush=True)
    return model, history


# ---- 3. the run ---------------------------------------------------------------------------------
def run(cfg: BCConfig, out: str | Path | None = None, overwrite: bool = False) -> Path:
    """Generate, fit and save; returns the checkpoint directory ``<out>/final``. A folder
    holding a run with other settings is refused unless ``overwrite``
    (:func:`training.runs.claim_data_folder`); one with the same settings reuses its chunks."""
    from training.runs import claim_data_folder

    out_dir = Path(out) if out is not None else Path("runs") / cfg.run_name
    claim_data_folder(out_dir, config_to_dict(cfg), overwrite, "behaviour-cloning")
    if cfg.init_from:  # before hours of teacher data: the start must load
        from training.resume import init_weights

        start = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, cfg.hidden, cfg.critic_hidden, cfg.score_clip)
        init_weights(start, cfg, cfg.init_from)
    if cfg.play_by or cfg.opponents:  # and so must the student and the opponents
        from spades_env.policies.registry import resolve_policy

        for name in [n for n in (cfg.play_by, *cfg.opponents) if n]:
            resolve_policy(name, 0, load_rules(cfg.rules))
    if cfg.decisions == 0 and not cfg.data_from:
        raise ConfigError("decisions is 0 and data_from is empty: no data to fit")
    for folder in cfg.data_from:  # before hours of teacher data: the earlier data must be there
        saved_chunks(folder)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text(out_dir / "config.json", json.dumps(config_to_dict(cfg), indent=2) + "\n")
    t0 = time.monotonic()
    data = generate(cfg, out_dir / "data")
    if cfg.data_from:
        own = len(data["action"])
        data = saved_data(cfg.data_from, cfg.soft_temperature > 0, last=data)
        print(f"data_from: {len(data['action']) - own} decisions of {', '.join(cfg.data_from)}", flush=True)
    kept = 0
    if cfg.keep_start_on:
        if "values" not in data:  # this run's own data holds values only with soft_temperature > 0
            data["values"] = np.full(data["mask"].shape, np.nan, dtype=np.float16)
        kept = keep_start_targets(data, start, cfg.keep_start_on, cfg.soft_temperature)
        print(f"keep_start_on: {kept} decisions take {cfg.init_from}'s own policy", flush=True)
    t1 = time.monotonic()
    print(f"data: {len(data['action'])} decisions in {t1 - t0:.0f} s", flush=True)
    model, history = fit(cfg, data)
    t2 = time.monotonic()
    meta = {
        **rules_meta(cfg.rules, cfg.rules_family),
        "config": config_to_dict(cfg),
        "trainer": "training.bc",
        "policy": {"deterministic": True},  # imitation of a deterministic teacher: play the argmax
        "bc": {
            "teacher": cfg.teacher,
            "init_from": cfg.init_from,
            "decisions": int(len(data["action"])),
            "kept_start": kept,
            "history": history,
            "data_seconds": round(t1 - t0, 1),
            "fit_seconds": round(t2 - t1, 1),
        },
        "decisions": int(len(data["action"])),
        "evaluation": [],
    }
    path = save_checkpoint(out_dir / "final", model, meta)
    write_text(out_dir / "history.json", json.dumps(history, indent=2) + "\n")
    print(f"saved {path} ({t2 - t0:.0f} s in all)", flush=True)
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m training.bc --config FILE [--set key=value ...] [--out DIR]``."""
    p = argparse.ArgumentParser(prog="python -m training.bc", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=None, help="behaviour-cloning config YAML")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", default=None, help="output directory (default runs/<run_name>)")
    p.add_argument("--overwrite", action="store_true", help="replace a run with other settings in --out")
    args = p.parse_args(argv)
    try:
        cfg = load_bc_config(args.config, args.overrides)
        run(cfg, args.out, overwrite=args.overwrite)
    except ConfigError as exc:
        print(f"training.bc: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "BCConfig",
    "batch_loss",
    "cached_chunk",
    "card_play_regret",
    "card_play_rows",
    "fit",
    "generate",
    "expected_regret",
    "holdout_split",
    "imitation_loss",
    "load_bc_config",
    "main",
    "relabel_suits",
    "run",
    "save_chunk",
    "saved_chunks",
    "saved_data",
    "soft_targets",
    "teacher_chunk",
]
