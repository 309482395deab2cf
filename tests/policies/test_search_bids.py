"""L3's deals informed by the bids (``search:bid_infer=1``): a seat that bid Nil is dealt the
cards that would win it a trick at reduced odds; the deal's constraints still hold; the option."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core.actions import ACTION_SEE_CARDS, BID_BASE
from spades_env.core.cards import card_from_str, mask_from_cards
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, decode, encode_observation
from spades_env.core.rules import load_rules
from spades_env.policies.bots import PolicyNameError, make_policy
from spades_env.policies.bots.search import AVOID_ODDS, NIL_AVOID, sample_deal


def _mask(cards: str) -> int:
    return mask_from_cards(card_from_str(c) for c in cards.split())


def test_the_cards_a_nil_bidder_avoids_are_the_high_spades_and_side_aces_and_kings():
    assert NIL_AVOID == _mask("JS QS KS AS AC KC AD KD AH KH")
    assert AVOID_ODDS > 1


OWN = _mask("2C 3C 4C 5C 6C 2D 3D 4D 5D 2H 3H 4H 5H")


def _deals(avoid: np.ndarray, n: int, voids=None, fixed=None, seed: int = 987654321):
    pool = ((1 << 52) - 1) & ~OWN
    counts = np.array([0, 13, 13, 13, 0], dtype=np.int64)
    voids = np.zeros(5, dtype=np.int64) if voids is None else voids
    fixed = np.zeros(5, dtype=np.int64) if fixed is None else fixed
    rng = np.array([seed], dtype=np.int64)
    hands = np.zeros(5, dtype=np.int64)
    for _ in range(n):
        ok = sample_deal(np.zeros(1, dtype=np.int64), pool, counts, fixed, voids, rng, 4, hands, avoid)
        yield ok, pool, hands.copy()


def test_a_nil_bidder_is_dealt_the_high_cards_at_reduced_odds():
    """The left-hand opponent bid Nil: over sampled deals of the 39 unseen cards it holds the
    ace of spades far less often than the uniform one time in three, and fewer high cards."""
    none = np.zeros(5, dtype=np.int64)
    avoid = none.copy()
    avoid[1] = NIL_AVOID
    ace = 1 << card_from_str("AS")
    rates = {}
    for name, a in (("uniform", none), ("nil", avoid)):
        deals = [h for _, _, h in _deals(a, 3000)]
        rates[name] = (
            np.mean([bool(h[1] & ace) for h in deals]),
            np.mean([bin(int(h[1]) & NIL_AVOID).count("1") for h in deals]),
        )
    assert 0.28 < rates["uniform"][0] < 0.39 and rates["nil"][0] < 0.16
    assert rates["uniform"][1] > 3.0 and rates["nil"][1] < 1.5


def test_a_biased_deal_keeps_every_constraint():
    avoid = np.zeros(5, dtype=np.int64)
    avoid[3] = NIL_AVOID
    voids = np.zeros(5, dtype=np.int64)
    voids[2] = 1 << 3  # the partner has shown out of spades
    fixed = np.zeros(5, dtype=np.int64)
    fixed[2] = _mask("AS")  # ...so a spade there can only be a fixed one (say, passed to it)
    for ok, pool, h in _deals(avoid, 300, voids=voids, fixed=fixed, seed=5):
        assert ok
        assert [bin(int(h[s])).count("1") for s in (1, 2, 3)] == [13, 13, 13]
        assert int(h[1]) | int(h[2]) | int(h[3]) == pool
        assert int(h[1]) & int(h[2]) == 0 and int(h[1]) & int(h[3]) == 0 and int(h[2]) & int(h[3]) == 0
        assert int(h[2]) & fixed[2] and (int(h[2]) >> 39) & 0x1FFF == 1 << 12  # only the fixed ace


def _nil_opponent_position() -> tuple[np.ndarray, np.ndarray]:
    """Trick play, E to act after N (E's right-hand opponent) bid Nil and led."""
    g = SpadesGame(seed=21, dealer=3)
    bids = [0, 4, 3, 5]
    while g.phase in ("blind", "bid"):
        g.apply(ACTION_SEE_CARDS if g.phase == "blind" else BID_BASE + bids[g.current_player])
    assert g.phase == "play" and g.current_player == 0
    g.apply(int(np.flatnonzero(g.legal_mask())[0]))
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(g.state, g.params, g.current_player, obs)
    return obs, g.legal_mask()


def test_bid_infer_changes_the_searched_values_not_their_legality():
    obs, mask = _nil_opponent_position()
    plain = make_policy("search:samples=64", seed=5)
    weighed = make_policy("search:samples=64,bid_infer=1", seed=5)
    a, b = plain.act(obs, mask), weighed.act(obs, mask)
    assert mask[a] and mask[b]
    legal = np.flatnonzero(mask)
    assert np.all(np.isfinite(weighed.last_values[legal]))
    assert not np.allclose(plain.last_values[legal], weighed.last_values[legal])
    # deterministic given the seed
    again = make_policy("search:samples=64,bid_infer=1", seed=5)
    assert again.act(obs, mask) == b
    np.testing.assert_array_equal(again.last_values[legal], weighed.last_values[legal])


@pytest.mark.parametrize("spec", ["search:bid_infer=2", "search:bid_infer=-1", "search:bid_infer=yes"])
def test_a_bad_bid_infer_is_a_clear_error(spec):
    with pytest.raises(PolicyNameError, match="bid_infer"):
        make_policy(spec)


def test_bid_infer_defaults_off():
    assert make_policy("search:samples=4").bid_infer is False
    assert make_policy("search:samples=4,bid_infer=1").bid_infer is True


def test_only_a_seen_nil_is_evidence():
    """The avoided cards go to seats that bid Nil having seen their cards: not a Blind Nil,
    not a trick bid, nothing without ``bid_infer``, and only cards still unseen."""
    obs, _ = _nil_opponent_position()
    v = decode(obs)
    assert v.bids[3] == 0  # N, E's right-hand opponent, bid Nil
    pool = int(v.unseen)
    on = make_policy("search:samples=4,bid_infer=1", seed=1)._avoid(v, pool)
    off = make_policy("search:samples=4", seed=1)._avoid(v, pool)
    assert list(on) == [0, 0, 0, NIL_AVOID & pool, 0] and not off.any()
    v.bids[3] = 14  # a Blind Nil says nothing of the hand
    assert not make_policy("search:samples=4,bid_infer=1", seed=1)._avoid(v, pool).any()


def test_two_player_a_nil_opponent_is_read_and_the_play_stays_legal():
    """Two players: the opponent (relative seat 1) bid Nil; its deals avoid the high cards, the
    out-of-play stock (seat 4) takes the rest, and the searched card is legal."""
    g = SpadesGame(load_rules("two_player"), seed=8)
    while g.phase != "bid":
        g.apply(ACTION_SEE_CARDS if g.phase == "blind" else int(np.flatnonzero(g.legal_mask())[0]))
    nil_seat = g.current_player
    while g.phase == "bid":
        g.apply(BID_BASE + (0 if g.current_player == nil_seat else 4))
    while g.current_player == nil_seat:  # to the seat that did not bid Nil
        g.apply(int(np.flatnonzero(g.legal_mask())[0]))
    assert g.phase == "play"
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(g.state, g.params, g.current_player, obs)
    mask = g.legal_mask()
    v = decode(obs)
    pol = make_policy("search:samples=32,bid_infer=1", rules=load_rules("two_player"), seed=3)
    pool = int(v.unseen)
    assert list(pol._avoid(v, pool)) == [0, NIL_AVOID & pool, 0, 0, 0]
    assert mask[pol.act(obs, mask)]
