"""Network-guided search (``netsearch``): PIMC over inferred deals, played out by the network,
valued by the score of the game.

For a bid or a card to play, :class:`NetSearchPolicy`

1. **samples deals** of the unseen cards consistent with everything its seat has seen (the
   L3 sampler, :func:`~spades_env.policies.bots.search.sample_deal`: the cards each seat still
   holds, the suits it has shown out of, the cards passed to the partner in the Blind Nil
   exchange);
2. **weights each deal** by how likely the network's own bidding and play make what the other
   seats did (policy-based inference): the product, over the other seats' bids and the cards
   they played to the current trick, of the network's probability of that action given the
   sampled hand (one batched forward pass over all deals; each factor floored at ``floor``
   if one is set; the log-weight scaled by ``infer``, or by less where the draws would otherwise leave fewer
   than ``samples`` effective deals: adaptive tempering, :func:`tempered_exponent`). The order of earlier tricks is not in the observation,
   so only the current trick's cards are read this way. The weights are sharp, so ``draws``
   times as many deals are drawn as are searched, and ``samples`` of them picked in
   proportion to their weights (sampling importance resampling): the playouts go to deals the
   inference believes, not to a few heavy ones among mostly unlikely ones;
3. **plays each candidate out** on every deal with the network at every seat, each seat acting
   on its own observation of the sampled deal (one batched forward pass per ply over all
   deals and candidates; forced moves without one): its likeliest action, or with ``temp``
   an action drawn from softmax(logits / ``temp``), the candidates of one deal drawing with
   the same noise step by step (common random numbers);
4. **values each candidate** by the weighted mean, over the deals, of the score of the game
   after the hand (``value=2``, the default): the points margin (contracts, Nils, sets, bags
   and their penalty, from the core's scoring) minus ``bag_cost`` times each bag's weight
   (a bag left on the books costs ``bag_penalty / bag_limit`` points later), and, once a team
   is within ``endgame`` points of the target, the chance of winning the game (the L2 model's
   :func:`~spades_env.policies.bots.blind_value.win_chance`) times the target score.
   ``value=3``: at every score, the chance of winning the game from the score after the hand
   as the rules make it (:mod:`~spades_env.policies.bots.game_value`: a team far enough behind
   gets a Blind Nil, the target is near), times the target score, the bags costed as above.
   ``value=1`` is L3's hand margin (points this hand, own team minus the other), ``value=0``
   the team's tricks (a comparison only).

The candidates: every legal card (or the network's ``cards`` most likely ones), and the
network's ``bids`` most likely bids. The best-valued candidate replaces the network's own
choice only when its gain over it, on the same deals, is more than ``margin`` points and
more than ``confidence`` standard errors of that paired gain; otherwise (ties included) the
network's choice stands. With ``upto`` (more than ``samples``; not with ``budget``), a
decision still undecided after ``samples`` deals (another candidate leads the network's, not
yet surely) draws as many deals again, and again, up to ``upto`` deals: the playouts go where
the decision hangs on them, and the clear decisions stay at ``samples``. With ``split=1`` the
best candidate is chosen on half of the deals and its gain tested on the other half (the gain of
the best of several candidates, measured on the deals that chose it, leans high). The Blind Nil
choice is the network's unless ``blind`` names a number of deals: then both answers are played
out on that many deals of all 52 cards (the seat has not seen its hand; weighted by the earlier
bids as above), valued by the chance of winning the game (as L3's choice is), with the same
test against the network's answer. The exchange is the network's unless ``exchange=1``: then
each card the seat may pass is a candidate as in a card play (the partner holds the cards
passed to it, not those it passed back). The two-player draw is the network's. The search
reads only the seat's observation (decoded with the core's decoder); given ``samples`` it is a
function of the observation and the seed.

``last_values`` holds the searched actions' values (points; NaN elsewhere): the soft targets
of expert iteration (``training.expert_iteration``).

Speed (``spades4_net_v1``, 512x512, one process on a busy 2-core machine, with
``OPENBLAS_NUM_THREADS=1``): card decisions about 45/s at ``samples=4``, 21/s at 8, 15/s at
16, 9/s at 32; bids 4-15/s. The forward passes never use several BLAS threads (they crawl on
a loaded machine): the layers run compiled over the non-zero inputs, or in BLAS when one
BLAS thread is set before NumPy loads.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE, NUM_ACTIONS
from spades_env.core.engine import apply_action, game_winner_of, legal_mask
from spades_env.core.jit import jit
from spades_env.core.observation import O_SCORES, OBS_SIZE, SeatView, decode_into, encode_observation
from spades_env.core.rng import shuffle_into
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.policies.base import PolicyNameError
from spades_env.policies.bots.base import ScriptedBot
from spades_env.policies.bots.blind_value import blind_model, model_hand, row_config, win_chance
from spades_env.policies.bots.game_value import chance_at, game_value_table
from spades_env.policies.bots.search import exchange_state, sample_deal
from spades_env.policies.checkpoint import MASKED_LOGIT, NumpyActor

_SPADES = ((1 << 13) - 1) << 39
_NO_TABLE = np.zeros((2, 2), dtype=np.float64)
_PLAYOUT_STEPS = 72
"""Decisions a playout row makes at most (bids, exchange passes, cards); later ones reuse the last noise."""

VALUE_TRICKS, VALUE_HAND, VALUE_SCORE, VALUE_GAME = 0, 1, 2, 3
VALUE_WIN = 4
"""The normal model's chance of winning the game (times the target score) at any score: the
Blind Nil choice's value (``blind``) under ``value`` 0 to 2, as L3's; not an option itself."""
DEFAULT_SAMPLES = 16
"""Deals per decision when neither ``samples`` nor ``budget`` is given."""

OPTIONS: dict[str, tuple[type, float, float]] = {
    "net": (str, 0, 0),
    "samples": (int, 1, 100_000),
    "budget": (float, 0.0, 3600.0),
    "max_samples": (int, 1, 100_000),
    "upto": (int, 0, 100_000),
    "bids": (int, 1, 14),
    "cards": (int, 0, 13),
    "infer": (float, 0.0, 10.0),
    "floor": (float, 0.0, 1.0),
    "value": (int, 0, 3),
    "bag_cost": (float, 0.0, 2.0),
    "endgame": (int, 0, 100_000),
    "margin": (float, 0.0, 1000.0),
    "draws": (int, 1, 64),
    "confidence": (float, 0.0, 10.0),
    "split": (int, 0, 1),
    "blind": (int, 0, 100_000),
    "exchange": (int, 0, 1),
    "temp": (float, 0.0, 10.0),
}
"""``netsearch`` options: (type, low, high); a float's low bound is excluded for ``budget``
only. ``net`` is a shipped agent id or a checkpoint folder (its network plays and infers)."""


# ---- compiled parts --------------------------------------------------------------------------
@jit
def sample_rows(base, pool, counts, fixed, voids, rng, avoid, rows):
    """Fill each of ``rows`` with ``base`` and the other seats' hands of a sampled deal."""
    n = base[L.NUM_SEATS]
    hands = np.zeros(5, dtype=np.int64)
    for i in range(rows.shape[0]):
        rows[i, :] = base
        if pool != 0:
            sample_deal(base, pool, counts, fixed, voids, rng, n, hands, avoid)
            for s in range(1, n):
                rows[i, L.HANDS + s] = hands[s]


@jit
def deal_rows(base, rng, rows):
    """Fill each of ``rows`` with ``base`` and a random deal of all 52 cards to the four seats,
    seat 0 included (the Blind Nil choice is made before the seat sees its hand)."""
    deck = np.empty(52, dtype=np.int64)
    for i in range(rows.shape[0]):
        rows[i, :] = base
        shuffle_into(rng, 0, deck)
        for s in range(4):
            rows[i, L.HANDS + s] = 0
        for j in range(52):
            rows[i, L.HANDS + j % 4] |= 1 << deck[j]


@jit
def inference_inputs(rows, params, obs, masks, acts, owner):
    """The other seats' past decisions that the network can explain, on every sampled deal
    (seat 0 of each row is the searching seat): each seat's bid (the hand it held then: what
    it holds and has played; skipped for a Blind Nil and for the other team after its Blind
    Nil exchange, which we did not see) and each card played to the current trick (the trick
    as it was then). Writes each decision's observation, legal mask and action, and the deal
    it belongs to; returns how many."""
    n = rows[0, L.NUM_SEATS]
    k = 0
    work = np.empty(L.STATE_SIZE, dtype=np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        first = (r[L.DEALER] + 1) % n
        opp_blind = False
        for s in range(n):
            if s % 2 == 1 and r[L.BIDS + s] == L.BID_BLIND_NIL:
                opp_blind = True
        for j in range(n):
            s = (first + j) % n
            b = r[L.BIDS + s]
            if s == 0 or b < 0 or b > 13 or (s % 2 == 1 and opp_blind):
                continue
            work[:] = r
            for t in range(4):
                work[L.HANDS + t] = r[L.HANDS + t] | r[L.PLAYED + t]
            if n == 4 and s == 2:  # the partner's hand before our exchange
                work[L.HANDS + 2] = (work[L.HANDS + 2] & ~r[L.PASSED]) | r[L.RECEIVED]
            for m in range(j, n):
                work[L.BIDS + (first + m) % n] = L.BID_NONE
            for t in range(4):
                work[L.PLAYED + t] = 0
                work[L.TRICK_CARDS + t] = L.NO_CARD
                work[L.TRICKS_WON + t] = 0
                work[L.SHOWN_OUT + t] = 0
                work[L.PASSED + t] = 0
                work[L.RECEIVED + t] = 0
                bt = work[L.BIDS + t]
                work[L.BLIND_STATUS + t] = L.BLIND_NIL if bt == L.BID_BLIND_NIL else L.BLIND_SAW
            work[L.PHASE] = L.PH_BID
            work[L.TURN] = s
            work[L.TRICK_SIZE] = 0
            work[L.TRICKS_PLAYED] = 0
            work[L.SPADES_BROKEN] = 0
            work[L.TRICK_LEADER] = first
            encode_observation(work, params, s, obs[k])
            legal_mask(work, params, masks[k])
            acts[k] = BID_BASE + b
            owner[k] = i
            k += 1
        size = r[L.TRICK_SIZE]
        if r[L.PHASE] != L.PH_PLAY or size == 0:
            continue
        leader = r[L.TRICK_LEADER]
        for j in range(size):
            s = (leader + j) % n
            if s == 0:
                continue
            work[:] = r
            for m in range(j, size):
                t = (leader + m) % n
                c = r[L.TRICK_CARDS + t]
                work[L.TRICK_CARDS + t] = L.NO_CARD
                work[L.PLAYED + t] &= ~(1 << c)
                work[L.HANDS + t] |= 1 << c
            work[L.TRICK_SIZE] = j
            work[L.TURN] = s
            gone = 0
            for t in range(4):
                gone |= work[L.PLAYED + t]
            work[L.SPADES_BROKEN] = 1 if (gone & _SPADES) != 0 else 0  # any spade played breaks them
            c = r[L.TRICK_CARDS + s]
            legal_mask(work, params, masks[k])
            if masks[k, c] == 0:
                continue
            encode_observation(work, params, s, obs[k])
            acts[k] = c
            owner[k] = i
            k += 1
    return k


@jit
def advance(rows, params, obs, masks, idx):
    """Play every row's forced moves; write the observation and mask of each row that has a
    real decision to make (``idx``: which row); return how many."""
    k = 0
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for i in range(rows.shape[0]):
        r = rows[i]
        while r[L.TURN] >= 0 and r[L.PHASE] < L.PH_HAND_END:
            legal_mask(r, params, m)
            cnt = 0
            last = -1
            for a in range(NUM_ACTIONS):
                if m[a] != 0:
                    cnt += 1
                    last = a
            if cnt == 1:
                apply_action(r, params, last)
                continue
            encode_observation(r, params, r[L.TURN], obs[k])
            masks[k, :] = m
            idx[k] = i
            k += 1
            break
    return k


@jit
def apply_rows(rows, params, idx, acts, k):
    """Apply ``acts[j]`` to row ``idx[j]`` for the first ``k`` decisions; False on an illegal one."""
    ok = True
    for j in range(k):
        if apply_action(rows[idx[j]], params, acts[j]) != 0:
            ok = False
    return ok


@jit
def row_values(rows, base, params, mode, bag_cost, endgame, gain, spread, chances, low):
    """The value of each played-out row for team 0 (the searching seat's), in points, relative
    to ``base`` (see the module docstring: ``mode`` 0 tricks, 1 hand margin, 2 game score, 3 the
    game-value table ``chances`` from ``low`` times the target, 4 the normal model's chance of
    winning times the target at any score, :func:`win_chance` with ``gain`` and ``spread``)."""
    out = np.zeros(rows.shape[0], dtype=np.float64)
    n = base[L.NUM_SEATS]
    limit = max(params[L.P_BAG_LIMIT], 1)
    per_bag = bag_cost * params[L.P_BAG_PENALTY] / limit
    target = params[L.P_TARGET_SCORE]
    near = max(base[L.SCORES], base[L.SCORES + 1]) >= target - endgame
    if params[L.P_MERCY] != 0 and min(base[L.SCORES], base[L.SCORES + 1]) <= params[L.P_MERCY_THRESHOLD] + endgame:
        near = True
    m0 = (base[L.SCORES] - per_bag * base[L.BAGS]) - (base[L.SCORES + 1] - per_bag * base[L.BAGS + 1])
    if mode == 4:
        near = True
    else:
        gain, spread = -1.0, -1.0
    w0 = win_chance(base[L.SCORES], base[L.SCORES + 1], params, gain, spread)
    if mode == 3:
        w0 = chance_at(chances, low, base[L.SCORES] - per_bag * base[L.BAGS], base[L.SCORES + 1] - per_bag * base[L.BAGS + 1], params)
    for i in range(rows.shape[0]):
        r = rows[i]
        if mode == 0:
            t = 0
            for s in range(0, n, 2):
                t += r[L.TRICKS_WON + s] - base[L.TRICKS_WON + s]
            out[i] = t
        elif mode == 1:
            out[i] = r[L.HAND_DELTA] - r[L.HAND_DELTA + 1]
        elif mode == 3:
            w = game_winner_of(r[L.SCORES], r[L.SCORES + 1], params)
            if w >= 0:
                out[i] = ((1.0 if w == 0 else 0.0) - w0) * target
            else:
                own = r[L.SCORES] - per_bag * r[L.BAGS]
                opp = r[L.SCORES + 1] - per_bag * r[L.BAGS + 1]
                out[i] = (chance_at(chances, low, own, opp, params) - w0) * target
        else:
            m = (r[L.SCORES] - per_bag * r[L.BAGS]) - (r[L.SCORES + 1] - per_bag * r[L.BAGS + 1])
            if near:
                out[i] = (win_chance(r[L.SCORES], r[L.SCORES + 1], params, gain, spread) - w0) * target
            else:
                out[i] = m - m0
    return out


@jit
def _affine(x, w, b, relu, out):
    """``out = x @ w + b`` (then ReLU), summing over the non-zero ``x`` only (an observation
    is mostly zeros, a hidden layer after ReLU about half): no BLAS, whose threads crawl on a
    busy machine (measured: 37x slower with two threads on two loaded cores)."""
    rows, k_in = x.shape
    width = w.shape[1]
    for r in range(rows):
        acc = out[r]
        for j in range(width):
            acc[j] = b[j]
        for k in range(k_in):
            v = x[r, k]
            if v != 0.0:
                for j in range(width):
                    acc[j] += v * w[k, j]
        if relu:
            for j in range(width):
                if acc[j] < 0.0:
                    acc[j] = 0.0


_ONE_BLAS_THREAD = any(os.environ.get(k) == "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
"""With one BLAS thread (set before NumPy loads) the hidden layers go to BLAS (measured 1.6x
faster than :func:`_affine`); with several, BLAS's threads crawl on a busy machine, so not."""


def forward(actor: NumpyActor, obs: np.ndarray) -> np.ndarray:
    """The actor's raw logits of a batch ``obs`` (float32, modified in place: its scores
    clipped as the network clips them), as ``NumpyActor.__call__`` up to float rounding."""
    if actor.score_clip is not None:
        sc = obs[:, O_SCORES : O_SCORES + 2]
        np.clip(sc, -actor.score_clip, actor.score_clip, out=sc)
    x = obs
    last = len(actor.layers) - 1
    for i, (w, b) in enumerate(actor.layers):
        if i > 0 and _ONE_BLAS_THREAD:
            x = x @ w
            x += b
            if i < last:
                np.maximum(x, 0.0, out=x)
            continue
        out = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
        _affine(x, w, b, i < last, out)
        x = out
    return x


def effective_count(logw: np.ndarray, beta: float) -> float:
    """The effective number of draws of the weights ``exp(beta * logw)`` (Kish)."""
    w = np.exp(beta * (logw - logw.max()))
    return float(w.sum() ** 2 / (w * w).sum())


def tempered_exponent(logw: np.ndarray, most: float, ess: float) -> float:
    """The largest exponent ``beta`` in ``[0, most]`` whose weights ``exp(beta * logw)`` keep at
    least ``ess`` effective draws (adaptive tempering, as in sequential Monte Carlo): the
    inference sharpens the deals as far as the draws allow, and no further. The network is a
    confident model of the others (the log-probability of a bid it would not make is -50 to
    -200), so full weights leave one or two draws carrying a search."""
    if most <= 0 or effective_count(logw, most) >= ess:
        return max(most, 0.0)
    lo, hi = 0.0, most
    for _ in range(30):  # bisection: the count falls as beta grows
        mid = 0.5 * (lo + hi)
        if effective_count(logw, mid) >= ess:
            lo = mid
        else:
            hi = mid
    return lo


# ---- the policy ------------------------------------------------------------------------------
def _log_softmax_at(logits: np.ndarray, masks: np.ndarray, acts: np.ndarray) -> np.ndarray:
    z = np.where(masks != 0, logits.astype(np.float64), MASKED_LOGIT)
    z -= z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    return z[np.arange(len(acts)), acts] - lse


class NetSearchPolicy(ScriptedBot):
    """``netsearch``: PIMC with policy-based deal inference, network playouts and game-score
    values (see the module docstring). A Policy: its own observation only."""

    name = "netsearch"

    def __init__(
        self,
        rules: RulesConfig | str | dict | None = None,
        seed: int | None = None,
        net: str = "spades4_net_v1",
        samples: int | None = None,
        budget: float | None = None,
        max_samples: int = 256,
        upto: int = 0,
        bids: int = 4,
        cards: int = 0,
        infer: float = 1.0,
        floor: float = 0.0,
        value: int = VALUE_SCORE,
        bag_cost: float = 0.5,
        endgame: int = 100,
        margin: float = 0.0,
        draws: int = 8,
        confidence: float = 2.0,
        split: int = 0,
        blind: int = 0,
        exchange: int = 0,
        temp: float = 0.0,
        actor: NumpyActor | None = None,
    ) -> None:
        super().__init__(rules, seed=seed)
        for key, v in (
            ("samples", samples),
            ("budget", budget),
            ("max_samples", max_samples),
            ("upto", upto),
            ("bids", bids),
            ("cards", cards),
            ("infer", infer),
            ("floor", floor),
            ("value", value),
            ("bag_cost", bag_cost),
            ("endgame", endgame),
            ("margin", margin),
            ("draws", draws),
            ("confidence", confidence),
            ("split", split),
            ("blind", blind),
            ("exchange", exchange),
            ("temp", temp),
        ):
            if v is None:
                continue
            kind, lo, hi = OPTIONS[key]
            bad = not (lo <= v <= hi) or (key == "budget" and v <= 0) or (kind is int and int(v) != v)
            if bad or isinstance(v, bool) or not math.isfinite(float(v)):
                raise ValueError(f"NetSearchPolicy: {key} must be a {kind.__name__} in [{lo}, {hi}], got {v!r}")
        problem = upto_problem(int(upto), samples, budget)
        if problem:
            raise ValueError(f"NetSearchPolicy: {problem}")
        if samples is None and budget is None:
            samples = DEFAULT_SAMPLES
        self.samples, self.budget = samples, budget
        self.max_samples = samples if (samples is not None and budget is not None) else int(max_samples)
        self.upto = int(upto)
        self.n_bids, self.n_cards = int(bids), int(cards)
        self.infer, self.floor = float(infer), float(floor)
        self.value, self.bag_cost, self.endgame, self.margin = int(value), float(bag_cost), int(endgame), float(margin)
        self.draws, self.confidence, self.split = int(draws), float(confidence), int(split)
        self.blind_deals, self.search_exchange = int(blind), bool(exchange)
        self.temp = float(temp)
        self.net = net
        if actor is None:
            actor = load_actor_of(net, rules)
        self.actor = actor
        self._rng = np.zeros(1, dtype=np.int64)
        self.last_values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
        """The last decision's searched actions' values (points; NaN where not searched)."""
        self.last_samples = 0
        self.last_deals = np.empty((0, L.STATE_SIZE), dtype=np.int64)
        """The deals the last search batch played out (states; seat 0 the searching seat)."""
        self.last_beta = 1.0
        """The inference's exponent in the last search (``infer``, or less: :func:`tempered_exponent`)."""
        self.last_ess = 0.0
        """Effective number of deals the last search drew before resampling (the inference's
        weights over its ``samples x draws`` draws; the playouts then use ``samples`` deals)."""

    # ---- Policy --------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self._obs = np.ascontiguousarray(observation, dtype=np.float32)
        self._mask = np.ascontiguousarray(action_mask, dtype=np.int8)
        self.last_values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
        self._logits = self.actor.logits(self._obs[None], self._mask[None])[0]
        return super().act(observation, action_mask)

    def _net_choice(self) -> int:
        return int(np.argmax(self._logits))

    def blind(self, v: SeatView) -> int:
        """Blind Nil or see the cards: the network's choice, or with ``blind`` deals searched."""
        cands = np.array([a for a in (ACTION_BLIND_NIL, ACTION_SEE_CARDS) if self._mask[a]], dtype=np.int64)
        if self.blind_deals == 0 or v.num_seats != 4 or len(cands) < 2:
            return self._net_choice()
        return self._search(v, cands)

    def draw(self, v: SeatView) -> int:
        return self._net_choice()

    def exchange(self, v: SeatView, legal: list[int]) -> int:
        """The card to pass: the network's, or with ``exchange=1`` searched as a card play."""
        if not self.search_exchange or len(legal) == 1:
            return self._net_choice()
        return self.play(v, legal)

    def bid(self, v: SeatView) -> int:
        legal = np.flatnonzero(self._mask)
        order = legal[np.argsort(-self._logits[legal], kind="stable")]
        cands = order[: self.n_bids]
        return self._search(v, cands) - BID_BASE

    def play(self, v: SeatView, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        arr = np.asarray(legal, dtype=np.int64)
        if self.n_cards > 0:
            arr = arr[np.argsort(-self._logits[arr], kind="stable")][: self.n_cards]
        return self._search(v, arr)

    # ---- the search ----------------------------------------------------------------------
    def _constraints(self, v: SeatView) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        n = v.num_seats
        counts = np.zeros(5, dtype=np.int64)
        fixed = np.zeros(5, dtype=np.int64)
        voids = np.zeros(5, dtype=np.int64)
        pool = v.unseen
        for s in range(1, n):
            counts[s] = 13 - bin(v.played[s]).count("1")
            voids[s] = v.voids[s]
        if n == 4:
            fixed[2] = v.passed & pool
            if v.phase == L.PH_EXCHANGE:  # the partner holds what we passed, not what it passed us
                counts[2] += bin(v.passed).count("1") - bin(v.received).count("1")
        else:
            counts[4] = bin(pool).count("1") - counts[1]
        return pool, counts, fixed, voids

    def _search(self, v: SeatView, cands: np.ndarray) -> int:
        base = np.zeros(L.STATE_SIZE, dtype=np.int64)
        params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
        decode_into(self._obs, base, params)
        base[L.TURN] = 0
        if v.num_seats == 4:  # the partner's side of our exchange (the other team's is unknown)
            base[L.PASSED + 2] = base[L.RECEIVED]
            base[L.RECEIVED + 2] = base[L.PASSED]
        if v.phase in (L.PH_BLIND, L.PH_BID, L.PH_EXCHANGE):
            for s in range(4):  # the seats that bid saw their cards (or declared Blind Nil)
                b = base[L.BIDS + s]
                base[L.BLIND_STATUS + s] = L.BLIND_NIL if b == L.BID_BLIND_NIL else (L.BLIND_SAW if b >= 0 else 0)
            if v.phase == L.PH_BID:
                base[L.BLIND_STATUS] = L.BLIND_SAW
        if v.phase == L.PH_EXCHANGE:
            det = np.empty_like(base)
            if not exchange_state(base, params, det):
                return self._net_choice()
            base = det
        pool, counts, fixed, voids = self._constraints(v)
        self._rng[0] = int(self.rng.integers(1, 2**47))
        cands = np.asarray(cands, dtype=np.int64)
        parts: list[np.ndarray] = []
        ess = 0.0
        done = 0
        start = time.perf_counter()
        batch = self.samples if self.budget is None else 8
        limit = self.max_samples
        if v.phase == L.PH_BLIND:  # one batch of its own size (a choice made once a hand at most)
            batch = limit = self.blind_deals
        while done < limit:
            k = min(batch, limit - done)
            vals, batch_ess = self._batch(base, params, pool, counts, fixed, voids, cands, k)
            parts.append(vals)
            ess += batch_ess
            done += k
            if self.budget is None or time.perf_counter() - start >= self.budget:
                break
        vals = np.concatenate(parts)
        net = self._net_choice()
        j = int(np.flatnonzero(cands == net)[0]) if net in cands else -1
        while self.budget is None and v.phase != L.PH_BLIND and j >= 0 and done < self.upto and self._undecided(vals, j):
            k = min(done, self.upto - done)  # double the deals: few looks at the gain
            more, batch_ess = self._batch(base, params, pool, counts, fixed, voids, cands, k)
            vals = np.concatenate([vals, more])
            ess += batch_ess
            done += k
        self.last_samples = done
        self.last_ess = ess
        means = vals.mean(axis=0)
        self.last_values[cands] = means
        if j < 0:
            return int(cands[int(np.argmax(means))])
        return int(self._override(vals, cands, j))

    def _undecided(self, vals: np.ndarray, j: int) -> bool:
        """Whether more deals could change the decision: the best-valued candidate leads the
        network's ``j``, yet its gain over it is not sure (:meth:`_better`). Such decisions
        (``upto``) draw as many deals again, up to ``upto``; the others stop at ``samples``."""
        best = int(np.argmax(vals.mean(axis=0)))
        gain = vals[:, best] - vals[:, j]
        return float(gain.mean()) > 0 and not self._better(gain)  # a tie (equal cards) is decided

    def _override(self, vals: np.ndarray, cands: np.ndarray, j: int) -> int:
        """The action played, from the candidates' values on each deal ``vals[k, a]`` and the
        network's candidate ``j``: the best-valued candidate where :meth:`_better` accepts its
        gain over the network's, else the network's. With ``split``, the best is chosen on the
        even deals and its gain tested on the odd ones: a gain measured on the deals that chose
        the candidate leans high (the best of several noisy gains), one on other deals does not."""
        pick, test = (vals[0::2], vals[1::2]) if self.split and len(vals) >= 4 else (vals, vals)
        best = int(np.argmax(pick.mean(axis=0)))
        if best != j and self._better(test[:, best] - test[:, j]):
            return int(cands[best])
        return int(cands[j])

    def _better(self, gain: np.ndarray) -> bool:
        """Whether the searched action beats the network's: its mean gain over the deals
        (the same deals for both: a paired comparison) exceeds ``margin`` points and
        ``confidence`` standard errors. Every search's maximum over noisy values leans high,
        and a network that is right more often than a few playouts can tell is best left alone
        unless the search is sure."""
        n = len(gain)
        mean = float(gain.mean())
        se = float(gain.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
        return mean > self.margin and mean > self.confidence * se

    def _batch(self, base, params, pool, counts, fixed, voids, cands, k):
        """``k`` deals and the candidates' values on each ``[k, A]``, with the effective number
        of deals among the draws. Sampling importance resampling: ``k x draws`` deals are drawn
        consistent with the seat's knowledge, weighted by the inference, and ``k`` of them
        picked in proportion to their weights (systematic resampling) to be played out. The
        weights are sharp (a network's bids are nearly certain given a hand), so without the
        extra draws a few deals carry every search (effective 1 to 7 of 16 in a trial)."""
        blind = base[L.PHASE] == L.PH_BLIND
        draws = k * self.draws if self.infer > 0 and pool != 0 else k
        rows = np.empty((draws, L.STATE_SIZE), dtype=np.int64)
        if blind:  # every hand dealt, the seat's own too
            deal_rows(base, self._rng, rows)
        else:
            sample_rows(base, pool, counts, fixed, voids, self._rng, np.zeros(5, dtype=np.int64), rows)
        ess = float(draws)
        if draws > k:
            logw = np.zeros(draws)
            cap = draws * 7
            obs = np.empty((cap, OBS_SIZE), dtype=np.float32)
            masks = np.empty((cap, NUM_ACTIONS), dtype=np.int8)
            acts = np.empty(cap, dtype=np.int64)
            owner = np.empty(cap, dtype=np.int64)
            m = inference_inputs(rows, params, obs, masks, acts, owner)
            if m > 0:
                lp = _log_softmax_at(forward(self.actor, obs[:m]), masks[:m], acts[:m])
                if self.floor > 0:  # a floor on each factor (by default none: tempering instead)
                    lp = np.maximum(lp, math.log(self.floor))
                np.add.at(logw, owner[:m], lp)
            beta = tempered_exponent(logw, self.infer, k)
            w = np.exp(beta * (logw - logw.max()))
            ess = float(w.sum() ** 2 / (w * w).sum())
            self.last_beta = beta
            # systematic resampling: k evenly spaced points on the weights' cumulative sum
            u = (self.rng.random() + np.arange(k)) / k
            pick = np.searchsorted(np.cumsum(w) / w.sum(), u, side="right").clip(0, draws - 1)
            rows = rows[pick]
        self.last_deals = rows.copy()
        a = len(cands)
        play = np.repeat(rows, a, axis=0)
        for j in range(k * a):
            if apply_action(play[j], params, cands[j % a]) != 0:
                raise RuntimeError(f"netsearch: candidate {cands[j % a]} is illegal in the searched state")
        self._playout(play, params, a)
        mode = self.value
        gain, spread = -1.0, -1.0
        chances, low = _NO_TABLE, 0.0
        if mode == VALUE_GAME:
            chances, low = game_value_table(params)
        elif blind:  # a choice about the game: its value is the chance of winning it, as L3's
            mode = VALUE_WIN
            gain, spread = model_hand(blind_model(), params, row_config(base, params))
        vals = row_values(play, base, params, mode, self.bag_cost, self.endgame, gain, spread, chances, low)
        return vals.reshape(k, a), ess

    def _playout(self, rows: np.ndarray, params: np.ndarray, per_deal: int = 1) -> None:
        """Play every row to the end of its hand with the network at every seat: its likeliest
        action, or with ``temp`` an action drawn from softmax(logits / ``temp``) (Gumbel-max).
        Rows ``per_deal`` apart share a deal (one per candidate) and draw with the same noise at
        the same step of their playouts (common random numbers: the candidates' values differ
        by the candidates, not by the draws)."""
        b = rows.shape[0]
        obs = np.empty((b, OBS_SIZE), dtype=np.float32)
        masks = np.empty((b, NUM_ACTIONS), dtype=np.int8)
        idx = np.empty(b, dtype=np.int64)
        noise = None
        if self.temp > 0:
            deals = -(-b // per_deal)
            noise = self.rng.gumbel(size=(deals, _PLAYOUT_STEPS, NUM_ACTIONS)).astype(np.float32) * self.temp
            steps = np.zeros(b, dtype=np.int64)
        while True:
            k = advance(rows, params, obs, masks, idx)
            if k == 0:
                return
            logits = forward(self.actor, obs[:k])
            if noise is not None:
                rows_k = idx[:k]
                logits = logits + noise[rows_k // per_deal, np.minimum(steps[rows_k], _PLAYOUT_STEPS - 1)]
                steps[rows_k] += 1
            acts = np.argmax(np.where(masks[:k] != 0, logits, MASKED_LOGIT), axis=1).astype(np.int64)
            if not apply_rows(rows, params, idx, acts, k):
                raise RuntimeError("netsearch: a playout chose an illegal action")


def load_actor_of(net: str, rules: Any = None) -> NumpyActor:
    """The NumPy actor of ``net`` (a shipped network agent id or a checkpoint folder); with
    ``rules``, the network must have been trained for their number of players."""
    from spades_env.policies.checkpoint import CheckpointError, load_actor, play_settings
    from spades_env.policies.shipped import agents_dir

    shipped = agents_dir() / net
    folder = shipped if "/" not in net and shipped.is_dir() else Path(net)
    try:
        actor, meta = load_actor(folder)
    except CheckpointError as exc:
        raise PolicyNameError(
            f"netsearch: net={net!r} is not a network (a checkpoint folder or a network agent id): {exc}"
        ) from None
    try:
        play_settings(folder, meta, rules, None)
    except CheckpointError:
        have = (meta.get("rules") or {}).get("num_players")
        raise PolicyNameError(
            f"netsearch: net={net!r} was trained for {have} players; these rules have "
            f"{load_rules(rules).num_players}"
        ) from None
    return actor


def upto_problem(upto: int, samples: int | None, budget: float | None) -> str | None:
    """Why ``upto`` cannot go with these ``samples`` and ``budget`` (``None`` if it can): it
    extends a fixed ``samples`` search (:data:`DEFAULT_SAMPLES` when not given), so it must exceed
    ``samples``, and a ``budget`` search draws until its time is spent (``max_samples`` caps it)."""
    if upto == 0:
        return None
    if budget is not None:
        return f"upto={upto} extends a fixed samples search; with budget, max_samples caps the deals"
    fixed = DEFAULT_SAMPLES if samples is None else samples
    if upto <= fixed:
        return f"upto={upto} must be more than samples={fixed} (or 0: off)"
    return None


def parse_options(name: str, opts: str) -> dict[str, Any]:
    """``netsearch`` options from ``"k=v,k=v"`` (``name``: the whole spec, for messages)."""
    out: dict[str, Any] = {}
    if not opts.strip():
        return out
    for part in opts.split(","):
        key, eq, val = part.partition("=")
        key, val = key.strip(), val.strip()
        if not eq:
            raise PolicyNameError(f"policy {name!r}: option {part!r} is not key=value")
        if key not in OPTIONS:
            raise PolicyNameError(f"policy {name!r}: unknown option {key!r} for 'netsearch'; options: {sorted(OPTIONS)}")
        if key in out:
            raise PolicyNameError(f"policy {name!r}: option {key!r} is given twice")
        kind, lo, hi = OPTIONS[key]
        if kind is str:
            if not val:
                raise PolicyNameError(f"policy {name!r}: option {key} is empty")
            out[key] = val
            continue
        try:
            value = kind(val)
        except ValueError:
            raise PolicyNameError(f"policy {name!r}: option {key}={val!r} is not a valid {kind.__name__}") from None
        if not math.isfinite(value) or not lo <= value <= hi or (key == "budget" and value <= 0):
            raise PolicyNameError(f"policy {name!r}: option {key}={val} is outside [{lo}, {hi}]")
        out[key] = value
    problem = upto_problem(out.get("upto", 0), out.get("samples"), out.get("budget"))
    if problem:
        raise PolicyNameError(f"policy {name!r}: {problem}")
    return out


__all__ = ["OPTIONS", "NetSearchPolicy", "effective_count", "load_actor_of", "parse_options", "tempered_exponent"]
