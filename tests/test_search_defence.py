"""The search-defence hybrid (spades_env.search_defence; meta.json's ``policy.search_defence``;
benchmarks/search_defence.py): exactly the card plays after an opponent's Blind Nil go to the
bot, on real observations of games where the opponents declare it; the checkpoint form loads,
refuses a bad bot name, and plays the same batched as serially."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from spades_env.arena.duplicate import run_duplicate
from spades_env.checkpoint import CheckpointError, CheckpointPolicy, load_policy
from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.observation import O_PHASE, public_bids
from spades_env.resolve import resolve_policy
from spades_env.search_defence import SearchDefencePolicy, searched_rows
from training.rules_family import load_family

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("search_defence_bench", ROOT / "benchmarks" / "search_defence.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


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


# ---- the checkpoint form (spades_env.search_defence, meta.json's policy.search_defence) ----------

V5 = ROOT / "checkpoints" / "spades_family_v5"
BN_OPEN = [{"base": "house", "blind_nil_min_deficit": 0}]


def _with_search(tmp_path, name="search:samples=20"):
    out = tmp_path / "ckpt"
    out.mkdir()
    shutil.copy(V5 / "model.safetensors", out)
    meta = json.loads((V5 / "meta.json").read_text())
    meta.setdefault("policy", {})["search_defence"] = name
    (out / "meta.json").write_text(json.dumps(meta))
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
    got = searched_rows(np.stack([o for o, _ in rows]), np.stack([m for _, m in rows]))
    assert got.tolist() == want and any(want) and not all(want)


def test_a_checkpoint_naming_a_search_defence_bot_loads_as_the_hybrid(tmp_path):
    path = _with_search(tmp_path)
    pol = load_policy(path, seed=1, rules="house")
    assert isinstance(pol, SearchDefencePolicy) and isinstance(pol.net, CheckpointPolicy)
    assert type(pol.search).__name__ == "SearchPolicy" and pol.search.samples == 20
    assert isinstance(load_policy(path, seed=1, search_defence=False), CheckpointPolicy)
    assert isinstance(load_policy(V5, seed=1), CheckpointPolicy)  # v5 names none


@pytest.mark.parametrize("bad", ["nobody", 7, "search:samples=0"])
def test_a_bad_search_defence_name_is_a_clear_error(tmp_path, bad):
    path = _with_search(tmp_path, bad)
    with pytest.raises(CheckpointError, match="policy.search_defence"):
        load_policy(path)


def test_batched_play_of_the_hybrid_is_its_serial_play(tmp_path):
    path = str(_with_search(tmp_path))
    rules = load_family(BN_OPEN)[0]
    a = run_duplicate((path, path), ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=True)
    b = run_duplicate((path, path), ("heuristic", "heuristic"), 2, seed=3, rules=rules, batched=False)
    hands = [[(h.bids, h.tricks) for board in r for _, run in board.runs for h in run.hands] for r in (a, b)]
    assert hands[0] == hands[1] and any(L.BID_BLIND_NIL in bids for bids, _ in hands[0])


def test_the_benchmark_factories_are_the_network_alone_and_the_hybrid(tmp_path):
    path = str(_with_search(tmp_path))
    alone, hybrid = bench.SearchDefence(path)(4, None), bench.SearchDefence(path, "search:samples=20")(4, None)
    assert isinstance(alone, CheckpointPolicy)  # the checkpoint's own search_defence is left out
    assert isinstance(hybrid, SearchDefencePolicy) and hybrid.search.samples == 20
