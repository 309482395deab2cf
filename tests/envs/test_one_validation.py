"""One validation layer for every front-end (issue 37): the AEC env, the parallel env,
Spades-v0 and VectorSpades accept and refuse the same inputs, with the package's own error
types, and nothing changes on a refusal."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spades_env
from helpers.bad_input import BAD_NUMBERS, NOT_ACTIONS
from spades_env.core.game import IllegalActionError, NotAnActionError, OrderError
from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError, SpadesError
from spades_env.envs.aec import raw_env
from spades_env.envs.gym_env import SpadesGymEnv
from spades_env.envs.vector import VectorSpades

FRONTS = {
    "aec": lambda **kw: raw_env(**kw),
    "aec_wrapped": lambda **kw: spades_env.env(**kw),
    "parallel": lambda **kw: spades_env.parallel_env(**kw),
    "gym": lambda **kw: SpadesGymEnv(**kw),
    "gym_make": lambda **kw: gymnasium.make("Spades-v0", **kw),
    "vector": lambda **kw: VectorSpades(2, **kw),
}


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("knob", ["reward_scale", "illegal_reward"])
@pytest.mark.parametrize("value", BAD_NUMBERS, ids=repr)
def test_every_front_end_refuses_the_same_numbers(front, knob, value):
    with pytest.raises(InputError, match=knob):
        FRONTS[front](**{knob: value})


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize(
    "kw", [{"episode": "games"}, {"reward": 1}, {"illegal": "ignore"}, {"rules": "../tournament"}], ids=repr
)
def test_every_front_end_refuses_the_same_choices(front, kw):
    with pytest.raises(SpadesError):
        FRONTS[front](**kw)


@pytest.mark.parametrize("front", ["aec", "aec_wrapped", "gym", "gym_make"])
def test_render_mode_bogus_is_refused(front):
    with pytest.raises(InputError, match="render_mode"):
        FRONTS[front](render_mode="bogus")


def _started(front, illegal):
    """(step(action), state row getter) of a started front-end."""
    if front == "gym":
        e = SpadesGymEnv(illegal=illegal)
        e.reset(seed=3)
        return e.step, lambda: e.game.state.copy(), e
    if front == "parallel":
        e = spades_env.parallel_env(illegal=illegal)
        e.reset(seed=3)
        return (lambda a: e.step({ag: a for ag in e.agents})), lambda: e.unwrapped.game.state.copy(), e
    e = spades_env.env(illegal=illegal) if front == "aec_wrapped" else raw_env(illegal=illegal)
    e.reset(seed=3)
    return e.step, lambda: e.unwrapped.game.state.copy(), e


@pytest.mark.parametrize("front", ["aec", "aec_wrapped", "parallel", "gym"])
@pytest.mark.parametrize("illegal", ["raise", "penalty"])
@pytest.mark.parametrize("action", NOT_ACTIONS, ids=repr)
def test_a_value_that_is_not_an_action_is_never_a_move(front, illegal, action):
    step, state, _ = _started(front, illegal)
    before = state()
    with pytest.raises(NotAnActionError):
        step(action)
    assert np.array_equal(state(), before)
    step(67)  # the episode goes on: See cards is legal at the start


@pytest.mark.parametrize("illegal", ["raise", "penalty"])
@pytest.mark.parametrize("action", [70, -1, 10**12])
def test_vector_refuses_values_that_are_not_actions_too(illegal, action):
    v = VectorSpades(3, seed=1, illegal=illegal)
    res = v.reset(seed=1)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in res.mask], dtype=np.int64)
    acts[1] = action
    before = v.states.copy()
    with pytest.raises(NotAnActionError, match="game 1"):
        v.step(acts)
    assert np.array_equal(v.states, before)
    for bad in (acts.astype(np.float64), acts.astype(str), [None, 1, 2]):
        with pytest.raises(InputError):
            v.step(bad)


def test_numpy_integer_actions_are_accepted_everywhere():
    for front in ("aec", "gym"):
        step, _, _ = _started(front, "raise")
        step(np.int64(67))
    step, _, _ = _started("gym", "raise")
    step(np.array(67))


@pytest.mark.parametrize("front", ["aec", "aec_wrapped", "parallel", "gym", "gym_make"])
def test_misuse_before_reset_is_an_order_error(front):
    e = FRONTS[front]()
    with pytest.raises(OrderError, match="before reset"):
        e.step({"player_0": 67} if front == "parallel" else 67)
    if front in ("aec", "aec_wrapped"):
        with pytest.raises(OrderError, match="before reset"):
            e.observe("player_0")
        with pytest.raises(OrderError, match="before reset"):
            e.state()
    if front == "aec_wrapped":
        with pytest.raises(OrderError):
            e.agent_selection  # noqa: B018
        assert not hasattr(e, "rewards")  # an AttributeError too, as PettingZoo's wrapper


def _finish(front):
    e = FRONTS[front](rules=load_rules("tournament").replace(max_hands=1), episode="hand")
    rng = np.random.default_rng(0)
    if front in ("gym", "gym_make"):
        _, info = e.reset(seed=1)
        done = False
        while not done:
            _, _, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            done = term or trunc
        return e, lambda: e.step(0)
    if front == "parallel":
        obs, infos = e.reset(seed=1)
        while e.agents:
            active = next(a for a in e.agents if infos[a]["action_mask"].any())
            obs, _, _, _, infos = e.step({active: int(rng.choice(np.flatnonzero(infos[active]["action_mask"])))})
        return e, lambda: e.step({"player_0": 0})
    e.reset(seed=1)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return e, lambda: e.step(0)


@pytest.mark.parametrize("front", ["aec", "aec_wrapped", "parallel", "gym"])
def test_step_after_the_end_is_an_order_error(front):
    _, again = _finish(front)
    with pytest.raises(OrderError, match="ended"):
        again()


@pytest.mark.parametrize("front", ["aec", "aec_wrapped", "gym"])
def test_close_really_closes(front):
    e = FRONTS[front]()
    e.reset(seed=1)
    e.close()
    e.close()  # twice is fine
    with pytest.raises(OrderError, match="closed"):
        e.reset(seed=1)
    with pytest.raises(OrderError):
        e.step(67)


BAD_OPTIONS = [
    {"dealr": 1},
    {"dealer": 9},
    {"dealer": "1"},
    {"dealer": 1.0},
    {"dealer": True},
    {"hands": [["AS"]]},
    {"scores": [0]},
    {"scores": ["0", "0"]},
    {"scores": [10**10, 0]},
    {"bags": [-1, 0]},
    {"bags": [10, 0]},
    [("dealer", 1)],
    "dealer=1",
]


@pytest.mark.parametrize("front", ["aec", "parallel", "gym", "gym_make"])
@pytest.mark.parametrize("options", BAD_OPTIONS, ids=repr)
def test_reset_options_are_checked_the_same_everywhere(front, options):
    e = FRONTS[front]()
    with pytest.raises(SpadesError):
        e.reset(seed=1, options=options)
    e.reset(seed=1, options={"dealer": 2})  # a good one is taken


def test_gym_reset_options_set_the_deal_as_the_aec_env_does():
    a, g = raw_env(), SpadesGymEnv(learner_seats=(0, 2))
    a.reset(seed=5, options={"dealer": 3, "scores": [120, -40], "bags": [3, 1]})
    g.reset(seed=5, options={"dealer": 3, "scores": [120, -40], "bags": [3, 1]})
    assert g.game.dealer == 3 and g.game.scores == (120, -40) and g.game.bags == (3, 1)
    assert a.game.dealer == 3 and a.game.scores == (120, -40)


def test_a_refused_gym_reset_changes_nothing():
    g = SpadesGymEnv()
    g.reset(seed=5)
    game, rng_state = g.game, g.np_random.bit_generator.state
    with pytest.raises(InputError):
        g.reset(options={"dealr": 1})
    assert g.game is game and g.np_random.bit_generator.state == rng_state


@given(st.integers(-(10**9) + 1, -1), st.integers(-(10**9) + 1, 499))
@settings(max_examples=30, deadline=None)
def test_huge_scores_stay_inside_observation_space(a, b):
    e = raw_env()
    e.reset(seed=1, options={"scores": [a, min(b, 499)]})
    space = e.observation_space("player_0")
    for agent in e.agents:
        assert space.contains(e.observe(agent))
    g = SpadesGymEnv()
    obs, _ = g.reset(seed=1, options={"scores": [a, min(b, 499)]})
    assert g.observation_space.contains(obs)


def test_scores_near_the_limit_with_a_raised_target_stay_inside_the_space():
    rules = load_rules("tournament").replace(target_score=1)
    e = raw_env(rules=rules)
    e.reset(seed=2, options={"scores": [-(10**9), -(10**9)]})
    assert e.observation_space("player_0").contains(e.observe("player_0"))


def test_illegal_action_ids_still_follow_the_illegal_setting():
    step, state, e = _started("aec", "raise")
    with pytest.raises(IllegalActionError):
        step(0)  # an action id, not legal now
    step, state, e = _started("gym", "penalty")
    _, r, term, _, info = step(0)
    assert term and info["illegal_action"] and r == -1.0


def _drive(c, cost, calls):
    runs = []
    for i in range(calls):
        path = c.pick()
        runs.append(path)
        c.record(path, cost(path, i))
    return runs


def test_path_chooser_runs_the_cheaper_kernel_and_probes_rarely():
    from spades_env.envs.vector import PathChooser

    c = PathChooser(probe_every=4, max_probe_every=64, probe_calls=4)
    runs = _drive(c, lambda p, i: 10.0 if p else 1.0, 2000)  # parallel ten times slower (busy cores)
    assert runs[:5] == [0] * 5  # the serial kernel first
    assert c.use == 0 and runs[-500:].count(1) <= 500 // 64 + 1  # probes back off...
    assert runs.count(1) <= 2 * (1 + 2000 // 64 + 8)  # ...and a losing probe stops after one or two calls
    _drive(c, lambda p, i: 0.3 if p else 1.0, 200)  # the load goes away: the parallel kernel wins again
    assert c.use == 1
    _drive(c, lambda p, i: 0.95 if p else 1.0, 300)  # parallel a little faster: kept
    assert c.use == 1
    _drive(c, lambda p, i: 1.0 if p else 0.9, 300)  # serial a little faster: back to it, no margin
    assert c.use == 0


def test_path_chooser_judges_a_heavy_tailed_kernel_by_its_mean():
    """A threaded call that waits for a core is slow now and then: most calls as fast as the
    serial kernel, one in four ten times slower. One lucky call must not switch."""
    from spades_env.envs.vector import PathChooser

    c = PathChooser(probe_every=8, max_probe_every=256, probe_calls=8)
    runs = _drive(c, lambda p, i: (10.0 if i % 4 == 0 else 0.7) if p else 1.0, 3000)
    assert c.use == 0 and c.switches == 0
    assert runs.count(1) < 0.05 * len(runs)
    c2 = PathChooser(probe_every=8, max_probe_every=256, probe_calls=8)
    _drive(c2, lambda p, i: 0.5 if p else 1.0, 300)  # clearly faster: taken
    assert c2.use == 1


def test_auto_threads_plays_the_same_games_as_the_serial_engine():
    from spades_env.envs.vector import RandomLegal

    a = VectorSpades(64, seed=2, parallel=False)
    b = VectorSpades(64, seed=2, parallel=True)
    pa, pb = RandomLegal(64, seed=1), RandomLegal(64, seed=1)
    ra, rb = a.reset(seed=2), b.reset(seed=2)
    for _ in range(300):
        ra, rb = a.step(pa(ra.mask)), b.step(pb(rb.mask))
        assert np.array_equal(a.states, b.states)
    assert b.step_paths is not None and b.step_paths.serial_calls > 0 and b.step_paths.parallel_calls > 0
    a.play_random(7)
    b.play_random(7)
    assert np.array_equal(a.states, b.states)
