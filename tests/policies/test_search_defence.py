"""The search-defence hybrid (spades_env.policies.composite; meta.json's ``policy.search_defence``):
exactly the card plays after an opponent's Blind Nil go to the bot, on real observations of
games where the opponents declare it; the checkpoint form loads, refuses a bad bot name, and
plays the same batched as serially."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.observation import O_PHASE, public_bids
from spades_env.eval.duplicate import run_duplicate
from spades_env.policies.agents import SPEC_FORMAT, load_agent
from spades_env.policies.checkpoint import CheckpointError, CheckpointPolicy, load_policy
from spades_env.policies.composite import SearchDefencePolicy, searched_rows
from spades_env.policies.registry import resolve_policy
from training.rules_family import load_family

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """A policy that plays like ``inner`` and records the observations it was asked about."""

    def __init__(self, inner) -> None:
        self.inner, self.seen = inner, []

    def act(self, observation, action_mask):
        self.seen.append(np.array(observation))
        return self.inner.act(observation, action_mask)


def test_the_search_plays_exactly_the_cards_after_an_opponents_blind_nil():
    rules = load_family([{"base": "house", "blind_nil_min_deficit": 0}])[0]  # L2 declares Blind Nil when open
    net, search = Recorder(resolve_policy("heuristic", 1, rules)), Recorder(resolve_policy("heuristic", 2, rules))
    hybrid = SearchDefencePolicy(net, search)
    l2 = resolve_policy("heuristic", 3, rules)
    game = SpadesGame(rules, seed=4)
    for _ in range(400):  # about six hands, or the game's end
        seat = game.current_player
        obs, mask = game.observe()
        if game.step((hybrid if seat % 2 == 0 else l2).act(obs, mask)).terminated:
            break
    assert search.seen, "no opponent declared Blind Nil in six hands"
    for o in search.seen:
        bids = public_bids(o[None])[0]
        assert L.BID_BLIND_NIL in (bids[1], bids[3]) and o[O_PHASE + L.PH_PLAY] > 0
    for o in net.seen:  # the policy: every bid, and the cards of hands without an opponent's Blind Nil
        bids = public_bids(o[None])[0]
        assert o[O_PHASE + L.PH_PLAY] == 0 or L.BID_BLIND_NIL not in (bids[1], bids[3])
    assert any(not (o[O_PHASE + L.PH_PLAY] > 0) for o in net.seen)  # it bid


# ---- the agent form (spades_env.policies.agents: an agent.json naming the network and the bot) ----

V5 = ROOT / "checkpoints" / "spades4_net_v1"
BN_OPEN = [{"base": "house", "blind_nil_min_deficit": 0}]


def _with_search(tmp_path, name="search:samples=20"):
    """A composite agent's folder: its agent.json names V5's network and the bot ``name``."""
    out = tmp_path / "ckpt"
    out.mkdir()
    spec = {
        "format": SPEC_FORMAT,
        "kind": "composite",
        "network": str(V5),
        "bot": name,
        "search_after_opponent_bid": ["blind_nil"],
    }
    (out / "agent.json").write_text(json.dumps(spec))
    return out


def test_searched_rows_are_card_plays_after_an_opponents_blind_nil():
    rules = load_family(BN_OPEN)[0]
    l2 = resolve_policy("heuristic", 0, rules)
    game = SpadesGame(rules, seed=9)
    rows, want = [], []
    for _ in range(120):
        obs, mask = game.observe()
        rows.append((obs, mask))
        bids = public_bids(obs[None])[0]
        want.append(bool(obs[O_PHASE + L.PH_PLAY] > 0 and not mask[52:].any() and L.BID_BLIND_NIL in (bids[1], bids[3])))
        if game.step(l2.act(obs, mask)).terminated:
            break
    got = searched_rows(np.stack([o for o, _ in rows]), np.stack([m for _, m in rows]), ("blind_nil",))
    assert got.tolist() == want and any(want) and not all(want)


def test_a_checkpoint_naming_a_search_defence_bot_loads_as_the_hybrid(tmp_path):
    path = _with_search(tmp_path)
    pol = load_agent(path, seed=1, rules="house")
    assert isinstance(pol, SearchDefencePolicy) and isinstance(pol.net, CheckpointPolicy)
    assert type(pol.search).__name__ == "SearchPolicy" and pol.search.samples == 20
    assert pol.against == ("blind_nil",)  # as its agent.json says
    assert isinstance(load_policy(V5, seed=1), CheckpointPolicy)
    assert isinstance(load_agent(V5, seed=1), CheckpointPolicy)  # a network folder has no agent.json


@pytest.mark.parametrize("bad", ["nobody", 7, "search:samples=0"])
def test_a_bad_search_defence_name_is_a_clear_error(tmp_path, bad):
    path = _with_search(tmp_path, bad)
    with pytest.raises(CheckpointError, match="key 'bot'"):
        load_agent(path)


def test_batched_play_of_the_hybrid_is_its_serial_play(tmp_path):
    path = str(_with_search(tmp_path))
    rules = load_family(BN_OPEN)[0]
    a = run_duplicate((path, path), ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=True)
    b = run_duplicate((path, path), ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=False)
    hands = [[(h.bids, h.tricks) for board in r for _, run in board.runs for h in run.hands] for r in (a, b)]
    assert hands[0] == hands[1] and any(L.BID_BLIND_NIL in bids for bids, _ in hands[0])


# ---- against: which opponents' bids bring the bot in (search_after_opponent_bid) ------


def _rows_of_a_game(rules, seed, steps=200):
    l2 = resolve_policy("heuristic", 0, rules)
    game = SpadesGame(rules, seed=seed)
    rows = []
    for _ in range(steps):
        obs, mask = game.observe()
        rows.append((obs, mask))
        if game.step(l2.act(obs, mask)).terminated:
            break
    return np.stack([o for o, _ in rows]), np.stack([m for _, m in rows])


def test_searched_rows_against_nil_add_the_card_plays_after_an_opponents_nil():
    obs, mask = _rows_of_a_game(load_family([{"base": "house"}])[0], 5, 600)  # L2 bids Nil and Blind Nil
    bids = public_bids(obs)
    play = (obs[:, O_PHASE + L.PH_PLAY] > 0) & ~mask[:, 52:].any(axis=1)
    opp_nil = (bids[:, 1] == 0) | (bids[:, 3] == 0)
    opp_blind = (bids[:, 1] == L.BID_BLIND_NIL) | (bids[:, 3] == L.BID_BLIND_NIL)
    both = searched_rows(obs, mask, ["blind_nil", "nil"])
    assert both.tolist() == (play & (opp_nil | opp_blind)).tolist()
    assert searched_rows(obs, mask, ("nil",)).tolist() == (play & opp_nil).tolist()
    assert searched_rows(obs, mask, ("blind_nil",)).tolist() == (play & opp_blind).tolist()  # the default: Blind Nil
    assert (play & opp_nil & ~opp_blind).any() and (play & opp_blind & ~opp_nil).any()  # both kinds met


@pytest.mark.parametrize(
    "bad, words",
    [([], "non-empty list"), ("nil", "non-empty list"), (["nil", "bid 3"], "unknown bid 'bid 3'"), ([["nil"]], "unknown bid"), (["nil", "nil"], "twice")],
)
def test_a_bad_against_list_is_a_clear_error(tmp_path, bad, words):
    with pytest.raises(ValueError, match=words):
        SearchDefencePolicy(None, None, against=bad)
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    meta["search_after_opponent_bid"] = bad
    (path / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"'search_after_opponent_bid': .*{words}"):
        load_agent(path)


def test_against_needs_a_search_defence_bot(tmp_path):
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    del meta["bot"]
    meta["search_after_opponent_bid"] = ["nil"]
    (path / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="missing key 'bot'"):
        load_agent(path)


def test_policies_defending_different_bids_decide_together_as_alone():
    from spades_env.policies.composite import act_search_defence

    rules = load_family([{"base": "house"}])[0]
    obs, mask = _rows_of_a_game(rules, 5, 600)
    net = load_policy(V5, seed=1, rules=rules)

    def make(against):
        return SearchDefencePolicy(net, resolve_policy("search:samples=8", 5, rules), against=against)

    kinds = [("blind_nil",), ("blind_nil", "nil"), ("nil",)]
    alone = [make(kinds[i % 3]) for i in range(len(obs))]
    want = np.array([p.act(o, m) for p, o, m in zip(alone, obs, mask, strict=True)])
    together = [make(kinds[i % 3]) for i in range(len(obs))]
    got = act_search_defence(together, obs, mask)
    assert got.tolist() == want.tolist()


def test_batched_play_against_nil_is_its_serial_play(tmp_path):
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    meta["search_after_opponent_bid"] = ["blind_nil", "nil"]
    (path / "agent.json").write_text(json.dumps(meta))
    rules = load_family([{"base": "house"}])[0]
    a = run_duplicate((str(path),) * 2, ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=True)
    b = run_duplicate((str(path),) * 2, ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=False)
    hands = [[(h.bids, h.tricks) for board in r for _, run in board.runs for h in run.hands] for r in (a, b)]
    assert hands[0] == hands[1] and any(0 in bids for bids, _ in hands[0])


# ---- cover: the partner's bids after which the bot plays too (search_after_partner_bid) ------


def test_searched_rows_cover_add_the_card_plays_after_the_partners_nil():
    obs, mask = _rows_of_a_game(load_family([{"base": "house"}])[0], 5, 600)  # L2 bids Nil and Blind Nil
    bids = public_bids(obs)
    play = (obs[:, O_PHASE + L.PH_PLAY] > 0) & ~mask[:, 52:].any(axis=1)
    opp_blind = (bids[:, 1] == L.BID_BLIND_NIL) | (bids[:, 3] == L.BID_BLIND_NIL)
    partner_nil = bids[:, 2] == 0
    partner_any = partner_nil | (bids[:, 2] == L.BID_BLIND_NIL)
    assert searched_rows(obs, mask, ("blind_nil",), cover=["nil"]).tolist() == (play & (opp_blind | partner_nil)).tolist()
    assert searched_rows(obs, mask, ("blind_nil",), cover=("nil", "blind_nil")).tolist() == (play & (opp_blind | partner_any)).tolist()
    assert searched_rows(obs, mask, ("blind_nil",), cover=[]).tolist() == searched_rows(obs, mask, ("blind_nil",)).tolist()  # none by default
    assert (play & partner_nil & ~opp_blind).any()  # the partner's Nil was met and adds rows
    own_nil = (bids[:, 0] == 0) & ~partner_any & ~opp_blind & ~(bids[:, 1] == 0) & ~(bids[:, 3] == 0)
    assert (play & own_nil).any() and not searched_rows(obs, mask, ["blind_nil", "nil"], ["nil", "blind_nil"])[
        play & own_nil
    ].any()  # the seat's own Nil is never searched


@pytest.mark.parametrize("bad, words", [("nil", "expected a list of bids"), (["nil", "trump"], "unknown bid 'trump'")])
def test_a_bad_cover_list_is_a_clear_error(tmp_path, bad, words):
    with pytest.raises(ValueError, match=f"cover: .*{words}"):
        SearchDefencePolicy(None, None, cover=bad)
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    meta["search_after_partner_bid"] = bad
    (path / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"'search_after_partner_bid': .*{words}"):
        load_agent(path)
    del meta["bot"]
    meta["search_after_partner_bid"] = ["nil"]
    (path / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="missing key 'bot'"):
        load_agent(path)


def test_policies_covering_different_bids_decide_together_as_alone():
    from spades_env.policies.composite import act_search_defence

    rules = load_family([{"base": "house"}])[0]
    obs, mask = _rows_of_a_game(rules, 5, 600)
    net = load_policy(V5, seed=1, rules=rules)

    def make(cover):
        return SearchDefencePolicy(net, resolve_policy("search:samples=8", 5, rules), against=("nil",), cover=cover)

    kinds = [(), ("nil",), ("nil", "blind_nil")]
    alone = [make(kinds[i % 3]) for i in range(len(obs))]
    want = np.array([p.act(o, m) for p, o, m in zip(alone, obs, mask, strict=True)])
    got = act_search_defence([make(kinds[i % 3]) for i in range(len(obs))], obs, mask)
    assert got.tolist() == want.tolist()


def test_batched_play_covering_the_partners_nil_is_its_serial_play(tmp_path):
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    meta["search_after_opponent_bid"] = ["blind_nil", "nil"]
    meta["search_after_partner_bid"] = ["nil", "blind_nil"]
    (path / "agent.json").write_text(json.dumps(meta))
    assert load_agent(path, seed=0).cover == ("nil", "blind_nil")
    rules = load_family([{"base": "house"}])[0]
    a = run_duplicate((str(path),) * 2, ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=True)
    b = run_duplicate((str(path),) * 2, ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=False)
    hands = [[(h.bids, h.tricks) for board in r for _, run in board.runs for h in run.hands] for r in (a, b)]
    ours = [h.bids[s.a_team + 2 * k] for board in a for s, run in board.runs for h in run.hands for k in (0, 1)]
    assert hands[0] == hands[1] and 0 in ours  # the policy's side bid Nil: its partner was covered


def test_an_empty_cover_list_covers_nothing_and_a_composite_needs_its_bot(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    with_bot, without = _with_search(tmp_path / "a"), _with_search(tmp_path / "b")  # two folders: loads are cached
    meta = json.loads((with_bot / "agent.json").read_text())
    meta["search_after_partner_bid"] = []
    (with_bot / "agent.json").write_text(json.dumps(meta))
    assert load_agent(with_bot, seed=0).cover == ()
    del meta["bot"]
    (without / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="missing key 'bot'"):  # a composite names its bot
        load_agent(without, seed=0)


# ---- both_nil_bid_shade: the network's bids after both the partner's and an opponent's Nil -----


def test_shade_bids_by_hand():
    from spades_env.policies.composite import shade_bids

    bid = lambda b: 52 + b  # noqa: E731  (52 = Nil, 53..65 = bids 1..13)
    actions = np.array([bid(4), bid(1), bid(0), bid(13), 5, bid(3), bid(2)])
    rows = np.array([True, True, True, True, True, False, True])
    mask = np.ones((len(actions), 70), dtype=np.int8)
    assert shade_bids(actions, rows, mask, 1).tolist() == [bid(3), bid(1), bid(0), bid(12), 5, bid(3), bid(1)]
    assert shade_bids(actions, rows, mask, 12).tolist() == [bid(1), bid(1), bid(0), bid(1), 5, bid(3), bid(1)]
    assert shade_bids(actions, rows, mask, 0).tolist() == actions.tolist()
    mask[0, bid(3)] = 0  # the lowered bid is not legal: the bid stays
    assert shade_bids(actions, rows, mask, 1)[0] == bid(4)
    assert actions[0] == bid(4)  # the input is not changed


def test_both_nil_bid_rows_are_bids_after_the_partners_and_an_opponents_nil():
    from spades_env.policies.composite import both_nil_bid_rows

    a = _rows_of_a_game(load_family(BN_OPEN)[0], 5, 400)  # L2 declares Blind Nil whenever open
    b = _rows_of_a_game(load_family([{"base": "house"}])[0], 5, 600)  # and Nil now and then
    obs, mask = np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])
    bids = public_bids(obs)
    nil = lambda b: (b == 0) | (b == L.BID_BLIND_NIL)  # noqa: E731
    bidding = (obs[:, O_PHASE + L.PH_BID] > 0) & (mask[:, 53] > 0)
    want = bidding & nil(bids[:, 2]) & (nil(bids[:, 1]) | nil(bids[:, 3]))
    got = both_nil_bid_rows(obs, mask)
    assert got.tolist() == want.tolist() and got.any()
    assert (bidding & nil(bids[:, 2]) & ~got).any() and (bidding & ~nil(bids[:, 2])).any()  # not every bid
    play = (obs[:, O_PHASE + L.PH_PLAY] > 0) & nil(bids[:, 2]) & (nil(bids[:, 1]) | nil(bids[:, 3]))
    assert play.any() and not got[play].any()  # card plays are never shaded


def test_the_hybrid_lowers_only_the_both_nil_bids_and_batched_is_serial():
    from spades_env.policies.composite import act_search_defence, both_nil_bid_rows

    rules = load_family(BN_OPEN)[0]
    obs, mask = _rows_of_a_game(rules, 5, 400)
    net = load_policy(V5, seed=1, rules=rules)

    def make(shade):
        return SearchDefencePolicy(net, resolve_policy("search:samples=8", 5, rules), against=("nil",), bid_shade=shade)

    plain = np.array([make(0).act(o, m) for o, m in zip(obs, mask, strict=True)])
    shaded = np.array([make(1).act(o, m) for o, m in zip(obs, mask, strict=True)])
    rows = both_nil_bid_rows(obs, mask)
    lowered = rows & (plain > 53) & (plain <= 65)
    assert lowered.any()
    assert (shaded[lowered] == plain[lowered] - 1).all()
    assert (shaded[~lowered] == plain[~lowered]).all()
    shades = [(0, 1, 2)[i % 3] for i in range(len(obs))]
    want = np.array([make(s).act(o, m) for s, o, m in zip(shades, obs, mask, strict=True)])
    got = act_search_defence([make(s) for s in shades], obs, mask)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("bad", [-1, 13, 1.5, True, "1"])
def test_a_bad_bid_shade_is_a_clear_error(tmp_path, bad):
    with pytest.raises(ValueError, match="bid shade: expected a whole number of tricks 0..12"):
        SearchDefencePolicy(None, None, bid_shade=bad)
    path = _with_search(tmp_path)
    meta = json.loads((path / "agent.json").read_text())
    meta["both_nil_bid_shade"] = bad
    (path / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="'both_nil_bid_shade': expected a whole number"):
        load_agent(path)


def test_a_bid_shade_needs_a_bot(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    shaded, zero = _with_search(tmp_path / "a"), _with_search(tmp_path / "b")
    meta = json.loads((shaded / "agent.json").read_text())
    del meta["bot"]
    meta["both_nil_bid_shade"] = 1
    (shaded / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="missing key 'bot'"):
        load_agent(shaded)
    meta["both_nil_bid_shade"] = 0
    meta["bot"] = "search:samples=8"
    (zero / "agent.json").write_text(json.dumps(meta))
    assert load_agent(zero, seed=0).bid_shade == 0
