"""Scripted bots: legal actions in every phase, observation-only play, hand-checked decisions,
and the registry."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_SEE_CARDS, BID_BASE
from spades_env.core.cards import card_from_str, cards_from_mask, mask_from_cards
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, decode, encode_observation
from spades_env.core.rules import load_rules
from spades_env.envs.aec import raw_env
from spades_env.policies.bots import PolicyNameError, make_policy, needs_true_state, parse_policy_name
from spades_env.policies.bots.heuristic import HeuristicPolicy, estimate_tricks
from spades_env.policies.bots.search import CheatingPolicy, SearchPolicy

BOTS = ("greedy", "heuristic", "search:samples=3", "random")


def _obs(game: SpadesGame, seat: int) -> tuple[np.ndarray, np.ndarray]:
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(game.state, game.params, seat, obs)
    return obs, game.legal_mask()


# ---- registry ------------------------------------------------------------------------------
def test_registry_parses_names_and_options():
    assert parse_policy_name("heuristic") == ("heuristic", {})
    assert parse_policy_name("search:budget=0.1") == ("search", {"budget": 0.1})
    assert parse_policy_name("Search: samples=20, budget=0.5") == ("search", {"samples": 20, "budget": 0.5})
    p = make_policy("search:samples=20", seed=1)
    assert isinstance(p, SearchPolicy) and p.samples == 20 and p.budget is None
    assert isinstance(make_policy("cheat:budget=0.1"), CheatingPolicy)
    assert needs_true_state(make_policy("cheat")) and not needs_true_state(p)
    assert make_policy("search:samples=2,noise=0").eps == 0
    with pytest.raises(ValueError, match="noise"):
        make_policy("search:noise=2000")


@pytest.mark.parametrize(
    "name, words",
    [
        ("minimax", "unknown policy 'minimax'"),
        ("search:depth=3", "unknown option 'depth'"),
        ("search:samples", "is not key=value"),
        ("search:samples=many", "not a valid int"),
        ("search:budget=-1", "must be positive"),
        ("greedy:budget=1", "options: none"),
        ("", "non-empty"),
    ],
)
def test_registry_errors_are_clear(name, words):
    with pytest.raises(PolicyNameError, match=words):
        make_policy(name)


@pytest.mark.parametrize("spec", ["heuristic", "random", "search:samples=3", "spades4_net_v1", lambda seed, rules: None])
@pytest.mark.parametrize(("seed", "words"), [("x", "got 'x' \\(str\\)"), (1.5, "got 1.5"), (True, "got True"), (-3, "got -3")])
def test_load_refuses_a_seed_that_is_not_a_non_negative_integer(spec, seed, words):
    """Every kind of policy (a bot, a search, a shipped agent, a factory) is refused alike, before
    anything is built: the heuristic once ignored such a seed and the others failed in NumPy."""
    from spades_env.core.validate import InputError
    from spades_env.policies import load

    with pytest.raises(InputError, match=f"seed must be an integer of at least 0, {words}"):
        load(spec, seed=seed)
    assert load("heuristic", seed=np.int64(3)) is not None  # a NumPy integer is an integer


# ---- legal actions in every phase ---------------------------------------------------------------
def _run_aec(rules, names, seed, options=None):
    env = raw_env(rules=rules)
    env.reset(seed=seed, options=options)
    pols = {
        a: make_policy(names[i % len(names)], seed=seed + i, rules=rules) for i, a in enumerate(env.agents)
    }
    phases = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        phases.add(int(env.game.state[L.PHASE]))
        a = pols[agent].act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][a] == 1
        env.step(a)
    return phases


@pytest.mark.parametrize("bot", BOTS[:3])
def test_bots_play_legal_actions_in_every_phase_four_players(bot):
    rules = load_rules({"max_hands": 3})
    phases = set()
    for seed in range(3):
        # NS far behind: the heuristic bids Blind Nil, so the exchange is played too
        phases |= _run_aec(rules, [bot, "random"], seed, options={"scores": [0, 400]})
        phases |= _run_aec(rules, [bot, bot, "heuristic", bot], seed + 10)
    assert {L.PH_BLIND, L.PH_BID, L.PH_EXCHANGE, L.PH_PLAY} <= phases


@pytest.mark.parametrize("bot", BOTS[:3])
def test_bots_play_legal_actions_two_players(bot):
    rules = load_rules("two_player").replace(max_hands=2)
    phases = set()
    for seed in range(3):
        phases |= _run_aec(rules, [bot, "random"], seed, options={"scores": [0, 400]})
        phases |= _run_aec(rules, ["heuristic", bot], seed + 5)
    assert {L.PH_BLIND, L.PH_DRAW, L.PH_BID, L.PH_PLAY} <= phases


# ---- observation only ----------------------------------------------------------------------
def _redeal_unseen(state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """The same state with the other seats' hands re-dealt among them (counts kept; the cards
    the seat passed its partner stay with the partner)."""
    alt = state.copy()
    others = [s for s in range(4) if s != seat]
    keep = int(state[L.PASSED + seat])
    pool = 0
    for s in others:
        pool |= int(state[L.HANDS + s])
    pool &= ~keep
    cards = cards_from_mask(pool)
    rng.shuffle(cards)
    pos = 0
    for s in others:
        h = int(state[L.HANDS + s])
        fixed = h & keep
        n = bin(h & ~keep).count("1")
        alt[L.HANDS + s] = fixed | mask_from_cards(cards[pos : pos + n])
        pos += n
    return alt


@pytest.mark.parametrize("bot", ["greedy", "heuristic", "blind", "search:samples=4"])
def test_bots_see_only_their_observation(bot):
    rng = np.random.default_rng(3)
    g = SpadesGame(load_rules({"max_hands": 2}), seed=11)
    g.set_hand(scores=[0, 400])  # Blind Nil and the exchange happen
    driver = [make_policy("heuristic", seed=s) for s in range(4)]
    checked = changed = 0
    while not g.is_hand_over:
        seat = g.current_player
        obs, mask = _obs(g, seat)
        alt = SpadesGame(g.rules, seed=0)
        alt.state[:] = _redeal_unseen(g.state, seat, rng)
        obs_alt, mask_alt = _obs(alt, seat)
        assert np.array_equal(obs, obs_alt) and np.array_equal(mask, mask_alt)
        changed += not np.array_equal(alt.state, g.state)
        a1 = make_policy(bot, seed=5).act(obs, mask)
        a2 = make_policy(bot, seed=5).act(obs_alt, mask_alt)
        assert a1 == a2
        checked += 1
        g.apply(driver[seat].act(obs, mask))
    assert checked >= 52 and changed >= 40


# ---- the view ------------------------------------------------------------------------------
def test_view_decodes_the_observation():
    g = SpadesGame(seed=4, dealer=3)
    g.set_hand(scores=[120, -40], bags=[3, 7])
    for seat in range(4):
        g.apply(ACTION_SEE_CARDS)
        g.apply(BID_BASE + [3, 0, 4, 2][seat])
    first = g.legal_actions()[0]
    g.apply(first)  # N leads
    obs, _ = _obs(g, 1)
    v = decode(obs)
    assert v.hand == int(g.state[L.HANDS + 1])
    assert v.bids == [0, 4, 2, 3]  # E, S, W, N relative to E
    assert v.trick[3] == first and v.leader == 3 and v.to_act == 0 and v.dealer == 2
    assert v.scores == (-40, 120) and v.bags == (7, 3)
    assert v.played[3] == 1 << first
    assert v.need(0) == 2 and v.need(1) == 7
    assert v.unseen == ((1 << 52) - 1) & ~v.hand & ~(1 << first)


def _one_suit_each_bid_three() -> SpadesGame:
    """N clubs and diamonds, E all hearts, S clubs and diamonds, W all spades; every seat
    declines Blind Nil and bids 3; N (left of dealer W) is to lead."""
    hands = [
        "2C 3C 4C 5C 6C 7C 2D 3D 4D 5D 6D 7D 8D",
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "8C 9C TC JC QC KC AC 9D TD JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    g = SpadesGame(dealer=3)
    g.set_hand(hands=[h.split() for h in hands])
    for _ in range(4):
        g.apply(ACTION_SEE_CARDS)
        g.apply(BID_BASE + 3)
    return g


def test_view_sees_a_discard():
    # N leads clubs, E has no club and discards: E (relative seat 3 of S) has shown out of clubs
    g = _one_suit_each_bid_three()
    g.apply(card_from_str("2C"))
    g.apply(card_from_str("2H"))
    obs, _ = _obs(g, 2)
    v = decode(obs)
    assert v.shown_out == [0, 0, 0, 1] and v.voids[3] & 1 and not v.voids[1] and not v.voids[2] & 1


# ---- hand-checked decisions ---------------------------------------------------------------
def _deal(hands: list[str]) -> SpadesGame:
    g = SpadesGame(dealer=3)  # N bids and leads first
    g.set_hand(hands=[h.split() for h in hands])
    return g


def _bid_all(g: SpadesGame, bids: list[int]) -> None:
    for seat in range(4):
        g.apply(ACTION_SEE_CARDS)
        g.apply(BID_BASE + bids[seat])


HANDS = [
    "5C 4C 2D 3D 4D 5D 2H 3H 4H 5H 6H 2S 3S",  # N: weak
    "2C 6C 8C 9C TC JC 6D 7D 8D 9D 7H 8H 4S",  # E
    "3C 7C AC TD JD QD 9H TH JH QH 5S 6S 7S",  # S
    "QC KC KD AD KH AH 8S 9S TS JS QS KS AS",  # W: strong
]


def test_heuristic_bids_nil_with_a_weak_hand_and_high_with_a_strong_one():
    g = _deal(HANDS)
    g.apply(ACTION_SEE_CARDS)
    obs, mask = _obs(g, 0)
    assert HeuristicPolicy().act(obs, mask) == BID_BASE  # Nil
    strong = mask_from_cards(card_from_str(c) for c in HANDS[3].split())
    assert estimate_tricks(strong, 4) >= 9


def test_heuristic_covers_partners_nil():
    g = _deal(HANDS)
    _bid_all(g, [0, 3, 3, 6])  # N bids Nil
    g.apply(card_from_str("5C"))  # N leads a low club
    g.apply(card_from_str("2C"))  # E plays under it: N is winning
    obs, mask = _obs(g, 2)
    assert HeuristicPolicy().act(obs, mask) == card_from_str("7C")  # lowest club over 5C


def test_heuristic_nil_bidder_ducks_with_its_highest_safe_card():
    g = _deal(HANDS)
    _bid_all(g, [3, 3, 0, 6])  # S bids Nil
    g.apply(card_from_str("5C"))
    g.apply(card_from_str("TC"))
    obs, mask = _obs(g, 2)
    assert HeuristicPolicy().act(obs, mask) == card_from_str("7C")  # under TC, not 3C or AC


def test_heuristic_cashes_a_boss_ace_while_the_contract_is_short():
    g = _deal(HANDS)
    _bid_all(g, [3, 3, 3, 6])
    for c in ("5C", "6C", "7C", "KC"):  # W wins and leads
        g.apply(card_from_str(c))
    obs, mask = _obs(g, 3)
    # spades are not broken: W must lead a side suit, and cashes an ace
    assert HeuristicPolicy().act(obs, mask) in (card_from_str("AD"), card_from_str("AH"))


def test_greedy_plays_low_once_the_contract_is_made():
    rules = load_rules({"max_hands": 3})
    g = SpadesGame(rules, seed=2)
    bots = [make_policy("greedy", seed=s) for s in range(4)]
    checked = 0
    while not g.is_over:
        if g.is_hand_over:
            g.next_hand()
            continue
        seat = g.current_player
        obs, mask = _obs(g, seat)
        a = bots[seat].act(obs, mask)
        v = decode(obs)
        if g.phase == "play" and v.need(0) <= 0:
            legal = np.flatnonzero(mask)
            assert a == min(legal, key=lambda c: (c // 13 == 3, c % 13))
            checked += 1
        g.apply(a)
    assert checked > 10


def test_search_cannot_be_cheated_without_binding_and_cheat_plays_the_true_deal():
    g = _deal(HANDS)
    _bid_all(g, [3, 3, 3, 6])
    obs, mask = _obs(g, 0)
    with pytest.raises(RuntimeError, match="bind"):
        CheatingPolicy(samples=1).act(obs, mask)
    cheat = CheatingPolicy(samples=1).bind(lambda: g.state)
    assert mask[cheat.act(obs, mask)] == 1


def test_search_is_deterministic_with_samples_and_seed():
    g = _deal(HANDS)
    _bid_all(g, [3, 3, 3, 6])
    g.apply(card_from_str("5C"))
    obs, mask = _obs(g, 1)
    acts = {SearchPolicy(samples=8, seed=9).act(obs, mask) for _ in range(3)}
    assert len(acts) == 1


def test_observation_keeps_a_discard_made_after_the_seats_turn():
    g = _one_suit_each_bid_three()
    for c in ("2C", "2H"):
        g.apply(card_from_str(c))
    v = decode(_obs(g, 2)[0])
    assert not v.shown_out[1]  # W has not played yet
    for c in ("8C", "2S", "3S", "3C", "3H"):  # W ruffs trick 1 and leads trick 2
        g.apply(card_from_str(c))
    v = decode(_obs(g, 2)[0])
    assert v.shown_out[1] == 1  # W (S's left) showed out of clubs in trick 1, after S played
    assert v.shown_out[2] == 8 and v.shown_out[3] == 1 | 8  # N and E show out of spades in trick 2
