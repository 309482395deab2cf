"""Reports: terminal tables, JSON files and PNG plots (matplotlib, Agg backend) of arena results."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _f(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:+.{digits}f}"


def _pct(rate: dict[str, Any]) -> str:
    if not rate["n"]:
        return "-"
    lo, hi = rate["ci95"]
    return f"{100 * rate['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (n={rate['n']})"


def eval_table(s: dict[str, Any]) -> str:
    """Terminal table of one matchup summary (see ``stats.summarize``)."""
    m = s["margin_per_hand"]
    a, b = s["team_a"], s["team_b"]
    lines = [
        f"{a}  vs  {b}   format={s['format']}  boards={s['boards']}  runs={s['runs']}  hands={s['hands']}",
        f"  margin per hand ({a} - {b}): {_f(m['mean'])}  95% CI [{_f(m['ci95'][0])}, {_f(m['ci95'][1])}]",
        f"  hand win rate {a}: {_pct(s['hand_win'])}",
    ]
    if "note" in s:
        lines.append(f"  NOTE: {s['note']}")
    if "game_win" in s:
        lines.append(f"  game win rate {a}: {_pct(s['game_win'])}  truncated games: {s['truncated_games']}")
    if "match_win" in s:
        lines.append(f"  match win rate {a}: {_pct(s['match_win'])}")
    w = max(len(a), len(b), 4)
    lines.append(
        f"  {'team':<{w}}  {'pts/hand':>8}  {'set rate':>24}  {'nil made':>24}  {'blind nil made':>24}  {'bags/hand':>9}  {'bid err':>7}"
    )
    for t in s["teams"]:
        name = t["name"]

        def short(r: dict[str, Any]) -> str:
            if not r["n"]:
                return "-"
            return f"{100 * r['rate']:.1f}% [{100 * r['ci95'][0]:.0f},{100 * r['ci95'][1]:.0f}] n={r['n']}"

        lines.append(
            f"  {name:<{w}}  {_f(t['points_per_hand']):>8}  {short(t['set_rate']):>24}  {short(t['nil_success']):>24}  "
            f"{short(t['blind_nil_success']):>24}  {t['bags_per_hand'] or 0:>9.2f}  {t['bid_error'] or 0:>7.2f}"
        )
    return "\n".join(lines)


def matrix_table(
    names: Sequence[str],
    matrix: Sequence[Sequence[float | None]],
    corner: str = "",
    ci: Sequence[Sequence[Sequence[float] | None]] | None = None,
) -> str:
    """A square table of numbers (row against column), with ``[low, high]`` when ``ci`` is given."""

    def cell(i: int, j: int) -> str:
        x = matrix[i][j]
        if x is None or ci is None or ci[i][j] is None:
            return _f(x)
        lo, hi = ci[i][j]
        return f"{_f(x)} [{_f(lo, 0)},{_f(hi, 0)}]"

    cells = [[cell(i, j) for j in range(len(names))] for i in range(len(names))]
    w = max([len(n) for n in names] + [len(c) for row in cells for c in row] + [len(corner), 7])
    rows = [f"{corner:<{w}}  " + "  ".join(f"{n:>{w}}" for n in names)]
    for name, row in zip(names, cells, strict=True):
        rows.append(f"{name:<{w}}  " + "  ".join(f"{c:>{w}}" for c in row))
    return "\n".join(rows)


def round_robin_table(rr: dict[str, Any]) -> str:
    """Standings and margin matrix of a round robin."""
    lines = [f"Round robin ({rr['format']}, {rr['boards_per_pair']} boards per pair, seed {rr['seed']})"]
    for k, r in enumerate(rr["standings"], 1):
        extra = f"  mu {r['mu']:.2f}  sigma {r['sigma']:.2f}" if "mu" in r else ""
        lines.append(f"  {k}. {r['team']:<28} rating {r['rating']:8.2f} ({r['system']}){extra}")
    lines.append("Margin per hand, row team minus column team [95% CI]:")
    lines.append(matrix_table(rr["teams"], rr["margin_matrix"], ci=rr.get("ci95_matrix")))
    return "\n".join(lines)


def bracket_table(br: dict[str, Any]) -> str:
    """The bracket round by round and its champion."""
    lines = [f"Bracket ({br['format']}, {br['boards_per_match']} boards per match, seed {br['seed']})"]
    for k, rnd in enumerate(br["rounds"], 1):
        lines.append(f"  Round {k}:")
        for m in rnd:
            if m["bye"]:
                lines.append(f"    {m['a']:<24} bye")
            else:
                s = m["summary"]
                lines.append(
                    f"    {m['a']:<24} vs {m['b']:<24} -> {m['winner']} ({m['decided_by']}; "
                    f"margin/hand {_f(s['margin_per_hand']['mean'])})"
                )
    lines.append(f"  Champion: {br['champion']}")
    return "\n".join(lines)


def mixed_table(mx: dict[str, Any]) -> str:
    """The mixed-partner table: margin per hand of X+Y against the reference team."""
    return (
        f"Mixed partners against {mx['against']} ({mx['format']}, {mx['boards_per_cell']} boards per cell): "
        "margin per hand of row+column team [95% CI]\n"
        + matrix_table(mx["policies"], mx["margin_matrix"], "partner", mx.get("ci95_matrix"))
    )


def _clean(x: Any) -> Any:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_json(path: str | Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as indented JSON (NaN as null); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(_clean(data), indent=2, sort_keys=False) + "\n")
    return p


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no window), or None without
    matplotlib: every plot of the arena draws through it."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_matchups(summaries: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path | None:
    """Bar plots of margin per hand and win rates (95% CIs) of matchups; None without matplotlib."""
    plt = pyplot()
    if plt is None:
        return None
    labels = [f"{s['team_a']}\nvs {s['team_b']}" for s in summaries]
    x = list(range(len(summaries)))
    single = len(summaries) == 1
    fig, axes = plt.subplots(
        1, 3 if single else 2, figsize=(max(8, 2.2 * len(summaries) + 4) + 4 * single, 4.5)
    )

    def num(x: float | None, default: float) -> float:
        return default if x is None or (isinstance(x, float) and math.isnan(x)) else x

    mean = [num(s["margin_per_hand"]["mean"], 0.0) for s in summaries]
    lo = [max(0.0, m - num(s["margin_per_hand"]["ci95"][0], m)) for m, s in zip(mean, summaries, strict=True)]
    hi = [max(0.0, num(s["margin_per_hand"]["ci95"][1], m) - m) for m, s in zip(mean, summaries, strict=True)]
    axes[0].bar(x, mean, yerr=[lo, hi], capsize=5, color="tab:blue")
    axes[0].axhline(0, color="black", lw=0.8)
    axes[0].set_ylabel("points per hand margin (95% CI)")
    axes[0].set_xticks(x, labels, fontsize=8)
    key = (
        "match_win"
        if summaries and "match_win" in summaries[0]
        else "game_win"
        if summaries and "game_win" in summaries[0]
        else "hand_win"
    )
    rates = [s[key]["rate"] or 0.0 for s in summaries]
    rlo = [max(0.0, r - s[key]["ci95"][0]) for r, s in zip(rates, summaries, strict=True)]
    rhi = [max(0.0, s[key]["ci95"][1] - r) for r, s in zip(rates, summaries, strict=True)]
    axes[1].bar(x, rates, yerr=[rlo, rhi], capsize=5, color="tab:green")
    axes[1].axhline(0.5, color="black", lw=0.8, ls="--")
    axes[1].set_ylim(0, 1)
    axes[1].set_ylabel(f"{key.replace('_', ' ')} rate of first team (Wilson 95% CI)")
    axes[1].set_xticks(x, labels, fontsize=8)
    if single:  # per-team rates of the one matchup
        kinds = [
            ("set_rate", "set rate"),
            ("nil_success", "nil made"),
            ("blind_nil_success", "blind nil made"),
        ]
        width = 0.38
        for k, (t, color) in enumerate(zip(summaries[0]["teams"], ("tab:blue", "tab:orange"), strict=True)):
            xs, ys, el, eh = [], [], [], []
            for i, (key2, _) in enumerate(kinds):
                r = t[key2]
                if r["n"]:
                    xs.append(i + (k - 0.5) * width)
                    ys.append(r["rate"])
                    el.append(max(0.0, r["rate"] - r["ci95"][0]))
                    eh.append(max(0.0, r["ci95"][1] - r["rate"]))
            axes[2].bar(xs, ys, width, yerr=[el, eh], capsize=4, color=color, label=t["name"])
        axes[2].set_xticks(range(len(kinds)), [name for _, name in kinds], fontsize=8)
        axes[2].set_ylim(0, 1)
        axes[2].set_ylabel("rate (Wilson 95% CI)")
        axes[2].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)


def plot_tournament(
    rr: dict[str, Any] | None,
    path: str | Path,
    mixed: dict[str, Any] | None = None,
    bracket: dict[str, Any] | None = None,
) -> Path | None:
    """Ratings (with sigma) and the margin matrix of a round robin, the mixed-partner matrix
    and the bracket, those that are given; None without matplotlib (or nothing to plot)."""
    plt = pyplot()
    if plt is None:
        return None
    import numpy as np

    panels = [
        k
        for k, v in (("ratings", rr), ("matrix", rr), ("mixed", mixed), ("bracket", bracket))
        if v is not None
    ]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.8), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        if panel == "bracket":
            ax.axis("off")
            lines = []
            for k, rnd in enumerate(bracket["rounds"], 1):
                lines.append(f"Round {k}")
                for m in rnd:
                    lines.append(
                        f"  {m['a']}: bye" if m["bye"] else f"  {m['a']} v {m['b']}\n    -> {m['winner']}"
                    )
            lines.append(f"Champion: {bracket['champion']}")
            ax.text(0.0, 1.0, "\n".join(lines), family="monospace", fontsize=8, va="top", ha="left")
            ax.set_title("Knockout bracket")
        elif panel == "ratings":
            st = rr["standings"]
            y = list(range(len(st)))[::-1]
            err = [r.get("sigma", 0.0) for r in st]
            ax.barh(y, [r["rating"] for r in st], xerr=err, capsize=4, color="tab:purple")
            ax.set_yticks(y, [r["team"] for r in st], fontsize=8)
            ax.set_xlabel(f"rating ({st[0]['system']}{', ordinal +/- sigma' if 'sigma' in st[0] else ''})")
            ax.set_title("Round-robin ratings")
        else:
            src = rr if panel == "matrix" else mixed
            names = src["teams"] if panel == "matrix" else src["policies"]
            m = np.array(
                [[np.nan if v is None else v for v in row] for row in src["margin_matrix"]], dtype=float
            )
            lim = max(1.0, float(np.nanmax(np.abs(m))) if np.isfinite(m).any() else 1.0)
            im = ax.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
            ax.set_yticks(range(len(names)), names, fontsize=8)
            for i in range(len(names)):
                for j in range(len(names)):
                    if np.isfinite(m[i, j]):
                        ax.text(j, i, f"{m[i, j]:+.0f}", ha="center", va="center", fontsize=8)
            fig.colorbar(im, ax=ax, shrink=0.8, label="points per hand")
            ax.set_title(
                "Margin per hand (row - column)"
                if panel == "matrix"
                else f"Mixed partners vs {src['against']}"
            )
    return save_figure(fig, path)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Lay out, write (creating the folder) and close a figure; return its path."""
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=100)
    pyplot().close(fig)
    return p
