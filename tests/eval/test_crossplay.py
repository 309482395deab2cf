"""The partner matrix (spades_env.eval.crossplay): every pair on the same duplicate deals."""

from __future__ import annotations

import math

import pytest

from spades_env.core.validate import InputError
from spades_env.eval import crossplay
from spades_env.eval.crossplay import crossplay_table, plot_crossplay
from spades_env.policies.bots.heuristic import HeuristicPolicy


def l2_factory(seed, rules):
    return HeuristicPolicy(rules, seed=seed)


def test_matrix_shape_symmetry_and_the_identical_pair():
    r = crossplay(["heuristic", "random"], opponents="heuristic", boards=6, seed=3)
    m = r["margin_per_hand"]
    assert r["agents"] == ["heuristic", "random"]
    assert len(m) == 2 and all(len(row) == 2 for row in m)
    assert m[0][1] == m[1][0]  # heuristic+random is one team
    # L2 with itself against L2 on duplicate deals: every hand is played from both sides
    assert m[0][0]["mean"] == 0.0
    # random partners lose to L2, and a mixed pair plays each deal four times
    assert m[1][1]["mean"] < 0
    assert r["hands"][0][0] == 2 * 6 and r["hands"][0][1] == 4 * 6
    lo, hi = m[1][1]["ci95"]
    assert lo <= m[1][1]["mean"] <= hi


def test_partner_robustness_is_the_diagonal_minus_the_other_partners():
    r = crossplay(["heuristic", "random", "greedy"], opponents="heuristic", boards=4, seed=1)
    m = r["margin_per_hand"]
    for i, rob in enumerate(r["partner_robustness"]):
        others = [m[i][j]["mean"] for j in range(3) if j != i]
        assert rob["agent"] == r["agents"][i]
        assert rob["self_play"] == pytest.approx(m[i][i]["mean"])
        assert rob["with_others"] == pytest.approx(sum(others) / 2)
        assert rob["gap"] == pytest.approx(m[i][i]["mean"] - sum(others) / 2)
        assert rob["ci95"][0] <= rob["ci95"][1]


def test_a_factory_plays_as_its_name_on_the_same_deals():
    by_name = crossplay(["heuristic", "random"], boards=4, seed=2)
    by_factory = crossplay([l2_factory, "random"], boards=4, seed=2)
    assert by_factory["agents"] == ["l2_factory", "random"]
    for i in range(2):
        for j in range(2):
            assert by_factory["margin_per_hand"][i][j] == by_name["margin_per_hand"][i][j]


def test_table_and_heat_map(tmp_path):
    r = crossplay(["heuristic", "random"], boards=2, labels=["L2", "rnd"])
    text = crossplay_table(r)
    assert "partner robustness" in text and "L2" in text and "rnd" in text
    png = plot_crossplay(r, tmp_path / "m.png")
    assert png is not None and png.stat().st_size > 1000
    assert not math.isnan(r["margin_per_hand"][0][1]["mean"])


def test_bad_input_is_refused_before_play():
    with pytest.raises(InputError):
        crossplay([], boards=2)
    with pytest.raises(InputError):
        crossplay(["heuristic"], rules="two_player", boards=2)
    with pytest.raises(ValueError):
        crossplay(["no_such_agent_xyz"], boards=2)
