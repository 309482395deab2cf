"""Self-play PPO for Spades on the batched engine, CleanRL style: the loop, top to bottom.

Run::

    python -m training.ppo --config configs/train/smoke.yaml [--set key=value ...]
        [--run-dir runs/NAME] [--resume [CKPT]] [--overwrite] [--allow-changes]

The files of the trainer, one job each: :mod:`training.ppo_config` (``TrainConfig``, every
knob documented), :mod:`training.league` (seat roles, the snapshot pool, scripted seats),
:mod:`training.resume` (checkpoints, exact resume, ``init_from``), :mod:`training.evaluate`
(duplicate evaluation during training), :mod:`training.plots` (``learning_curve.png``),
:mod:`training.rules_family` (a family of rules, one drawn per game), :mod:`training.runs`
(run folders that survive kills and Ctrl-C: atomic writes, resume from the newest intact
checkpoint) and this file: the
rollout, the advantages, the PPO update and the loop. :mod:`training.pipeline` chains runs.

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
* **A family of rules.** With ``rules_family`` each game plays rules drawn by its seed; the
  observation carries them (its ``rules`` slice), so one policy learns them all.
* **Opponents and partners** (:mod:`training.league`): self-play, past snapshots, and
  scripted bots as opponents and as partners, by the ``*_share`` knobs.
* **Warm start.** ``init_from`` loads a checkpoint's weights (e.g. a behaviour-cloned
  policy from :mod:`training.bc`); ``policy_warmup_updates`` then trains only the critic for
  that many updates, so an untrained critic does not push the policy around. With
  ``anchor_coef`` the loss adds that coefficient times ``KL(anchor || policy)`` at the learner's
  decisions, the anchor being the ``init_from`` policy, frozen (its log-probabilities recorded
  during the rollout): fine-tuning improves on the imitation without forgetting it.
  ``anchor_untrained_coef`` sets another weight in games whose rules the start never trained
  under (:func:`anchor_by_rules`).
  ``init_logit_scale`` sharpens the started policy (its logits times the scale, the argmax
  kept), so that the player PPO samples and improves is close to the deterministic one.
* **Masking.** Illegal actions get a logit of -1e8 (probability exactly 0) and the entropy is
  summed over legal actions only (:mod:`training.network`).
* **Exact resume** (:mod:`training.resume`): resuming from the checkpoint of update ``k`` and
  running to ``n`` gives the same weights as running to ``n`` at once.
* **Memory.** The trainer keeps freed memory for its next tensors (``keep_freed_memory``,
  :mod:`training.allocator`): returned to the system, every few-MB tensor of an update is
  page-faulted in again.
* **Threads.** numba runs on its ``workqueue`` threading layer in the trainer (set before numba
  starts threads): with OpenMP, numba's pool slows torch's ops about 6x in the same process.
* **Logging.** TensorBoard scalars (losses, entropy, approximate KL, clip fraction,
  decisions/s, episode stats, duplicate evaluation against ``eval_opponents`` with 95% CIs),
  a tqdm bar, ``history.jsonl``, and ``learning_curve.png`` at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE
from spades_env.core.rules import RulesConfig
from spades_env.envs.vector import VectorSpades
from spades_env.policies.checkpoint import load_meta
from spades_env.policies.coverage import untrained_settings
from training import resume as _resume
from training import runs as _runs
from training.allocator import keep_freed_memory
from training.checkpoint import CheckpointError, update_train_json
from training.config import ConfigError
from training.evaluate import eval_scalars
from training.evaluate import evaluate as _evaluate
from training.league import LEARNER, POOL, SCRIPTED, League, ScriptedSeats
from training.network import PRECISIONS, ActorCritic, Input, masked_kl, matmul_precision
from training.plots import plot_history
from training.ppo_config import TrainConfig, load_train_config
from training.runs import NonFiniteError, TrainingInterrupted
from training.sparse_input import SparseRows


def numba_workqueue() -> None:
    """Run numba's parallel kernels on its ``workqueue`` layer in this process and its children
    (unless ``NUMBA_THREADING_LAYER`` says otherwise): numba's default here is OpenMP, whose
    threads slow torch's ops about 6x in the same process. Effective until numba first launches
    its threads."""
    layer = os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
    if "numba" in sys.modules:
        import numba
        from numba.np.ufunc import parallel

        if not parallel._is_initialized:
            numba.config.THREADING_LAYER = layer


@torch.no_grad()
def scale_logits(model: ActorCritic, scale: float) -> None:
    """Multiply the actor's output layer by ``scale``: every logit scaled, the argmax kept."""
    if scale != 1.0:
        last = model.actor[-1]
        last.weight.mul_(scale)
        last.bias.mul_(scale)


def anchor_by_rules(cfg: TrainConfig, family: Sequence[RulesConfig]) -> np.ndarray:
    """``float32 [len(family)]``: the anchor's weight in each rules of the run's family,
    ``anchor_untrained_coef`` where the ``init_from`` network never trained under one of their
    settings (its ``meta.json``), ``anchor_coef`` elsewhere."""
    meta = load_meta(cfg.init_from)
    out = np.full(len(family), cfg.anchor_coef, dtype=np.float32)
    for i, rules in enumerate(family):
        if untrained_settings(meta, rules):
            out[i] = cfg.anchor_untrained_coef
    return out


def _rotation(num_seats: int) -> np.ndarray:
    """``perm[seat, k]``: absolute seat that is ``k`` seats to the left of ``seat``."""
    perm = np.tile(np.arange(4), (4, 1))
    for s in range(num_seats):
        for k in range(num_seats):
            perm[s, k] = (s + k) % num_seats
    return perm


def _actor_rows(crit: Input, obs: torch.Tensor | None) -> Callable[[np.ndarray | torch.Tensor], Input]:
    """Rows -> the actor's input for them: the observation columns of the critic's input
    (CSR rows, or dense ``obs`` when given, else the dense critic input's first columns)."""
    if isinstance(crit, SparseRows):
        return lambda rows: crit.take(rows, OBS_SIZE)
    src = obs if obs is not None else crit[:, :OBS_SIZE]
    # index_select: a third of the time of ``src[rows]`` for 4,096 rows of 1,187 entries
    return lambda rows: src.index_select(0, torch.as_tensor(rows))


# ---- 1. the trainer: engine, network, league, buffers ---------------------------------------
class Trainer:
    """State of a run: engine, network, optimizer, generators, league (see module doc)."""

    def __init__(self, cfg: TrainConfig, run_dir: str | Path, resume: str | Path | None = None) -> None:
        numba_workqueue()
        if cfg.keep_freed_memory:
            keep_freed_memory()
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        if cfg.torch_threads > 0:
            torch.set_num_threads(cfg.torch_threads)
        family = cfg.rules_list()
        B = cfg.num_envs
        self.engine = e = VectorSpades(
            B,
            family if cfg.rules_family else family[0],
            episode="game",
            reward="score",
            reward_scale=cfg.hand_reward_scale,
            seed=cfg.seed,
            rules_weights=list(cfg.rules_weights) or None,
        )
        self.rules = self.engine.rules
        """The rules of the run (the family's first member under ``rules_family``)."""
        self.num_seats = e.num_seats
        self.perm = _rotation(self.num_seats)
        torch.manual_seed(cfg.seed)
        self.model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, cfg.hidden, cfg.critic_hidden, cfg.score_clip)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.league = League(cfg, B, self.num_seats, self.rng, lambda g: e.rules_family[e.rules_index[g]])
        self.update = 0
        self.decisions = 0
        self.eval_results: list[dict[str, Any]] = []
        if cfg.init_from and resume is None:
            _resume.init_weights(self.model, cfg, cfg.init_from)
            scale_logits(self.model, cfg.init_logit_scale)
        if cfg.pool_start and resume is None:  # the config requires pool_size >= 1
            self.league.snapshot(self.model)
        self.league.assign_roles(np.arange(B))
        if resume is not None:
            self.restore(resume)
        self.anchor: ActorCritic | None = None
        """The frozen ``init_from`` policy that ``anchor_coef`` holds the run near."""
        if cfg.anchor_coef > 0:
            self.anchor = ActorCritic(
                OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, cfg.hidden, cfg.critic_hidden, cfg.score_clip
            )
            _resume.init_weights(self.anchor, cfg, cfg.init_from)
            scale_logits(self.anchor, cfg.init_logit_scale)
            self.anchor.requires_grad_(False)
        self.anchor_by_rules = anchor_by_rules(cfg, e.rules_family) if cfg.anchor_untrained_coef is not None else None
        """``anchor_untrained_coef``: the anchor's weight in each rules of the family."""
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
        # the anchor's log-probabilities of every action at the learner's decisions
        self.buf_anchor = np.zeros((T, B, NUM_ACTIONS) if self.anchor else (0,), dtype=np.float32)
        self.buf_anchor_w = np.zeros((T, B) if self.anchor_by_rules is not None else (0,), dtype=np.float32)
        self._sv = np.zeros((B, STATE_VEC_SIZE), dtype=np.float32)
        self.step_rows: list[SparseRows | None] = [None] * T
        """``sparse_input``: each step's critic input rows (CSR), built once while collecting."""
        self.ep_stats: dict[str, list[float]] = {}

    @property
    def kind(self) -> np.ndarray:
        """``[B, 4]`` role of each seat: LEARNER, POOL or SCRIPTED (:mod:`training.league`)."""
        return self.league.kind

    @property
    def pool(self) -> list[ActorCritic]:
        """The frozen past snapshots opponents may be."""
        return self.league.pool

    # -- critic input ------------------------------------------------------------------------
    def _hidden(self, seat: np.ndarray) -> np.ndarray:
        """Every seat's hand and discards rotated to the acting seat, ``uint8 [B, 416]``."""
        self.engine.state_vectors(self._sv)
        B = self.cfg.num_envs
        h = self._sv[:, OBS_SIZE:].reshape(B, 2, 4, 52)
        idx = self.perm[seat]  # [B, 4]
        out = h[np.arange(B)[:, None, None], np.arange(2)[None, :, None], idx[:, None, :]]
        return out.reshape(B, -1).astype(np.uint8)

    def _critic_input(self, obs: np.ndarray, hidden: np.ndarray) -> Input:
        """The critic's input rows ``[obs, hidden]`` (CSR with ``sparse_input``, else dense)."""
        if self.cfg.sparse_input:
            return SparseRows.from_dense(obs, hidden)
        return torch.cat([torch.from_numpy(obs), torch.from_numpy(hidden).float()], 1)

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
        crit = self._critic_input(self.buf_obs[t], self.buf_hidden[t])
        self.buf_value[t] = self.model.value(crit).numpy()
        if isinstance(crit, SparseRows):
            self.step_rows[t] = crit  # the update reuses them
        actor_rows = _actor_rows(crit, obs_t)
        actions = np.zeros(B, dtype=np.int64)
        li = np.flatnonzero(learner)
        if li.size:
            obs_li = actor_rows(li)
            a, lp = self.model.act(obs_li, mask_t[li], self.gen)
            actions[li] = a.numpy()
            self.buf_logp[t, li] = lp.numpy()
            if self.anchor is not None and self.update >= self.cfg.policy_warmup_updates:
                # (during the critic-only warm-up the update does not read them)
                self.buf_anchor[t, li] = self.anchor.log_probs(obs_li, mask_t[li]).numpy()
                if self.anchor_by_rules is not None:
                    self.buf_anchor_w[t] = self.anchor_by_rules[e.rules_index]
        self.league.act(kind, seat, obs, mask, actor_rows, mask_t, e.states, self.gen, actions)
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
        self.league.new_games(ended)

    # -- one rollout ---------------------------------------------------------------------------
    def collect(self) -> None:
        with matmul_precision(self.cfg.precision):
            for t in range(self.cfg.num_steps):
                actions = self._act(t)
                res = self.engine.step(actions)
                self._after_step(t, res)
        e = self.engine
        with torch.no_grad(), matmul_precision(self.cfg.precision):
            self.boot_value = self.model.value(self._critic_input(e._obs, self._hidden(e._seat))).numpy()
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
        if cfg.sparse_input:  # the rollout's CSR rows (collect's); minibatches take theirs from them
            crit_all: Input = SparseRows.concat(self.step_rows)
        else:
            # in the dtype the first layer multiplies in (autocast would cast every minibatch)
            dtype = PRECISIONS[cfg.precision]
            obs_all, hidden_all = self.buf_obs.reshape(N, -1), self.buf_hidden.reshape(N, -1)
            crit_all = torch.cat([torch.from_numpy(obs_all).to(dtype), torch.from_numpy(hidden_all).to(dtype)], 1)
        actor_rows = _actor_rows(crit_all, None)
        mask = torch.from_numpy(self.buf_mask.reshape(N, -1))
        actions = torch.from_numpy(self.buf_action.reshape(N))
        old_logp = torch.from_numpy(self.buf_logp.reshape(N))
        learner = torch.from_numpy(self.buf_learner.reshape(N))
        adv = torch.from_numpy(adv_pi.reshape(N))
        returns = torch.from_numpy(ret.reshape(N, 2))
        anchor = torch.from_numpy(self.buf_anchor.reshape(N, -1)) if self.anchor is not None else None
        anchor_w = torch.from_numpy(self.buf_anchor_w.reshape(N)) if self.anchor_by_rules is not None else None
        mb_size = N // cfg.num_minibatches
        stats: dict[str, list[float]] = {
            k: [] for k in ("pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac", "anchor_kl")
        }
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(N, generator=self.gen)
            kl_stop = False
            for start in range(0, N, mb_size):
                mb = perm[start : start + mb_size]
                lmb = mb[learner[mb]]
                with matmul_precision(cfg.precision):  # the forwards; backward outside
                    crit = crit_all.take(mb) if isinstance(crit_all, SparseRows) else crit_all.index_select(0, mb)
                    v_loss = 0.5 * ((self.model.value(crit) - returns[mb]) ** 2).mean()
                    loss = cfg.vf_coef * v_loss
                    if lmb.numel() and self.update >= cfg.policy_warmup_updates:
                        logp, ent, logp_all = self.model.evaluate(actor_rows(lmb), mask[lmb], actions[lmb])
                        logratio = logp - old_logp[lmb]
                        ratio = logratio.exp()
                        a = adv[lmb]
                        if cfg.norm_adv and a.numel() > 1:
                            a = (a - a.mean()) / (a.std() + 1e-8)
                        pg = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                        entropy = ent.mean()
                        loss = loss + pg - cfg.ent_coef * entropy
                        if anchor is not None:
                            kl_rows = masked_kl(anchor[lmb], logp_all, mask[lmb])
                            anchor_kl = kl_rows.mean()
                            if anchor_w is None:
                                loss = loss + cfg.anchor_coef * anchor_kl
                            else:  # weighed by each game's rules (anchor_untrained_coef)
                                loss = loss + (anchor_w[lmb] * kl_rows).mean()
                            stats["anchor_kl"].append(anchor_kl.item())
                        with torch.no_grad():
                            approx_kl = ((ratio - 1) - logratio).mean().item()
                            stats["approx_kl"].append(approx_kl)
                            stats["clipfrac"].append(((ratio - 1).abs() > cfg.clip_coef).float().mean().item())
                            stats["pg_loss"].append(pg.item())
                            stats["entropy"].append(entropy.item())
                        if cfg.target_kl > 0 and approx_kl > cfg.target_kl:
                            kl_stop = True
                stats["v_loss"].append(v_loss.item())
                if not math.isfinite(loss.item()):
                    parts = {k: v[-1] for k, v in stats.items() if v}
                    raise NonFiniteError(
                        f"update {self.update + 1}: the loss is {loss.item()} ("
                        + ", ".join(f"{k} {v:.4g}" for k, v in parts.items())
                        + f"); training diverged (learning_rate {cfg.learning_rate:g}, ent_coef "
                        f"{cfg.ent_coef:g}); nothing of this update was saved"
                    )
                self.optimizer.zero_grad()
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                if not math.isfinite(float(norm)):
                    raise NonFiniteError(
                        f"update {self.update + 1}: the gradient norm is {float(norm)}; training "
                        "diverged; nothing of this update was saved"
                    )
                self.optimizer.step()
                if kl_stop:
                    break
            if kl_stop:
                break
        self.update += 1
        if cfg.pool_size > 0 and self.update % cfg.pool_every == 0:
            self.league.snapshot(self.model)
        out = {f"loss/{k}" if "loss" in k else f"train/{k}": float(np.mean(v)) for k, v in stats.items() if v}
        out["train/learning_rate"] = self.optimizer.param_groups[0]["lr"]
        out["train/learner_share"] = float(self.buf_learner.mean())
        return out

    # -- checkpoints and evaluation (training.resume, training.evaluate) -----------------------
    def meta(self) -> dict[str, Any]:
        return _resume.run_meta(self)

    def save(self, path: str | Path) -> Path:
        """A checkpoint with everything needed to resume exactly."""
        return _resume.save(self, path)

    def restore(self, path: str | Path) -> None:
        """Continue exactly from a checkpoint saved by :meth:`save` with compatible shapes."""
        _resume.restore(self, path)

    def evaluate(self, ckpt: Path) -> dict[str, Any]:
        """Duplicate games of the checkpoint (both seats) against each evaluation team."""
        return _evaluate(self, ckpt)


# ---- 2. the loop ---------------------------------------------------------------------------
def _check_finite(tr: Trainer) -> None:
    """A NonFiniteError naming the first weight that is NaN or infinite (before any save)."""
    for name, p in tr.model.named_parameters():
        if not bool(torch.isfinite(p).all()):
            raise NonFiniteError(
                f"update {tr.update}: weight {name} is not finite after the update (training "
                f"diverged; learning_rate {tr.cfg.learning_rate:g}); nothing of it was saved"
            )


class _Interrupts:
    """SIGINT -> a flag the loop reads at the end of each update (a second Ctrl-C stops at once)."""

    def __init__(self) -> None:
        self.hit = False
        self.prev: Any = None

    def __enter__(self) -> _Interrupts:
        import signal
        import threading

        # not in a thread, and not where SIGINT is ignored (nohup, a background job of a script)
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self.prev = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.hit:  # the second Ctrl-C: stop now (the last checkpoint stands)
            raise KeyboardInterrupt
        self.hit = True

    def __exit__(self, *exc) -> None:
        import signal

        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)


def train(
    cfg: TrainConfig,
    run_dir: str | Path | None = None,
    resume: str | Path | bool | None = None,
    stop_update: int | None = None,
    *,
    overwrite: bool = False,
    allow_changes: bool = False,
    log: Callable[[str], None] | None = None,
) -> Trainer:
    """Train to ``cfg.total_decisions`` (or to update ``stop_update``); returns the trainer.
    Writes checkpoints, ``history.jsonl``, TensorBoard scalars and ``learning_curve.png``
    (:mod:`training.runs`: every write atomic, a run folder that holds a run refused unless
    ``resume`` or ``overwrite``).

    ``resume``: a checkpoint directory, or ``True`` / ``"latest"`` / the run folder for the
    newest intact checkpoint of ``run_dir``; a config that differs from the checkpoint's is
    refused unless ``allow_changes``. Ctrl-C stops at the end of the update in progress with a
    checkpoint and raises :class:`~training.runs.TrainingInterrupted`."""
    say = log or (lambda m: print(f"training.ppo: {m}", file=sys.stderr, flush=True))
    run = Path(run_dir) if run_dir is not None else Path("runs") / cfg.run_name
    ckpt, changes = _runs.prepare(cfg, run, resume, overwrite, allow_changes, say)
    tr = Trainer(cfg, run, ckpt)
    if "learning_rate" in changes:  # (anneal_lr sets it every update anyway)
        tr.optimizer.param_groups[0]["lr"] = cfg.learning_rate
    per_update = cfg.num_envs * cfg.num_steps
    total_updates = cfg.updates()
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
    history = (run / "history.jsonl").open("a")
    started = time.monotonic()
    out_of_time = False
    latest: Path | None = ckpt
    try:
        with _Interrupts() as stop:
            while tr.update < last_update:
                t0 = time.perf_counter()
                tr.collect()
                t1 = time.perf_counter()
                row = tr.learn(total_updates)
                t2 = time.perf_counter()
                _check_finite(tr)
                row["perf/decisions_per_s"] = per_update / (t2 - t0)
                row["perf/collect_decisions_per_s"] = per_update / (t1 - t0)
                for k, v in tr.ep_stats.items():
                    row[k] = float(np.mean(v))
                tr.ep_stats = {}
                out_of_time = cfg.max_minutes > 0 and time.monotonic() - started > 60 * cfg.max_minutes
                final = tr.update == last_update or out_of_time
                save_now = bool(cfg.checkpoint_every) and (tr.update % cfg.checkpoint_every == 0 or final)
                eval_now = final if not cfg.eval_every else (tr.update % cfg.eval_every == 0 or final)
                save_now = save_now or eval_now or stop.hit
                staged = None
                if save_now:  # built and evaluated in a hidden folder; renamed after the history row
                    staged = tr.save(_runs.staging_path(ckdir, tr.update))
                    if eval_now and cfg.eval_boards > 0 and cfg.eval_opponents:
                        row["eval"] = tr.evaluate(staged)
                        row.update(eval_scalars(row["eval"]))
                        update_train_json(staged, eval_results=tr.eval_results)
                        _runs.fault_point("eval:written")
                row["update"], row["decisions"] = tr.update, tr.decisions
                _runs.append_row(history, row, sync=staged is not None)
                if staged is not None:
                    latest = _runs.publish(ckdir, staged, tr.update, cfg.keep_checkpoints)
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
                if stop.hit:
                    raise TrainingInterrupted(
                        f"interrupted at update {tr.update} of {total_updates}; checkpoint {latest} "
                        f"(continue with --resume)",
                        latest,
                    )
                if out_of_time:
                    break
        if tr.update >= total_updates or out_of_time:
            newest = _runs.numbered(ckdir)
            if newest:
                _runs.copy_dir(newest[-1][1], run / "final")
                _runs.fault_point("final:copied")
    finally:
        history.close()
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()
    plot_history(run / "history.jsonl", run / "learning_curve.png")
    return tr


def main(argv: list[str] | None = None) -> int:
    """``python -m training.ppo --config FILE [--set key=value ...] [--run-dir DIR] [--resume [CKPT]]
    [--overwrite] [--allow-changes]``."""
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
    p.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="CKPT",
        help="continue exactly: from the run folder's newest intact checkpoint (no value, or "
        "'latest'), or from the checkpoint directory given",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="delete the run the run folder holds and start over"
    )
    p.add_argument(
        "--allow-changes",
        action="store_true",
        help="resume with settings that differ from the checkpoint's (they take effect; config.json records them)",
    )
    try:
        args = p.parse_args(argv)
        cfg = load_train_config(args.config, args.overrides)
        tr = train(cfg, args.run_dir, args.resume, overwrite=args.overwrite, allow_changes=args.allow_changes)
    except (ConfigError, CheckpointError) as exc:
        print(f"training.ppo: {exc}", file=sys.stderr)
        return 2
    except NonFiniteError as exc:
        print(f"training.ppo: {exc}", file=sys.stderr)
        return 1
    except TrainingInterrupted as exc:
        print(f"training.ppo: {exc.message}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("training.ppo: interrupted (the last checkpoint stands; continue with --resume)", file=sys.stderr)
        return 130
    print(f"done: {tr.update} updates, {tr.decisions} decisions; run directory {tr.run_dir}")
    if tr.eval_results:
        print(json.dumps(tr.eval_results[-1], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "LEARNER",
    "POOL",
    "SCRIPTED",
    "ScriptedSeats",
    "TrainConfig",
    "Trainer",
    "load_train_config",
    "main",
    "numba_workqueue",
    "plot_history",
    "scale_logits",
    "train",
]
