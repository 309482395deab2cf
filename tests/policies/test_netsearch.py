"""netsearch: the network-guided search (spades_env.policies.bots.netsearch)."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.actions import BID_BASE
from spades_env.core.cards import card_from_str, cards_from_mask, mask_from_cards
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, SLICES, decode_into, encode_observation
from spades_env.core.rules import load_rules
from spades_env.policies.bots import PolicyNameError, make_policy, parse_policy_name
from spades_env.policies.bots.netsearch import NetSearchPolicy, inference_inputs

SPEC = "netsearch:samples=2,bids=2"


def _obs(game: SpadesGame, seat: int) -> tuple[np.ndarray, np.ndarray]:
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(game.state, game.params, seat, obs)
    return obs, game.legal_mask()


# ---- registry --------------------------------------------------------------------------------
def test_registry_parses_netsearch_options():
    name, opts = parse_policy_name("netsearch:samples=8,net=spades4_net_v1,infer=0.5,value=0")
    assert name == "netsearch" and opts == {"samples": 8, "net": "spades4_net_v1", "infer": 0.5, "value": 0}
    p = make_policy("netsearch:samples=3", seed=1)
    assert isinstance(p, NetSearchPolicy) and p.samples == 3 and p.budget is None
    for bad in ("netsearch:samples=0", "netsearch:foo=1", "netsearch:budget=nan", "netsearch:value=4",
                "netsearch:samples=2.5", "netsearch:net=", "netsearch:samples=2,samples=3"):
        with pytest.raises(PolicyNameError):
            parse_policy_name(bad)
    with pytest.raises(ValueError, match="not a network"):
        make_policy("netsearch:net=heuristic")


# ---- legal in every phase ----------------------------------------------------------------------
def _play(game: SpadesGame, policies: dict[int, object], phases: set[int]) -> None:
    while not game.is_hand_over:
        seat = game.current_player
        obs, mask = _obs(game, seat)
        a = policies[seat].act(obs, mask)
        assert mask[a], f"illegal action {a}"
        phases.add(int(game.state[L.PHASE]))
        game.apply(a)


def test_legal_actions_in_every_phase_four_players():
    phases: set[int] = set()
    for seed in range(2):
        g = SpadesGame(load_rules({"max_hands": 2}), seed=seed)
        g.set_hand(scores=[0, 400])  # Blind Nil offered: the blind choice and the exchange happen
        bots = {s: make_policy(SPEC if s % 2 == seed % 2 else "blind", seed=s) for s in range(4)}
        _play(g, bots, phases)
    assert {L.PH_BLIND, L.PH_BID, L.PH_EXCHANGE, L.PH_PLAY} <= phases


def test_legal_actions_two_players():
    rules = load_rules("two_player").replace(max_hands=2)
    g = SpadesGame(rules, seed=2)
    g.set_hand(scores=[0, 400])
    phases: set[int] = set()
    bots = {0: make_policy("netsearch:samples=2,net=spades2_v1", seed=1, rules=rules),
            1: make_policy("heuristic", seed=2, rules=rules)}
    _play(g, bots, phases)
    assert {L.PH_DRAW, L.PH_BID, L.PH_PLAY} <= phases


# ---- observation only ----------------------------------------------------------------------------
def _redeal_unseen(state: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """The same state with the other seats' hands re-dealt among them (counts kept; the cards
    the seat passed its partner stay with the partner): as tests/policies/test_bots.py."""
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
        n = bin(h & ~keep).count("1")
        alt[L.HANDS + s] = (h & keep) | mask_from_cards(cards[pos : pos + n])
        pos += n
    return alt


def test_sees_only_its_observation():
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
        p1, p2 = make_policy(SPEC, seed=5), make_policy(SPEC, seed=5)
        assert p1.act(obs, mask) == p2.act(obs_alt, mask_alt)
        assert np.array_equal(p1.last_values, p2.last_values, equal_nan=True)
        checked += 1
        g.apply(driver[seat].act(obs, mask))
    assert checked >= 52 and changed >= 40


def test_deterministic_for_a_seed():
    g = SpadesGame(seed=4)
    driver = [make_policy("heuristic", seed=s) for s in range(4)]
    while not (g.state[L.PHASE] == L.PH_PLAY and g.state[L.TRICKS_PLAYED] >= 1 and g.legal_mask().sum() >= 2):
        seat = g.current_player
        g.apply(driver[seat].act(*_obs(g, seat)))
    obs, mask = _obs(g, g.current_player)
    runs = []
    for _ in range(2):
        p = make_policy("netsearch:samples=6", seed=7)
        runs.append((p.act(obs, mask), p.last_values.copy()))
    assert runs[0][0] == runs[1][0]
    assert np.array_equal(runs[0][1], runs[1][1], equal_nan=True)
    assert np.isfinite(runs[0][1]).sum() >= 2  # the legal cards were valued


# ---- the inference reads what the others did as they saw it ----------------------------------------
def test_inference_rebuilds_the_others_decisions():
    """On the true deal, the observations the inference rebuilds for the other seats' bids and
    their cards in the current trick are the ones those seats had then (up to shown_out)."""
    g = SpadesGame(seed=21, dealer=3)  # N bids first
    driver = [make_policy("heuristic", seed=s) for s in range(4)]
    seen: dict[tuple[int, int], np.ndarray] = {}  # (seat, action) -> its observation then
    while True:
        seat = g.current_player
        obs, mask = _obs(g, seat)
        size = int(g.state[L.TRICK_SIZE])
        if seat == 0 and g.state[L.PHASE] == L.PH_PLAY and g.state[L.TRICKS_PLAYED] >= 3 and size >= 2:
            break
        a = driver[seat].act(obs, mask)
        seen[(seat, a)] = obs
        g.apply(a)
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    decode_into(obs, row, params)
    row[L.PASSED + 2], row[L.RECEIVED + 2] = row[L.RECEIVED], row[L.PASSED]  # as the search does
    for s in range(1, 4):
        row[L.HANDS + s] = g.state[L.HANDS + s]  # the true deal (N is seat 0: relative = absolute)
    out = np.empty((8, OBS_SIZE), dtype=np.float32)
    masks = np.empty((8, 70), dtype=np.int8)
    acts = np.empty(8, dtype=np.int64)
    owner = np.empty(8, dtype=np.int64)
    k = inference_inputs(row[None], params, out, masks, acts, owner)
    bids = [int(b) for b in g.state[L.BIDS : L.BIDS + 4]]
    theirs_blind = L.BID_BLIND_NIL in (bids[1], bids[3])  # their exchange: their bids unread
    readable = [s for s in (1, 2, 3) if 0 <= bids[s] <= 13 and not (s % 2 == 1 and theirs_blind)]
    assert k == len(readable) + size  # the bids it can read, the cards of the trick
    keep = np.ones(OBS_SIZE, dtype=bool)
    keep[SLICES["shown_out"]] = False
    for j in range(k):
        a = int(acts[j])
        who = [s for s in range(1, 4) if (s, a) in seen]
        if a >= BID_BASE:
            who = [s for s in who if g.state[L.BIDS + s] == a - BID_BASE]
        for s in who:
            ok = keep.copy()
            if s % 2 == 1 and theirs_blind:  # their own exchange: not ours to know
                ok[SLICES["passed"]] = ok[SLICES["received"]] = False
            if np.array_equal(out[j][ok], seen[(s, a)][ok]):
                break
        else:
            raise AssertionError(f"decision {j} ({a}) is not what the seat saw")
        assert masks[j, a]


# ---- score, not tricks ------------------------------------------------------------------------------
def _bag_position() -> tuple[np.ndarray, np.ndarray]:
    """N is last to play to trick 12: E led KH, S and W played clubs; N holds AH 2H, the others
    a club each. NS bid 3 + 3 and hold 7 tricks with 7 bags on the books: taking both last tricks
    (AH, then 2H, which nobody can follow) makes the tenth bag and the -100 penalty; ducking
    (2H) gives NS at most one more trick."""
    g = SpadesGame(dealer=3)
    st = g.state
    hands = {0: "AH 2H", 1: "5C", 2: "6C", 3: "7C"}
    trick = {1: "KH", 2: "3C", 3: "4C"}
    held = 0
    for s, h in hands.items():
        st[L.HANDS + s] = mask_from_cards([card_from_str(c) for c in h.split()])
        held |= int(st[L.HANDS + s])
    tcards = {s: card_from_str(c) for s, c in trick.items()}
    rest = [c for c in range(52) if not (held >> c) & 1 and c not in tcards.values()]
    for s in range(4):
        mine = rest[11 * s : 11 * (s + 1)] + ([tcards[s]] if s in tcards else [])
        st[L.PLAYED + s] = mask_from_cards(mine)
        st[L.TRICK_CARDS + s] = tcards.get(s, L.NO_CARD)
        st[L.BIDS + s] = 3 if s % 2 == 0 else 2
        st[L.TRICKS_WON + s] = (4, 2, 3, 2)[s]
        st[L.BLIND_STATUS + s] = L.BLIND_SAW
    st[L.PHASE] = L.PH_PLAY
    st[L.TRICK_LEADER] = 1
    st[L.TRICK_SIZE] = 3
    st[L.TRICKS_PLAYED] = 11
    st[L.TURN] = 0
    st[L.SPADES_BROKEN] = 1
    st[L.BAGS] = 7
    return _obs(g, 0)


def test_score_valued_choice_differs_from_trick_valued():
    obs, mask = _bag_position()
    assert set(np.flatnonzero(mask)) == {card_from_str("AH"), card_from_str("2H")}
    score = make_policy("netsearch:samples=4", seed=1)  # value=2: the game score
    tricks = make_policy("netsearch:samples=4,value=0", seed=1)
    assert score.act(obs, mask) == card_from_str("2H")
    assert tricks.act(obs, mask) == card_from_str("AH")
    ah, h2 = card_from_str("AH"), card_from_str("2H")
    assert tricks.last_values[ah] == 2 and tricks.last_values[h2] <= 1
    # hand-checked: taking both: NS 60 + 3 - 100 (bags 10 -> 0), EW 40: -77 points.
    # Ducking: NS 61 or 62 with 8 or 9 bags, EW 42 or 41 with 2 or 1 bags: at least -19
    # after the bags' cost (0.5 x 10 points each)
    # (the values are relative to now: NS 0 points with 7 bags, -35, against EW's 0)
    assert score.last_values[ah] == pytest.approx(-77 - (-35), abs=1e-4)
    assert score.last_values[h2] > score.last_values[ah] + 50


# ---- play strength at a small budget (numbers reported, nothing asserted about them) -------------
def test_small_duplicate_against_l2_reports_numbers(capsys):
    from spades_env.eval.duplicate import run_duplicate
    from spades_env.eval.stats import summarize

    rows = {}
    for name in ("spades4_net_v1", "netsearch:samples=4,bids=3"):
        res = run_duplicate((name, name), ("heuristic", "heuristic"), boards=2, seed=5, fmt="hand")
        s = summarize(res, "hand")
        rows[name] = s["margin_per_hand"]
        assert np.isfinite(s["margin_per_hand"]["mean"])
    with capsys.disabled():
        for name, m in rows.items():
            print(f"\n{name} vs heuristic, 2 duplicate boards of one hand: {m['mean']:+.1f} a hand, CI {m['ci95']}")


def test_resampled_deals_follow_the_others_bids():
    """After an opponent bids 7, the deals the search plays out give that opponent a strong
    hand (the network bids 7 with one), unlike deals drawn without inference; the effective
    number of deals among the draws is reported."""
    from spades_env.core.actions import bid_action

    g = SpadesGame(rules=load_rules("house"), seed=3)
    first = g.current_player
    for b in (7, 2, 3):  # the first bidder 7, then its left-hand opponent 2, its partner 3
        g.apply(bid_action(b))
    me = g.current_player  # the fourth bidder: the first bidder is an opponent
    rel = (first - me) % 4
    assert rel % 2 == 1
    obs, mask = _obs(g, me)

    def strength(policy: NetSearchPolicy) -> float:
        policy.act(obs, mask)
        hands = policy.last_deals[:, L.HANDS + rel]
        aces_kings_spades = [c for c in range(52) if c >= 39 or c % 13 >= 11]
        picks = mask_from_cards(aces_kings_spades)
        return float(np.mean([bin(int(h) & picks).count("1") for h in hands]))

    informed = NetSearchPolicy(samples=32, draws=8, bids=2, seed=1)
    blind = NetSearchPolicy(samples=32, infer=0.0, bids=2, seed=1)
    assert strength(informed) > strength(blind) + 1.0
    assert 1.0 <= informed.last_ess <= 32 * 8 and blind.last_ess == 32


def test_tempered_exponent_keeps_the_effective_draws_asked():
    from spades_env.policies.bots.netsearch import effective_count, tempered_exponent

    rng = np.random.default_rng(0)
    flat = rng.normal(0, 0.01, 256)  # nearly equal weights: the full exponent
    assert tempered_exponent(flat, 1.0, 16) == 1.0
    sharp = rng.normal(0, 100.0, 256)  # log-weights as a confident network gives them
    assert effective_count(sharp, 1.0) < 2
    beta = tempered_exponent(sharp, 1.0, 16)
    assert 0 < beta < 1
    assert effective_count(sharp, beta) >= 16 > effective_count(sharp, beta * 1.05)
    assert tempered_exponent(sharp, 0.0, 16) == 0.0  # no inference asked: none


def test_the_search_overrides_the_network_only_when_sure():
    p = NetSearchPolicy(samples=2, bids=2, seed=1, confidence=2.0)
    noisy = np.array([40.0, -30.0, 25.0, -15.0, 10.0, 0.0, 5.0, 5.0])  # mean +5, SE about 7.6
    steady = np.array([6.0, 4.0, 5.0, 5.0, 6.0, 4.0, 5.0, 5.0])  # mean +5, SE about 0.27
    assert not p._better(noisy) and p._better(steady)
    p.margin = 6.0
    assert not p._better(steady)  # and by more than margin points
    loose = NetSearchPolicy(samples=2, bids=2, seed=1, confidence=0.0)  # any gain above margin
    assert loose._better(noisy) and not loose._better(-steady)


def test_split_tests_the_chosen_candidates_gain_on_deals_that_did_not_choose_it():
    """A candidate that looks best only on the even deals (a lucky draw) is taken on the whole
    sample's gain, but not when its gain is tested on the odd deals; a gain on every deal is
    taken either way."""
    cands = np.array([10, 11, 12])
    lucky = np.zeros((16, 3))
    lucky[0::2, 1] = 100.0  # candidate 11: +100 on the even deals, -10 on the odd ones
    lucky[1::2, 1] = -10.0
    steady = np.zeros((16, 3))
    steady[:, 2] = 20.0 + np.tile([1.0, -1.0], 8)
    whole = NetSearchPolicy(samples=2, bids=2, seed=1)
    split = NetSearchPolicy(samples=2, bids=2, seed=1, split=1)
    assert whole._override(lucky, cands, 0) == 11 and split._override(lucky, cands, 0) == 10
    assert whole._override(steady, cands, 0) == 12 and split._override(steady, cands, 0) == 12
    assert split._override(steady, cands, 2) == 12  # the network's own candidate best: kept
    assert split._override(steady[:3], cands, 0) == 12  # under four deals: no halves to split
    for bad in ("2", "-1", "0.5"):
        with pytest.raises(PolicyNameError, match="split"):
            make_policy(f"netsearch:split={bad}")


def test_undecided_is_a_lead_for_another_candidate_that_is_not_yet_sure():
    p = NetSearchPolicy(samples=2, bids=2, seed=1, upto=8)
    noisy = np.zeros((8, 2))
    noisy[:, 1] = [40.0, -30.0, 25.0, -15.0, 10.0, 0.0, 5.0, 5.0]  # leads by +5, SE about 7.6
    assert p._undecided(noisy, 0)  # another candidate leads, not surely: more deals
    assert not p._undecided(noisy, 1)  # the network's own candidate leads: decided
    steady = np.zeros((8, 2))
    steady[:, 1] = [6.0, 4.0, 5.0, 5.0, 6.0, 4.0, 5.0, 5.0]
    assert not p._undecided(steady, 0)  # a sure gain: decided (the other candidate is played)
    assert not p._undecided(np.full((8, 2), 3.0), 1)  # equal cards tie: decided, no more deals


def test_upto_draws_more_deals_only_for_undecided_decisions():
    """With ``upto``, a decision keeps ``samples`` deals when decided and doubles them while
    undecided; one decided at ``samples`` deals is the fixed search's (same seed, same deals)."""
    rules = load_rules("tournament")
    fixed = NetSearchPolicy(rules, samples=4, bids=2, seed=3)
    counts: set[int] = set()
    same = 0
    g = SpadesGame(rules, seed=5)
    while not g.is_hand_over:
        obs, mask = _obs(g, g.current_player)
        if int(mask.sum()) > 1 and g.state[L.PHASE] in (L.PH_BID, L.PH_PLAY):
            a = NetSearchPolicy(rules, samples=4, bids=2, seed=3, upto=16, actor=fixed.actor)
            b = NetSearchPolicy(rules, samples=4, bids=2, seed=3, actor=fixed.actor)
            got, base = a.act(obs, mask), b.act(obs, mask)
            assert b.last_samples == 4 and a.last_samples in (4, 8, 16)
            counts.add(a.last_samples)
            if a.last_samples == 4:
                assert got == base
                same += 1
            else:  # undecided at 4 deals: the fixed search kept the network's choice there
                assert base == b._net_choice()
        g.apply(fixed.act(obs, mask))
    assert 4 in counts and counts & {8, 16} and same > 0
    for bad in ("netsearch:upto=-1", "netsearch:upto=16", "netsearch:samples=8,upto=4",
                "netsearch:budget=0.1,upto=64"):
        with pytest.raises(PolicyNameError, match="upto"):
            parse_policy_name(bad)
    with pytest.raises(ValueError, match="more than samples=8"):
        NetSearchPolicy(rules, samples=8, upto=8, actor=fixed.actor)
    assert parse_policy_name("netsearch:upto=32")[1] == {"upto": 32}  # over the default 16


# ---- the Blind Nil choice and the exchange, searched ---------------------------------------------
def _first_decision(rules, phase: int, seeds=range(8)) -> tuple[np.ndarray, np.ndarray, SpadesGame, int]:
    """The observation of the first decision in ``phase`` (Blind Nil offered to seats 0 and 2,
    which declare it where L2 does), over the first deal of ``seeds`` that has one."""
    for seed in seeds:
        g = SpadesGame(rules, seed=seed)
        g.set_hand(scores=[0, 400])
        driver = [make_policy("blind" if s % 2 == 0 else "heuristic", seed=s) for s in range(4)]
        while not g.is_hand_over:
            seat = g.current_player
            obs, mask = _obs(g, seat)
            if g.state[L.PHASE] == phase and int(mask.sum()) > 1:
                return obs, mask, g, seat
            g.apply(driver[seat].act(obs, mask))
    raise AssertionError("no such decision")


def test_blind_nil_choice_is_searched_over_deals_of_every_card():
    """With ``blind``, both answers are played out on deals of all 52 cards (the seat's own hand
    is unknown when it chooses), valued by the chance of winning the game; without, the network's."""
    rules = load_rules({"max_hands": 2})
    obs, mask, _, _ = _first_decision(rules, L.PH_BLIND)
    p = NetSearchPolicy(rules, samples=4, blind=24, seed=1)
    a = p.act(obs, mask)
    assert a in (66, 67) and mask[a]
    searched = np.isfinite(p.last_values)
    assert searched[[66, 67]].all() and searched.sum() == 2
    assert np.abs(p.last_values[[66, 67]]).max() <= rules.target_score  # win chance x the target
    assert p.last_samples == 24 and len(p.last_deals) == 24
    hands = p.last_deals[:, L.HANDS : L.HANDS + 4]
    for row in hands:
        assert [bin(int(h)).count("1") for h in row] == [13] * 4
        assert int(np.bitwise_or.reduce(row)) == (1 << 52) - 1
    assert len(set(hands[:, 0].tolist())) > 1  # its own hand drawn too
    net = NetSearchPolicy(rules, samples=4, seed=1, actor=p.actor)
    assert net.act(obs, mask) == net._net_choice() and np.isnan(net.last_values).all()
    with pytest.raises(PolicyNameError):
        parse_policy_name("netsearch:blind=-1")


def test_exchange_is_searched_as_a_card_play():
    """With ``exchange=1``, each card the seat may pass is played out on deals where the partner
    holds the cards passed to it (and not those it passed back), valued like a card play: for
    the partner that passes first and for the Blind Nil bidder that passes back."""
    rules = load_rules({"max_hands": 2})
    _, _, g, _ = _first_decision(rules, L.PH_EXCHANGE)
    searched = [0, 0]
    driver = [make_policy("heuristic", seed=s) for s in range(4)]
    while g.state[L.PHASE] == L.PH_EXCHANGE:
        seat = g.current_player
        obs, mask = _obs(g, seat)
        passed, received = int(g.state[L.PASSED + seat]), int(g.state[L.RECEIVED + seat])
        if int(mask.sum()) > 1:
            p = NetSearchPolicy(rules, samples=6, exchange=1, seed=2)
            assert mask[p.act(obs, mask)]
            legal = set(np.flatnonzero(mask).tolist())
            assert set(np.flatnonzero(np.isfinite(p.last_values)).tolist()) == legal
            for row in p.last_deals:
                h = [int(row[L.HANDS + s]) for s in range(4)]
                assert h[0] == int(g.state[L.HANDS + seat]) and h[2] & passed == passed
                assert bin(h[2]).count("1") == 13 + bin(passed).count("1") - bin(received).count("1")
                assert int(np.bitwise_or.reduce(h)) == (1 << 52) - 1 and sum(bin(x).count("1") for x in h) == 52
            assert int(p.last_deals[0, L.PHASE]) == L.PH_EXCHANGE and int(p.last_deals[0, L.TURN]) == 0
            searched[received != 0] += 1
            net = NetSearchPolicy(rules, samples=6, seed=2, actor=p.actor)
            assert net.act(obs, mask) == net._net_choice() and np.isnan(net.last_values).all()
        g.apply(driver[seat].act(obs, mask))
    assert searched[0] > 0 and searched[1] > 0  # the giver's passes and the Blind Nil bidder's
    with pytest.raises(PolicyNameError):
        parse_policy_name("netsearch:exchange=2")


def test_every_decision_searched_under_other_rules_stays_legal():
    """``blind``, ``exchange`` and ``value=3`` together, under rules of another target and
    deficit: legal in every phase, and the Blind Nil choice and the passes carry values."""
    rules = load_rules({"max_hands": 2, "target_score": 300, "blind_nil_min_deficit": 50})
    spec = "netsearch:samples=2,bids=2,value=3,blind=8,exchange=1"
    valued: set[int] = set()
    for seed in range(2):
        g = SpadesGame(rules, seed=seed)
        g.set_hand(scores=[0, 200])
        bots = {s: make_policy(spec if s % 2 == 0 else "blind", seed=s, rules=rules) for s in range(4)}
        while not g.is_hand_over:
            seat = g.current_player
            obs, mask = _obs(g, seat)
            phase = int(g.state[L.PHASE])
            a = bots[seat].act(obs, mask)
            assert mask[a]
            if seat % 2 == 0 and int(mask.sum()) > 1 and np.isfinite(bots[seat].last_values).any():
                valued.add(phase)
            g.apply(a)
    assert {L.PH_BLIND, L.PH_BID, L.PH_EXCHANGE, L.PH_PLAY} <= valued


# ---- playouts drawn from the network's policy (``temp``) ------------------------------------------
def _playout_ends(p: NetSearchPolicy, game: SpadesGame, copies: int, per_deal: int) -> np.ndarray:
    rows = np.repeat(game.state[None].astype(np.int64), copies, axis=0)
    p._playout(rows, game.params, per_deal)
    assert (rows[:, L.PHASE] >= L.PH_HAND_END).all()
    return rows


def test_temp_draws_playout_actions_with_common_noise_per_deal():
    """``temp=0`` plays the network's likeliest action (every copy of a deal ends the same);
    ``temp>0`` draws from its policy (copies of a deal with their own noise end differently), and
    rows of one deal (one per candidate) share the noise step by step, so identical rows stay
    identical."""
    rules = load_rules("house")
    g = SpadesGame(rules, seed=11)
    driver = [make_policy("heuristic", seed=s) for s in range(4)]
    while g.state[L.PHASE] != L.PH_PLAY:
        g.apply(driver[g.current_player].act(*_obs(g, g.current_player)))
    greedy = NetSearchPolicy(rules, samples=2, seed=0)
    ends = _playout_ends(greedy, g, 6, 1)
    assert (ends == ends[0]).all()
    hot = NetSearchPolicy(rules, samples=2, seed=0, temp=3.0, actor=greedy.actor)
    ends = _playout_ends(hot, g, 6, 1)
    assert len({r.tobytes() for r in ends}) > 1
    shared = _playout_ends(hot, g, 6, 6)
    assert (shared == shared[0]).all()
    pairs = _playout_ends(hot, g, 8, 2)
    assert (pairs[0::2] == pairs[1::2]).all() and len({r.tobytes() for r in pairs}) > 1


def test_temp_search_is_legal_and_deterministic_for_a_seed():
    runs: list[list[int]] = [[], []]
    for run in runs:
        game = SpadesGame(load_rules({"max_hands": 1}), seed=2)
        bots = [make_policy("netsearch:samples=3,bids=2,temp=1", seed=s) for s in range(4)]
        while not game.is_hand_over:
            obs, mask = _obs(game, game.current_player)
            a = bots[game.current_player].act(obs, mask)
            assert mask[a]
            run.append(a)
            game.apply(a)
    assert runs[0] == runs[1]
    for bad in ("netsearch:temp=-1", "netsearch:temp=11", "netsearch:temp=nan"):
        with pytest.raises(PolicyNameError, match="temp"):
            parse_policy_name(bad)
    with pytest.raises(ValueError, match="temp"):
        NetSearchPolicy(temp=-0.5)
