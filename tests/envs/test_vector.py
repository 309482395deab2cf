"""The batched engine: parity with the AEC env and SpadesGame over thousands of random hands
(blind nil exchanges included) and whole games, seeds, auto-reset, bad input, every preset."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from spades_env import IllegalActionError, SpadesGame, raw_env
from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE
from spades_env.core.episode import RUNNING, TERMINATED, TRUNCATED, episode_code, reward_code, settle
from spades_env.core.observation import OBS_SIZE, SLICES, STATE_VEC_SIZE, encode_observation, encode_state
from spades_env.core.rng import seed_to_rng
from spades_env.core.rules import load_rules, preset_names
from spades_env.envs import vector
from spades_env.envs.vector import (
    RandomLegal,
    VectorSpades,
    next_game_seed,
    reset_env_seeds,
    rng_from_seed,
)


@njit(cache=True)
def _fnv(words):
    out = np.empty(words.shape[0], dtype=np.uint64)
    for i in range(words.shape[0]):
        h = np.uint64(1469598103934665603)
        for j in range(words.shape[1]):
            h = (h ^ np.uint64(words[i, j])) * np.uint64(1099511628211)
        out[i] = h
    return out


def obs_hash(obs: np.ndarray) -> np.ndarray:
    """An exact (bitwise) fingerprint of each observation vector (rows of a 2-D array)."""
    return _fnv(np.ascontiguousarray(obs).view(np.uint32))


def mask_hash(mask: np.ndarray) -> np.ndarray:
    return _fnv(np.ascontiguousarray(mask).view(np.uint8))


def choose(mask: np.ndarray, rng: np.random.Generator, obs: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random legal action per game; given ``obs``, bids follow the hand
    (spades // 2 + aces, at least 1) and Blind Nil is rare, so random games reach 500."""
    a = (rng.random(mask.shape) * mask).argmax(axis=1)
    if obs is not None:
        hand = obs[:, SLICES["hand"]]
        est = np.maximum(1, hand[:, 39:52].sum(1) // 2 + hand[:, [12, 25, 38, 51]].sum(1)).astype(np.int64)
        a = np.where(mask[:, BID_BASE + 5] == 1, BID_BASE + np.minimum(est, 13), a)
        blind = np.where(rng.random(len(a)) < 0.02, ACTION_BLIND_NIL, ACTION_SEE_CARDS)
        a = np.where(mask[:, ACTION_BLIND_NIL] == 1, blind, a)
    return a.astype(np.int64)


def run_batch(
    rules, num_envs, seed, steps, episode="hand", reward="score", sensible=False, stop_episodes=None
):
    """Step a VectorSpades with random legal actions; record everything per step."""
    v = VectorSpades(num_envs, rules, episode=episode, reward=reward, seed=seed)
    res = v.reset(seed)
    rng = np.random.default_rng(seed + 1)
    rec = {k: [] for k in ("obs", "mask", "seat", "phase", "action", "reward", "term", "trunc")}
    finals: dict[int, list[np.ndarray]] = {i: [] for i in range(num_envs)}
    start_seeds = v.game_seeds.copy()
    done_total = 0
    for _ in range(steps):
        a = choose(res.mask, rng, res.obs if sensible else None)
        rec["obs"].append(obs_hash(res.obs))
        rec["mask"].append(mask_hash(res.mask))
        rec["seat"].append(res.seat.copy())
        rec["phase"].append(v.states[:, L.PHASE].copy())
        rec["action"].append(a)
        res = v.step(a)
        rec["reward"].append(res.reward.copy())
        rec["term"].append(res.terminated.copy())
        rec["trunc"].append(res.truncated.copy())
        for i in np.flatnonzero(res.terminated | res.truncated):
            finals[int(i)].append(v.final_states[i].copy())
        done_total += int((res.terminated | res.truncated).sum())
        if stop_episodes is not None and done_total >= stop_episodes:
            break
    out = {k: np.array(x) for k, x in rec.items()}
    return v, out, finals, start_seeds


class MiniAEC:
    """SpadesGame driven as the AEC env drives it (apply, then settle)."""

    def __init__(self, rules, seed, episode, reward, scale=0.01):
        self.game = SpadesGame(rules, seed=seed)
        self.ep, self.rw, self.scale = episode_code(episode), reward_code(reward), scale
        self.rew = np.zeros(4)

    def observe(self):
        g = self.game
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        encode_observation(g.state, g.params, g.current_player, obs)
        return g.current_player, obs, g.legal_mask()

    def step(self, a):
        self.game.apply(int(a))
        st = settle(self.game.state, self.game.params, self.ep, self.rw, self.scale, self.rew)
        return st, self.rew


def check_slot(rules, i, rec, finals, start_env_seed, episode, reward):
    """Replay slot ``i`` with the AEC env (its first episode) and SpadesGame driven like the
    AEC env (the follow-up games); returns the number of episodes checked."""
    n = rules.num_players
    actions = rec["action"][:, i].tolist()
    env = raw_env(rules=rules, episode=episode, reward=reward)
    env.reset(seed=int(start_env_seed))
    ref = None
    seats, obs, masks, rews, flags = [], [], [], [], []
    ep_idx, ep_start = 0, 0
    for t, a in enumerate(actions):
        if env is not None:
            agent = env.agent_selection
            o = env.observe(agent)
            seats.append(env.agent_name_mapping[agent])
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(a)
            rews.append([env.rewards[f"player_{s}"] for s in range(n)])
            term, trunc = env.terminations[agent], env.truncations[agent]
            game = env.game
        else:
            seat, ob, mask = ref.observe()
            seats.append(seat)
            obs.append(ob)
            masks.append(mask)
            st, rew4 = ref.step(a)
            rews.append(rew4[:n].tolist())
            term, trunc = st == TERMINATED, st == TRUNCATED
            game = ref.game
        flags.append((term, trunc))
        if term or trunc:
            final = finals[i][ep_idx]
            assert np.array_equal(game.state, final), (i, t)
            # the game record: every action of the episode, as the batch applied them
            assert [x for h in game.hand_logs for x in h.actions] == actions[ep_start : t + 1], (i, t)
            ep_idx += 1
            ep_start = t + 1
            env = None
            ref = MiniAEC(rules, next_game_seed(final), episode, reward)
    T = len(actions)

    def same(name, got, want):
        bad = np.flatnonzero(np.asarray(got) != np.asarray(want))
        assert bad.size == 0, f"slot {i}: {name} differs first at step {bad[0] if bad.size else None}"

    same("seat", seats, rec["seat"][:T, i])
    same("observation", obs_hash(np.array(obs)), rec["obs"][:T, i])
    same("mask", mask_hash(np.array(masks)), rec["mask"][:T, i])
    r = np.array(rews)
    for s in range(n):
        same(f"reward of seat {s}", r[:, s], rec["reward"][:T, i, s])
    f = np.array(flags)
    same("terminated", f[:, 0], rec["term"][:T, i])
    same("truncated", f[:, 1], rec["trunc"][:T, i])
    assert ep_idx == len(finals[i])
    return ep_idx


# ---- seeds -----------------------------------------------------------------------------------


def test_rng_from_seed_is_seed_to_rng():
    rng = np.random.default_rng(3)
    seeds = [0, 1, 2**32 - 1, 2**32, 2**63 - 1] + [int(s) for s in rng.integers(0, 2**63 - 1, 500)]
    for s in seeds:
        assert rng_from_seed(s) == seed_to_rng(s), s


def test_reset_games_are_the_aec_envs_games():
    rules = load_rules("tournament")
    v = VectorSpades(5, rules, seed=42)
    env_seeds = reset_env_seeds(42, 5)
    assert np.array_equal(v.env_seeds, env_seeds)
    for i in range(5):
        env = raw_env(rules=rules)
        env.reset(seed=int(env_seeds[i]))
        assert np.array_equal(v.states[i], env.game.state)
        g = SpadesGame(rules, seed=int(v.game_seeds[i]))
        assert np.array_equal(v.states[i], g.state)
    # explicit per-slot env seeds
    v.reset([7, 8, 9, 7, 8])
    env = raw_env(rules=rules)
    env.reset(seed=8)
    assert np.array_equal(v.states[1], env.game.state)
    assert np.array_equal(v.states[4], env.game.state)
    assert not np.array_equal(v.states[0], v.states[1])


# ---- parity ----------------------------------------------------------------------------------


def test_parity_10000_hands_tournament_blind_nil_exchanges():
    """10,000+ random hands (episode = hand, so each is a fresh game after auto-reset): the
    first of each slot against the AEC env, the rest against SpadesGame."""
    rules = load_rules("tournament")
    B = 250
    v, rec, finals, _ = run_batch(rules, B, seed=11, steps=4000, episode="hand", stop_episodes=10_000)
    hands = sum(len(f) for f in finals.values())
    assert hands >= 10_000
    # blind nil bids and their exchanges really happened
    assert (rec["action"][rec["phase"] == L.PH_BLIND] == ACTION_BLIND_NIL).sum() > 1000
    assert (rec["phase"] == L.PH_EXCHANGE).sum() > 10_000
    checked = sum(check_slot(rules, i, rec, finals, v.env_seeds[i], "hand", "score") for i in range(B))
    assert checked == hands


@pytest.mark.parametrize("preset", ["openspiel", "two_player"])
def test_parity_hands_other_presets(preset):
    rules = load_rules(preset)
    B = 40
    v, rec, finals, _ = run_batch(rules, B, seed=5, steps=700, episode="hand", reward="win")
    hands = sum(check_slot(rules, i, rec, finals, v.env_seeds[i], "hand", "win") for i in range(B))
    assert hands >= 300
    if preset == "two_player":
        assert (rec["phase"] == L.PH_DRAW).sum() > 1000


def test_parity_whole_games_to_500():
    """Whole games (episode = game) with bids that make random games reach 500."""
    rules = load_rules("tournament")
    B = 16
    v, rec, finals, _ = run_batch(rules, B, seed=3, steps=2400, episode="game", sensible=True)
    games = sum(check_slot(rules, i, rec, finals, v.env_seeds[i], "game", "score") for i in range(B))
    assert games >= 16
    ends = [f for fs in finals.values() for f in fs]
    reached = [f for f in ends if not f[L.TRUNCATED] and max(f[L.SCORES], f[L.SCORES + 1]) >= 500]
    assert len(reached) >= 14
    assert all(f[L.PHASE] >= L.PH_GAME_END for f in ends)


def test_parity_matches_win_reward_short_games():
    rules = load_rules({"max_hands": 2, "target_score": 150})
    B = 16
    v, rec, finals, _ = run_batch(rules, B, seed=9, steps=1500, episode="match", reward="win")
    matches = sum(check_slot(rules, i, rec, finals, v.env_seeds[i], "match", "win") for i in range(B))
    assert matches >= 16
    ends = [f for fs in finals.values() for f in fs]
    assert any(f[L.TRUNCATED] for f in ends)  # the hand cap cuts some short


# ---- auto-reset ------------------------------------------------------------------------------


def test_auto_reset_new_game_from_final_generator_state():
    rules = load_rules("tournament")
    v = VectorSpades(3, rules, episode="hand", seed=0)
    res = v.reset(0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        res = v.step(choose(res.mask, rng))
        done = np.flatnonzero(res.terminated)
        if done.size:
            break
    i = int(done[0])
    final = v.final_states[i]
    assert final[L.PHASE] >= L.PH_HAND_END and final[L.TRICKS_PLAYED] == 13
    assert v.game_seeds[i] == next_game_seed(final) == final[L.RNG]
    fresh = SpadesGame(rules, seed=int(v.game_seeds[i]))
    assert np.array_equal(v.states[i], fresh.state)
    expect = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(fresh.state, fresh.params, fresh.current_player, expect)
    assert np.array_equal(res.obs[i], expect)
    assert res.seat[i] == fresh.current_player
    assert np.array_equal(res.mask[i], fresh.legal_mask())
    # score reward to every seat of the hand, by team
    r = res.reward[i]
    assert r[0] == r[2] == final[L.HAND_DELTA] * 0.01 and r[1] == r[3] == final[L.HAND_DELTA + 1] * 0.01


def test_same_seed_same_run_and_state_vectors():
    rules = load_rules("tournament")
    a = VectorSpades(6, rules, seed=4)
    b = VectorSpades(6, rules, seed=4)
    for k in range(300):
        ra = a.step(choose(a._result().mask, np.random.default_rng(k)))
        rb = b.step(choose(b._result().mask, np.random.default_rng(k)))
        assert np.array_equal(ra.obs, rb.obs)
    assert np.array_equal(a.states, b.states)
    sv = a.state_vectors()
    assert sv.shape == (6, STATE_VEC_SIZE) and sv.dtype == np.float32
    for i in range(6):
        expect = np.empty(STATE_VEC_SIZE, dtype=np.float32)
        encode_state(a.states[i], a.params, expect)
        assert np.array_equal(sv[i], expect)


def test_active_subset_leaves_other_games_alone():
    v = VectorSpades(4, "tournament", seed=1)
    before = v.states.copy()
    res = v._result()
    acts = choose(res.mask, np.random.default_rng(0))
    active = np.array([True, False, True, False])
    res = v.step(acts, active=active)
    assert np.array_equal(v.states[1], before[1]) and np.array_equal(v.states[3], before[3])
    assert v.states[0, L.DECISIONS] == 1 and v.states[2, L.DECISIONS] == 1
    assert not res.reward[[1, 3]].any()


# ---- bad input -------------------------------------------------------------------------------


def test_bad_actions_raise_and_change_nothing():
    v = VectorSpades(4, "tournament", seed=2)
    res = v._result()
    before = v.states.copy()
    good = choose(res.mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        v.step(good[:3])
    with pytest.raises(TypeError, match="integer"):
        v.step(good.astype(np.float64))
    bad = good.copy()
    bad[2] = 0 if res.mask[2, 0] == 0 else 69
    with pytest.raises(
        IllegalActionError, match=rf"game 2: action {bad[2]} .* is illegal for seat {res.seat[2]}"
    ):
        v.step(bad)
    bad[2] = 99
    with pytest.raises(IllegalActionError, match="game 2: action 99 .*out of range"):
        v.step(bad)
    with pytest.raises(ValueError, match="active"):
        v.step(good, active=np.ones(4, dtype=np.int64))
    assert np.array_equal(v.states, before)
    v.step(good)  # still usable
    assert (v.states[:, L.DECISIONS] == 1).all()


def test_penalty_mode_ends_only_the_offending_game():
    kw = {"rules": "tournament", "seed": 6}
    p = VectorSpades(4, illegal="penalty", illegal_reward=-2.0, **kw)
    r = VectorSpades(4, **kw)
    acts = choose(r._result().mask, np.random.default_rng(1))
    seat1 = int(p._result().seat[1])
    bad = acts.copy()
    bad[1] = 99  # not an action id: an error whatever the setting, nothing changed
    before = p.states.copy()
    with pytest.raises(ValueError, match="game 1: action 99 .*not an action id"):
        p.step(bad)
    assert np.array_equal(p.states, before)
    bad[1] = int(np.flatnonzero(p._result().mask[1] == 0)[0])  # an action id not legal now
    offender_state = p.states[1].copy()
    res = p.step(bad)
    r.step(acts)
    assert res.illegal.tolist() == [False, True, False, False]
    assert res.terminated.tolist() == [False, True, False, False]
    expect = np.zeros(4)
    expect[seat1] = -2.0
    assert np.array_equal(res.reward[1], expect)
    assert np.array_equal(p.final_states[1], offender_state)  # unchanged by the refused action
    assert np.array_equal(p.states[1], SpadesGame("tournament", seed=next_game_seed(offender_state)).state)
    for i in (0, 2, 3):
        assert np.array_equal(p.states[i], r.states[i])
    with pytest.raises(ValueError, match="illegal must be one of"):
        VectorSpades(2, illegal="ignore")


# ---- random play inside the core, presets -----------------------------------------------------


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_steps_and_plays_inside_the_core(preset):
    v = VectorSpades(8, preset, episode="hand", seed=3)
    res = v._result()
    rng = np.random.default_rng(0)
    for _ in range(150):
        res = v.step(choose(res.mask, rng))
    finished = v.play_random(400)
    assert finished >= 8 * 4  # >= 4 hands of <= 80 decisions per slot
    # a consistent deck in every game: hands, played, discards and the rest partition 52 cards
    for row in v.states:
        assert row[L.TURN] >= 0
        held = [int(row[L.HANDS + s]) for s in range(4)]
        played = [int(row[L.PLAYED + s]) for s in range(4)]
        cards = held + played
        union = 0
        for m in cards:
            assert union & m == 0
            union |= m
        if row[L.NUM_SEATS] == 4:
            assert union == (1 << 52) - 1
    # deterministic from the seed
    w = VectorSpades(8, preset, episode="hand", seed=3)
    w.play_random(400)
    x = VectorSpades(8, preset, episode="hand", seed=3)
    x.play_random(400)
    assert np.array_equal(w.states, x.states)


def test_play_random_decisions_are_legal():
    """Every decision play_random makes is legal: replay its games in SpadesGame by recovering
    each action from consecutive one-decision calls."""
    rules = load_rules({"max_hands": 2})
    v = VectorSpades(3, rules, episode="game", seed=8)
    games = [SpadesGame(rules, seed=int(s)) for s in v.game_seeds]
    for _ in range(400):
        prev = v.states.copy()
        v.play_random(1)
        for i in range(3):
            g = games[i]
            legal = g.legal_actions()
            nxt = None
            for a in legal:  # exactly one legal action leads to the new state
                h = g.copy()
                h.apply(a)
                rew = np.zeros(4)
                st = settle(h.state, h.params, episode_code("game"), reward_code("score"), 0.01, rew)
                if st != RUNNING:
                    h = SpadesGame(rules, seed=next_game_seed(h.state))
                if np.array_equal(h.state, v.states[i]):
                    nxt = h
                    break
            assert nxt is not None, (i, prev[i])
            games[i] = nxt


@pytest.mark.parametrize("B, obs_dtype", [(16, "float32"), (150, "uint8")])
def test_parallel_kernels_give_the_same_games(B, obs_dtype):
    """``parallel=True`` (chunks of games over numba's threads; at B = 150, 64 chunks of 2-3
    games) steps, observes and plays exactly as the serial kernels."""
    kw = {"rules": "tournament", "episode": "hand", "seed": 12, "obs_dtype": obs_dtype}
    s, p = VectorSpades(B, **kw), VectorSpades(B, parallel=True, **kw)
    rng = np.random.default_rng(0)
    rs, rp = s._result(), p._result()
    for _ in range(200):
        a = choose(rs.mask, rng)
        rs, rp = s.step(a), p.step(a)
        for x, y in zip(rs, rp, strict=True):
            assert np.array_equal(x, y)
        assert np.array_equal(s.obs_scalars, p.obs_scalars) and np.array_equal(s.states, p.states)
    s.play_random(300)
    p.play_random(300)
    assert np.array_equal(s.states, p.states)
    assert np.array_equal(s.state_vectors(), p.state_vectors())


def test_random_legal_plays_real_games_and_is_reproducible():
    """The batched random sampler: every action legal in every phase of real games (step raises
    otherwise), the same seed the same actions, another seed other actions."""
    v = VectorSpades(37, "tournament", episode="hand", seed=5)
    w = VectorSpades(37, "tournament", episode="hand", seed=5)
    sa, sb, sc = (
        RandomLegal(37, seed=9),
        RandomLegal(37, seed=9),
        RandomLegal(37, seed=10),
    )
    ra, rb = v._result(), w._result()
    sp = RandomLegal(37, seed=9, parallel=True)  # rows over numba's threads: the same draws
    phases, differ = set(), False
    for _ in range(500):
        a, b = sa(ra.mask), sb(rb.mask)
        assert np.array_equal(sp(ra.mask), a)
        assert a.dtype == np.int64 and a.shape == (37,)
        assert np.all(ra.mask[np.arange(37), a] == 1)
        assert np.array_equal(a, b)
        differ |= not np.array_equal(a, sc(ra.mask))
        phases.update(int(x) for x in v.states[:, L.PHASE])
        ra, rb = v.step(a), w.step(b)
    assert {L.PH_BLIND, L.PH_BID, L.PH_EXCHANGE, L.PH_PLAY} <= phases
    assert differ


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 150, 4097])
def test_chunk_bounds_cover_the_games_once(n):
    """The parallel kernels' chunks: contiguous, in order, sizes within one, every game once."""
    chunks = min(n, vector._CHUNKS)
    bounds = [vector._chunk_bounds(n, chunks, c) for c in range(chunks)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    sizes = {hi - lo for lo, hi in bounds}
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_random_legal_is_uniform_over_the_legal_actions():
    """Each legal action with probability 1 / (number legal), the first and last of the 70
    included; illegal ones never (counts within 5 standard deviations); bool masks too."""
    B = 4000
    mask = np.zeros((B, 70), dtype=np.int8)
    legal = ([0, 13, 51, 52, 66, 69], list(range(40, 54)))
    mask[: B // 2, legal[0]] = 1
    mask[B // 2 :, legal[1]] = 1
    sample = RandomLegal(B, seed=3)
    counts = np.zeros((2, 70))
    reps = 60
    for r in range(reps):
        a = sample(mask if r % 2 else mask.astype(bool))
        counts[0] += np.bincount(a[: B // 2], minlength=70)
        counts[1] += np.bincount(a[B // 2 :], minlength=70)
    for half in (0, 1):
        n, p = reps * B // 2, 1 / len(legal[half])
        assert counts[half][np.setdiff1d(np.arange(70), legal[half])].sum() == 0
        assert np.all(np.abs(counts[half][legal[half]] - n * p) < 5 * np.sqrt(n * p * (1 - p)))


def test_random_legal_bad_input_and_empty_rows():
    sample = RandomLegal(3, seed=0)
    with pytest.raises(ValueError, match="shape"):
        sample(np.ones((4, 70), dtype=np.int8))
    with pytest.raises(ValueError, match="int8"):
        sample(np.ones((3, 70), dtype=np.float32))
    with pytest.raises(ValueError, match="seed"):
        RandomLegal(3, seed=-1)
    with pytest.raises(TypeError, match="parallel must be true or false"):
        RandomLegal(3, seed=0, parallel="yes")
    mask = np.ones((3, 70), dtype=np.int8)
    mask[1] = 0
    a = sample(mask)
    assert a[1] == -1 and 0 <= a[0] < 70 and 0 <= a[2] < 70
    v = VectorSpades(3, "tournament", seed=1)
    with pytest.raises(IllegalActionError, match="game 0"):
        v.step(np.full(3, -1))  # what a row with no legal action gets: refused, nothing changed


@pytest.mark.parametrize("rules", ["tournament", "two_player"])
def test_public_bids_of_a_batch_agree_with_decode(rules):
    from spades_env.core.observation import decode, public_bids

    eng = vector.VectorSpades(32, rules, seed=4)
    pick = vector.RandomLegal(32, seed=5)
    res = eng.reset(seed=4)
    seen: list[np.ndarray] = []
    for _ in range(120):
        seen.append(res.obs.copy())
        res = eng.step(pick(res.mask))
    obs = np.concatenate(seen)
    got = public_bids(obs)
    want = np.array([decode(o).bids for o in obs], dtype=np.int64)
    np.testing.assert_array_equal(got, want)
    assert (got == L.BID_BLIND_NIL).any()  # random seats declare it in both presets
    assert (got == L.BID_NONE).any() and ((got >= 0) & (got <= 13)).any()
    with pytest.raises(ValueError, match="public_bids: expected observations of shape"):
        public_bids(obs[0])
