"""``spades play`` in the terminal (issue 38, item 8): a typed bid is a bid, every text means
one thing on a screen, a refused move says why, the Blind Nil exchange is named, and scores
read ``NS -70, EW 63``. (Beside the web tests: the same player-facing reasons serve both.)"""

from __future__ import annotations

import numpy as np

from spades_env.cli.main import main
from spades_env.cli.play import read_move
from spades_env.core.game import SpadesGame
from spades_env.web.tables import illegal_reason

BIDS = list(range(52, 66))  # Nil, 1..13
CARDS = [0, 5, 13, 40]  # 2C, 7C, 2D, 3S


def test_a_typed_bid_is_a_bid() -> None:
    assert read_move("4", BIDS) == (56, "")
    assert read_move("bid 4", BIDS) == (56, "")
    assert read_move("  BID   nil ", BIDS) == (52, "")
    assert read_move("13", BIDS) == (65, "")
    for text in ("bid 14", "14", "99"):  # never read as a list position
        action, why = read_move(text, BIDS)
        assert action is None and "0 to 13" in why
    action, why = read_move("#4", BIDS)
    assert action is None and "type the bid itself" in why
    assert read_move("bid 2", list(range(52, 55))) == (54, "")
    assert read_move("bid 3", list(range(52, 55))) == (None, "bid 3 is not allowed here")


def test_outside_bidding_a_number_is_a_list_position_and_bid_is_refused() -> None:
    assert read_move("2", CARDS, "exchange") == (5, "")
    assert read_move("#2", CARDS, "exchange") == (5, "")
    action, why = read_move("bid 5", CARDS, "exchange")  # the leftover bid passed a card before
    assert action is None and "not bidding" in why and "exchange" in why
    action, why = read_move("5", CARDS, "play")
    assert action is None and "4 listed moves" in why
    assert read_move("3s", CARDS, "play") == (40, "")
    action, why = read_move("bid 4", [66, 67], "blind")
    assert action is None and why == "you are not bidding yet: choose Blind Nil or See cards first"
    action, why = read_move("nil", CARDS, "play")
    assert action is None and "not bidding" in why


def test_an_illegal_card_gets_the_rules_reason() -> None:
    rng = np.random.default_rng(0)
    seen = set()
    for seed in range(20):
        g = SpadesGame("tournament", seed=seed)
        while not g.is_hand_over:
            legal = g.legal_actions()
            if g.phase == "play":
                hand = [c for c in range(52) if int(g.state[20 + g.current_player]) >> c & 1]
                for c in hand:
                    if c not in legal:
                        why = illegal_reason(g, c)
                        seen.add(why.split(" ")[0] + " " + why.split(" ")[1])
                        assert "must follow" in why or "spades are not broken" in why, why
                other = next(c for c in range(52) if c not in hand)
                assert "not in your hand" in illegal_reason(g, other)
            g.apply(int(rng.choice(legal)))
    assert {"you must", "spades are"} <= seen


def test_play_names_the_exchange_and_prints_scores_by_team(monkeypatch, capsys) -> None:
    prompts = []

    def answer(prompt: str = "") -> str:
        prompts.append(prompt)
        return "bid 14" if len(prompts) == 1 else "1"  # one refused input, then the first move

    monkeypatch.setattr("builtins.input", answer)
    for seed in range(12):
        prompts.clear()
        assert (
            main(
                [
                    "play",
                    "--max-hands",
                    "1",
                    "--partner",
                    "random",
                    "--opponents",
                    "random",
                    "--seed",
                    str(seed),
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "Refused: " in out  # "bid 14" is never taken as something else
        line = next(x for x in out.splitlines() if x.startswith("Hand over:"))
        assert "score NS " in line and ", EW " in line and " - " not in line
        assert "points NS " in line
        if "Blind Nil exchange" in out:
            assert "You: pass " in out and "to your partner" in out
            return
    raise AssertionError("no seed gave a Blind Nil exchange")
