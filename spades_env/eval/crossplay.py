"""The partner matrix (crossplay): every agent partnered with every agent, itself included,
against the same opponents on the same duplicate deals.

Partners in Spades cannot signal, so an agent is only as good as its play beside partners it
never trained with. :func:`crossplay` plays, for each pair of agents ``(i, j)``, the team
``i + j`` against the ``opponents`` team on the boards of one seed (every cell on the same
deals; a mixed pair plays each deal four times, each partner in each seat of its partnership,
:func:`spades_env.eval.boards.seatings`). Cell ``(i, j)`` is the team's margin per hand with a
95% bootstrap CI over boards; the matrix is symmetric (``i + j`` and ``j + i`` are one team).

*Partner robustness* of agent ``i`` is its self-play diagonal minus its mean margin with the
other agents as partners (a positive gap: it plays best beside itself, as agents trained
together by self-play do; Hu et al. 2020, Other-Play), with a paired bootstrap CI over the
shared boards.

``spades crossplay spades4_net_v1 heuristic blind --hands 400 --out runs/crossplay`` prints the
matrix and writes ``crossplay.json`` and ``crossplay.png`` (a heat map).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputError, check_choice, check_count, check_int
from spades_env.eval.boards import BoardResult
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.match import FORMATS, parse_team, spec_name, team_label
from spades_env.eval.report import pyplot, save_figure
from spades_env.eval.stats import summarize
from spades_env.policies.registry import PolicySpec, check_policy_name

DEFAULT_BOARDS = 200


def _board_margins(boards: Sequence[BoardResult]) -> tuple[np.ndarray, np.ndarray]:
    """(team A's margin summed over each board's runs, hands of each board)."""
    m, n = [], []
    for board in boards:
        mm, nn = 0.0, 0
        for seating, res in board.runs:
            a = seating.a_team
            for h in res.hands:
                mm += h.teams[a].points - h.teams[1 - a].points
                nn += 1
        m.append(mm)
        n.append(nn)
    return np.asarray(m, dtype=np.float64), np.asarray(n, dtype=np.float64)


def _labels(agents: Sequence[PolicySpec], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        if len(labels) != len(agents):
            raise InputError(f"crossplay: {len(labels)} labels for {len(agents)} agents")
        return [str(x) for x in labels]
    out = [spec_name(a) for a in agents]
    if len(set(out)) != len(out):  # two factories of one name
        out = [f"{x}#{i}" for i, x in enumerate(out)]
    return out


def _opponent_team(opponents: Any) -> tuple[PolicySpec, PolicySpec]:
    if isinstance(opponents, str):
        return parse_team(opponents)
    if isinstance(opponents, tuple) and len(opponents) == 2:
        return opponents
    if callable(opponents):
        return (opponents, opponents)
    raise InputError(
        f"crossplay: opponents must be a policy name, 'a+b', a factory or a pair, got {opponents!r}"
    )


def robustness(
    board_m: dict[tuple[int, int], np.ndarray],
    board_n: dict[tuple[int, int], np.ndarray],
    k: int,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per agent: self-play margin, mean margin with the other partners, their gap, and a 95%
    paired bootstrap CI of the gap (boards resampled together across cells: every cell plays
    the same deals)."""
    out: list[dict[str, Any]] = []
    if k < 2:
        return out
    nb = len(next(iter(board_m.values())))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, nb, size=(n_resamples, nb))

    def cell(i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        return board_m[(min(i, j), max(i, j))], board_n[(min(i, j), max(i, j))]

    for i in range(k):
        m, n = cell(i, i)
        diag = m.sum() / n.sum()
        diag_bs = m[idx].sum(1) / n[idx].sum(1)
        others, others_bs = [], []
        for j in range(k):
            if j == i:
                continue
            m, n = cell(i, j)
            others.append(m.sum() / n.sum())
            others_bs.append(m[idx].sum(1) / n[idx].sum(1))
        mean_other = float(np.mean(others))
        gap_bs = diag_bs - np.mean(others_bs, axis=0)
        lo, hi = np.quantile(gap_bs, [0.025, 0.975], method="inverted_cdf")
        out.append(
            {
                "self_play": float(diag),
                "with_others": mean_other,
                "gap": float(diag - mean_other),
                "ci95": [float(lo), float(hi)],
            }
        )
    return out


def crossplay(
    agents: Sequence[PolicySpec],
    *,
    rules: RulesConfig | str | dict | None = None,
    opponents: Any = "heuristic",
    boards: int = DEFAULT_BOARDS,
    seed: int = 0,
    fmt: str = "hand",
    labels: Sequence[str] | None = None,
    workers: int | None = None,
    batched: bool | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """The partner matrix of ``agents`` (names, agent or checkpoint paths, factories
    ``f(seed, rules)``) against the ``opponents`` team (a name for both seats, ``"a+b"``, a
    factory or a pair), ``boards`` duplicate boards per cell on the same deals (seed ``seed``).

    Returns ``{"agents", "opponents", "rules", "format", "boards", "seed", "margin_per_hand"
    ([i][j] = {"mean", "ci95"}), "hands" ([i][j]), "cells" ([i][j] = the full summary,
    :func:`spades_env.eval.stats.summarize`), "partner_robustness" ([i] = {"agent",
    "self_play", "with_others", "gap", "ci95"}), "seconds"}``.

    ``batched`` (default: where every policy has a batched form) steps the games on the batched
    engine; ``workers`` processes (default 1 batched, else up to 2)."""
    if isinstance(agents, (str, bytes)) or not len(agents):
        raise InputError("crossplay: give a list of at least one agent")
    check_choice(fmt, "format", FORMATS)
    boards = check_count(boards, "boards")
    seed = check_int(seed, "seed", 0)
    cfg = load_rules(rules)
    if cfg.num_players != 4:
        raise InputError("crossplay: partners need the four-player game (num_players 4)")
    agents = list(agents)
    for a in agents:
        check_policy_name(a)
    opp = _opponent_team(opponents)
    for o in opp:
        check_policy_name(o)
    names = _labels(agents, labels)
    k = len(agents)
    if batched is None:
        from spades_env.eval.batched import specs_have_batched_forms

        batched = specs_have_batched_forms([*agents, *opp], cfg)
    if workers is None:
        from spades_env.eval.matchup import default_workers

        workers = default_workers(batched)
    t0 = time.perf_counter()
    cells: dict[tuple[int, int], dict[str, Any]] = {}
    board_m: dict[tuple[int, int], np.ndarray] = {}
    board_n: dict[tuple[int, int], np.ndarray] = {}
    opp_label = team_label(opp)
    for i in range(k):
        for j in range(i, k):
            team = (agents[i], agents[j])
            label = names[i] if i == j else f"{names[i]}+{names[j]}"
            results = run_duplicate(
                team,
                opp,
                boards,
                seed=seed,
                rules=cfg,
                fmt=fmt,
                workers=workers,
                progress=f"{label} vs {opp_label}" if progress else False,
                mixed=i != j,
                batched=batched,
            )
            cells[(i, j)] = summarize(results, fmt, (label, opp_label), seed=seed)
            board_m[(i, j)], board_n[(i, j)] = _board_margins(results)
    margin = [[cells[(min(i, j), max(i, j))]["margin_per_hand"] for j in range(k)] for i in range(k)]
    rob = robustness(board_m, board_n, k, seed=seed)
    for i, r in enumerate(rob):
        r["agent"] = names[i]
    return {
        "agents": names,
        "opponents": opp_label,
        "rules": cfg.to_dict(),
        "format": fmt,
        "boards": boards,
        "seed": seed,
        "margin_per_hand": margin,
        "hands": [[cells[(min(i, j), max(i, j))]["hands"] for j in range(k)] for i in range(k)],
        "cells": [[cells[(min(i, j), max(i, j))] for j in range(k)] for i in range(k)],
        "partner_robustness": rob,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def crossplay_table(result: dict[str, Any]) -> str:
    """The terminal table of a partner matrix: margin per hand (95% CI) of each pair, then the
    partner robustness of each agent."""
    names = result["agents"]
    k = len(names)
    w = max(24, *(len(n) + 2 for n in names))
    head = f"{'partner ->':<{w}}" + "".join(f"{n[:24]:>26}" for n in names)
    lines = [
        f"partner matrix vs {result['opponents']}: margin per hand (95% CI), {result['boards']} boards "
        f"of {result['format']}s each, seed {result['seed']}",
        head,
        "-" * len(head),
    ]
    for i in range(k):
        row = f"{names[i]:<{w}}"
        for j in range(k):
            m = result["margin_per_hand"][i][j]
            cell = f"{_num(m['mean']):+.1f} [{_num(m['ci95'][0]):+.1f}, {_num(m['ci95'][1]):+.1f}]"
            row += f"{cell:>26}"
        lines.append(row)
    if result["partner_robustness"]:
        lines.append("")
        lines.append(f"{'partner robustness':<{w}}{'self-play':>10}{'others':>10}{'gap (95% CI)':>26}")
        for r in result["partner_robustness"]:
            gap = f"{r['gap']:+.1f} [{r['ci95'][0]:+.1f}, {r['ci95'][1]:+.1f}]"
            lines.append(f"{r['agent']:<{w}}{r['self_play']:>+10.1f}{r['with_others']:>+10.1f}{gap:>26}")
    lines.append(f"({result['seconds']} s)")
    return "\n".join(lines)


def plot_crossplay(result: dict[str, Any], path: str | Path, title: str = "") -> Path | None:
    """The partner matrix as a heat map (margin per hand, each cell annotated with its 95% CI);
    None without matplotlib."""
    plt = pyplot()
    if plt is None:
        return None

    names = result["agents"]
    k = len(names)
    vals = np.array([[_num(result["margin_per_hand"][i][j]["mean"]) for j in range(k)] for i in range(k)])
    lim = float(np.nanmax(np.abs(vals))) if np.isfinite(vals).any() else 1.0
    lim = lim or 1.0
    fig, ax = plt.subplots(figsize=(max(5.0, 1.5 * k + 2.5), max(4.0, 1.2 * k + 1.8)))
    im = ax.imshow(vals, cmap="RdBu", vmin=-lim, vmax=lim)
    for i in range(k):
        for j in range(k):
            m = result["margin_per_hand"][i][j]
            if math.isnan(vals[i, j]):
                continue
            ax.text(
                j,
                i,
                f"{vals[i, j]:+.1f}\n[{_num(m['ci95'][0]):+.1f}, {_num(m['ci95'][1]):+.1f}]",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if abs(vals[i, j]) > 0.6 * lim else "black",
            )
    ax.set_xticks(range(k), names, fontsize=8, rotation=30, ha="right")
    ax.set_yticks(range(k), names, fontsize=8)
    ax.set_xlabel("partner")
    ax.set_ylabel("agent")
    fig.colorbar(im, ax=ax, label=f"margin per hand vs {result['opponents']} (95% CI)")
    ax.set_title(title or f"partner matrix vs {result['opponents']}", fontsize=10)
    return save_figure(fig, path)


__all__ = ["DEFAULT_BOARDS", "crossplay", "crossplay_table", "plot_crossplay", "robustness"]
