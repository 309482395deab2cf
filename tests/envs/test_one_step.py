"""One way to step a game: the facade's observe / step, the one driver of seated policies, the
one opponent-spec resolver and the one illegal-action setting, and the parity of every
front-end's game with the facade's step-by-step game for the same seed and actions."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import spades_env
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.episode import (
    ILLEGAL_MODES,
    RUNNING,
    TERMINATED,
    TRUNCATED,
    episode_code,
    reward_code,
    settle,
)
from spades_env.core.game import IllegalActionError, SpadesGame
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.core.rules import load_rules
from spades_env.envs.vector import VectorSpades
from spades_env.policies.base import RandomPolicy
from spades_env.policies.driver import drive, seated_actions

ROOT = Path(__file__).resolve().parents[2]
SHORT = {"max_hands": 3}


class FirstLegal:
    """A deterministic Policy: the lowest legal action id."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


def replay(rules, seed, actions, **knobs):
    """The facade's own step-by-step game: ``SpadesGame(rules, seed).step`` over ``actions``;
    returns the game and each step's rewards."""
    g = SpadesGame(rules, seed=seed, **knobs)
    rewards = []
    for a in actions:
        rewards.append(g.step(a).rewards)
    return g, rewards


def all_actions(game: SpadesGame) -> list[int]:
    return [a for h in game.hand_logs for a in h.actions]


def same_game(a: SpadesGame, b: SpadesGame) -> None:
    assert np.array_equal(a.state, b.state)
    assert [(h.dealer, h.hands, h.stock, h.actions, h.result) for h in a.hand_logs] == [
        (h.dealer, h.hands, h.stock, h.actions, h.result) for h in b.hand_logs
    ]
    assert a.episode_status == b.episode_status


# ---- the facade ---------------------------------------------------------------------------------
@pytest.mark.parametrize("episode", ["hand", "game", "match"])
@pytest.mark.parametrize("reward", ["score", "win"])
def test_step_is_apply_then_settle_then_deal_on(episode, reward):
    rules = load_rules("tournament").replace(max_hands=4)
    g = SpadesGame(rules, seed=5, episode=episode, reward=reward, reward_scale=0.5)
    ref = SpadesGame(rules, seed=5)
    rew = np.zeros(4)
    pol = RandomPolicy(0)
    status = RUNNING
    while status == RUNNING:
        seat = g.current_player
        obs, mask = g.observe()
        expect = np.empty(OBS_SIZE, dtype=np.float32)
        encode_observation(ref.state, ref.params, seat, expect)
        assert np.array_equal(obs, expect) and np.array_equal(mask, ref.legal_mask())
        a = pol.act(obs, mask)
        r = g.step(a)
        ref.apply(a)
        ended_hand = ref.is_hand_over
        end_state = ref.state.copy()
        status = settle(ref.state, ref.params, episode_code(episode), reward_code(reward), 0.5, rew)
        if ended_hand and status == RUNNING:
            ref.begin_hand_log()
        assert r.seat == seat and r.action == a
        assert r.rewards == tuple(float(x) for x in rew)
        assert (r.terminated, r.truncated) == (status == TERMINATED, status == TRUNCATED)
        assert (r.hand is not None) == ended_hand
        if ended_hand:
            assert np.array_equal(r.hand_end_state, end_state) and r.hand.result is not None
        if status == RUNNING:
            same_game(g, ref)
    assert g.episode_over and np.array_equal(g.state, ref.state)
    with pytest.raises(IllegalActionError, match="after the episode ended"):
        g.step(0)


def test_observe_masks_only_the_seat_to_act_and_checks_the_seat():
    g = SpadesGame(seed=1)
    seat = g.current_player
    for s in range(4):
        obs, mask = g.observe(s)
        assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32 and mask.dtype == np.int8
        assert mask.any() == (s == seat)
    with pytest.raises(ValueError, match="seat"):
        g.observe(4)
    for _ in range(4):
        g.step(FirstLegal().act(*g.observe()))  # ..., observe() defaults to the seat to act
    g2 = SpadesGame(seed=1, episode="hand")
    drive(g2, [FirstLegal()] * 4)
    with pytest.raises(ValueError, match="no seat is to act"):
        g2.observe()
    assert not g2.observe(0).action_mask.any()


def test_illegal_raise_changes_nothing_and_penalty_ends_the_episode():
    g = SpadesGame(seed=2)
    before = g.state.copy()
    bad = int(np.flatnonzero(g.legal_mask() == 0)[0])
    with pytest.raises(IllegalActionError):
        g.step(bad)
    assert np.array_equal(g.state, before) and not g.episode_over
    g = SpadesGame(seed=2, illegal="penalty", illegal_reward=-3.0)
    seat = g.current_player
    r = g.step(bad)
    assert r.illegal and r.terminated and not r.truncated and r.seat == seat
    assert r.rewards == tuple(-3.0 if s == seat else 0.0 for s in range(4))
    assert np.array_equal(g.state, before) and g.episode_over and g.hand_logs[-1].actions == []
    with pytest.raises(IllegalActionError, match="after the episode ended"):
        g.step(int(np.flatnonzero(g.legal_mask())[0]))
    with pytest.raises(ValueError, match="illegal must be"):
        SpadesGame(illegal="ignore")
    with pytest.raises(ValueError, match="episode must be"):
        SpadesGame(episode="set")


def test_copy_keeps_the_knobs_and_next_hand_starts_a_new_episode():
    g = SpadesGame(seed=4, episode="hand", reward="win")
    drive(g, [FirstLegal()] * 4)
    c = g.copy()
    assert c.knobs == g.knobs and c.episode_over
    c.next_hand()
    assert not c.episode_over and g.episode_over
    d = drive(c, [FirstLegal()] * 4)
    assert d.done and len(d.hands) == 1 and abs(sum(d.rewards)) in (0.0, 4.0)


# ---- the driver ---------------------------------------------------------------------------------
def test_drive_stops_at_a_seat_without_a_policy_and_sums_the_rewards():
    g = SpadesGame(SHORT, seed=3, episode="game")
    d = drive(g, {1: FirstLegal(), 3: FirstLegal()})
    assert d.status == RUNNING and g.current_player in (0, 2)
    total = list(d.rewards)
    pols = [RandomPolicy(7), FirstLegal(), RandomPolicy(8), FirstLegal()]
    steps = d.steps
    while not g.episode_over:
        seen = []
        d = drive(g, pols, on_step=seen.append, max_steps=25)
        assert len(seen) == d.steps <= 25
        steps += d.steps
        for s in range(4):
            total[s] += d.rewards[s]
    assert total[0] == pytest.approx(g.scores[0] * 0.01) and total[1] == pytest.approx(g.scores[1] * 0.01)
    assert steps == len(all_actions(g))


def test_seated_actions_per_game_policies():
    obs = np.zeros((3, OBS_SIZE), np.float32)
    mask = np.zeros((3, NUM_ACTIONS), np.int8)
    mask[:, 5] = mask[:, 9] = 1
    out = np.full(3, -1, np.int64)
    seated_actions(obs, mask, np.array([0, 1, 2]), {0: FirstLegal(), 1: FirstLegal(), 2: FirstLegal()}, out)
    assert out.tolist() == [5, 5, 5]
    calls = []

    def of(i, seat):
        calls.append((i, seat))
        return FirstLegal()

    out[:] = -1
    seated_actions(obs, mask, np.array([3, 1, 2]), of, out, active=np.array([True, False, True]))
    assert calls == [(0, 3), (2, 2)] and out.tolist() == [5, -1, 5]


# ---- parity: every front-end's game is the facade's step-by-step game ----------------------------
@pytest.mark.parametrize("make", ["env", "raw_env"])
@pytest.mark.parametrize("episode", ["hand", "game", "match"])
@pytest.mark.parametrize("preset", ["tournament", "two_player"])
def test_aec_game_equals_the_facade_game(make, episode, preset):
    rules = load_rules(preset).replace(max_hands=3)
    e = getattr(spades_env, make)(rules=rules, episode=episode, reward="score")
    rng = np.random.default_rng(0)
    for seed in range(2):
        e.reset(seed=seed)
        rewards = []
        for _agent in e.agent_iter():
            obs, r, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            rewards.append(tuple(e.unwrapped.rewards[a] for a in e.unwrapped.possible_agents))
        game = e.unwrapped.game
        game_seed = int(np.random.default_rng(seed).integers(2**63 - 1))
        ref, ref_rewards = replay(rules, game_seed, all_actions(game), episode=episode)
        same_game(game, ref)
        assert rewards == [rw[: len(e.unwrapped.possible_agents)] for rw in ref_rewards]
        assert ref.episode_over


@pytest.mark.parametrize("opponents", [None, "greedy"])
def test_gym_game_equals_the_facade_game(opponents):
    env = gymnasium.make("Spades-v0", rules=SHORT, opponents=opponents, episode="match")
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=4)
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        total += r
        done = term or trunc
    game = env.unwrapped.game
    game_seed = int(gymnasium.utils.seeding.np_random(4)[0].integers(2**63 - 1))
    ref, ref_rewards = replay(SHORT, game_seed, all_actions(game), episode="match")
    same_game(game, ref)
    assert total == pytest.approx(sum(rw[0] for rw in ref_rewards))


def test_vector_engine_and_adapter_games_equal_the_facade_games():
    rules = load_rules("tournament")
    # the batched engine, every seat from outside
    v = VectorSpades(4, rules, seed=9)
    seeds = v.game_seeds.copy()
    rng = np.random.default_rng(2)
    acts: list[list[int]] = [[] for _ in range(4)]
    res = v.reset(seed=9)
    for _ in range(120):
        a = (rng.random(res.mask.shape) * res.mask).argmax(axis=1)
        for i in range(4):
            acts[i].append(int(a[i]))
        res = v.step(a)
        assert not (res.terminated | res.truncated).any()
    for i in range(4):
        ref, _ = replay(rules, int(seeds[i]), acts[i])
        assert np.array_equal(v.states[i], ref.state)
    # the learner adapter: deterministic opponents, the learner's actions replayed
    from spades_env.envs.vector_adapters import LearnerDriver

    d = LearnerDriver(3, rules, opponents=FirstLegal(), seed=5)
    obs, mask = d.reset(5)
    seeds = d.engine.game_seeds.copy()
    learner: list[list[int]] = [[] for _ in range(3)]
    for _ in range(40):
        a = (rng.random(mask.shape) * mask).argmax(axis=1)
        for i in range(3):
            learner[i].append(int(a[i]))
        obs, mask = d.step(a)
        assert not (d.terminated | d.truncated).any()
    for i in range(3):
        g = SpadesGame(rules, seed=int(seeds[i]))
        for a in learner[i]:
            drive(g, {1: FirstLegal(), 3: FirstLegal()})
            g.step(a)
        drive(g, {1: FirstLegal(), 3: FirstLegal()})
        assert np.array_equal(d.engine.states[i], g.state)
        assert np.array_equal(obs[i], g.observe(g.current_player).observation)


@pytest.mark.parametrize("fmt", ["hand", "game", "match"])
def test_arena_demo_and_bc_games_equal_the_facade_games(fmt):
    from spades_env.cli.demo import play_random_game
    from spades_env.eval import play

    rules = load_rules("tournament").replace(max_hands=4)
    g = SpadesGame(rules, seed=6)
    play(g, [RandomPolicy(1), FirstLegal(), RandomPolicy(2), FirstLegal()], fmt)
    ref, _ = replay(rules, 6, all_actions(g), episode=fmt)
    same_game(g, ref)
    demo = play_random_game(rules, 3)
    ref, _ = replay(rules, 3, all_actions(demo), episode="match")
    same_game(demo, ref)
    if fmt != "game":
        return
    from training.bc import teacher_chunk  # the non-batched teacher loop (a bots registry teacher)

    data = teacher_chunk("tournament", "greedy", 5 * 60, 5, 8)
    seeds = VectorSpades(5, "tournament", seed=8).game_seeds
    for i in range(5):
        game = SpadesGame("tournament", seed=int(seeds[i]))
        for t in range(60):
            obs, mask = game.observe()
            assert np.array_equal(data["obs"][t * 5 + i], obs.astype(np.float16))
            assert np.array_equal(data["mask"][t * 5 + i], mask.astype(bool))
            game.step(int(data["action"][t * 5 + i]))


# ---- one illegal-action setting -------------------------------------------------------------------
def _front_ends(illegal):
    from spades_env.envs.vector_adapters import SpadesVectorEnv

    yield "env", lambda: spades_env.env(rules=SHORT, illegal=illegal)
    yield "raw_env", lambda: spades_env.raw_env(rules=SHORT, illegal=illegal)
    yield "Spades-v0", lambda: gymnasium.make("Spades-v0", rules=SHORT, illegal=illegal)
    yield "SpadesVectorEnv", lambda: SpadesVectorEnv(2, SHORT, illegal=illegal)
    yield "VectorSpades", lambda: VectorSpades(2, SHORT, illegal=illegal)
    yield "SpadesGame", lambda: SpadesGame(SHORT, illegal=illegal)
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        return
    from spades_env.envs.vector_adapters import SpadesSB3VecEnv

    yield "SpadesSB3VecEnv", lambda: SpadesSB3VecEnv(2, SHORT, illegal=illegal)


def test_every_front_end_takes_the_same_illegal_setting():
    from spades_env.envs import vector as vector_mod

    assert tuple(vector_mod.ILLEGAL_MODES) == ILLEGAL_MODES == ("raise", "penalty")
    for mode in ILLEGAL_MODES:
        for _, make in _front_ends(mode):
            make()
    for bad in ("ignore", None, 1):
        for name, make in _front_ends(bad):
            with pytest.raises(ValueError, match="illegal must be"):
                make()
                pytest.fail(name)


def test_aec_illegal_setting_raise_and_penalty():
    e = spades_env.env(rules=SHORT, illegal="raise")
    e.reset(seed=0)
    bad = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        e.step(bad)
    r = spades_env.raw_env(rules=SHORT, illegal="penalty", illegal_reward=-4.0)
    r.reset(seed=0)
    offender = r.agent_selection
    state = r.game.state.copy()
    r.step(bad)
    assert all(r.terminations.values()) and np.array_equal(r.game.state, state)
    assert r.rewards == {a: (-4.0 if a == offender else 0.0) for a in r.possible_agents}
    assert r._cumulative_rewards[offender] == -4.0
    for _agent in r.agent_iter():
        r.step(None)
    assert r.agents == []


def test_vector_adapter_illegal_penalty_ends_that_game():
    from spades_env.envs.vector_adapters import SpadesVectorEnv

    env = SpadesVectorEnv(3, SHORT, illegal="penalty", illegal_reward=-2.0, opponents=FirstLegal())
    obs, _ = env.reset(seed=1)
    acts = obs["action_mask"].argmax(axis=1)
    acts[1] = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    obs, rew, term, trunc, infos = env.step(acts)
    assert term.tolist() == [False, True, False] and rew[1] == -2.0
    assert infos["illegal_action"][1] and not infos["_illegal_action"][0]


# ---- one resolver -------------------------------------------------------------------------------
def test_one_resolver_for_the_arena_and_the_front_ends():
    from spades_env import eval as arena
    from spades_env.envs.vector_adapters import LearnerDriver
    from spades_env.policies import registry as resolve

    for name in ("resolve_policy", "check_policy_name", "register_policy_loader"):  # one home, no aliases
        assert not hasattr(arena, name)
    d = LearnerDriver(2, SHORT, opponents="greedy", seed=0)  # names now work in the adapters too
    assert type(d.opponents[1]).__name__ == type(resolve.resolve_policy("greedy", 0, d.engine.rules)).__name__
    with pytest.raises(ValueError, match="nosuchbot|unknown"):
        LearnerDriver(2, SHORT, opponents="nosuchbot")
    with pytest.raises(ValueError, match="nosuchbot|unknown"):
        gymnasium.make("Spades-v0", opponents={1: "greedy", 3: "nosuchbot"})
    with pytest.raises(ValueError, match=r"seat\(s\) \[3\]"):
        LearnerDriver(2, SHORT, opponents={1: FirstLegal()})
    with pytest.raises(TypeError, match="Policy"):
        resolve.opponent_specs(3.5, [1, 3])


FRONT_ENDS = [
    "spades_env/envs/aec.py",
    "spades_env/envs/gym_env.py",
    "spades_env/envs/vector_adapters.py",
    "spades_env/eval/match.py",
    "spades_env/cli/demo.py",
    "spades_env/cli/play.py",
]


def test_no_front_end_re_implements_a_step():
    for path in FRONT_ENDS:
        text = (ROOT / path).read_text()
        for pattern in (
            r"\bsettle\(",
            r"\.apply\(",
            r"\.next_hand\(",
            r"begin_hand_log",
            r"apply_action",
            r"\.act\(",
        ):
            assert not re.search(pattern, text), (path, pattern)
