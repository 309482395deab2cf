"""The baselines that play the whole game: Blind Nil by value, the `blind` bot, the compiled L2
(one implementation for one seat and for a batch), L3's sampled Blind Nil and exchange, Nil
cover and attack, the house preset and the table the Blind Nil decision reads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE
from spades_env.core.cards import card_from_str
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, decode, encode_observation
from spades_env.core.rules import load_rules
from spades_env.envs.vector import VectorSpades
from spades_env.policies.bots import make_policy
from spades_env.policies.bots.blind_sim import build_table
from spades_env.policies.bots.blind_value import (
    CACHE_ENTRIES,
    NUM_CONFIGS,
    OPT_BLIND,
    TWO_PLAYER_CONFIG,
    blind_values,
    blind_values_direct,
    config_index,
    load_table,
    model_of,
    table_summary,
    win_chance,
)
from spades_env.policies.bots.heuristic import BlindNilPolicy, HeuristicPolicy, heuristic_actions


def _obs(g: SpadesGame, seat: int) -> tuple[np.ndarray, np.ndarray]:
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(g.state, g.params, seat, obs)
    return obs, g.legal_mask()


def _blind_spot(rules, scores=(0, 0), bags=(0, 0)) -> SpadesGame:
    """N (left of dealer W) to choose Blind Nil first, at the given score."""
    g = SpadesGame(load_rules(rules), seed=3, dealer=3)
    g.set_hand(scores=list(scores), bags=list(bags))
    assert g.phase == "blind" and g.current_player == 0
    return g


TOURNAMENT = "tournament"


# ---- the Blind Nil decision by value ---------------------------------------------------------
def test_l2_declares_blind_nil_where_it_pays_and_not_where_it_does_not():
    # tournament rules, 0-0: a Blind Nil with a 3-card exchange is worth far more than seeing
    assert HeuristicPolicy().act(*_obs(_blind_spot(TOURNAMENT), 0)) == ACTION_BLIND_NIL
    # worth nothing: never
    r = load_rules(TOURNAMENT).replace(blind_nil_value=0)
    assert HeuristicPolicy(r).act(*_obs(_blind_spot(r), 0)) == ACTION_SEE_CARDS
    # no exchange: a Blind Nil is made about a quarter of the time, a losing bet at 0-0
    r = load_rules(TOURNAMENT).replace(blind_nil_exchange=0)
    assert HeuristicPolicy(r).act(*_obs(_blind_spot(r), 0)) == ACTION_SEE_CARDS


def test_l2_gambles_when_far_behind_and_plays_safe_when_about_to_win():
    r = load_rules(TOURNAMENT).replace(blind_nil_exchange=0)
    # without an exchange a Blind Nil loses points on average (above), but 150 behind with the
    # opponents 50 from the target, seeing the cards rarely wins: the gamble is better
    assert HeuristicPolicy(r).act(*_obs(_blind_spot(r, scores=(300, 450)), 0)) == ACTION_BLIND_NIL
    # with a 2-card exchange a Blind Nil is worth about +70 points at 0-0, and L2 declares;
    # 20 from the target and 130 ahead, a made contract wins at once while a failed Blind Nil
    # (-200) gives the game away: safety first
    t = load_rules(TOURNAMENT).replace(blind_nil_exchange=2)
    assert HeuristicPolicy(t).act(*_obs(_blind_spot(t), 0)) == ACTION_BLIND_NIL
    assert HeuristicPolicy(t).act(*_obs(_blind_spot(t, scores=(480, 350)), 0)) == ACTION_SEE_CARDS


def test_nobody_declares_over_a_partners_nil_and_blind_always_declares():
    g = SpadesGame(TOURNAMENT, seed=5, dealer=1)  # S bids first, N third
    g.apply(ACTION_SEE_CARDS)
    g.apply(BID_BASE + 0)  # S bids Nil
    g.apply(ACTION_SEE_CARDS)
    g.apply(BID_BASE + 3)  # W
    assert g.phase == "blind" and g.current_player == 0
    obs, mask = _obs(g, 0)
    assert BlindNilPolicy().act(obs, mask) == ACTION_SEE_CARDS
    assert HeuristicPolicy().act(obs, mask) == ACTION_SEE_CARDS
    r = load_rules(TOURNAMENT).replace(blind_nil_value=0)
    assert BlindNilPolicy(r).act(*_obs(_blind_spot(r), 0)) == ACTION_BLIND_NIL


def test_house_preset_offers_blind_nil_only_100_behind():
    house = load_rules("house")
    assert house.blind_nil and house.blind_nil_min_deficit == 100 and house.blind_nil_exchange == 3
    g = SpadesGame(house, seed=1, dealer=3)
    g.set_hand(scores=[0, 90])
    assert g.phase == "bid"  # N trails by 90: no Blind Nil offered
    g.set_hand(scores=[0, 100])
    assert g.phase == "blind"
    v = decode(_obs(g, 0)[0])
    assert v.blind_open == (True, False) and v.rules["blind_nil_min_deficit"] == 100


@settings(max_examples=60, deadline=None)
@given(
    own=st.integers(-400, 700),
    opp=st.integers(-400, 700),
    gain=st.integers(1, 200),
    target=st.sampled_from([250, 300, 500, 1000]),
)
def test_win_chance_is_a_probability_increasing_in_own_score(own, opp, gain, target):
    p = load_rules(TOURNAMENT).replace(target_score=target).to_params()
    a, b = win_chance(own, opp, p), win_chance(own + gain, opp, p)
    assert 0.0 <= a <= b <= 1.0
    if own >= target and own > opp:
        assert a == 1.0
    if opp >= target and opp > own:
        assert a == 0.0


_VARIANTS = {
    "tournament": {},
    "house": {},
    "openspiel": {},
    "tournament_bags7": {"bag_limit": 7, "bag_penalty": 50, "blind_nil_exchange": 2},
    "tournament_no_limit": {"bag_limit": 0, "failed_nil_counts_toward_contract": True, "target_score": 300},
    "two_player": {"blind_nil": True},
}


def _decision_row(rules: str, knobs: dict, own, opp, bags, partner, opp_bids) -> tuple[np.ndarray, np.ndarray]:
    base = "tournament" if rules not in ("house", "openspiel", "two_player") else rules
    p = load_rules(base).replace(**knobs).to_params()
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    n = int(p[L.P_NUM_SEATS])
    row[L.NUM_SEATS] = n
    row[L.BIDS : L.BIDS + 4] = L.BID_NONE
    row[L.SCORES], row[L.SCORES + 1] = own, opp
    limit = max(int(p[L.P_BAG_LIMIT]), 1)
    row[L.BAGS], row[L.BAGS + 1] = bags[0] % limit, bags[1] % limit
    if n == 4:
        row[L.BIDS + 2] = partner
        row[L.BIDS + 1], row[L.BIDS + 3] = opp_bids
    return row, p


@settings(max_examples=150, deadline=None)
@given(
    rules=st.sampled_from(sorted(_VARIANTS)),
    own=st.integers(-400, 600),
    opp=st.integers(-400, 600),
    bags=st.tuples(st.integers(0, 9), st.integers(0, 9)),
    partner=st.sampled_from([L.BID_NONE, 1, 3, 4, 6]),
    opp_bids=st.sampled_from([(L.BID_NONE, L.BID_NONE), (L.BID_BLIND_NIL, L.BID_NONE), (3, L.BID_NONE), (L.BID_NONE, L.BID_BLIND_NIL)]),
)
def test_cached_blind_values_equal_the_values_scored_afresh(rules, own, opp, bags, partner, opp_bids):
    """The Blind Nil model's cache (outcomes scored once per rules) changes no value."""
    row, p = _decision_row(rules, _VARIANTS[rules], own, opp, bags, partner, opp_bids)
    model = model_of(load_table())
    cached, direct = np.zeros(4), np.zeros(4)
    blind_values(row, p, model, cached)
    blind_values_direct(row, p, load_table(), direct)
    assert np.array_equal(cached, direct)
    assert model.used[0] == 1  # scored once, for this rules and table entry
    again = np.zeros(4)
    blind_values(row, p, model, again)
    assert np.array_equal(again, direct) and model.used[0] == 1


def test_a_full_blind_value_cache_scores_new_rules_afresh():
    model = model_of(load_table())
    for k in range(CACHE_ENTRIES):  # fill every entry with rules met only here
        row, p = _decision_row("tournament", {"target_score": 300 + k}, 0, 0, (0, 0), L.BID_NONE, (L.BID_NONE, L.BID_NONE))
        blind_values(row, p, model, np.zeros(4))
    assert model.used[0] == CACHE_ENTRIES
    row, p = _decision_row("tournament_bags7", _VARIANTS["tournament_bags7"], 120, 40, (3, 6), 4, (3, L.BID_NONE))
    cached, direct = np.zeros(4), np.zeros(4)
    blind_values(row, p, model, cached)
    blind_values_direct(row, p, load_table(), direct)
    assert np.array_equal(cached, direct) and model.used[0] == CACHE_ENTRIES


# ---- the table -------------------------------------------------------------------------------
def test_shipped_table_shape_and_blind_nil_success_rising_with_the_exchange():
    t = load_table()
    assert t.shape[0] == NUM_CONFIGS and t.shape[1] >= 1000 and t.shape[2:] == (2, 8)
    made = [float(np.mean(t[config_index(4, k, False), :, OPT_BLIND, 4] == 0)) for k in range(5)]
    assert all(x < y for x, y in zip(made, made[1:], strict=False)), made
    assert made[0] < 0.4 and made[3] > 0.7
    # every outcome is a whole hand: 13 tricks, the decider's Blind Nil in the Blind Nil option
    assert (t[:, :, :, 4:].sum(axis=-1) == 13).all()
    assert (t[:TWO_PLAYER_CONFIG, :, OPT_BLIND, 0] == L.BID_BLIND_NIL).all()
    rows = table_summary(t)
    assert rows[config_index(4, 3, False)]["margin_blind"] > rows[config_index(4, 3, False)]["margin_see"] + 50
    assert rows[config_index(4, 0, False)]["margin_blind"] < rows[config_index(4, 0, False)]["margin_see"]


def test_table_is_rebuilt_deterministically():
    a = build_table(12, seed=4, progress=False)
    b = build_table(12, seed=4, progress=False)
    assert np.array_equal(a, b) and a.shape == (NUM_CONFIGS, 12, 2, 8)
    assert (a[:, :, :, 4:].sum(axis=-1) == 13).all()


# ---- one compiled L2, for one seat and for a batch ------------------------------------------
@pytest.mark.parametrize("rules", ["tournament", "house", "openspiel", "two_player"])
def test_batched_l2_chooses_what_one_at_a_time_chooses(rules):
    eng = VectorSpades(64, rules, seed=7)
    res = eng.reset(seed=7)
    one, blind = HeuristicPolicy(rules), BlindNilPolicy(rules)
    n = 0
    for _ in range(400):
        acts = heuristic_actions(res.obs, res.mask)
        assert np.array_equal(acts, heuristic_actions(res.obs, res.mask, parallel=True))
        blinds = heuristic_actions(res.obs, res.mask, "always")
        for i in range(0, 64, 3):
            assert acts[i] == one.act(res.obs[i], res.mask[i])
            assert blinds[i] == blind.act(res.obs[i], res.mask[i])
        assert res.mask[np.arange(64), acts].all()
        n += 64
        res = eng.step(acts)
    assert n >= 25_000


def test_heuristic_actions_rejects_bad_input():
    with pytest.raises(ValueError, match="batch"):
        heuristic_actions(np.zeros(OBS_SIZE, np.float32), np.zeros(70, np.int8))
    with pytest.raises(ValueError, match="blind must be one of"):
        heuristic_actions(np.zeros((1, OBS_SIZE), np.float32), np.ones((1, 70), np.int8), "sometimes")
    with pytest.raises(ValueError, match="no legal action"):
        heuristic_actions(np.zeros((2, OBS_SIZE), np.float32), np.zeros((2, 70), np.int8))


# ---- Nil: cover and attack --------------------------------------------------------------------
def _deal(hands: list[str], dealer: int = 3) -> SpadesGame:
    g = SpadesGame(dealer=dealer)
    g.set_hand(hands=[h.split() for h in hands])
    return g


def _bid(g: SpadesGame, bids: list[int | str]) -> None:
    while g.phase in ("blind", "bid"):
        seat = g.current_player
        b = bids[seat]
        if g.phase == "blind":
            g.apply(ACTION_BLIND_NIL if b == "blind" else ACTION_SEE_CARDS)
        else:
            g.apply(BID_BASE + int(b))


HANDS = [
    "2C 3C 4C 5C 2D 3D 4D 2H 3H 4H 5H 2S 3S",  # N
    "6C 7C 8C 9C 5D 6D 7D 6H 7H 8H 4S 5S 6S",  # E
    "TC JC QC KC AC 8D 9D TD 9H TH 7S 8S 9S",  # S
    "JD QD KD AD JH QH KH AH TS JS QS KS AS",  # W
]


def test_cover_overtakes_the_nil_bidder_and_attack_stays_under_it():
    g = _deal(HANDS)
    _bid(g, [0, 4, 4, 5])  # N bids Nil
    g.apply(card_from_str("5C"))  # N leads its highest club: it is winning
    # E (attacking N's Nil, N already played and winning): stays under 5C if it can? E has only
    # higher clubs, so it plays its lowest
    obs, mask = _obs(g, 1)
    assert HeuristicPolicy().act(obs, mask) == card_from_str("6C")
    g.apply(card_from_str("6C"))
    # S covers: E's 6C already beats N; S's partner is safe, so S plays normally (no overtake
    # needed); with W still to play S just follows
    obs, mask = _obs(g, 2)
    a = HeuristicPolicy().act(obs, mask)
    assert mask[a] and a // 13 == 0


def _lead_row(hand: str, bids: list[int], shown_out: list[int], played: list[str] = ()) -> np.ndarray:
    """A decoded row (the observer is seat 0, on lead in trick play)."""
    from spades_env.core.cards import mask_from_cards

    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    row[L.NUM_SEATS], row[L.PHASE], row[L.TURN] = 4, L.PH_PLAY, 0
    row[L.HANDS] = mask_from_cards(card_from_str(c) for c in hand.split())
    for s in range(4):
        row[L.BIDS + s] = bids[s]
        row[L.TRICK_CARDS + s] = L.NO_CARD
        row[L.SHOWN_OUT + s] = shown_out[s]
    row[L.PLAYED + 1] = mask_from_cards(card_from_str(c) for c in played)
    row[L.SPADES_BROKEN] = 1
    return row


def test_cover_leads_the_suit_the_nil_bidder_is_out_of():
    from spades_env.policies.bots.l2 import choose_card

    params = load_rules(TOURNAMENT).to_params()
    hand = "TC JC 7H 8H 9H 4D 5D 6S 7S"
    # partner (2) bid Nil and has shown out of hearts: lead a heart, it throws a dangerous card
    row = _lead_row(hand, [4, 2, 0, 6], [0, 0, 1 << 2, 0])
    assert choose_card(row, params, int(row[L.HANDS])) // 13 == 2
    # ...but not when an opponent is out of hearts too and spades are still out (it would ruff)
    row = _lead_row(hand, [4, 2, 0, 6], [0, 1 << 2, 1 << 2, 0])
    assert choose_card(row, params, int(row[L.HANDS])) // 13 != 2


def test_attack_leads_low_in_a_suit_the_nil_bidder_still_holds():
    from spades_env.policies.bots.l2 import choose_card

    params = load_rules(TOURNAMENT).to_params()
    hand = "2C 9C KC 3D QD 4H AH 8S"
    # the left-hand opponent (1) bid Nil, and has shown out of clubs: lead a low diamond or heart
    row = _lead_row(hand, [3, 0, 3, 5], [0, 1 << 0, 0, 0])
    assert choose_card(row, params, int(row[L.HANDS])) in (card_from_str("3D"), card_from_str("4H"))
    # without the void the lowest card of all, the 2 of clubs
    row = _lead_row(hand, [3, 0, 3, 5], [0, 0, 0, 0])
    assert choose_card(row, params, int(row[L.HANDS])) == card_from_str("2C")


# ---- L3: Blind Nil and the exchange by its own sampling --------------------------------------
def test_search_decides_blind_nil_by_sampling():
    # S and W have bid; N is the last of its team to choose: a Blind Nil pays, unless worth 0
    for value, want in ((200, ACTION_BLIND_NIL), (0, ACTION_SEE_CARDS)):
        r = load_rules(TOURNAMENT).replace(blind_nil_value=value)
        g = SpadesGame(r, seed=5, dealer=1)
        for _ in range(2):
            g.apply(ACTION_SEE_CARDS)
            g.apply(BID_BASE + 3)
        assert g.phase == "blind" and g.current_player == 0
        s = make_policy("search:samples=2,blind_samples=32", seed=1, rules=r)
        assert s.act(*_obs(g, 0)) == want


def test_search_passes_back_its_most_dangerous_card():
    hands = [
        "AS 2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H 5H",  # N: Blind Nil, holding the ace of spades
        "6C 7C 8C 9C 6D 7D 8D 6H 7H 8H 2S 3S 4S",
        "TC JC QC KC AC 9D TD 9H TH JH 5S 6S 7S",
        "JD QD KD AD QH KH AH 8S 9S TS JS QS KS",
    ]
    g = _deal(hands)
    _bid(g, ["blind", 4, 4, 5])
    assert g.phase == "exchange" and g.current_player == 2  # S passes first
    for _ in range(3):
        obs, mask = _obs(g, 2)
        g.apply(HeuristicPolicy().act(obs, mask))
    assert g.current_player == 0
    s = make_policy("search:samples=2,exchange_samples=16", seed=3)
    passed = []
    for _ in range(3):
        obs, mask = _obs(g, 0)
        passed.append(s.act(obs, mask))
        g.apply(passed[-1])
    assert card_from_str("AS") in passed and g.phase == "play"


def test_search_bids_by_sampling_and_leaves_its_partner_room():
    # N holds every spade and will take all 13 tricks; its partner (L2) bids at least 1, so the
    # best bid is 12 (a contract of 13), not L2's 13 (a contract of 14, always set). Without
    # Blind Nil, so that the partner cannot take spades from N in an exchange.
    rules = load_rules(TOURNAMENT).replace(blind_nil=False, blind_nil_exchange=0)
    hands = [
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",  # N: every spade
        "2C 3C 4C 5C 6C 7C 8C 9C TC 2D 3D 4D 5D",
        "JC QC KC AC 6D 7D 8D 9D TD 2H 3H 4H 5H",
        "JD QD KD AD 6H 7H 8H 9H TH JH QH KH AH",
    ]
    g = SpadesGame(rules, dealer=3)
    g.set_hand(hands=[h.split() for h in hands])
    obs, mask = _obs(g, 0)
    assert HeuristicPolicy(rules).act(obs, mask) == BID_BASE + 13
    s = make_policy("search:samples=2,bid_samples=8", seed=2, rules=rules)
    assert s.act(obs, mask) == BID_BASE + 12
    g2 = _deal(HANDS)
    g2.apply(ACTION_SEE_CARDS)
    obs, mask = _obs(g2, 0)
    picks = {make_policy("search:samples=2,bid_samples=8", seed=4).act(obs, mask) for _ in range(2)}
    assert len(picks) == 1 and mask[picks.pop()]  # deterministic given the seed, and legal


def test_shipped_table_is_what_its_command_makes():
    # `python -m spades_env.policies.bots.blind_sim --deals 4000 --seed 0`: the first deals of every entry
    assert np.array_equal(build_table(40, seed=0, progress=False), load_table()[:, :40])


def test_search_with_card_search_off_plays_l2s_cards():
    """``search:card_search=0``: the searched Blind Nil, bid and exchange, L2's card play."""
    eng = VectorSpades(8, TOURNAMENT, seed=11)
    res = eng.reset(seed=11)
    l3, l2 = make_policy("search:samples=4,card_search=0", seed=1), HeuristicPolicy(TOURNAMENT)
    played = 0
    for _ in range(120):
        for i in range(8):
            if decode(res.obs[i]).phase == L.PH_PLAY:
                assert l3.act(res.obs[i], res.mask[i]) == l2.act(res.obs[i], res.mask[i])
                played += 1
        res = eng.step(heuristic_actions(res.obs, res.mask))
    assert played > 300


def test_parallel_l2_fills_the_blind_nil_cache_before_its_threads():
    from spades_env.policies.bots.l2 import l2_act_batch, l2_act_batch_serial

    family = ["tournament", {"name": "short", "target_score": 300, "bag_limit": 7}]
    eng = VectorSpades(32, family, seed=4, rules_weights=[1.0, 1.0])
    res = eng.reset(seed=4)
    assert decode(res.obs[0]).phase == L.PH_BLIND
    modes = np.zeros(32, dtype=np.int64)
    par, ser = model_of(load_table()), model_of(load_table())
    a, b = np.zeros(32, dtype=np.int64), np.zeros(32, dtype=np.int64)
    l2_act_batch(res.obs, res.mask, modes, par, a)
    l2_act_batch_serial(res.obs, res.mask, modes, ser, b)
    assert np.array_equal(a, b)
    # one entry per rules met (the first seat to choose: no partner bid yet), filled by the pre-pass
    assert par.used[0] == ser.used[0] == len(set(eng.rules_index.tolist()))
