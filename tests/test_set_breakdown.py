"""benchmarks/set_breakdown.py: contracts grouped by the Nils in the hand, from each team's
side, by hand and on real play (the groups add up to the arena's set counts)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spades_env.eval.duplicate import BoardResult, Seating
from spades_env.eval.match import HandRecord, PlayResult, TeamHand
from spades_env.eval.stats import summarize

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("set_breakdown", ROOT / "benchmarks" / "set_breakdown.py")
sb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sb)


def _team(points: int, contract: int, tricks: int, nil: int = 0, blind: int = 0) -> TeamHand:
    return TeamHand(points, contract, tricks, nil, 0, blind, 0, 0)


def _hand(ns: TeamHand, ew: TeamHand) -> HandRecord:
    return HandRecord(0, 0, (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (ns, ew))


def test_nil_group_reads_both_teams_nils():
    plain, nil, blind = _team(0, 4, 4), _team(0, 4, 4, nil=1), _team(0, 4, 4, blind=1)
    assert sb.nil_group(plain, plain) == "no Nil"
    assert sb.nil_group(nil, plain) == "own Nil"
    assert sb.nil_group(blind, plain) == "own Nil"  # Blind Nil counts as a Nil
    assert sb.nil_group(plain, blind) == "opponents' Nil"
    assert sb.nil_group(nil, blind) == "both Nil"


def test_groups_by_hand():
    seat = ("p", "o", "p", "o")
    run = PlayResult(
        hands=[
            # N-S (the policy, team A) bid 5 alone and took 3: set; E-W bid 6 + Nil, made
            _hand(_team(-50, 5, 3), _team(160, 6, 7, nil=1)),
            # both teams Nil: N-S 3 made with a bag, E-W 4 set
            _hand(_team(131, 3, 4, nil=1), _team(-140, 4, 2, blind=1)),
            # E-W bid only Nils (no contract): only N-S's side counts
            _hand(_team(60, 6, 6), _team(100, 0, 0, nil=2)),
        ]
    )
    flipped = PlayResult(hands=[_hand(_team(70, 7, 7), _team(-80, 8, 4))])  # the policy at E-W, set
    res = [BoardResult((0, 0), [(Seating(seat, 0), run), (Seating(seat, 1), flipped)])]
    g = sb.breakdown(res)
    pol, opp = g["policy"], g["opponents"]
    assert pol["opponents' Nil"] == {"contracts": 2, "sets": 1, "margin": -210 + -40, "contract": 11, "tricks": 9}
    assert pol["both Nil"] == {"contracts": 1, "sets": 0, "margin": 271, "contract": 3, "tricks": 4}
    assert pol["no Nil"] == {"contracts": 1, "sets": 1, "margin": -150, "contract": 8, "tricks": 4}
    assert "own Nil" not in pol
    assert opp["own Nil"] == {"contracts": 1, "sets": 0, "margin": 210, "contract": 6, "tricks": 7}
    assert opp["both Nil"] == {"contracts": 1, "sets": 1, "margin": -271, "contract": 4, "tricks": 2}
    assert opp["no Nil"] == {"contracts": 1, "sets": 0, "margin": 150, "contract": 7, "tricks": 7}
    text = sb.table(g)
    assert "| policy | no Nil | 1 | 100.0% | -150.0 | 8.00 | 4.00 | 25.00% |" in text
    assert "| policy | all | 4 | 50.0% |" in text


def test_real_play_adds_up_to_the_arena_set_counts():
    from spades_env.eval.duplicate import run_duplicate

    res = run_duplicate(("blind", "blind"), ("greedy", "greedy"), 3, seed=5, rules="house", batched=True)
    g = sb.breakdown(res)
    s = summarize(res, "game")
    for side, team in zip(("policy", "opponents"), s["teams"], strict=True):
        groups = g[side].values()
        assert sum(x["contracts"] for x in groups) == team["set_rate"]["n"] > 0
        assert sum(x["sets"] for x in groups) == team["set_rate"]["k"]


def test_the_command_takes_the_matrix_rules_and_refuses_bad_ones():
    import subprocess
    import sys

    script = str(ROOT / "benchmarks" / "set_breakdown.py")
    run = [sys.executable, script, "heuristic", "--opponent", "greedy", "--boards", "1"]
    ok = subprocess.run([*run, "--rules", "no_blind"], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "heuristic + itself vs greedy x2, no_blind rules, 1 boards, seed 0" in ok.stdout
    assert "| policy | all |" in ok.stdout and "| opponents | all |" in ok.stdout
    bad = subprocess.run([*run, "--rules", "nope"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--rules 'nope': unknown rules preset 'nope'" in bad.stderr
    zero = subprocess.run([*run[:-1], "0"], capture_output=True, text=True, timeout=300)
    assert zero.returncode == 2 and "--boards must be at least 1, got 0" in zero.stderr
