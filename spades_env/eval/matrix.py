"""The rule matrix: one policy's gauntlet under several rule settings, a table per rules and
one plot.

``spades matrix spades4_v1 --games 100 --out runs/matrix`` plays the gauntlet
(:func:`spades_env.eval.gauntlet.run_gauntlet`: duplicate games of the policy partnered with
itself against each opponent team, and of the policy with a ``--partner`` against two of them)
under each ``--rules`` (default: ``tournament``, ``house`` and ``no_blind``, the tournament
rules with Blind Nil off), prints a table per rules (games won and margin per hand with 95%
CIs, the policy team's set rate, Nil success and Blind Nil bids per hand), and writes
``matrix.json`` and ``matrix.png`` (margin and games won per matchup, one bar per rules).

A ``--rules`` item is read by :func:`spades_env.core.rules.rules_item`: a preset name, a rules
YAML path, a named variant (``no_blind``), or a JSON object of rule keys on the tournament rules
(``'{"target_score": 300}'``), optionally named ``label=...``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spades_env.core.rules import RulesConfig
from spades_env.core.validate import InputError, check_count
from spades_env.eval.gauntlet import DEFAULT_OPPONENTS, DEFAULT_PARTNER, run_gauntlet
from spades_env.eval.report import pyplot, save_figure

DEFAULT_RULES = ("tournament", "house", "no_blind")


def run_matrix(
    policy: str,
    games: int,
    rules: Sequence[tuple[str, RulesConfig]],
    *,
    opponents: Sequence[str] = DEFAULT_OPPONENTS,
    partner: str | None = DEFAULT_PARTNER,
    fmt: str = "game",
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """One entry per rules: ``{"label", "rules" (dict), "seconds", "matchups": [summaries]}``."""
    check_count(games, "games")
    out = []
    for label, r in rules:
        if r.num_players != 4:
            raise InputError(f"rules {label!r}: the matrix plays partnerships (num_players 4)")
        t0 = time.perf_counter()
        summaries = run_gauntlet(
            policy,
            games,
            rules=r,
            opponents=opponents,
            partner=partner,
            fmt=fmt,
            seed=seed,
            workers=workers,
            progress=progress,
        )
        out.append(
            {
                "label": label,
                "rules": r.to_dict(),
                "seconds": round(time.perf_counter() - t0, 1),
                "matchups": summaries,
            }
        )
    return out


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def _rate(r: dict[str, Any]) -> str:
    if not r or not r.get("n") or r.get("rate") is None:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['ci95'][0]:.1f}, {100 * r['ci95'][1]:.1f}]"


def matrix_table(policy: str, entry: dict[str, Any]) -> str:
    """The terminal table of one rules of the matrix: one row per matchup."""
    ms = entry["matchups"]
    key = "game_win" if ms and "game_win" in ms[0] else "hand_win"
    head = (
        f"{'matchup':<30} {'hands':>6} {key.replace('_', ' ') + ' (95% CI)':>22} "
        f"{'margin/hand (95% CI)':>24} {'set':>6} {'nil made':>9} {'BN/hand':>8}"
    )
    lines = [f"{entry['label']}: {policy} ({entry['seconds']} s)", head, "-" * len(head)]
    for s in ms:
        m = s["margin_per_hand"]
        margin = f"{_num(m['mean']):+.1f} [{_num(m['ci95'][0]):+.1f}, {_num(m['ci95'][1]):+.1f}]"
        t = s["teams"][0]
        nil = t["nil_success"]
        nil_txt = f"{100 * nil['rate']:.0f}% /{nil['n']}" if nil["n"] else "-"
        lines.append(
            f"{s['team_a'] + ' vs ' + s['team_b']:<30} {s['hands']:>6} {_rate(s[key]):>22} {margin:>24} "
            f"{100 * _num(t['set_rate']['rate']):>5.1f}% {nil_txt:>9} {t['blind_nil_bids_per_hand']:>8.2f}"
        )
    return "\n".join(lines)


def plot_matrix(entries: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path | None:
    """Margin per hand and games won per matchup, one bar (95% CI) per rules; None without
    matplotlib."""
    plt = pyplot()
    if plt is None:
        return None

    matchups = [f"{s['team_a']}\nvs {s['team_b']}" for s in entries[0]["matchups"]]
    key = "game_win" if "game_win" in entries[0]["matchups"][0] else "hand_win"
    n, k = len(matchups), len(entries)
    width = 0.8 / k
    fig, axes = plt.subplots(1, 2, figsize=(max(9, 1.6 * n * max(k, 2) / 2 + 5), 4.8))
    for j, e in enumerate(entries):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(n)]
        ms = e["matchups"]
        mean = [_num(s["margin_per_hand"]["mean"]) for s in ms]
        lo = [max(0.0, m - _num(s["margin_per_hand"]["ci95"][0])) for m, s in zip(mean, ms, strict=True)]
        hi = [max(0.0, _num(s["margin_per_hand"]["ci95"][1]) - m) for m, s in zip(mean, ms, strict=True)]
        axes[0].bar(xs, mean, width, yerr=[lo, hi], capsize=3, label=e["label"])
        rate = [_num(s[key]["rate"]) for s in ms]
        rlo = [
            max(0.0, r - s[key]["ci95"][0]) if not math.isnan(r) else 0 for r, s in zip(rate, ms, strict=True)
        ]
        rhi = [
            max(0.0, s[key]["ci95"][1] - r) if not math.isnan(r) else 0 for r, s in zip(rate, ms, strict=True)
        ]
        axes[1].bar(xs, rate, width, yerr=[rlo, rhi], capsize=3, label=e["label"])
    axes[0].axhline(0, color="black", lw=0.8)
    axes[0].set_ylabel("points per hand margin (95% CI)")
    axes[1].axhline(0.5, color="black", lw=0.8, ls="--")
    axes[1].set_ylim(0, 1)
    axes[1].set_ylabel(f"{key.replace('_', ' ')} rate (Wilson 95% CI)")
    for ax in axes:
        ax.set_xticks(range(n), matchups, fontsize=8)
        ax.legend(fontsize=8, title="rules")
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)


__all__ = [
    "DEFAULT_RULES",
    "matrix_table",
    "plot_matrix",
    "run_matrix",
]
