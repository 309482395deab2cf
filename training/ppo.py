"""Self-play PPO for Spades on the batched engine, CleanRL style: one file, top to bottom.

Run::

    python -m training.ppo --config configs/train/smoke.yaml [--set key=value ...]
        [--run-dir runs/NAME] [--resume runs/NAME/checkpoints/latest]

How it works
------------
* **Decentralized actor, centralized critic.** One network plays every learner seat from that
  seat's own observation (``VectorSpades`` gives the observation of the seat to act). The
  critic reads the acting seat's observation plus every seat's hand (and two-player discards)
  rotated to the acting seat's point of view, i.e. the full state; it never acts, so it may.
  It outputs two values: for the acting seat's team and for the other team.
* **Streams per (game, team).** Each step of a game has a different seat to act, and every
  reward is a team's (``score``: the team's hand score change; a win bonus at the game's end),
  so each game is two streams, one per team, over *every* step of the game: the steps where
  the other team acts are part of the environment for this team. GAE runs along each stream
  with that team's rewards and values (the critic's two heads, mapped from "acting / other" to
  absolute teams), so the value is bootstrapped from the last state of a rollout for both teams
  whoever is to act. The policy gradient of a step uses the advantage of the acting seat's
  team, and only at steps played by the learner. A truncated game (the rules' ``max_hands``)
  is treated as terminal.
* **Opponents and partners.** When a game starts its seats get roles: by default both teams
  are the learner (self-play). With ``pool_opponent_share`` the other team is a frozen past
  snapshot from the pool (``pool_size`` snapshots, one added every ``pool_every`` updates);
  with ``scripted_opponent_share`` it is a scripted bot (``scripted_bots``); with
  ``scripted_partner_share`` the learner's partner is a scripted bot (no shared conventions).
  Scripted bots are Python Policies acting on observations (slow), so keep those shares small.
* **Warm start.** ``init_from`` loads a checkpoint's weights (e.g. a behaviour-cloned
  policy from :mod:`training.bc`); ``policy_warmup_updates`` then trains only the critic for
  that many updates, so an untrained critic does not push the policy around.
* **Masking.** Illegal actions get a logit of -1e8 (probability exactly 0) and the entropy is
  summed over legal actions only (:mod:`training.network`).
* **Exact resume.** A checkpoint holds the weights, Adam's moments, the torch and numpy
  generator states, the games in progress, the seat roles, the pool, and each scripted bot's
  seed and the observations it has seen this hand (bots are re-created every hand, so a
  restored bot is rebuilt by replaying them). Resuming from the checkpoint of update ``k`` and
  running to ``n`` gives the same weights as running to ``n`` at once.
* **Logging.** TensorBoard scalars (losses, entropy, approximate KL, clip fraction,
  decisions/s, episode stats, duplicate evaluation against ``eval_opponents`` with 95% CIs),
  a tqdm bar, ``history.jsonl``, and ``learning_curve.png`` at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.rules import load_rules
from spades_env.observation import OBS_SIZE, STATE_VEC_SIZE
from spades_env.vector import VectorSpades
from training.checkpoint import (
    CheckpointError,
    load_meta,
    load_train_state,
    load_weights,
    save_checkpoint,
    update_meta,
)
from training.config import ConfigError, config_to_dict, load_config
from training.network import ActorCritic


# ---- 1. the arguments ------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a training run (``configs/train/*.yaml``; ``--set key=value`` overrides)."""

    run_name: str = "run"
    """Name of the run: the default run directory is ``runs/<run_name>``."""
    seed: int = 0
    """Seed of everything: deals, seat roles, action sampling, minibatches, scripted bots."""
    rules: str = "tournament"
    """Rules preset name or YAML path (``configs/rules``)."""
    max_hands: int = -1
    """Override the rules' hand cap per game (-1: keep the preset's)."""
    total_decisions: int = 1_000_000
    """Stop after this many decisions (all seats of all games, learner or not)."""
    num_envs: int = 256
    """Games played in lockstep."""
    num_steps: int = 64
    """Decisions per game per rollout (a rollout is ``num_envs * num_steps`` decisions)."""
    torch_threads: int = 1
    """``torch.set_num_threads`` (0: leave torch's default)."""
    max_minutes: float = 0.0
    """Stop after this many minutes of wall time in this process, saving and evaluating as at
    the end (0: no limit; ``total_decisions`` still applies)."""

    hand_reward_scale: float = 0.01
    """Reward shaping: each team's hand score change times this, paid when a hand is scored."""
    win_reward: float = 1.0
    """Reward shaping: +this to the team that wins a game, -this to the other."""
    gamma: float = 0.999
    """Discount per decision (of either team)."""
    gae_lambda: float = 0.95
    """GAE lambda."""

    learning_rate: float = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = False
    """Decay the learning rate linearly to 0 over the run."""
    update_epochs: int = 2
    """Passes over each rollout."""
    num_minibatches: int = 4
    """Minibatches per pass."""
    clip_coef: float = 0.2
    """PPO ratio clip."""
    ent_coef: float = 0.01
    """Entropy bonus (masked entropy: legal actions only)."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early when the approximate KL exceeds this (0: never)."""
    norm_adv: bool = True
    """Normalize advantages per minibatch (over learner decisions)."""

    init_from: str = ""
    """Checkpoint whose weights start the run (e.g. a ``training.bc`` warm start; its network
    shapes must match ``hidden`` / ``critic_hidden``). Empty: random initial weights."""
    policy_warmup_updates: int = 0
    """Updates at the start that train only the critic (the policy stays as initialized), so
    that a warm-started policy is not pushed around by an untrained critic."""
    deterministic: bool = False
    """How the saved checkpoints play as a Policy (arena, CLI): the most likely legal action
    (true) or a sample from the masked policy (false). Training always samples."""

    hidden: tuple[int, ...] = (256, 256)
    """Actor hidden layer sizes."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Critic hidden layer sizes."""

    pool_opponent_share: float = 0.2
    """Share of games whose other team is a frozen past snapshot of the learner."""
    scripted_opponent_share: float = 0.05
    """Share of games whose other team is a scripted bot."""
    scripted_partner_share: float = 0.05
    """Share of games where the learner's partner is a scripted bot (4-player rules)."""
    scripted_bots: tuple[str, ...] = ("heuristic",)
    """Bots registry names for scripted seats (one drawn per game)."""
    pool_size: int = 5
    """Snapshots kept in the opponent pool (oldest dropped)."""
    pool_every: int = 20
    """Updates between snapshots added to the pool."""

    checkpoint_every: int = 50
    """Updates between checkpoints (``checkpoints/ckpt_NNNNNN`` and ``checkpoints/latest``)."""
    keep_checkpoints: int = 3
    """Numbered checkpoints kept (older ones are deleted; ``latest`` and ``final`` stay)."""
    eval_every: int = 0
    """Updates between duplicate evaluations (0: only at the end; needs a checkpoint)."""
    eval_boards: int = 20
    """Duplicate boards per evaluation opponent (each board played from both sides)."""
    eval_opponents: tuple[str, ...] = ("greedy", "heuristic")
    """Opponent teams of the evaluation (bots registry names)."""
    eval_max_hands: int = -1
    """Hand cap of evaluation games (-1: the training rules')."""
    eval_workers: int = 1
    """Processes for the evaluation."""
    tensorboard: bool = True
    """Write TensorBoard scalars to ``<run dir>/tb``."""
    progress: bool = True
    """Show a progress bar."""

    def validate(self) -> tuple[str, str] | None:
        """The first (key, problem) of an out-of-range value, or None."""
        positive = (
            "num_envs",
            "num_steps",
            "update_epochs",
            "num_minibatches",
            "pool_every",
            "total_decisions",
        )
        for k in positive:
            if getattr(self, k) < 1:
                return k, "must be at least 1"
        if self.max_minutes < 0:
            return "max_minutes", "must be 0 or more"
        for k in ("checkpoint_every", "keep_checkpoints", "eval_every", "eval_boards", "eval_workers"):
            if getattr(self, k) < 0:
                return k, "must be 0 or more"
        for k in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                return k, "must be in [0, 1]"
        for k in ("pool_opponent_share", "scripted_opponent_share", "scripted_partner_share"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                return k, "must be in [0, 1]"
        if self.pool_opponent_share + self.scripted_opponent_share > 1.0:
            return (
                "scripted_opponent_share",
                "pool_opponent_share + scripted_opponent_share must be at most 1",
            )
        if self.learning_rate <= 0:
            return "learning_rate", "must be positive"
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            return "num_minibatches", "must divide num_envs * num_steps"
        if not self.hidden or not self.critic_hidden or min(self.hidden + self.critic_hidden) < 1:
            return "hidden", "layer sizes must be positive (at least one layer)"
        if self.policy_warmup_updates < 0:
            return "policy_warmup_updates", "must be 0 or more"
        if self.pool_size < 0:
            return "pool_size", "must be 0 or more"
        if (self.scripted_opponent_share > 0 or self.scripted_partner_share > 0) and not self.scripted_bots:
            return "scripted_bots", "needs at least one bot name when a scripted share is positive"
        from spades_env.bots import PolicyNameError, parse_policy_name

        for k in ("scripted_bots", "eval_opponents"):
            for name in getattr(self, k):
                try:
                    parse_policy_name(name)
                except PolicyNameError as exc:
                    return k, str(exc)
        try:
            load_rules(self.rules)
        except (ValueError, OSError) as exc:
            return "rules", str(exc)
        return None

    def rules_config(self, max_hands: int | None = None):
        """The rules of this run (with the ``max_hands`` override)."""
        r = load_rules(self.rules)
        mh = self.max_hands if max_hands is None or max_hands < 0 else max_hands
        return r.replace(max_hands=mh) if mh >= 0 else r


def load_train_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML file and ``key=value`` overrides (ConfigError if bad)."""
    return load_config(TrainConfig, path, overrides)


# ---- 2. seat roles and the players that are not the learner ---------------------------------
LEARNER, POOL, SCRIPTED = 0, 1, 2


def _seed_int(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 1)


class ScriptedSeats:
    """The scripted bots of the batch: one per (game, seat), re-created every hand with a seed
    from (run seed, game, seat, episode, hand), remembering the (obs, mask) it saw this hand so
    that a restored run can rebuild it exactly."""

    def __init__(self, names: tuple[str, ...], rules, seed: int) -> None:
        from spades_env.bots import parse_policy_name

        self.names, self.rules, self.seed = names, rules, seed
        self.bots: dict[tuple[int, int], list] = {}  # (game, seat) -> [bot, hand_id, seed, history]
        # compiled stateless bots (L2, blind) decide for all their games in one call
        batched = {"heuristic": 0, "blind": 1}
        self.batch_mode = np.array(
            [batched.get(parse_policy_name(n)[0], -1) for n in names] or [-1], dtype=np.int64
        )

    def act_batched(self, rows: np.ndarray, name_idx: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Actions of the rows whose bot is a compiled one (``batch_mode >= 0``), in one call."""
        from spades_env.bots.heuristic import heuristic_actions

        return heuristic_actions(obs[rows], mask[rows], self.batch_mode[name_idx])

    def _make(self, name_idx: int, seed: int):
        from spades_env.bots import make_policy

        return make_policy(self.names[name_idx], seed=seed, rules=self.rules)

    def act(self, game: int, seat: int, name_idx: int, episode: int, hand_id: int, obs, mask) -> int:
        entry = self.bots.get((game, seat))
        if entry is None or entry[1] != hand_id or entry[4] != name_idx:
            s = _seed_int(self.seed, 7, game, seat, episode, hand_id)
            entry = [self._make(name_idx, s), hand_id, s, [], name_idx]
            self.bots[(game, seat)] = entry
        entry[3].append((obs.copy(), mask.copy()))
        return int(entry[0].act(obs, mask))

    def drop_game(self, game: int) -> None:
        for s in range(4):
            self.bots.pop((game, s), None)

    def state(self) -> tuple[dict[str, torch.Tensor], list]:
        tensors, index = {}, []
        for k, ((g, s), (_, hand_id, seed, hist, name_idx)) in enumerate(sorted(self.bots.items())):
            index.append([g, s, hand_id, seed, name_idx])
            tensors[f"bots.{k}.obs"] = torch.from_numpy(np.stack([h[0] for h in hist]))
            tensors[f"bots.{k}.mask"] = torch.from_numpy(np.stack([h[1] for h in hist]))
        return tensors, index

    def restore(self, tensors: dict[str, torch.Tensor], index: list) -> None:
        self.bots = {}
        for k, (g, s, hand_id, seed, name_idx) in enumerate(index):
            bot = self._make(name_idx, seed)
            obs, mask = tensors[f"bots.{k}.obs"].numpy(), tensors[f"bots.{k}.mask"].numpy()
            hist = []
            for o, m in zip(obs, mask, strict=True):
                bot.act(o, m)  # replay: the bot's generator and trackers end where they were
                hist.append((o.copy(), m.copy()))
            self.bots[(g, s)] = [bot, hand_id, seed, hist, name_idx]


def _rotation(num_seats: int) -> np.ndarray:
    """``perm[seat, k]``: absolute seat that is ``k`` seats to the left of ``seat``."""
    perm = np.tile(np.arange(4), (4, 1))
    for s in range(num_seats):
        for k in range(num_seats):
            perm[s, k] = (s + k) % num_seats
    return perm


# ---- 3. the trainer --------------------------------------------------------------------------
class Trainer:
    """State of a run: engine, network, optimizer, generators, roles, pool (see module doc)."""

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, resume: str | Path | None = None) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        if cfg.torch_threads > 0:
            torch.set_num_threads(cfg.torch_threads)
        self.rules = cfg.rules_config()
        B = cfg.num_envs
        self.engine = VectorSpades(
            B, self.rules, episode="game", reward="score", reward_scale=cfg.hand_reward_scale, seed=cfg.seed
        )
        self.num_seats = self.engine.num_seats
        self.perm = _rotation(self.num_seats)
        torch.manual_seed(cfg.seed)
        self.model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, cfg.hidden, cfg.critic_hidden)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.pool: list[ActorCritic] = []
        self.kind = np.zeros((B, 4), dtype=np.int64)
        self.pool_idx = np.zeros((B, 4), dtype=np.int64)
        self.bot_idx = np.zeros((B, 4), dtype=np.int64)
        self.episode_no = np.zeros(B, dtype=np.int64)
        self.scripted = ScriptedSeats(cfg.scripted_bots, self.rules, cfg.seed)
        self.update = 0
        self.decisions = 0
        self.eval_results: list[dict[str, Any]] = []
        self._assign_roles(np.arange(B))
        if cfg.init_from and resume is None:
            self._init_weights(cfg.init_from)
        if resume is not None:
            self.restore(resume)
        T = cfg.num_steps
        self.buf_obs = np.zeros((T, B, OBS_SIZE), dtype=np.float32)
        self.buf_hidden = np.zeros((T, B, STATE_VEC_SIZE - OBS_SIZE), dtype=np.uint8)
        self.buf_mask = np.zeros((T, B, NUM_ACTIONS), dtype=np.int8)
        self.buf_seat = np.zeros((T, B), dtype=np.int64)
        self.buf_learner = np.zeros((T, B), dtype=np.bool_)
        self.buf_action = np.zeros((T, B), dtype=np.int64)
        self.buf_logp = np.zeros((T, B), dtype=np.float32)
        self.buf_value = np.zeros((T, B, 2), dtype=np.float32)
        self.buf_reward = np.zeros((T, B, 2), dtype=np.float32)
        self.buf_done = np.zeros((T, B), dtype=np.bool_)
        self._sv = np.zeros((B, STATE_VEC_SIZE), dtype=np.float32)
        self.ep_stats: dict[str, list[float]] = {}

    def _init_weights(self, path: str | Path) -> None:
        """Start from a checkpoint's weights (network shapes must match the config's)."""
        from training.checkpoint import _read_tensors, checkpoint_dir

        d = checkpoint_dir(path)
        arch = load_meta(d).get("arch", {})
        if arch.get("hidden") != list(self.cfg.hidden) or arch.get("critic_hidden") != list(
            self.cfg.critic_hidden
        ):
            raise CheckpointError(
                f"{d / 'meta.json'}: init_from network shapes {arch} differ from the config's "
                f"hidden {list(self.cfg.hidden)} / critic_hidden {list(self.cfg.critic_hidden)}"
            )
        load_weights(self.model, _read_tensors(d / "model.safetensors"), d / "model.safetensors")

    # -- roles ------------------------------------------------------------------------------
    def _assign_roles(self, games: np.ndarray) -> None:
        """Draw the seat roles of new games (always the same number of draws per game)."""
        cfg, n = self.cfg, self.num_seats
        for i in games:
            u = self.rng.random(4)
            learner_team = int(u[0] < 0.5)
            bot = int(self.rng.integers(max(len(cfg.scripted_bots), 1)))
            pidx = int(self.rng.integers(max(len(self.pool), 1)))
            self.kind[i] = LEARNER
            self.bot_idx[i] = bot
            self.pool_idx[i] = pidx
            other = [s for s in range(n) if s % 2 != learner_team]
            if u[1] < cfg.pool_opponent_share and self.pool:
                self.kind[i, other] = POOL
            elif cfg.pool_opponent_share <= u[1] < cfg.pool_opponent_share + cfg.scripted_opponent_share:
                self.kind[i, other] = SCRIPTED
            if n == 4 and u[2] < cfg.scripted_partner_share:
                mine = [s for s in range(n) if s % 2 == learner_team]
                self.kind[i, mine[int(u[3] < 0.5)]] = SCRIPTED
            self.scripted.drop_game(int(i))

    # -- critic input ------------------------------------------------------------------------
    def _hidden(self, seat: np.ndarray) -> np.ndarray:
        """Every seat's hand and discards rotated to the acting seat, ``uint8 [B, 416]``."""
        self.engine.state_vectors(self._sv)
        B = self.cfg.num_envs
        h = self._sv[:, OBS_SIZE:].reshape(B, 2, 4, 52)
        idx = self.perm[seat]  # [B, 4]
        out = h[np.arange(B)[:, None, None], np.arange(2)[None, :, None], idx[:, None, :]]
        return out.reshape(B, -1).astype(np.uint8)

    # -- acting ------------------------------------------------------------------------------
    @torch.no_grad()
    def _act(self, t: int) -> np.ndarray:
        e = self.engine
        obs, mask, seat = e._obs, e._mask, e._seat
        B = self.cfg.num_envs
        ar = np.arange(B)
        self.buf_obs[t] = obs
        self.buf_mask[t] = mask
        self.buf_seat[t] = seat
        self.buf_hidden[t] = self._hidden(seat)
        kind = self.kind[ar, seat]
        learner = kind == LEARNER
        self.buf_learner[t] = learner
        obs_t = torch.from_numpy(self.buf_obs[t])
        mask_t = torch.from_numpy(self.buf_mask[t])
        crit = torch.cat([obs_t, torch.from_numpy(self.buf_hidden[t]).float()], 1)
        self.buf_value[t] = self.model.value(crit).numpy()
        actions = np.zeros(B, dtype=np.int64)
        li = np.flatnonzero(learner)
        if li.size:
            a, lp = self.model.act(obs_t[li], mask_t[li], self.gen)
            actions[li] = a.numpy()
            self.buf_logp[t, li] = lp.numpy()
        pool_rows = np.flatnonzero(kind == POOL)
        if pool_rows.size:
            pidx = self.pool_idx[pool_rows, seat[pool_rows]]
            for j in np.unique(pidx):
                rows = pool_rows[pidx == j]
                a, _ = self.pool[j].act(obs_t[rows], mask_t[rows], self.gen)
                actions[rows] = a.numpy()
        scripted = np.flatnonzero(kind == SCRIPTED)
        if scripted.size:
            names = self.bot_idx[scripted, seat[scripted]]
            fast = self.scripted.batch_mode[names] >= 0
            if fast.any():
                actions[scripted[fast]] = self.scripted.act_batched(scripted[fast], names[fast], obs, mask)
            scripted = scripted[~fast]
        for i in scripted:
            s = int(seat[i])
            actions[i] = self.scripted.act(
                int(i),
                s,
                int(self.bot_idx[i, s]),
                int(self.episode_no[i]),
                int(e.states[i, L.TOTAL_HANDS]),
                obs[i],
                mask[i],
            )
        self.buf_action[t] = actions
        return actions

    def _stat(self, key: str, value: float) -> None:
        self.ep_stats.setdefault(key, []).append(float(value))

    def _after_step(self, t: int, res) -> None:
        cfg = self.cfg
        rew = self.buf_reward[t]
        rew[:] = res.reward[:, :2]
        done = res.terminated | res.truncated
        self.buf_done[t] = done
        ended = np.flatnonzero(done)
        for i in ended:
            fin = self.engine.final_states[i]
            w = int(fin[L.GAME_WINNER]) if res.terminated[i] else -1
            if w >= 0:
                rew[i, w] += cfg.win_reward
                rew[i, 1 - w] -= cfg.win_reward
            kinds = self.kind[i, : self.num_seats]
            lt = [k for k in range(2) if (kinds[k::2] == LEARNER).any()]
            self._stat("episode/truncated", float(res.truncated[i]))
            self._stat("episode/hands", float(fin[L.HAND_NUM]))
            if len(lt) == 1 and w >= 0:  # learner vs. a pool or scripted team
                other = kinds[1 - lt[0] :: 2]
                tag = "pool" if (other == POOL).any() else "scripted"
                partner = "_scripted_partner" if (kinds[lt[0] :: 2] == SCRIPTED).any() else ""
                self._stat(f"episode/win_vs_{tag}{partner}", float(w == lt[0]))
        if ended.size:
            self.episode_no[ended] += 1
            self._assign_roles(ended)

    # -- one rollout ---------------------------------------------------------------------------
    def collect(self) -> None:
        for t in range(self.cfg.num_steps):
            actions = self._act(t)
            res = self.engine.step(actions)
            self._after_step(t, res)
        e = self.engine
        with torch.no_grad():
            crit = torch.cat([torch.from_numpy(e._obs), torch.from_numpy(self._hidden(e._seat)).float()], 1)
            self.boot_value = self.model.value(crit).numpy()
            self.boot_seat = e._seat.copy()
        self.decisions += self.cfg.num_envs * self.cfg.num_steps

    # -- advantages: GAE along each (game, team) stream ----------------------------------------
    def advantages(self) -> tuple[np.ndarray, np.ndarray]:
        """(advantage of the acting team [T, B], value targets relative to the actor [T, B, 2])."""
        cfg = self.cfg
        T, B = cfg.num_steps, cfg.num_envs

        def absolute(v: np.ndarray, seat: np.ndarray) -> np.ndarray:
            own = (seat % 2)[..., None] == np.arange(2)
            return np.where(own, v[..., :1], v[..., 1:])

        v = absolute(self.buf_value, self.buf_seat)  # [T, B, 2] by absolute team
        nextv = absolute(self.boot_value, self.boot_seat)
        adv = np.zeros((T, B, 2), dtype=np.float32)
        last = np.zeros((B, 2), dtype=np.float32)
        for t in reversed(range(T)):
            nonterm = (1.0 - self.buf_done[t])[:, None]
            delta = self.buf_reward[t] + cfg.gamma * nextv * nonterm - v[t]
            last = delta + cfg.gamma * cfg.gae_lambda * nonterm * last
            adv[t] = last
            nextv = v[t]
        ret = adv + v
        own = (self.buf_seat % 2)[..., None] == np.arange(2)  # [T, B, 2]
        adv_pi = np.where(own, adv, 0.0).sum(-1)
        ret_rel = np.stack([np.where(own, ret, 0).sum(-1), np.where(own, 0, ret).sum(-1)], -1)
        return adv_pi.astype(np.float32), ret_rel.astype(np.float32)

    # -- PPO update -------------------------------------------------------------------------
    def learn(self, total_updates: int) -> dict[str, float]:
        cfg = self.cfg
        if cfg.anneal_lr:
            frac = 1.0 - self.update / max(total_updates, 1)
            self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
        adv_pi, ret = self.advantages()
        N = cfg.num_envs * cfg.num_steps
        obs = torch.from_numpy(self.buf_obs.reshape(N, -1))
        hidden = torch.from_numpy(self.buf_hidden.reshape(N, -1))
        mask = torch.from_numpy(self.buf_mask.reshape(N, -1))
        actions = torch.from_numpy(self.buf_action.reshape(N))
        old_logp = torch.from_numpy(self.buf_logp.reshape(N))
        learner = torch.from_numpy(self.buf_learner.reshape(N))
        adv = torch.from_numpy(adv_pi.reshape(N))
        returns = torch.from_numpy(ret.reshape(N, 2))
        mb_size = N // cfg.num_minibatches
        stats: dict[str, list[float]] = {
            k: [] for k in ("pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac")
        }
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(N, generator=self.gen)
            kl_stop = False
            for start in range(0, N, mb_size):
                mb = perm[start : start + mb_size]
                lmb = mb[learner[mb]]
                crit = torch.cat([obs[mb], hidden[mb].float()], 1)
                v_loss = 0.5 * ((self.model.value(crit) - returns[mb]) ** 2).mean()
                loss = cfg.vf_coef * v_loss
                if lmb.numel() and self.update >= cfg.policy_warmup_updates:
                    logp, ent = self.model.evaluate(obs[lmb], mask[lmb], actions[lmb])
                    logratio = logp - old_logp[lmb]
                    ratio = logratio.exp()
                    a = adv[lmb]
                    if cfg.norm_adv and a.numel() > 1:
                        a = (a - a.mean()) / (a.std() + 1e-8)
                    pg = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                    entropy = ent.mean()
                    loss = loss + pg - cfg.ent_coef * entropy
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - logratio).mean().item()
                        stats["approx_kl"].append(approx_kl)
                        stats["clipfrac"].append(((ratio - 1).abs() > cfg.clip_coef).float().mean().item())
                        stats["pg_loss"].append(pg.item())
                        stats["entropy"].append(entropy.item())
                    if cfg.target_kl > 0 and approx_kl > cfg.target_kl:
                        kl_stop = True
                stats["v_loss"].append(v_loss.item())
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                if kl_stop:
                    break
            if kl_stop:
                break
        self.update += 1
        if cfg.pool_size > 0 and self.update % cfg.pool_every == 0:
            self._snapshot()
        out = {f"loss/{k}" if "loss" in k else f"train/{k}": float(np.mean(v)) for k, v in stats.items() if v}
        out["train/learning_rate"] = self.optimizer.param_groups[0]["lr"]
        out["train/learner_share"] = float(self.buf_learner.mean())
        return out

    def _snapshot(self) -> None:
        snap = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, self.cfg.hidden, self.cfg.critic_hidden)
        snap.load_state_dict(self.model.state_dict())
        snap.eval()
        self.pool.append(snap)
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)
            # games playing the dropped snapshot now play the next oldest
            self.pool_idx = np.maximum(self.pool_idx - 1, 0)

    # -- checkpoints -------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "config": config_to_dict(self.cfg),
            "policy": {"deterministic": self.cfg.deterministic},
            "update": self.update,
            "decisions": self.decisions,
            "evaluation": self.eval_results,
        }

    def save(self, path: str | Path) -> Path:
        """A checkpoint with everything needed to resume exactly."""
        tensors: dict[str, torch.Tensor] = {}
        opt = self.optimizer.state_dict()
        for idx, st in opt["state"].items():
            for name, val in st.items():
                tensors[f"optim.{idx}.{name}"] = torch.as_tensor(val)
        tensors["rng.torch"] = self.gen.get_state()
        tensors["rng.torch_global"] = torch.get_rng_state()
        e = self.engine
        tensors["env.states"] = torch.from_numpy(e.states.copy())
        tensors["env.game_seeds"] = torch.from_numpy(e.game_seeds.copy())
        for k in ("kind", "pool_idx", "bot_idx", "episode_no"):
            tensors[f"roles.{k}"] = torch.from_numpy(getattr(self, k).copy())
        for j, snap in enumerate(self.pool):
            for k, v in snap.state_dict().items():
                tensors[f"pool.{j}.{k}"] = v
        bt, bindex = self.scripted.state()
        tensors.update(bt)
        groups = [{k: v for k, v in g.items() if k != "params"} for g in opt["param_groups"]]
        js = {
            "update": self.update,
            "decisions": self.decisions,
            "numpy_rng": self.rng.bit_generator.state,
            "param_groups": groups,
            "pool_size": len(self.pool),
            "bots": bindex,
            "eval_results": self.eval_results,
        }
        return save_checkpoint(path, self.model, self.meta(), tensors, js)

    def restore(self, path: str | Path) -> None:
        """Continue exactly from a checkpoint saved by :meth:`save` with compatible shapes."""
        meta = load_meta(path)
        from training.checkpoint import _read_tensors, checkpoint_dir

        d = checkpoint_dir(path)
        if meta.get("arch", {}).get("hidden") != list(self.cfg.hidden) or meta["arch"].get(
            "critic_hidden"
        ) != list(self.cfg.critic_hidden):
            raise CheckpointError(
                f"{d / 'meta.json'}: network shapes {meta['arch']} differ from the config's"
            )
        load_weights(self.model, _read_tensors(d / "model.safetensors"), d / "model.safetensors")
        tensors, js = load_train_state(d)
        where = d / "train_state.safetensors"
        try:
            state: dict[int, dict[str, torch.Tensor]] = {}
            for key, val in tensors.items():
                if key.startswith("optim."):
                    _, idx, name = key.split(".", 2)
                    state.setdefault(int(idx), {})[name] = val
            groups = js["param_groups"]
            groups[0]["params"] = list(range(len(list(self.model.parameters()))))
            self.optimizer.load_state_dict({"state": state, "param_groups": groups})
            self.gen.set_state(tensors["rng.torch"])
            torch.set_rng_state(tensors["rng.torch_global"])
            self.rng.bit_generator.state = js["numpy_rng"]
            e = self.engine
            states = tensors["env.states"].numpy()
            if states.shape != e.states.shape:
                raise CheckpointError(
                    f"{where}: games in progress have shape {states.shape}, num_envs needs {e.states.shape}"
                )
            e.states[:] = states
            e.game_seeds[:] = tensors["env.game_seeds"].numpy()
            e._k_observe(e.states, e.game_params, e._obs, e._mask, e._seat, True)
            for k in ("kind", "pool_idx", "bot_idx", "episode_no"):
                getattr(self, k)[:] = tensors[f"roles.{k}"].numpy()
            self.pool = []
            for j in range(int(js["pool_size"])):
                snap = ActorCritic(
                    OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, self.cfg.hidden, self.cfg.critic_hidden
                )
                load_weights(snap, tensors, where, prefix=f"pool.{j}.")
                snap.eval()
                self.pool.append(snap)
            self.scripted.restore(tensors, js["bots"])
            self.update, self.decisions = int(js["update"]), int(js["decisions"])
            self.eval_results = list(js.get("eval_results", []))
        except KeyError as exc:
            raise CheckpointError(f"{where}: missing entry {exc} in the training state") from None

    # -- evaluation -------------------------------------------------------------------------
    def evaluate(self, ckpt: Path) -> dict[str, Any]:
        """Duplicate games of the checkpoint (both seats) against each evaluation team."""
        from spades_env.arena import run_duplicate, summarize

        cfg = self.cfg
        rules = cfg.rules_config(cfg.eval_max_hands)
        spec = str(ckpt)
        out: dict[str, Any] = {"update": self.update, "decisions": self.decisions}
        if rules.num_players != 4:  # the arena's duplicate play is for partnerships
            out["note"] = "no duplicate evaluation for the two-player rules"
            return out
        for opp in cfg.eval_opponents:
            boards = run_duplicate(
                (spec, spec),
                (opp, opp),
                cfg.eval_boards,
                seed=cfg.seed + 1,
                rules=rules,
                workers=cfg.eval_workers,
            )
            s = summarize(boards, "game", names=("policy", opp))
            out[opp] = {
                "game_win": s["game_win"]["rate"],
                "game_win_ci95": s["game_win"]["ci95"],
                "margin_per_hand": s["margin_per_hand"]["mean"],
                "margin_ci95": s["margin_per_hand"]["ci95"],
                "games": s["game_win"]["n"],
            }
        self.eval_results.append(out)
        update_meta(ckpt, evaluation=self.eval_results)
        return out


# ---- 4. the loop ---------------------------------------------------------------------------
def plot_history(history_path: Path, out_png: Path) -> Path | None:
    """The learning curve (losses, entropy, episode stats, evaluations) as a PNG."""
    if not history_path.is_file():
        return None
    rows = [json.loads(line) for line in history_path.read_text().splitlines() if line.strip()]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    x = [r["decisions"] for r in rows]
    for ax, keys, title in (
        (axes[0, 0], ("loss/pg_loss", "loss/v_loss"), "losses"),
        (axes[0, 1], ("train/entropy", "train/approx_kl"), "entropy, KL"),
        (
            axes[1, 0],
            ("episode/win_vs_pool", "episode/win_vs_scripted", "episode/win_vs_scripted_scripted_partner"),
            "win rate in training games (moving average)",
        ),
    ):
        for k in keys:
            pts = [(xx, r[k]) for xx, r in zip(x, rows, strict=True) if k in r]
            if pts:
                xs, ys = (np.array(v) for v in zip(*pts, strict=True))
                if k.startswith("episode/") and len(ys) >= 10:  # few games per update: smooth
                    w = max(len(ys) // 20, 5)
                    ys = np.convolve(ys, np.ones(w) / w, mode="valid")
                    xs = xs[w - 1 :]
                ax.plot(xs, ys, label=k.split("/")[-1])
        ax.set_title(title)
        ax.set_xlabel("decisions")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    ax = axes[1, 1]
    evals = [r for r in rows if "eval" in r]
    for opp in sorted({k for r in evals for k in r["eval"] if isinstance(r["eval"][k], dict)}):
        pts = [(r["decisions"], r["eval"][opp]) for r in evals if opp in r["eval"]]
        xs = [p[0] for p in pts]
        ys = [p[1]["game_win"] for p in pts]
        lo = [p[1]["game_win"] - p[1]["game_win_ci95"][0] for p in pts]
        hi = [p[1]["game_win_ci95"][1] - p[1]["game_win"] for p in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"vs {opp}")
    ax.set_title("duplicate evaluation: games won (95% CI)")
    ax.set_xlabel("decisions")
    ax.set_ylim(0, 1)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return out_png


def train(
    cfg: TrainConfig,
    run_dir: str | Path | None = None,
    resume: str | Path | None = None,
    stop_update: int | None = None,
) -> Trainer:
    """Train to ``cfg.total_decisions`` (or to update ``stop_update``); returns the trainer.
    Writes checkpoints, ``history.jsonl``, TensorBoard scalars and ``learning_curve.png``."""
    run = Path(run_dir) if run_dir is not None else Path("runs") / cfg.run_name
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps(config_to_dict(cfg), indent=2) + "\n")
    tr = Trainer(cfg, run, resume)
    per_update = cfg.num_envs * cfg.num_steps
    total_updates = max(cfg.total_decisions // per_update, 1)
    last_update = total_updates if stop_update is None else min(stop_update, total_updates)
    writer = None
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run / "tb"), purge_step=tr.decisions or None)
    bar = None
    if cfg.progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=total_updates * per_update,
            initial=tr.decisions,
            unit="dec",
            unit_scale=True,
            desc=cfg.run_name,
        )
    ckdir = run / "checkpoints"
    hist_path = run / "history.jsonl"
    if hist_path.is_file():  # a resumed run: drop what the first run logged after its checkpoint
        keep = [
            x
            for x in hist_path.read_text().splitlines()
            if x.strip() and json.loads(x)["update"] <= tr.update
        ]
        hist_path.write_text("".join(x + "\n" for x in keep))
    history = hist_path.open("a")
    started = time.monotonic()
    out_of_time = False
    try:
        while tr.update < last_update:
            t0 = time.perf_counter()
            tr.collect()
            t1 = time.perf_counter()
            row = tr.learn(total_updates)
            t2 = time.perf_counter()
            row["perf/decisions_per_s"] = per_update / (t2 - t0)
            row["perf/collect_decisions_per_s"] = per_update / (t1 - t0)
            for k, v in tr.ep_stats.items():
                row[k] = float(np.mean(v))
            tr.ep_stats = {}
            out_of_time = cfg.max_minutes > 0 and time.monotonic() - started > 60 * cfg.max_minutes
            final = tr.update == last_update or out_of_time
            save_now = cfg.checkpoint_every and (tr.update % cfg.checkpoint_every == 0 or final)
            eval_now = final if not cfg.eval_every else (tr.update % cfg.eval_every == 0 or final)
            if save_now or eval_now:
                path = tr.save(ckdir / f"ckpt_{tr.update:06d}")
                if eval_now and cfg.eval_boards > 0 and cfg.eval_opponents:
                    row["eval"] = tr.evaluate(path)
                    for opp, r in row["eval"].items():
                        if isinstance(r, dict):
                            row[f"eval/{opp}/game_win"] = r["game_win"]
                            row[f"eval/{opp}/game_win_ci_lo"] = r["game_win_ci95"][0]
                            row[f"eval/{opp}/game_win_ci_hi"] = r["game_win_ci95"][1]
                            row[f"eval/{opp}/margin_per_hand"] = r["margin_per_hand"]
                shutil.rmtree(ckdir / "latest", ignore_errors=True)
                shutil.copytree(path, ckdir / "latest")
                numbered = sorted(ckdir.glob("ckpt_*"))
                for old in numbered[: max(len(numbered) - max(cfg.keep_checkpoints, 1), 0)]:
                    shutil.rmtree(old, ignore_errors=True)
            row["update"], row["decisions"] = tr.update, tr.decisions
            history.write(json.dumps(row) + "\n")
            history.flush()
            if writer is not None:
                for k, v in row.items():
                    if isinstance(v, float) and "/" in k:
                        writer.add_scalar(k, v, tr.decisions)
            if bar is not None:
                bar.update(per_update)
                bar.set_postfix(
                    ent=f"{row.get('train/entropy', 0):.2f}",
                    kl=f"{row.get('train/approx_kl', 0):.1e}",
                    dps=f"{row['perf/decisions_per_s']:.0f}",
                )
            if out_of_time:
                break
        if tr.update >= total_updates or out_of_time:
            latest = ckdir / "latest"
            if latest.exists():
                shutil.rmtree(run / "final", ignore_errors=True)
                shutil.copytree(latest, run / "final")
    finally:
        history.close()
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()
    plot_history(run / "history.jsonl", run / "learning_curve.png")
    return tr


def main(argv: list[str] | None = None) -> int:
    """``python -m training.ppo --config FILE [--set key=value ...] [--run-dir DIR] [--resume CKPT]``."""
    p = argparse.ArgumentParser(prog="python -m training.ppo", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=None, help="training config YAML (configs/train/*.yaml)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key",
    )
    p.add_argument("--run-dir", default=None, help="output directory (default runs/<run_name>)")
    p.add_argument("--resume", default=None, help="checkpoint directory to continue from exactly")
    args = p.parse_args(argv)
    try:
        cfg = load_train_config(args.config, args.overrides)
        tr = train(cfg, args.run_dir, args.resume)
    except (ConfigError, CheckpointError) as exc:
        print(f"training.ppo: {exc}", file=sys.stderr)
        return 2
    print(f"done: {tr.update} updates, {tr.decisions} decisions; run directory {tr.run_dir}")
    if tr.eval_results:
        print(json.dumps(tr.eval_results[-1], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["TrainConfig", "Trainer", "load_train_config", "main", "plot_history", "train"]
