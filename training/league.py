"""Who sits at the table besides the learner: seat roles, the snapshot pool, scripted seats.

When a game starts its seats get roles (:meth:`League.assign_roles`): by default both teams are
the learner (self-play). With ``pool_opponent_share`` the other team is a frozen past snapshot
from the pool (``pool_size`` snapshots, one added every ``pool_every`` updates); with
``scripted_opponent_share`` it is a scripted bot (``scripted_bots``, one drawn per game); with
``scripted_partner_share`` the learner's partner is a scripted bot (no shared conventions). The
compiled bots (``heuristic``, ``blind``) decide for all their seats in one batched call; other
bots are Python Policies, one per (game, seat), re-created every hand (slow: keep them rare).
Under a rules family each bot gets the rules of its game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE
from training.checkpoint import load_weights
from training.network import ActorCritic

LEARNER, POOL, SCRIPTED = 0, 1, 2


def _seed_int(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 1)


class ScriptedSeats:
    """The scripted bots of the batch: one per (game, seat), re-created every hand with a seed
    from (run seed, game, seat, episode, hand), remembering the (obs, mask) it saw this hand so
    that a restored run can rebuild it exactly."""

    def __init__(self, names: tuple[str, ...], rules_of: Callable[[int], Any], seed: int) -> None:
        from spades_env.policies.bots import parse_policy_name

        self.names, self.rules_of, self.seed = names, rules_of, seed
        self.bots: dict[tuple[int, int], list] = {}  # (game, seat) -> [bot, hand_id, seed, history]
        # compiled stateless bots (L2, blind) decide for all their games in one call
        batched = {"heuristic": 0, "blind": 1}
        self.batch_mode = np.array(
            [batched.get(parse_policy_name(n)[0], -1) for n in names] or [-1], dtype=np.int64
        )

    def act_batched(
        self, rows: np.ndarray, name_idx: np.ndarray, obs: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        """Actions of the rows whose bot is a compiled one (``batch_mode >= 0``), in one call."""
        from spades_env.policies.bots.heuristic import heuristic_actions

        return heuristic_actions(obs[rows], mask[rows], self.batch_mode[name_idx])

    def _make(self, name_idx: int, seed: int, game: int):
        from spades_env.policies.bots import make_policy

        return make_policy(self.names[name_idx], seed=seed, rules=self.rules_of(game))

    def act(self, game: int, seat: int, name_idx: int, episode: int, hand_id: int, obs, mask) -> int:
        entry = self.bots.get((game, seat))
        if entry is None or entry[1] != hand_id or entry[4] != name_idx:
            s = _seed_int(self.seed, 7, game, seat, episode, hand_id)
            entry = [self._make(name_idx, s, game), hand_id, s, [], name_idx]
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
            bot = self._make(name_idx, seed, g)
            obs, mask = tensors[f"bots.{k}.obs"].numpy(), tensors[f"bots.{k}.mask"].numpy()
            hist = []
            for o, m in zip(obs, mask, strict=True):
                bot.act(o, m)  # replay: the bot's generator and trackers end where they were
                hist.append((o.copy(), m.copy()))
            self.bots[(g, s)] = [bot, hand_id, seed, hist, name_idx]


class League:
    """The roles of every (game, seat), the snapshot pool and the scripted seats of a run.

    ``kind[i, s]`` is LEARNER, POOL or SCRIPTED; ``pool_idx`` / ``bot_idx`` say which snapshot
    or bot; ``episode_no[i]`` counts the games played in slot ``i``. Draws come from the
    trainer's numpy generator ``rng`` (always the same number per game), so a run is a
    function of its seed."""

    def __init__(self, cfg: Any, num_envs: int, num_seats: int, rng: np.random.Generator, rules_of) -> None:
        self.cfg, self.num_seats, self.rng = cfg, num_seats, rng
        B = num_envs
        self.pool: list[ActorCritic] = []
        self.kind = np.zeros((B, 4), dtype=np.int64)
        self.pool_idx = np.zeros((B, 4), dtype=np.int64)
        self.bot_idx = np.zeros((B, 4), dtype=np.int64)
        self.episode_no = np.zeros(B, dtype=np.int64)
        self.scripted = ScriptedSeats(cfg.scripted_bots, rules_of, cfg.seed)

    def assign_roles(self, games: np.ndarray) -> None:
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

    def new_games(self, ended: np.ndarray) -> None:
        """Games in these slots ended: count them and draw the roles of the next ones."""
        if ended.size:
            self.episode_no[ended] += 1
            self.assign_roles(ended)

    def _new_net(self) -> ActorCritic:
        return ActorCritic(
            OBS_SIZE, STATE_VEC_SIZE, NUM_ACTIONS, self.cfg.hidden, self.cfg.critic_hidden, self.cfg.score_clip
        )

    def snapshot(self, model: ActorCritic) -> None:
        """Add a frozen copy of ``model`` to the pool (the oldest leaves when it is full)."""
        snap = self._new_net()
        snap.load_state_dict(model.state_dict())
        snap.eval()
        self.pool.append(snap)
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)
            # games playing the dropped snapshot now play the next oldest
            self.pool_idx = np.maximum(self.pool_idx - 1, 0)

    @torch.no_grad()
    def act(self, kind, seat, obs, mask, actor_rows, mask_t, states, gen, actions) -> None:
        """Fill ``actions`` of the rows whose acting seat is a pool snapshot or a scripted bot
        (``actor_rows(rows)``: the network input of those rows, dense or CSR, as the trainer's
        ``sparse_input`` says)."""
        pool_rows = np.flatnonzero(kind == POOL)
        if pool_rows.size:
            pidx = self.pool_idx[pool_rows, seat[pool_rows]]
            for j in np.unique(pidx):
                rows = pool_rows[pidx == j]
                a, _ = self.pool[j].act(actor_rows(rows), mask_t[rows], gen)
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
                int(states[i, L.TOTAL_HANDS]),
                obs[i],
                mask[i],
            )

    # -- checkpoint state (training.resume) ----------------------------------------------------
    ROLE_ARRAYS = ("kind", "pool_idx", "bot_idx", "episode_no")

    def state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """Tensors and JSON of the roles, the pool and the scripted seats."""
        tensors = {f"roles.{k}": torch.from_numpy(getattr(self, k).copy()) for k in self.ROLE_ARRAYS}
        for j, snap in enumerate(self.pool):
            for k, v in snap.state_dict().items():
                tensors[f"pool.{j}.{k}"] = v
        bt, bindex = self.scripted.state()
        tensors.update(bt)
        return tensors, {"pool_size": len(self.pool), "bots": bindex}

    def load_state(self, tensors: dict[str, torch.Tensor], js: dict[str, Any], where) -> None:
        """Restore what :meth:`state` saved (the engine must be restored first: bots replay
        under their game's rules)."""
        for k in self.ROLE_ARRAYS:
            getattr(self, k)[:] = tensors[f"roles.{k}"].numpy()
        self.pool = []
        for j in range(int(js["pool_size"])):
            snap = self._new_net()
            load_weights(snap, tensors, where, prefix=f"pool.{j}.")
            snap.eval()
            self.pool.append(snap)
        self.scripted.restore(tensors, js["bots"])


__all__ = ["LEARNER", "POOL", "SCRIPTED", "League", "ScriptedSeats"]
