"""Best response: PPO against a frozen agent, on the batched engine (approximate exploitability,
Timbers et al. 2020).

The learner plays one team; the frozen agent sits in both seats of the other team
(``seats="opponents"``) or, with ``seats="partner"``, in the learner's partner seat *and* both
opponent seats (one seat deviates from the agent's self-play: how far a partner can be led
astray). The learner team is drawn per game. The trainer is :class:`training.ppo.Trainer` with a
:class:`FrozenLeague` in place of the self-play league, and a zero-sum reward: at each hand's
end both teams get their hand score margin over the other team (times ``hand_reward_scale``),
no game-win bonus, so PPO maximizes what the evaluation measures, the margin per hand.

The frozen agent is any policy spec (a bots name, a shipped agent id, a checkpoint path, a
factory ``f(seed, rules)``) or Policy object. One policy per (game, seat) is resolved when a game
starts (seeded from (seed, game slot, seat, game number)), as the arena does for each seat of a
run, and every step the frozen seats decide through :func:`spades_env.policies.base.act_rows`:
batched agents (checkpoints, L2, ``blind``) in one call for all their games, any other policy
one ``act`` per game.

``python -m training.best_response AGENT --decisions 2000000 --rules house --run-dir runs/br``
trains and evaluates (the same as ``spades exploit``, :func:`spades_env.eval.exploit.exploit`).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputTypeError
from spades_env.policies.base import act_rows
from spades_env.policies.registry import resolve_policy
from training.checkpoint import load_meta, save_checkpoint
from training.config import config_to_dict
from training.league import LEARNER, SCRIPTED, League
from training.ppo import Trainer
from training.ppo_config import TrainConfig

FROZEN = SCRIPTED
"""The role of a frozen agent's seat (reported by the trainer's episode stats as scripted)."""
SEATS = ("opponents", "partner")
DEFAULT_INIT = "spades4_net_v1"


def _seed_int(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 1)


def agent_factory(agent: Any) -> Any:
    """A policy spec for :func:`resolve_policy`: names and factories as they are; a Policy object
    becomes a factory that returns a fresh copy reseeded with ``with_seed`` when it has one, else
    a deep copy (so that no two seats share a policy's state)."""
    if isinstance(agent, str) or (callable(agent) and not hasattr(agent, "act")):
        return agent
    if hasattr(agent, "act"):
        proto = agent

        def factory(seed: int | None, rules: RulesConfig) -> Any:
            ws = getattr(proto, "with_seed", None)
            return ws(seed) if callable(ws) else copy.deepcopy(proto)

        factory.__name__ = getattr(proto, "name", None) or type(proto).__name__
        return factory
    raise InputTypeError(f"the frozen agent must be a policy name, a factory or a Policy, got {agent!r}")


class FrozenLeague(League):
    """Seat roles of a best-response run: the learner's team (or one seat of it) and the frozen
    agent everywhere else; no snapshot pool, no scripted bots."""

    def __init__(
        self, cfg: Any, num_envs: int, rng: np.random.Generator, rules: RulesConfig, agent: Any, seats: str
    ) -> None:
        super().__init__(replace(cfg, scripted_bots=()), num_envs, 4, rng, lambda g: rules)
        self.agent, self.seats, self.rules = agent_factory(agent), seats, rules
        self.frozen: list[list[Any]] = [[None] * 4 for _ in range(num_envs)]
        self._proto: Any = None
        self.learner_team = np.zeros(num_envs, dtype=np.int64)

    def _resolve(self, seed: int) -> Any:
        if self._proto is not None:
            return self._proto.with_seed(seed)
        p = resolve_policy(self.agent, seed, self.rules)
        if isinstance(self.agent, str) and callable(getattr(p, "with_seed", None)):
            self._proto = p  # a name: resolved once, then copied with each seed
        return p

    def assign_roles(self, games: np.ndarray) -> None:
        """New games: the learner team drawn, the frozen agent resolved for its seats."""
        for i in np.asarray(games).tolist():
            u = self.rng.random(2)
            lt = int(u[0] < 0.5)
            self.learner_team[i] = lt
            self.kind[i] = FROZEN
            if self.seats == "opponents":
                self.kind[i, [lt, lt + 2]] = LEARNER
            else:
                self.kind[i, lt + 2 * int(u[1] < 0.5)] = LEARNER
            for s in range(4):
                if self.kind[i, s] == FROZEN:
                    self.frozen[i][s] = self._resolve(
                        _seed_int(self.cfg.seed, 11, i, s, int(self.episode_no[i]))
                    )
                else:
                    self.frozen[i][s] = None

    def snapshot(self, model: Any) -> None:
        """No snapshot pool in a best-response run."""

    @torch.no_grad()
    def act(self, kind, seat, obs, mask, actor_rows, mask_t, states, gen, actions) -> None:
        """Fill the frozen seats' actions (batched agents in one call per batched form)."""
        rows = np.flatnonzero(kind == FROZEN)
        if rows.size:
            pols = [self.frozen[i][s] for i, s in zip(rows.tolist(), seat[rows].tolist(), strict=True)]
            actions[rows] = act_rows(pols, obs[rows], mask[rows])

    def state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        tensors = {f"roles.{k}": torch.from_numpy(getattr(self, k).copy()) for k in self.ROLE_ARRAYS}
        return tensors, {"pool_size": 0, "bots": []}


class BestResponseTrainer(Trainer):
    """:class:`training.ppo.Trainer` against a frozen agent, with the zero-sum hand reward; it
    records the learner team's margin of every hand it finishes (``hand_margins``)."""

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, agent: Any, seats: str = "opponents") -> None:
        super().__init__(cfg, run_dir)
        self.league = FrozenLeague(cfg, cfg.num_envs, self.rng, self.rules, agent, seats)
        self.league.assign_roles(np.arange(cfg.num_envs))
        self.hand_margins: list[float] = []

    def _after_step(self, t: int, res) -> None:
        done_hands = np.flatnonzero(self.engine.hand_done)
        lt = self.league.learner_team[done_hands].copy()  # before new games redraw it
        super()._after_step(t, res)
        rew = self.buf_reward[t]
        raw = res.reward[:, :2]
        rew[:, 0] = raw[:, 0] - raw[:, 1]
        rew[:, 1] = raw[:, 1] - raw[:, 0]
        if done_hands.size:
            m = (raw[done_hands, lt] - raw[done_hands, 1 - lt]) / self.cfg.hand_reward_scale
            self.hand_margins.extend(m.tolist())


def br_config(
    decisions: int,
    *,
    seed: int = 0,
    init: str | None = DEFAULT_INIT,
    hidden: tuple[int, ...] = (256, 256),
    **overrides: Any,
) -> TrainConfig:
    """The trainer's config of a best-response run (its ``rules`` are set by
    :func:`train_best_response`, which writes them to the run folder): the network shapes of ``init`` (a checkpoint or agent folder or shipped network id; None:
    from scratch with ``hidden``), no pool, no scripted seats, no evaluation, no TensorBoard."""
    fields: dict[str, Any] = dict(
        run_name="best_response",
        seed=seed,
        total_decisions=max(int(decisions), 1),
        num_envs=256,
        num_steps=64,
        win_reward=0.0,
        pool_size=0,
        pool_opponent_share=0.0,
        scripted_opponent_share=0.0,
        scripted_partner_share=0.0,
        eval_boards=0,
        tensorboard=False,
        progress=False,
        deterministic=True,
        checkpoint_every=0,
        learning_rate=3e-4,
        # the hand's margin is credited to the hand's decisions: little discount across hands,
        # and Monte Carlo advantages (the started critic learned another reward)
        gamma=0.99,
        gae_lambda=1.0,
    )
    if init:
        arch = load_meta(init_dir(init))["arch"]
        fields.update(
            init_from=str(init_dir(init)),
            hidden=tuple(arch["hidden"]),
            critic_hidden=tuple(arch["critic_hidden"]),
            score_clip=arch.get("score_clip"),
            policy_warmup_updates=2,
            # held near the start (KL(start || policy) x 0.5 at the learner's decisions): without
            # it PPO drifted away from the started network and lost to what it started from
            anchor_coef=0.5,
        )
    else:
        fields.update(hidden=tuple(hidden), critic_hidden=tuple(hidden))
    fields.update(overrides)
    cfg = TrainConfig(**fields)
    bad = cfg.validate()
    if bad:
        raise ValueError(f"best response: {bad[0]}: {bad[1]}")
    return cfg


def init_dir(init: str) -> Path:
    """The network folder of ``init``: a shipped agent id (a network agent), or a folder."""
    from spades_env.policies.agents import network_folder

    return network_folder(init, "best response: init")


def train_best_response(
    agent: Any,
    *,
    rules: RulesConfig | str | dict | None = None,
    decisions: int = 1_000_000,
    seats: str = "opponents",
    seed: int = 0,
    init: str | None = DEFAULT_INIT,
    run_dir: str | Path | None = None,
    progress: bool = True,
    on_update: Callable[[dict[str, Any]], None] | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Train a best response to ``agent`` for about ``decisions`` decisions (all seats). Returns
    ``{"checkpoint" (a folder the arena loads), "decisions", "learner_decisions", "updates",
    "seconds", "interrupted", "curve": [{"update", "decisions", "margin_per_hand", "hands"}]}``
    (the curve: the learner team's mean margin per hand over the hands each update finished,
    sampled play). Ctrl-C stops after saving what it has (``interrupted`` True); so does the
    ``max_minutes`` option (wall time of the training)."""
    if seats not in SEATS:
        raise ValueError(f"seats must be one of {list(SEATS)}, got {seats!r}")
    cfg_rules = load_rules(rules)
    if cfg_rules.num_players != 4:
        raise ValueError("best response: the four-player game only (num_players 4)")
    cfg = br_config(decisions, seed=seed, init=init, **overrides)
    run = Path(run_dir) if run_dir is not None else Path("runs") / "best_response"
    run.mkdir(parents=True, exist_ok=True)
    rules_path = run / "rules.yaml"
    import yaml

    rules_path.write_text(yaml.safe_dump(cfg_rules.to_dict(), sort_keys=False))
    cfg = replace(cfg, rules=str(rules_path))
    (run / "config.json").write_text(json.dumps(config_to_dict(cfg), indent=2) + "\n")
    t0 = time.perf_counter()
    tr = BestResponseTrainer(cfg, run, agent, seats)
    total = cfg.updates()
    per_update = cfg.num_envs * cfg.num_steps
    curve: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total * per_update, unit="dec", unit_scale=True, desc="best response")
    interrupted = False
    learner_decisions = 0
    hist = (run / "history.jsonl").open("w")
    try:
        while tr.update < total:
            tr.collect()
            learner_decisions += int(tr.buf_learner.sum())
            stats = tr.learn(total)
            m = tr.hand_margins
            row = {
                "update": tr.update,
                "decisions": tr.decisions,
                "margin_per_hand": float(np.mean(m)) if m else None,
                "hands": len(m),
                "entropy": stats.get("train/entropy"),
                "seconds": round(time.perf_counter() - t0, 1),
            }
            tr.hand_margins = []
            curve.append(row)
            hist.write(json.dumps(row) + "\n")
            hist.flush()
            if on_update is not None:
                on_update(row)
            if cfg.max_minutes > 0 and time.perf_counter() - t0 > 60 * cfg.max_minutes:
                break
            if bar is not None:
                bar.update(per_update)
                recent = [r["margin_per_hand"] for r in curve[-10:] if r["margin_per_hand"] is not None]
                bar.set_postfix(margin=f"{np.mean(recent):+.1f}" if recent else "-")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        hist.close()
        if bar is not None:
            bar.close()
    meta = {
        "rules": cfg_rules.to_dict(),
        "config": config_to_dict(cfg),
        "policy": {"deterministic": True},
        "update": tr.update,
        "decisions": tr.decisions,
        "best_response": {"agent": getattr(agent, "__name__", str(agent)), "seats": seats, "init": init},
    }
    ckpt = save_checkpoint(run / "best_response", tr.model, meta)
    return {
        "checkpoint": str(ckpt),
        "decisions": int(tr.decisions),
        "learner_decisions": learner_decisions,
        "updates": int(tr.update),
        "seconds": round(time.perf_counter() - t0, 1),
        "interrupted": interrupted,
        "curve": curve,
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m training.best_response AGENT [--rules R] [--decisions N] [--seats S] ...``:
    :func:`spades_env.eval.exploit.exploit` from a source checkout (prints the JSON)."""
    from spades_env.eval.exploit import exploit, exploit_summary

    p = argparse.ArgumentParser(prog="python -m training.best_response", description=__doc__.split("\n\n")[0])
    p.add_argument("agent")
    p.add_argument("--rules", default="tournament")
    p.add_argument("--decisions", type=int, default=1_000_000)
    p.add_argument("--seats", choices=SEATS, default="opponents")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--boards", type=int, default=1000)
    p.add_argument("--init", default=DEFAULT_INIT, help="network to start from ('' for scratch)")
    p.add_argument("--run-dir", default=None)
    p.add_argument("--max-minutes", type=float, default=0.0, help="stop training after this many minutes")
    args = p.parse_args(argv)
    res = exploit(
        args.agent,
        rules=args.rules,
        decisions=args.decisions,
        seats=args.seats,
        seed=args.seed,
        boards=args.boards,
        init=args.init or None,
        run_dir=args.run_dir,
        progress=True,
        max_minutes=args.max_minutes,
    )
    print(exploit_summary(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "DEFAULT_INIT",
    "FROZEN",
    "SEATS",
    "BestResponseTrainer",
    "FrozenLeague",
    "agent_factory",
    "br_config",
    "init_dir",
    "train_best_response",
]
