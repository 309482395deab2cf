"""B games of Spades in lockstep for training: the same compiled rules core as the AEC env.

:class:`VectorSpades` keeps ``num_envs`` games as one ``int64`` array ``[B, STATE_SIZE]`` and
steps them all with one compiled loop (numba; ``parallel=True`` spreads the games over numba's
threads, set with ``numba.set_num_threads``). With ``parallel=True`` the engine chooses its
threading call by call (``auto_threads=True``, the default): it measures the serial and the
parallel kernel and runs the faster one (the parallel one only when clearly faster),
re-measuring the other now and then, less often while the choice holds
(:class:`PathChooser`), so that when other processes share the cores (a learner, a browser)
the parallel path costs about what the serial one does (0.98-1.01 of it beside a busy
process, ``benchmarks/engine_under_load.py``); ``auto_threads=False`` always runs the
parallel kernel. Both kernels give identical games. Every rule
comes from :mod:`spades_env.core.engine`, the episode and reward knobs from :func:`spades_env.core.episode.settle` and the observation from
:func:`spades_env.core.observation.encode_observation`, so a game of the batch is exactly a game of
the AEC env. ``step`` returns preallocated buffers (overwritten by the next call; copy what you
keep):

==============  ========================  ===================================================
field           shape, dtype              meaning
==============  ========================  ===================================================
``obs``         [B, OBS_SIZE] float32     observation of the seat to act (as ``observe``); uint8
                                          with ``obs_dtype="uint8"`` (below)
``mask``        [B, 70] int8              its legal actions
``seat``        [B] int64                 the seat to act
``reward``      [B, 4] float64            each seat's reward for this step (``settle``)
``terminated``  [B] bool                  the episode of game ``i`` ended this step
``truncated``   [B] bool                  ... cut short by the rules' ``max_hands``
``illegal``     [B] bool                  ``illegal="penalty"`` only: game ``i`` was ended by an
                                          illegal action
==============  ========================  ===================================================

Seeding (documented so that any game of the batch can be replayed alone):

* ``reset(seed)`` starts in slot ``i`` the very game that the AEC env's
  ``raw_env(...).reset(seed=env_seeds[i])`` starts, ``env_seeds = reset_env_seeds(seed, B)``
  (``np.random.SeedSequence(seed).generate_state(B, np.uint64) >> 1``); that game is
  ``SpadesGame(rules, seed=game_seeds[i])`` with ``game_seeds[i] =
  np.random.default_rng(env_seeds[i]).integers(2**63 - 1)``, as ``raw_env.reset`` derives it.
  ``reset`` also takes a sequence of ``B`` integer env seeds instead of one seed.
* A finished episode resets its slot at once (the returned observation is the new game's):
  the new game is ``SpadesGame(rules, seed=next_game_seed(final_state))``, the finished
  game's 48-bit deal-generator state used as the seed. ``final_states[i]`` holds the state
  row of the finished game (valid where ``terminated | truncated``) and ``game_seeds[i]``
  the seed of the game now in slot ``i``.
* ``start_games(game_seeds, slots)`` starts in chosen slots the games
  ``SpadesGame(rules, seed=game_seeds[j])`` themselves (the arena's duplicate boards).
* ``hand_done[i]`` says that the last ``step`` finished a hand in game ``i``;
  ``hand_end_states[i]`` then holds its state row as the hand was scored, before the next deal
  (``SpadesGame.step``'s ``hand_end_state``).

**Compact observations**: ``obs_dtype="uint8"`` writes each observation as ``OBS_SIZE``
bytes (every 0/1 entry exact, 0 at the non-0/1 positions) plus ``obs_scalars`` ``[B, 24]``
float32 (the entries of the ``tricks_won``, ``scores``, ``bags``, ``game_wins`` and ``rules``
slices, at ``observation.SCALAR_INDEX``): 899 bytes a decision instead of 3,212.
``observation.widen_observations(obs, obs_scalars)`` gives the float32 observations on the
learner side, bit-identical to the default's (tested).

The returned arrays are read-only views of the engine's buffers. Bad input: ``actions``
must be an integer array of shape ``[B]``. With ``illegal="raise"`` (the default) every game
is checked against its mask before any is changed, and an illegal action raises
:class:`~spades_env.core.IllegalActionError` naming the game index, the action and the legal
actions. With ``illegal="penalty"`` an illegal action ends that game only: its acting seat
gets ``illegal_reward`` (the others 0), ``terminated`` and ``illegal`` are set and the slot
resets, as PettingZoo's ``TerminateIllegalWrapper`` does for one game.

``step(actions, active=...)`` moves only the games where ``active`` is true (the adapters
use it to play the other seats); ``state_vectors()`` gives ``encode_state`` of every game
(``[B, STATE_VEC_SIZE]``, the full deal, for centralized critics); ``observations=False`` skips
writing observations (masks and seats are always written).

:class:`RandomLegal` chooses a uniformly random legal action per game from the masks in one
compiled call outside the core, as a compiled policy would (training's random opponents, the
benchmark's sampler).

Speed: every kernel ``borrow``s its array arguments (``spades_env.core.jit``), so the views
and calls inside skip numba's atomic reference counting, and the per-game step is inlined; the
compact encoder writes card masks 8 entries at a time. ``parallel=False`` (a plain loop in the
calling thread) is the fastest on one core; ``parallel=True`` cuts the games into 64
contiguous chunks, each stepped by that same loop, and adds only numba's launch per call
(2-4 us with the OpenMP layer, about 40 us with workqueue, on the benchmark machine).
``RandomLegal(parallel=True)`` samples over the same threads.

**A family of rules**: ``rules`` may be a sequence of rules (presets, dicts, configs, with the
same number of players) and ``rules_weights`` their weights; each game then plays the rules
its game seed picks (``rules_index_of_seed``), at reset and at every automatic reset, so a
game of the batch is still ``SpadesGame(rules_family[rules_index[i]], seed=game_seeds[i])``.
Its observation carries those rules (the ``rules`` slice), so one policy can learn all of them.
``game_params[i]`` is the parameter row of the game in slot ``i``.

``play_random(n)`` plays ``n`` uniformly random legal decisions in every game entirely inside
the compiled core (each game draws from its own generator, seeded by ``reset``), resetting
finished episodes, for simulation and throughput measurement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.engine import apply_action, init_state, legal_cards, legal_mask
from spades_env.core.episode import RUNNING, TERMINATED, TRUNCATED, EpisodeKnobs, settle
from spades_env.core.game import IllegalActionError, NotAnActionError
from spades_env.core.jit import borrow, ctz, inline_jit, jit, load_u64, prefetch
from spades_env.core.observation import (
    OBS_SIZE,
    SCALAR_SIZE,
    STATE_VEC_SIZE,
    encode_compact_into,
    encode_observation,
    encode_state,
)
from spades_env.core.rng import below
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import (
    InputError,
    InputTypeError,
    check_bool,
    check_choice,
    check_count,
    check_int,
    check_seat,
    check_seed,
    check_state_row,
)

pjit = njit(cache=True, nogil=True, parallel=True)

ILLEGAL_MODES = ("raise", "penalty")
OBS_DTYPES = ("float32", "uint8")
_M32 = 0xFFFFFFFF
_MASK48 = (1 << 48) - 1


# ---- seeds ---------------------------------------------------------------------------------
@jit
def _hashmix(value, h):
    value = (value ^ h) & _M32
    h = (h * 0x931E8875) & _M32
    value = (value * h) & _M32
    return value ^ (value >> 16), h


@jit
def _mix(x, y):
    r = (0xCA01F9DD * x - 0x4973F715 * y) & _M32
    return r ^ (r >> 16)


@jit
def rng_from_seed(seed):
    """``seed_to_rng(seed)`` compiled, for ``0 <= seed < 2**63``: numpy's ``SeedSequence``
    (pool of 4 words) and the low 48 bits of its first ``uint64`` word."""
    pool = np.empty(4, dtype=np.int64)
    h = 0x43B0D7E5
    e0 = seed & _M32
    e1 = (seed >> 32) & _M32
    for i in range(4):
        v = 0
        if i == 0:
            v = e0
        elif i == 1 and e1 != 0:
            v = e1
        pool[i], h = _hashmix(v, h)
    for s in range(4):
        for d in range(4):
            if s != d:
                m, h = _hashmix(pool[s], h)
                pool[d] = _mix(pool[d], m)
    hb = 0x8B51F9DD
    words = np.empty(2, dtype=np.int64)
    for i in range(2):
        v = pool[i] ^ hb
        hb = (hb * 0x58F38DED) & _M32
        v = (v * hb) & _M32
        words[i] = v ^ (v >> 16)
    return words[0] | ((words[1] & 0xFFFF) << 32)


@jit
def _next_seed(state):
    return state[L.RNG]


def next_game_seed(final_state: np.ndarray) -> int:
    """Seed of the game that follows a finished one in its slot (its generator state)."""
    return int(final_state[L.RNG])


def reset_env_seeds(seed: int | None, num_envs: int) -> np.ndarray:
    """Per-slot AEC env seeds of ``reset(seed)``: slot ``i`` plays ``raw_env.reset(seed=s[i])``."""
    ss = np.random.SeedSequence(seed)
    return (ss.generate_state(num_envs, dtype=np.uint64) >> np.uint64(1)).astype(np.int64)


def game_seeds_from_env_seeds(env_seeds: np.ndarray) -> np.ndarray:
    """The ``SpadesGame`` seed ``raw_env.reset(seed=s)`` draws for each env seed ``s``."""
    return np.array([np.random.default_rng(int(s)).integers(2**63 - 1) for s in env_seeds], dtype=np.int64)


# ---- kernels -------------------------------------------------------------------------------
def _encode_into(row, params, seat, obs_row, scalars_row, new_game):
    """``encode_observation`` into a float32 row, the compact encoder into a uint8 one (its
    ``rules`` scalars only for a ``new_game``: the row keeps them otherwise). Compiled only:
    the encoder is chosen by the row's type when the kernel compiles."""
    raise NotImplementedError("compiled only")


def _inline_compact(expr, caller_info, callee_info) -> bool:
    """Numba's inlining cost model for ``_encode_into``: inline the compact encoder (loops of
    fixed length), call the float32 one (its bit loops do not inline cleanly)."""
    return callee_info.signature.args[3].dtype == types.uint8


@overload(_encode_into, jit_options={"error_model": "numpy", "nogil": True}, inline=_inline_compact)
def _encode_into_impl(row, params, seat, obs_row, scalars_row, new_game):
    if obs_row.dtype == types.uint8:
        return lambda row, params, seat, obs_row, scalars_row, new_game: encode_compact_into(
            row, params, seat, obs_row, scalars_row, new_game
        )
    return lambda row, params, seat, obs_row, scalars_row, new_game: encode_observation(
        row, params, seat, obs_row
    )


@inline_jit
def _observe(row, params, i, obs, scalars, masks, seats, write_obs, new_game=True):
    """Seat, observation (``write_obs``: 0 none, else float32 or compact by ``obs``'s type:
    ``obs_dtype``; ``new_game``: the game in slot ``i`` is not the one observed last) and mask
    of game ``i``."""
    seat = row[L.TURN]
    seats[i] = seat
    if write_obs != 0:
        _encode_into(row, params, seat, obs[i], scalars[i], new_game)
    legal_mask(row, params, masks[i])


@jit
def rules_index_of_seed(seed, cum):
    """Which rules of a family (cumulative weights ``cum``, out of ``2**31``) the game of
    ``seed`` plays: a hash of the seed against the weights (always 0 for one rules)."""
    k = cum.shape[0]
    if k == 1:
        return 0
    x = seed ^ (seed >> 29)
    x = x * -4658895280553007687  # 0xBF58476D1CE4E5B9 as int64 (wrapping)
    x ^= x >> 32
    u = (x >> 1) & 0x7FFFFFFF
    for j in range(k):
        if u < cum[j]:
            return j
    return k - 1


@jit
def _new_game(row, params, family, ridx, i, seed):
    """Start the game of ``seed`` in slot ``i`` with the rules its seed picks."""
    table, cum = family
    k = rules_index_of_seed(seed, cum)
    ridx[i] = k
    params[i, :] = table[k]
    init_state(row, params[i], rng_from_seed(seed), -1)


@jit
def _reset_row(states, params, family, ridx, seeds, obs, scalars, masks, seats, write_obs, i):
    _new_game(states[i], params, family, ridx, i, seeds[i])
    _observe(states[i], params[i], i, obs, scalars, masks, seats, write_obs)


@jit
def _start_slots(states, params, family, ridx, idx, seeds, obs, scalars, masks, seats, write_obs):
    states, params, family, ridx, idx, seeds, obs, scalars, masks, seats = borrow(
        (states, params, family, ridx, idx, seeds, obs, scalars, masks, seats)
    )
    for j in range(idx.shape[0]):
        i = idx[j]
        _new_game(states[i], params, family, ridx, i, seeds[j])
        _observe(states[i], params[i], i, obs, scalars, masks, seats, write_obs)


@jit
def _reset_serial(states, params, family, ridx, seeds, obs, scalars, masks, seats, write_obs):
    states, params, family, ridx, seeds, obs, scalars, masks, seats = borrow(
        (states, params, family, ridx, seeds, obs, scalars, masks, seats)
    )
    for i in range(states.shape[0]):
        _reset_row(states, params, family, ridx, seeds, obs, scalars, masks, seats, write_obs, i)


@pjit
def _reset_parallel(states, params, family, ridx, seeds, obs, scalars, masks, seats, write_obs):
    states, params, family, ridx, seeds, obs, scalars, masks, seats = borrow(
        (states, params, family, ridx, seeds, obs, scalars, masks, seats)
    )
    for i in prange(states.shape[0]):
        _reset_row(states, params, family, ridx, seeds, obs, scalars, masks, seats, write_obs, i)


@jit
def _first_illegal(masks, actions, active, use_active):
    """First game whose action is not legal by the masks the engine wrote last, or -1."""
    for i in range(masks.shape[0]):
        if use_active and not active[i]:
            continue
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS or masks[i, a] == 0:
            return i
    return -1


@inline_jit
def _step_row(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs, i):
    """One game of ``step``: ``knobs`` = (episode, reward, scale, illegal_reward); ``out`` =
    (obs, masks, seats, rewards, terminated, truncated, illegal, final_states, game_seeds,
    hand_end_states, hand_done)."""
    episode, reward, scale, illegal_reward = knobs
    (
        obs,
        scalars,
        masks,
        seats,
        rewards,
        terminated,
        truncated,
        illegal,
        final_states,
        game_seeds,
        hand_states,
        hand_done,
    ) = out
    if use_active and not active[i]:
        for s in range(4):
            rewards[i, s] = 0.0
        terminated[i] = False
        truncated[i] = False
        illegal[i] = False
        hand_done[i] = False
        return
    row = states[i]
    prow = params[i]
    seat = row[L.TURN]
    if apply_action(row, prow, actions[i]) == 0:
        done_hand = row[L.PHASE] >= L.PH_HAND_END
        hand_done[i] = done_hand
        if done_hand:  # the hand as it was scored, before settle deals on
            hand_states[i, :] = row
        st = settle(row, prow, episode, reward, scale, rewards[i])
        illegal[i] = False
    else:  # penalty mode (raise mode checked every game before the step)
        for s in range(4):
            rewards[i, s] = 0.0
        rewards[i, seat] = illegal_reward
        st = TERMINATED
        illegal[i] = True
        hand_done[i] = False
    terminated[i] = st == TERMINATED
    truncated[i] = st == TRUNCATED
    if st != RUNNING:
        final_states[i, :] = row
        seed = _next_seed(row)
        game_seeds[i] = seed
        _new_game(row, params, family, ridx, i, seed)
    _observe(row, params[i], i, obs, scalars, masks, seats, write_obs, st != RUNNING)


_AHEAD = 2  # games ahead whose rows the serial step asks the CPU for


@inline_jit
def _prefetch_game(states, obs, masks, i, write_obs):
    """Prefetch game ``i``'s state row, and its observation and mask rows for writing: at a
    few thousand games they are out of the L2 cache by the time the step comes back to them."""
    base = i * states.shape[1]
    for k in range(0, L.DECK, 8):  # the fields a step reads, and the last line (SHOWN_OUT)
        prefetch(states, base + k, False)
    prefetch(states, base + L.SHOWN_OUT, False)
    if write_obs != 0:
        per_line = 64 // obs.itemsize
        base = i * obs.shape[1]
        for k in range(0, obs.shape[1], per_line):
            prefetch(obs, base + k, True)
    prefetch(masks, i * masks.shape[1], True)


@jit
def _step_range(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs, lo, hi):
    """``step`` for games ``lo`` to ``hi - 1``, each row inlined, prefetching two games ahead:
    the serial kernel's whole loop, and one thread's share of the parallel one. It borrows its
    arguments itself: a borrow in the caller does not reach across the call, and the views
    would count references again (a third of the step's time)."""
    states, params, family, ridx, actions, active, out = borrow(
        (states, params, family, ridx, actions, active, out)
    )
    for i in range(lo, hi):
        if i + _AHEAD < hi:
            _prefetch_game(states, out[0], out[2], i + _AHEAD, write_obs)
        _step_row(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs, i)


@jit
def _step_serial(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs):
    _step_range(
        states, params, family, ridx, actions, active, use_active, knobs, out, write_obs, 0, states.shape[0]
    )


_CHUNKS = 64  # contiguous chunks of games in a parallel step: numba hands each thread a run of them


@inline_jit
def _chunk_bounds(n, chunks, c):
    """Games ``[lo, hi)`` of chunk ``c`` when ``n`` games are cut into ``chunks`` contiguous
    chunks whose sizes differ by at most one."""
    return (n * c) // chunks, (n * (c + 1)) // chunks


@pjit
def _step_parallel(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs):
    """Contiguous chunks of games, each stepped by the serial loop (numba's static schedule
    gives each thread a run of chunks): a ``prange`` over single games paid a call per game
    and lost the prefetch."""
    n = states.shape[0]
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        lo, hi = _chunk_bounds(n, chunks, c)
        _step_range(states, params, family, ridx, actions, active, use_active, knobs, out, write_obs, lo, hi)


@jit
def _observe_range(states, params, obs, scalars, masks, seats, write_obs, lo, hi):
    """``observe`` for games ``lo`` to ``hi - 1`` (see ``_step_range``)."""
    states, params, obs, scalars, masks, seats = borrow((states, params, obs, scalars, masks, seats))
    for i in range(lo, hi):
        _observe(states[i], params[i], i, obs, scalars, masks, seats, write_obs)


@jit
def _random_legal(row, params, rng, mbuf):
    """A uniformly random legal action of the seat to act, drawn from ``rng[0]``."""
    phase = row[L.PHASE]
    if phase == L.PH_PLAY or phase == L.PH_EXCHANGE:
        m = legal_cards(row, params)
        cnt = 0
        x = m
        while x != 0:
            x &= x - 1
            cnt += 1
        for _ in range(below(rng, 0, cnt)):
            m &= m - 1
        return ctz(m)
    legal_mask(row, params, mbuf)
    cnt = 0
    for a in range(NUM_ACTIONS):
        cnt += mbuf[a]
    k = below(rng, 0, cnt)
    for a in range(NUM_ACTIONS):
        if mbuf[a] != 0:
            if k == 0:
                return a
            k -= 1
    return -1


@jit
def _play_random_row(states, params, family, ridx, play_rng, n, knobs, game_seeds, episodes, i):
    episode, reward, scale = knobs
    row = states[i]
    rng = np.empty(1, dtype=np.int64)
    rng[0] = play_rng[i]
    mbuf = np.zeros(NUM_ACTIONS, dtype=np.int8)
    rw = np.zeros(4, dtype=np.float64)
    done = 0
    for _ in range(n):
        prow = params[i]
        apply_action(row, prow, _random_legal(row, prow, rng, mbuf))
        if settle(row, prow, episode, reward, scale, rw) != RUNNING:
            done += 1
            seed = _next_seed(row)
            game_seeds[i] = seed
            _new_game(row, params, family, ridx, i, seed)
    play_rng[i] = rng[0]
    episodes[i] += done


@jit
def _play_random_serial(states, params, family, ridx, play_rng, n, knobs, game_seeds, episodes):
    states, params, family, ridx, play_rng, game_seeds, episodes = borrow(
        (states, params, family, ridx, play_rng, game_seeds, episodes)
    )
    for i in range(states.shape[0]):
        _play_random_row(states, params, family, ridx, play_rng, n, knobs, game_seeds, episodes, i)


@pjit
def _play_random_parallel(states, params, family, ridx, play_rng, n, knobs, game_seeds, episodes):
    states, params, family, ridx, play_rng, game_seeds, episodes = borrow(
        (states, params, family, ridx, play_rng, game_seeds, episodes)
    )
    for i in prange(states.shape[0]):
        _play_random_row(states, params, family, ridx, play_rng, n, knobs, game_seeds, episodes, i)


@jit
def _observe_serial(states, params, obs, scalars, masks, seats, write_obs):
    _observe_range(states, params, obs, scalars, masks, seats, write_obs, 0, states.shape[0])


@pjit
def _observe_parallel(states, params, obs, scalars, masks, seats, write_obs):
    n = states.shape[0]
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        lo, hi = _chunk_bounds(n, chunks, c)
        _observe_range(states, params, obs, scalars, masks, seats, write_obs, lo, hi)


@jit
def _state_serial(states, params, out):
    states, params, out = borrow((states, params, out))
    for i in range(states.shape[0]):
        encode_state(states[i], params[i], out[i])


@pjit
def _state_parallel(states, params, out):
    states, params, out = borrow((states, params, out))
    for i in prange(states.shape[0]):
        encode_state(states[i], params[i], out[i])


_KERNELS = {
    False: (_reset_serial, _step_serial, _play_random_serial, _observe_serial, _state_serial),
    True: (_reset_parallel, _step_parallel, _play_random_parallel, _observe_parallel, _state_parallel),
}


# ---- actions chosen outside the core -------------------------------------------------------
_BYTE_SUM = 0x0101010101010101  # byte j of x * _BYTE_SUM: the sum of x's bytes 0..j (each 0 or 1 here)
_HIGH_BITS = -0x7F7F7F7F7F7F7F80  # 0x8080808080808080 as an int64: each byte's high bit


@jit
def _random_legal_range(masks, gen, actions, lo, hi):
    """A uniformly random legal action of rows ``lo`` to ``hi - 1`` of ``masks`` ``[B, 70]``
    (0/1 bytes) into ``actions``, -1 for a row with none: the legal actions counted and the
    chosen one found 8 entries a step (unaligned 8-byte loads), the index drawn from row
    ``i``'s generator."""
    masks, gen, actions = borrow((masks, gen, actions))
    words = (NUM_ACTIONS + 7) // 8
    for i in range(lo, hi):
        m = masks[i]
        cnt = 0
        for w in range(words - 1):
            cnt += ((load_u64(m, 8 * w) * _BYTE_SUM) >> 56) & 0xFF
        tail = load_u64(m, NUM_ACTIONS - 8) >> (8 * (8 * words - NUM_ACTIONS))  # the last entries
        cnt += ((tail * _BYTE_SUM) >> 56) & 0xFF
        if cnt == 0:
            actions[i] = -1
            continue
        k = below(gen, i, cnt)
        for w in range(words):
            x = load_u64(m, 8 * w) if w < words - 1 else tail
            c = ((x * _BYTE_SUM) >> 56) & 0xFF
            if k < c:  # the first entry whose running count passes k, with no branch per byte
                ge = ((x * _BYTE_SUM) | _HIGH_BITS) - (k + 1) * _BYTE_SUM  # byte j: count to j >= k + 1
                actions[i] = 8 * w + (ctz(ge & _HIGH_BITS) >> 3)
                break
            k -= c


@jit
def _compiled_random_legal(masks, gen, actions):
    _random_legal_range(masks, gen, actions, 0, masks.shape[0])


@pjit
def _compiled_random_legal_parallel(masks, gen, actions):
    """The rows in contiguous chunks over numba's threads: the same actions as the serial
    kernel (each row draws from its own generator)."""
    n = masks.shape[0]
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        lo, hi = _chunk_bounds(n, chunks, c)
        _random_legal_range(masks, gen, actions, lo, hi)


class RandomLegal:
    """A uniformly random legal action per game from a batch of masks, in one compiled call
    outside the core (the masks in, the actions out, as a compiled policy would; the engine
    never sees the generator). Each game has its own 48-bit generator (the core's, at
    ``below``: a draw is ``(32 random bits x count) >> 32``, within ``count / 2**32`` of
    uniform), seeded from ``SeedSequence(seed)``. A row with no legal action gets ``-1``,
    which ``VectorSpades.step`` refuses as illegal. ``parallel=True`` samples the rows over
    numba's threads (``numba.set_num_threads``), with the same actions as serial."""

    def __init__(self, num_envs: int, seed: int | None = None, parallel: bool = False) -> None:
        self.num_envs = B = check_count(num_envs, "num_envs")
        self.parallel = check_bool(parallel, "parallel")
        self._kernel = _compiled_random_legal_parallel if self.parallel else _compiled_random_legal
        seed = check_seed(seed)
        self._gen = (np.random.SeedSequence(seed).generate_state(B, np.uint64) & np.uint64(_MASK48)).astype(
            np.int64
        )
        self._actions = np.empty(B, dtype=np.int64)

    def __call__(self, mask: np.ndarray) -> np.ndarray:
        """Actions ``[B]`` (int64, a new array each call): a legal action of each row of
        ``mask`` ``[B, 70]`` (int8 or uint8, 0/1), -1 for a row with none."""
        if not isinstance(mask, np.ndarray) or mask.shape != (self.num_envs, NUM_ACTIONS):
            raise InputError(
                f"mask must be an array of shape {(self.num_envs, NUM_ACTIONS)}, got {getattr(mask, 'shape', mask)!r}"
            )
        if mask.dtype not in (np.int8, np.uint8, np.bool_):
            raise InputError(f"mask must be int8, uint8 or bool (0/1 entries), got {mask.dtype}")
        actions = np.empty(self.num_envs, dtype=np.int64)
        self._kernel(np.ascontiguousarray(mask).view(np.uint8), self._gen, actions)
        return actions


# ---- the engine ----------------------------------------------------------------------------
def _check_weights(weights: Sequence[float] | None, k: int) -> np.ndarray:
    if weights is None:
        return np.ones(k, dtype=np.float64)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"rules_weights must be {k} non-negative numbers, got {weights!r}") from None
    if w.shape != (k,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise InputError(f"rules_weights must be {k} non-negative finite numbers, not all 0, got {weights!r}")
    return w


class VectorStep(NamedTuple):
    """What ``reset`` and ``step`` return: views of the engine's buffers (see module doc)."""

    obs: np.ndarray
    mask: np.ndarray
    seat: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    illegal: np.ndarray


class PathChooser:
    """Picks, call by call, the faster of the serial and the parallel kernel of one operation,
    from their measured mean cost per call, so that ``parallel=True`` is never slower than the
    serial engine when other processes share the cores (OpenMP's threads then wait on busy
    cores, and a 2-thread call can cost several serial ones) or when the batch is too small
    for threads to pay.

    Both kernels give identical results, so they may alternate freely. The serial kernel runs
    first; after ``probe_calls`` measured calls of it, the parallel kernel is probed. A probe
    runs the other kernel for up to ``probe_calls`` calls and compares the mean seconds per call
    (a mean, not one call: a threaded call's cost is heavy-tailed when it waits for a core) with
    the moving mean of the kernel in use. It switches to the parallel kernel only when that is
    faster by ``margin`` (hysteresis; the serial kernel is the safe one), back to the serial one
    as soon as that is faster, and a probe stops early once it has already lost, so a kernel many
    times slower costs a few calls a probe. Probes recur every ``probe_every`` calls, doubled
    after each probe that confirms the choice up to ``max_probe_every`` and reset after one
    that switches, so the choice follows the load. ``serial_calls`` and ``parallel_calls`` count
    what ran."""

    def __init__(
        self, probe_every: int = 128, max_probe_every: int = 8192, probe_calls: int = 16, margin: float = 0.8
    ) -> None:
        self.probe_every = probe_every
        self.min_probe_every = probe_every
        self.max_probe_every = max_probe_every
        self.probe_calls = probe_calls
        self.margin = margin
        self.cost: list[float | None] = [None, None]
        """Mean seconds per call: the kernel in use a moving mean, the other its last probe."""
        self.use = 0
        self.since_probe = 0
        self.serial_calls = 0
        self.parallel_calls = 0
        self.switches = 0
        self._probe: list[float] | None = None  # seconds of the probe's calls so far
        self._measured = [0, 0]  # calls measured per kernel (its first call is not)

    def pick(self) -> int:
        """1 for the parallel kernel, 0 for the serial one."""
        if self._probe is not None:
            return 1 - self.use
        first = self.cost[1 - self.use] is None and self._measured[self.use] >= self.probe_calls
        if first or (self.cost[1 - self.use] is not None and self.since_probe >= self.probe_every):
            self.since_probe = 0
            self._probe = []
            return 1 - self.use
        self.since_probe += 1
        return self.use

    def record(self, path: int, seconds: float) -> None:
        """The seconds one call of ``path`` took (``path`` as :meth:`pick` returned it)."""
        if path:
            self.parallel_calls += 1
        else:
            self.serial_calls += 1
        if (self.serial_calls if path == 0 else self.parallel_calls) == 1:
            return  # a kernel's first call may compile or fill caches: not a measure
        self._measured[path] += 1
        if path == self.use and self._probe is None:
            c = self.cost[path]
            w = max(1.0 / self.probe_calls, 1.0 / self._measured[path])  # a plain mean at first
            self.cost[path] = seconds if c is None else (1 - w) * c + w * seconds
            return
        if self._probe is None:  # a call of the other kernel outside a probe: not expected
            return
        self._probe.append(seconds)
        spent, done = sum(self._probe), len(self._probe)
        ref = self.cost[self.use]
        assert ref is not None
        margin = self.margin if path else 1.0  # back to the serial kernel at equal cost
        lost = spent > self.probe_calls * ref / margin
        if not lost and done < self.probe_calls:
            return
        self.cost[path] = spent / done
        self._probe = None
        if not lost and self.cost[path] < margin * ref:
            self.use, self.probe_every = path, self.min_probe_every
            self.switches += 1
        else:
            self.probe_every = min(2 * self.probe_every, self.max_probe_every)


class VectorSpades:
    """``num_envs`` games of Spades stepped together (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        rules: RulesConfig | str | dict | Sequence[RulesConfig | str | dict] | None = None,
        episode: str = "game",
        reward: str = "score",
        reward_scale: float = 0.01,
        seed: int | Sequence[int] | None = None,
        illegal: str = "raise",
        illegal_reward: float = -1.0,
        observations: bool = True,
        parallel: bool = False,
        rules_weights: Sequence[float] | None = None,
        obs_dtype: str = "float32",
        auto_threads: bool = True,
    ) -> None:
        B = check_count(num_envs, "num_envs")
        auto_threads = check_bool(auto_threads, "auto_threads")
        check_choice(obs_dtype, "obs_dtype", OBS_DTYPES)
        # the episode knobs of every front-end, checked the same way (type, finite, range)
        knobs = EpisodeKnobs(episode, reward, reward_scale, illegal, illegal_reward)
        observations = check_bool(observations, "observations")
        parallel = check_bool(parallel, "parallel")
        self.num_envs = B
        family = list(rules) if isinstance(rules, (list, tuple)) else [rules]
        if not family:
            raise InputError("rules: a family of rules needs at least one rules config")
        self.rules_family = tuple(load_rules(r) for r in family)
        """The rules each game may play (one, or a family sampled per game by its seed)."""
        self.rules = self.rules_family[0]
        self.params = self.rules.to_params()
        """The parameter row of the first (or only) rules."""
        self.num_seats = self.rules.num_players
        if any(r.num_players != self.num_seats for r in self.rules_family):
            raise InputError("rules: every rules of a family must have the same num_players")
        self.rules_weights = _check_weights(rules_weights, len(self.rules_family))
        cum = np.floor(np.cumsum(self.rules_weights) / np.sum(self.rules_weights) * 2**31).astype(np.int64)
        cum[-1] = 2**31
        self._family = (np.stack([r.to_params() for r in self.rules_family]), cum)
        self.game_params = np.tile(self.params, (B, 1))
        """``[B, PARAMS_SIZE]``: the parameter row of the rules of the game in each slot."""
        self.rules_index = np.zeros(B, dtype=np.int64)
        """Index into ``rules_family`` of the game in each slot: game ``i`` is
        ``SpadesGame(rules_family[rules_index[i]], seed=game_seeds[i])``."""
        self.episode, self.reward_kind, self.reward_scale = episode, reward, knobs.reward_scale
        self._episode, self._reward = knobs.episode_code, knobs.reward_code
        self.illegal_mode, self.illegal_reward = illegal, knobs.illegal_reward
        self.parallel = bool(parallel)
        """Loops over games with numba ``prange`` (threads: ``numba.set_num_threads``)."""
        (self._k_reset, _, _, _, self._k_state) = _KERNELS[self.parallel]
        self._steps = (_KERNELS[False][1], _KERNELS[True][1])
        self._plays = (_KERNELS[False][2], _KERNELS[True][2])
        self.step_paths = PathChooser() if self.parallel and auto_threads else None
        """``parallel=True`` with ``auto_threads``: the chooser of ``step``'s kernel (serial or
        parallel, whichever is faster now; see :class:`PathChooser`)."""
        self.play_paths = (
            PathChooser(probe_every=16, max_probe_every=1024, probe_calls=4)
            if self.parallel and auto_threads
            else None
        )
        """... and of ``play_random``'s."""
        self.observations = bool(observations)
        """Whether ``step`` writes observations (masks and seats are always written)."""
        self._write_obs = (1 if obs_dtype == "float32" else 2) if self.observations else 0
        self.states = np.zeros((B, L.STATE_SIZE), dtype=np.int64)
        """The games' state rows (read them; change them only through the engine)."""
        self.final_states = np.zeros((B, L.STATE_SIZE), dtype=np.int64)
        """State row of the last finished game of each slot."""
        self.hand_end_states = np.zeros((B, L.STATE_SIZE), dtype=np.int64)
        """State row of game ``i`` as its last hand was scored (before the next deal; valid
        where ``hand_done[i]``), the state ``SpadesGame.step`` reports as ``hand_end_state``."""
        self.hand_done = np.zeros(B, dtype=np.bool_)
        """``step`` finished a hand in game ``i`` (its row is in ``hand_end_states[i]``)."""
        self.game_seeds = np.zeros(B, dtype=np.int64)
        """Seed of the game now in each slot: it is ``SpadesGame(rules, seed=game_seeds[i])``."""
        self.episodes_done = np.zeros(B, dtype=np.int64)
        """Episodes finished by ``play_random`` in each slot."""
        self.play_rng = np.zeros(B, dtype=np.int64)
        self.obs_dtype = obs_dtype
        """``"float32"`` (the AEC env's observation) or ``"uint8"`` (compact, see the module doc)."""
        self._obs_kind = 1 if obs_dtype == "float32" else 2
        self._obs = np.zeros((B, OBS_SIZE), dtype=np.float32 if obs_dtype == "float32" else np.uint8)
        self._scalars = np.zeros((B if obs_dtype == "uint8" else 1, SCALAR_SIZE), dtype=np.float32)
        view = self._scalars.view()
        view.flags.writeable = False
        self.obs_scalars = view
        """``obs_dtype="uint8"``: ``[B, SCALAR_SIZE]`` float32, the observation's non-0/1 entries
        (``spades_env.core.observation.SCALAR_INDEX``), overwritten by each ``step``."""
        self._mask = np.zeros((B, NUM_ACTIONS), dtype=np.int8)
        self._seat = np.zeros(B, dtype=np.int64)
        self._rew = np.zeros((B, 4), dtype=np.float64)
        self._term = np.zeros(B, dtype=np.bool_)
        self._trunc = np.zeros(B, dtype=np.bool_)
        self._illegal = np.zeros(B, dtype=np.bool_)
        self._no_active = np.zeros(1, dtype=np.bool_)
        views = []
        for a in (self._obs, self._mask, self._seat, self._rew, self._term, self._trunc, self._illegal):
            view = a.view()
            view.flags.writeable = False  # the engine trusts its masks: users only read them
            views.append(view)
        self._views = VectorStep(*views)
        self._out = (
            self._obs,
            self._scalars,
            self._mask,
            self._seat,
            self._rew,
            self._term,
            self._trunc,
            self._illegal,
            self.final_states,
            self.game_seeds,
            self.hand_end_states,
            self.hand_done,
        )
        self.reset(seed)

    # ---- public API ------------------------------------------------------------------------
    def reset(self, seed: int | Sequence[int] | None = None) -> VectorStep:
        """Start a new game in every slot (see the module doc for the seeds)."""
        B = self.num_envs
        if seed is None or isinstance(seed, (int, np.integer, bool, np.bool_)):
            env_seeds = reset_env_seeds(check_seed(seed), B)
        else:
            env_seeds = np.asarray(seed)
            if env_seeds.shape != (B,) or env_seeds.dtype.kind not in "iu":
                raise InputError(
                    f"reset(seed=...) takes an int or {B} integer seeds, got {env_seeds.dtype} {env_seeds.shape}"
                )
            if (env_seeds < 0).any() or (env_seeds.dtype.kind == "u" and (env_seeds >= 2**63).any()):
                raise InputError("per-game seeds must be in 0..2**63 - 1")
        seeds = game_seeds_from_env_seeds(env_seeds)
        play = (seeds * 0x9E3779B1 + 12345) & _MASK48
        self.env_seeds = env_seeds.astype(np.int64)
        """The AEC env seeds of the last ``reset``, per slot."""
        self.game_seeds[:] = seeds
        self.play_rng[:] = play
        self.episodes_done[:] = 0
        self._rew[:] = 0.0
        self._term[:] = False
        self._trunc[:] = False
        self._illegal[:] = False
        self.hand_done[:] = False
        self._k_reset(
            self.states,
            self.game_params,
            self._family,
            self.rules_index,
            self.game_seeds,
            self._obs,
            self._scalars,
            self._mask,
            self._seat,
            self._obs_kind,
        )
        return self._result()

    def start_games(
        self, game_seeds: Sequence[int] | np.ndarray, slots: Sequence[int] | np.ndarray | None = None
    ) -> VectorStep:
        """Start in ``slots[j]`` (default: every slot, in order) the game
        ``SpadesGame(rules_family[k], seed=game_seeds[j])``, where ``k`` is the rules the seed
        picks (``rules_index_of_seed``; always 0 for one rules): the very deals, dealers and
        game of that facade game (the arena's duplicate boards start games this way). Game
        seeds are integers ``0..2**63 - 1``; the other slots are left as they are. Those slots'
        rewards and flags are cleared, their observations and masks rewritten; ``play_random``
        generators of the slots are seeded from the game seeds as ``reset`` does."""
        B = self.num_envs
        idx = np.arange(B, dtype=np.int64) if slots is None else np.asarray(slots)
        seeds = np.asarray(game_seeds)
        if idx.ndim != 1 or idx.dtype.kind not in "iu" or (idx.size and (idx.min() < 0 or idx.max() >= B)):
            raise InputError(f"start_games: slots must be indices 0..{B - 1}, got {slots!r}")
        if np.unique(idx).size != idx.size:
            raise InputError("start_games: a slot is given twice")
        if seeds.shape != idx.shape or seeds.dtype.kind not in "iu":
            raise InputError(
                f"start_games: need {idx.size} integer game seeds, got {seeds.dtype} {seeds.shape}"
            )
        if (seeds < 0).any() or (seeds.dtype.kind == "u" and (seeds >= 2**63).any()):
            raise InputError("start_games: game seeds must be in 0..2**63 - 1")
        idx = idx.astype(np.int64)
        seeds = seeds.astype(np.int64)
        self.game_seeds[idx] = seeds
        self.play_rng[idx] = (seeds * 0x9E3779B1 + 12345) & _MASK48
        self.episodes_done[idx] = 0
        for a in (self._term, self._trunc, self._illegal, self.hand_done):
            a[idx] = False
        self._rew[idx] = 0.0
        _start_slots(
            self.states,
            self.game_params,
            self._family,
            self.rules_index,
            idx,
            seeds,
            self._obs,
            self._scalars,
            self._mask,
            self._seat,
            self._write_obs,
        )
        return self._result()

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> VectorStep:
        """Apply ``actions[i]`` for the seat to act in game ``i`` (only where ``active[i]``,
        when given; the other games stay as they are, with zero reward and no flags)."""
        acts = self._check_actions(actions)
        use_active = active is not None
        if use_active:
            act_mask = np.ascontiguousarray(active)
            if act_mask.shape != (self.num_envs,) or act_mask.dtype != np.bool_:
                raise InputError(
                    f"active must be a bool array of shape ({self.num_envs},), got {act_mask.dtype} {act_mask.shape}"
                )
        else:
            act_mask = self._no_active
        self._check_ids(acts, act_mask if use_active else None)
        if self.illegal_mode == "raise":
            bad = _first_illegal(self._mask, acts, act_mask, use_active)
            if bad >= 0:
                self._raise_illegal(bad, int(acts[bad]))
        self._run_path(
            self.step_paths,
            lambda path: self._steps[path](
                self.states,
                self.game_params,
                self._family,
                self.rules_index,
                acts,
                act_mask,
                use_active,
                (self._episode, self._reward, self.reward_scale, self.illegal_reward),
                self._out,
                self._write_obs,
            ),
        )
        return self._result()

    def play_random(self, decisions_per_game: int) -> int:
        """Play ``decisions_per_game`` random legal decisions in every game inside the core
        (finished episodes reset); refresh the observations; return episodes finished.
        ``decisions_per_game`` is an integer of at least 0 (``InputError`` otherwise)."""
        n = check_count(decisions_per_game, "decisions_per_game", lo=0)
        before = int(self.episodes_done.sum())

        def play(path: int) -> None:  # the play kernel and the observations it leaves, one path
            self._plays[path](
                self.states,
                self.game_params,
                self._family,
                self.rules_index,
                self.play_rng,
                n,
                (self._episode, self._reward, self.reward_scale),
                self.game_seeds,
                self.episodes_done,
            )
            self._observe(path, self.observations)

        self._run_path(self.play_paths, play, per=max(n, 1))
        return int(self.episodes_done.sum()) - before

    def refresh(self, observations: bool = True) -> VectorStep:
        """Rewrite every game's seat, mask and (``observations``) observation from ``states``
        (after the states were set from outside, e.g. restored from a training checkpoint)."""
        self._observe(int(self.parallel), observations)
        return self._result()

    def _run_path(self, chooser: PathChooser | None, run: Callable[[int], None], per: int = 1) -> None:
        """Run an operation by the engine's own kernel, or by the kernel ``chooser`` picks,
        timed for it (seconds per ``per`` units of work)."""
        if chooser is None:
            run(int(self.parallel))
            return
        path = chooser.pick()
        t0 = time.perf_counter()
        run(path)
        chooser.record(path, (time.perf_counter() - t0) / per)

    def _observe(self, path: int, observations: bool) -> None:
        """Rewrite seats, masks and (``observations``) observations by the serial (0) or
        parallel (1) observe kernel."""
        _KERNELS[bool(path)][3](
            self.states,
            self.game_params,
            self._obs,
            self._scalars,
            self._mask,
            self._seat,
            self._obs_kind if observations else 0,
        )

    def state_vectors(self, out: np.ndarray | None = None) -> np.ndarray:
        """Full state of every game for centralized critics, ``[B, STATE_VEC_SIZE]``
        float32 (``encode_state``: every hand; never for acting)."""
        if out is None:
            out = np.empty((self.num_envs, STATE_VEC_SIZE), dtype=np.float32)
        elif out.shape != (self.num_envs, STATE_VEC_SIZE) or out.dtype != np.float32:
            raise InputError(f"out must be float32 of shape ({self.num_envs}, {STATE_VEC_SIZE})")
        self._k_state(self.states, self.game_params, out)
        return out

    def observe_seat(self, game: int, seat: int, state: np.ndarray | None = None) -> np.ndarray:
        """Observation of any ``seat`` of game ``game`` (or of a given state row).

        Checked before the compiled encoder runs: ``game`` is an index ``0..num_envs - 1``,
        ``seat`` a seat of these rules, ``state`` an ``int64`` row of ``STATE_SIZE`` for this
        many seats whose index fields are in range; anything else raises ``InputError``."""
        seat = check_seat(seat, self.num_seats)
        game = check_int(game, "game", 0, self.num_envs - 1)
        if state is None:
            row = self.states[game]
        else:
            row = check_state_row(state, L.STATE_SIZE, self.num_seats)
        out = np.empty(OBS_SIZE, dtype=np.float32)
        encode_observation(row, self.game_params[game], seat, out)
        return out

    # ---- helpers ---------------------------------------------------------------------------
    def _result(self) -> VectorStep:
        return VectorStep(
            self._obs, self._mask, self._seat, self._rew, self._term, self._trunc, self._illegal
        )

    def _check_actions(self, actions: np.ndarray) -> np.ndarray:
        try:
            a = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        except (ValueError, TypeError, OverflowError):
            raise InputTypeError(
                f"actions must be an integer array of shape ({self.num_envs},), got {actions!r}"
            ) from None
        if a.dtype.kind not in "iu":
            raise InputTypeError(f"actions must be an integer array, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise InputError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if a.dtype != np.int64:
            if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
                raise NotAnActionError("actions out of range 0..69")
            a = a.astype(np.int64)
        return np.ascontiguousarray(a)  # one compiled layout: no recompiling for a strided view

    def _check_ids(self, acts: np.ndarray, active: np.ndarray | None) -> None:
        """Every action of a game that steps is an action id 0..69: anything else is an error
        whatever the ``illegal`` setting (never a move), as in every front-end."""
        out = (acts < 0) | (acts >= NUM_ACTIONS)
        if active is not None:
            out &= active
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise NotAnActionError(
                f"game {i}: action {int(acts[i])} (out of range 0..69) is not an action id; no game was changed"
            )

    def _raise_illegal(self, game: int, action: int) -> None:
        row = self.states[game]
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        legal_mask(row, self.game_params[game], mask)
        legal = [int(x) for x in np.flatnonzero(mask)]
        name = action_to_str(action) if 0 <= action < NUM_ACTIONS else "out of range 0..69"
        raise IllegalActionError(
            f"game {game}: action {action} ({name}) is illegal for seat {int(row[L.TURN])} in phase "
            f"'{L.PHASE_NAMES[int(row[L.PHASE])]}'; legal: {legal}; no game was changed"
        )
