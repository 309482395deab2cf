"""The PettingZoo AEC env: PettingZoo's own tests, episode and reward knobs, preset deals,
masks, illegal moves, stepping after the end, and the state for critics."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

import spades_env
from spades_env import IllegalActionError, raw_env
from spades_env.core import layout as L
from spades_env.core.cards import card_from_str, mask_from_cards
from spades_env.core.observation import OBS_SIZE, SLICES, STATE_VEC_SIZE
from spades_env.core.validate import InputError

SHORT = {"max_hands": 3}
# random play ends these games in 1-4 hands (mercy rule), rarely truncated
QUICK_GAME = {"target_score": 200, "mercy_rule": True, "mercy_threshold": -500, "max_hands": 30}

# ---- helpers ---------------------------------------------------------------------------


def random_action(obs: dict, rnd: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    assert legal.size > 0, "the agent to act has no legal action"
    return int(legal[rnd.randrange(legal.size)])


def play_out(env, seed: int, options: dict | None = None):
    """Play an episode with random legal moves. Yields (agent, env) after every live step,
    with ``env.rewards`` of that step; dead agents are stepped with None."""
    rnd = random.Random(seed)
    env.reset(seed=seed, options=options)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(random_action(obs, rnd))
        yield agent, env


def state_of(env) -> np.ndarray:
    return env.unwrapped._state


# ---- PettingZoo's own tests ------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": SHORT},
        {"rules": "two_player"},
        {"rules": "openspiel", "episode": "hand", "reward": "win"},
        {"rules": QUICK_GAME, "episode": "match", "reward": "win"},
    ],
    ids=["tournament", "short", "two_player", "openspiel_hand_win", "match_win"],
)
def test_api_test(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's own advisory warnings
        api_test(spades_env.env(**kwargs), num_cycles=1000)


@pytest.mark.parametrize("rules", [None, "two_player"])
def test_seed_test(rules):
    seed_test(lambda **kw: spades_env.env(rules=rules, **kw), num_cycles=300)


@pytest.mark.parametrize("rules", [None, "two_player"])
def test_render_test(rules, capsys):
    render_test(lambda render_mode=None: spades_env.env(rules=rules, render_mode=render_mode))
    e = spades_env.env(rules=rules, render_mode="ansi")
    e.reset(seed=3)
    text = e.render()
    assert "Spades" in text and "phase" in text


def test_metadata_and_agents():
    e = spades_env.env()
    assert e.metadata["name"] == "spades_v0"
    assert set(e.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert spades_env.env(rules="two_player").possible_agents == ["player_0", "player_1"]


# ---- the fast wrappers behave like PettingZoo's ----------------------------------------


def plain_env(**kwargs):
    illegal_reward = kwargs.pop("illegal_reward", -1.0)
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=illegal_reward)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def trajectory(env, seed: int, illegal_at: int | None):
    rnd = random.Random(seed)
    env.reset(seed=seed)
    out = []
    for i, agent in enumerate(env.agent_iter()):
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            action = None
        elif i == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            action = random_action(obs, rnd)
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), rew, term, trunc))
        out.append((dict(env.rewards), dict(env.terminations), dict(env.truncations), list(env.agents)))
        env.step(action)
    return out


@pytest.mark.parametrize("illegal_at", [None, 7, 130])
def test_wrappers_match_pettingzoo_wrappers(illegal_at):
    rules = {"max_hands": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = trajectory(spades_env.env(rules=rules), 5, illegal_at)
        plain = trajectory(plain_env(rules=rules), 5, illegal_at)
    assert fast == plain
    assert len(fast) > 10


def test_attributes_before_reset_raise_like_pettingzoo():
    for e in (spades_env.env(), plain_env()):
        for name in ("agents", "agent_selection", "rewards", "terminations", "infos"):
            with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
                getattr(e, name)
    assert isinstance(spades_env.env(), wrappers.OrderEnforcingWrapper)


def test_action_space_contains_same_answers():
    fast = spades_env.env().action_space("player_0")
    from gymnasium.spaces import Discrete

    ref = Discrete(70)
    for x in (0, 69, 70, -1, 2**70, np.int64(5), np.int32(69), np.int64(70), 3.0, "a", None, True):
        assert fast.contains(x) == ref.contains(x), x


# ---- episode knob -----------------------------------------------------------------------


def test_hand_episode_ends_after_13_tricks():
    for seed in range(3):
        e = raw_env(episode="hand")
        plays = sum(1 for _ in play_out(e, seed))
        st = state_of(e)
        assert st[L.TRICKS_PLAYED] == 13 and st[L.TOTAL_HANDS] == 1
        assert sum(int(st[L.TRICKS_WON + s]) for s in range(4)) == 13
        assert int(st[L.PHASE]) >= L.PH_HAND_END
        assert plays >= 4 + 52  # 4 bids (or blind decisions), 52 cards
        assert e.agents == []


def test_game_episode_ends_at_game_end():
    hands_seen = set()
    for seed in range(6):
        e = raw_env(rules=QUICK_GAME, episode="game")
        game_nums = [int(state_of(e)[L.GAME_NUM]) for _ in play_out(e, seed)]
        st = state_of(e)
        assert max(game_nums) == 1 and game_nums.count(1) == 1  # the game ended on the last step
        assert int(st[L.PHASE]) == L.PH_GAME_END and int(st[L.GAME_NUM]) == 1
        assert sorted(int(st[L.GAME_WINS + t]) for t in range(2)) == [0, 1]
        hands_seen.add(int(st[L.HAND_NUM]))
    assert max(hands_seen) >= 2  # some game went past its first hand without ending


def test_match_episode_ends_after_two_game_wins():
    for seed in range(3):
        e = raw_env(rules=QUICK_GAME, episode="match")
        for _ in play_out(e, seed):
            pass
        st = state_of(e)
        wins = sorted(int(st[L.GAME_WINS + t]) for t in range(2))
        assert wins in ([0, 2], [1, 2])
        assert int(st[L.PHASE]) == L.PH_MATCH_END and int(st[L.GAME_NUM]) == sum(wins)
        assert int(st[L.MATCH_WINNER]) == int(np.argmax(st[L.GAME_WINS : L.GAME_WINS + 2]))


def test_bad_knobs_are_clear_errors():
    with pytest.raises(ValueError, match="episode must be one of"):
        raw_env(episode="season")
    with pytest.raises(ValueError, match="reward must be one of"):
        raw_env(reward="money")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="oil_painting")


# ---- reward knob ------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.01, 1.0])
def test_score_rewards_are_team_score_changes(scale):
    for seed in range(3):
        e = raw_env(rules={"max_hands": 4}, reward="score", reward_scale=scale)
        e.reset(seed=seed)
        totals = {a: 0.0 for a in e.possible_agents}
        before = [0, 0]
        hand_ends = 0
        rnd = random.Random(seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            hands_before = int(state_of(e)[L.TOTAL_HANDS])
            e.step(random_action(obs, rnd))
            st = state_of(e)
            for a, r in e.rewards.items():
                totals[a] += r
            if int(st[L.TOTAL_HANDS]) == hands_before:
                assert all(r == 0.0 for r in e.rewards.values()), agent
                continue
            hand_ends += 1
            after = [int(st[L.SCORES]), int(st[L.SCORES + 1])]
            for i, a in enumerate(e.possible_agents):
                assert e.rewards[a] == pytest.approx((after[i % 2] - before[i % 2]) * scale)
            assert e.rewards["player_0"] == e.rewards["player_2"]
            assert e.rewards["player_1"] == e.rewards["player_3"]
            before = after
        assert hand_ends == 4
        final = [int(state_of(e)[L.SCORES]), int(state_of(e)[L.SCORES + 1])]
        for i, a in enumerate(e.possible_agents):
            assert totals[a] == pytest.approx(final[i % 2] * scale)


def test_score_rewards_sum_to_final_score_over_a_finished_game():
    for seed in range(4):
        e = raw_env(rules=QUICK_GAME, episode="game", reward="score", reward_scale=0.5)
        totals = {a: 0.0 for a in e.possible_agents}
        for _ in play_out(e, seed):
            for a, r in e.rewards.items():
                totals[a] += r
        st = state_of(e)
        assert int(st[L.PHASE]) == L.PH_GAME_END and not int(st[L.TRUNCATED])
        for i, a in enumerate(e.possible_agents):
            assert totals[a] == pytest.approx(int(st[L.SCORES + i % 2]) * 0.5)
        assert totals["player_0"] != 0.0


def test_score_reward_hand_checked():
    """N holds all spades and wins all 13 tricks: NS bid 13 + 1 = 14 and are set (-140);
    E and W each make Nil (+100 + 100 = 200)."""
    suits = "CDHS"
    ranks = "23456789TJQKA"
    hands = [[r + suits[s] for r in ranks] for s in (3, 2, 1, 0)]  # N spades, E hearts, S diamonds, W clubs
    e = raw_env(reward="score", reward_scale=0.01)
    e.reset(seed=0, options={"hands": hands, "dealer": 3})
    script = {"player_0": [67, 52 + 13], "player_1": [67, 52], "player_2": [67, 52 + 1], "player_3": [67, 52]}
    paid = None
    while e.agents and paid is None:
        agent = e.agent_selection
        if script[agent]:
            e.step(script[agent].pop(0))
        else:
            e.step(int(np.flatnonzero(e.observe(agent)["action_mask"])[-1]))
        if any(e.rewards.values()):
            paid = dict(e.rewards)
    assert paid == pytest.approx({"player_0": -1.4, "player_1": 2.0, "player_2": -1.4, "player_3": 2.0})
    assert e.game.hand_logs[0].result["tricks"] == [13, 0, 0, 0]
    assert e.game.scores == (-140, 200)


def test_win_rewards_at_the_end_only():
    for seed in range(4):
        e = raw_env(rules=QUICK_GAME, reward="win")
        paid = [dict(e.rewards) for _ in play_out(e, seed)]
        assert all(v == 0.0 for r in paid[:-1] for v in r.values())
        last = paid[-1]
        w = int(state_of(e)[L.GAME_WINNER])
        assert w in (0, 1)
        for i, a in enumerate(e.possible_agents):
            assert last[a] == (1.0 if i % 2 == w else -1.0)


def test_win_reward_is_zero_on_truncation():
    e = raw_env(rules={"max_hands": 2}, reward="win")
    paid = [dict(e.rewards) for _ in play_out(e, 1)]
    assert int(state_of(e)[L.TRUNCATED]) == 1
    assert all(v == 0.0 for r in paid for v in r.values())


# ---- truncation -------------------------------------------------------------------------


def test_max_hands_truncates():
    e = raw_env(rules={"max_hands": 2})
    e.reset(seed=2)
    rnd = random.Random(2)
    ended = None
    for _agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            ended = ended or (dict(e.terminations), dict(e.truncations), info)
            e.step(None)
            continue
        e.step(random_action(obs, rnd))
    terms, truncs, info = ended
    assert set(truncs) == set(e.possible_agents) and all(truncs.values())
    assert not any(terms.values())
    assert info["truncated_by_hand_cap"] is True
    assert int(state_of(e)[L.HAND_NUM]) == 2


# ---- preset deals -----------------------------------------------------------------------

DEAL = [
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S".split(),
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H".split(),
    "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D".split(),
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C".split(),
]
MIXED = [
    "2C 3D 4H 5S 6C 7D 8H 9S TC JD QH KS AC".split(),
    "3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS 2D".split(),
    "4C 5D 6H 7S 8C 9D TH JS QC KD AH 2S 3H".split(),
    "5C 6D 7H 8S 9C TD JH QS KC AD 2H 3S 4S".split(),
]


def hand_vector(cards: list[str]) -> np.ndarray:
    v = np.zeros(52, dtype=np.float32)
    v[[card_from_str(c) for c in cards]] = 1
    return v


def test_reset_options_preset_deal_no_blind_nil():
    e = raw_env(rules={"blind_nil": False, "blind_nil_exchange": 0})
    e.reset(seed=9, options={"hands": MIXED, "dealer": 1, "scores": [120, -40], "bags": [3, 7]})
    st = state_of(e)
    assert int(st[L.DEALER]) == 1 and e.agent_selection == "player_2"  # left of the dealer
    assert [int(x) for x in st[L.SCORES : L.SCORES + 2]] == [120, -40]
    assert [int(x) for x in st[L.BAGS : L.BAGS + 2]] == [3, 7]
    for seat, hand in enumerate(MIXED):
        assert int(st[L.HANDS + seat]) == mask_from_cards(card_from_str(c) for c in hand)
        obs = e.observe(f"player_{seat}")["observation"]
        np.testing.assert_array_equal(obs[SLICES["hand"]], hand_vector(hand))
        own, other = (120, -40) if seat % 2 == 0 else (-40, 120)
        np.testing.assert_allclose(obs[SLICES["scores"]], [own / 500, other / 500])
        own_b, other_b = (3, 7) if seat % 2 == 0 else (7, 3)
        np.testing.assert_allclose(obs[SLICES["bags"]], [own_b / 10, other_b / 10])
    assert e.game.hand_logs[0].hands == tuple(mask_from_cards(card_from_str(c) for c in h) for h in MIXED)


def test_reset_options_hand_hidden_until_see_cards():
    e = raw_env()
    e.reset(seed=1, options={"hands": MIXED, "dealer": 3})
    assert e.agent_selection == "player_0"
    assert state_of(e)[L.PHASE] == L.PH_BLIND
    assert not e.observe("player_0")["observation"][SLICES["hand"]].any()
    e.step(67)  # See cards
    np.testing.assert_array_equal(e.observe("player_0")["observation"][SLICES["hand"]], hand_vector(MIXED[0]))
    state = e.state()
    for seat, hand in enumerate(MIXED):
        np.testing.assert_array_equal(
            state[OBS_SIZE + 52 * seat : OBS_SIZE + 52 * (seat + 1)], hand_vector(hand)
        )


def test_reset_options_two_player_stock():
    stock = [c for h in MIXED for c in h]
    e = raw_env(rules="two_player")
    e.reset(seed=0, options={"stock": stock, "dealer": 0})
    st = state_of(e)
    assert [int(c) for c in st[L.DECK : L.DECK + 52]] == [card_from_str(c) for c in stock]
    assert int(st[L.DEALER]) == 0 and e.agent_selection == "player_1"


def test_reset_options_bad_deal_is_clear_error():
    bad = [h[:] for h in MIXED]
    bad[1][0] = bad[0][0]
    e = raw_env()
    with pytest.raises(ValueError, match="dealt twice"):
        e.reset(seed=0, options={"hands": bad})
    with pytest.raises(InputError, match="unknown key.*handz"):  # a typo is an error, not a warning
        e.reset(seed=0, options={"handz": MIXED})


def test_reset_same_seed_same_game():
    a, b = raw_env(), raw_env()
    a.reset(seed=11)
    b.reset(seed=11)
    assert a.state().tobytes() == b.state().tobytes()


# ---- masks ------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [SHORT, "two_player"])
def test_mask_zero_for_agents_not_to_act(rules):
    e = raw_env(rules=rules)
    checked = 0
    for agent, env in play_out(e, 4):
        if not env.agents or env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            for a in env.possible_agents:
                assert not env.observe(a)["action_mask"].any()
            continue
        for a in env.possible_agents:
            mask = env.observe(a)["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (70,)
            assert mask.any() == (a == env.agent_selection), (agent, a)
        checked += 1
    assert checked > 100


# ---- illegal actions ---------------------------------------------------------------------


def test_raw_illegal_action_raises_and_changes_nothing():
    e = raw_env(rules=SHORT)
    steps = iter(play_out(e, 6))
    for _ in range(30):  # into the trick play
        next(steps)
    for bad in [int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]), 70, -1, None, 2.5]:
        before = (
            state_of(e).tobytes(),
            e.agent_selection,
            dict(e.rewards),
            dict(e._cumulative_rewards),
            len(e.game.hand_logs[-1].actions),
        )
        with pytest.raises(IllegalActionError):
            e.step(bad)
        after = (
            state_of(e).tobytes(),
            e.agent_selection,
            dict(e.rewards),
            dict(e._cumulative_rewards),
            len(e.game.hand_logs[-1].actions),
        )
        assert after == before


def test_raw_illegal_action_message_names_legal_set():
    e = raw_env()
    e.reset(seed=0, options={"hands": MIXED, "dealer": 3})
    with pytest.raises(
        IllegalActionError, match=r"action 5 .*illegal for seat 0 .*'blind'.*legal: \[66, 67\]"
    ):
        e.step(5)


@pytest.mark.parametrize("illegal_reward", [-1.0, -5.0])
def test_wrapped_illegal_action_ends_game_with_penalty(illegal_reward):
    e = spades_env.env(rules=SHORT, illegal_reward=illegal_reward)
    e.reset(seed=3)
    for _ in range(10):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    offender = e.agent_selection
    obs, *_ = e.last()
    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # PettingZoo logs "Illegal move made"
    assert all(e.terminations.values())
    finals = {}
    for agent in e.agent_iter():
        _, rew, term, trunc, _ = e.last()
        assert term or trunc
        finals[agent] = rew
        e.step(None)
    assert finals == {a: (illegal_reward if a == offender else 0.0) for a in e.possible_agents}


# ---- after the end -----------------------------------------------------------------------


def test_raw_step_after_end_is_clear_error():
    e = raw_env(episode="hand")
    for _ in play_out(e, 0):
        pass
    assert e.agents == []
    snapshot = state_of(e).tobytes()
    with pytest.raises(IllegalActionError, match="after the episode ended.*reset"):
        e.step(0)
    with pytest.raises(IllegalActionError, match="after the episode ended"):
        e.step(None)
    assert state_of(e).tobytes() == snapshot


def test_raw_step_before_reset_is_clear_error():
    with pytest.raises(IllegalActionError, match="before reset"):
        raw_env().step(0)


def test_dead_agent_must_step_none():
    e = raw_env(episode="hand")
    e.reset(seed=0)
    rnd = random.Random(0)
    while not any(e.terminations.values()):
        e.step(random_action(e.observe(e.agent_selection), rnd))
    with pytest.raises(ValueError, match="only valid action is None"):
        e.step(0)


# ---- state for critics, hand logs ---------------------------------------------------------


@pytest.mark.parametrize("rules", [None, "two_player"])
def test_state_has_space_shape_and_all_hands(rules):
    e = raw_env(rules=rules)
    checked = 0
    for i, _ in enumerate(play_out(e, 8)):
        if i % 17 or not e.agents or int(state_of(e)[L.PHASE]) >= L.PH_HAND_END:
            continue
        s = e.state()
        assert s.shape == e.state_space.shape == (STATE_VEC_SIZE,) and s.dtype == np.float32
        st = state_of(e)
        for seat in range(4):
            expect = np.zeros(52, dtype=np.float32)
            expect[[c for c in range(52) if (int(st[L.HANDS + seat]) >> c) & 1]] = 1
            np.testing.assert_array_equal(s[OBS_SIZE + 52 * seat : OBS_SIZE + 52 * (seat + 1)], expect)
            expect[:] = 0
            expect[[c for c in range(52) if (int(st[L.DISCARDED + seat]) >> c) & 1]] = 1
            np.testing.assert_array_equal(
                s[OBS_SIZE + 208 + 52 * seat : OBS_SIZE + 208 + 52 * (seat + 1)], expect
            )
        held = s[OBS_SIZE : OBS_SIZE + 208].sum()
        assert held == sum(bin(int(st[L.HANDS + k])).count("1") for k in range(4))
        checked += held > 0
        if i > 2000:
            break
    assert checked > 10


def test_hand_logs_one_per_hand():
    e = raw_env(rules={"max_hands": 3})
    for _ in play_out(e, 12):
        pass
    logs = e.game.hand_logs
    assert len(logs) == 3
    for log in logs:
        plays = [a for a in log.actions if a < 52]
        assert log.result is not None
        assert len(set(plays)) == 52  # every card played once (exchanged cards also appear as passes)
    assert [log.scores_before for log in logs[1:]] == [tuple(log.result["scores"]) for log in logs[:-1]]
