"""A gauntlet: one policy against the baseline ladder, with a table and a plot.

``spades gauntlet spades4_v1 --games 200 --out runs/gauntlet`` plays duplicate
games to 500 of the policy (partnered with itself) against L0 random, L1 greedy and L2
heuristic teams, and of the policy partnered with an L2 player (no shared conventions) against
L2 heuristic, then prints one row per matchup and writes ``gauntlet.json`` and
``gauntlet.png``. In the two-player game (``--rules two_player``) the policy plays each
opponent heads-up, seats swapped on every deal, and there is no partner row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spades_env.core.rules import RulesConfig
from spades_env.core.validate import check_count
from spades_env.eval.match import spec_name
from spades_env.eval.matchup import run_matchup
from spades_env.eval.report import _f, _pct

DEFAULT_OPPONENTS = ("random", "greedy", "heuristic")
DEFAULT_PARTNER = "heuristic"


def gauntlet_matchups(
    policy: str, opponents: Sequence[str] = DEFAULT_OPPONENTS, partner: str | None = DEFAULT_PARTNER
) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """The (team A, team B) pairs of a gauntlet: the policy self-partnered against each
    opponent, then (when ``partner`` is given) the policy with ``partner`` against ``partner``."""
    pairs = [((policy, policy), (o, o)) for o in opponents]
    if partner:
        pairs.append(((policy, partner), (partner, partner)))
    return pairs


def _labels(k: int, n_self: int, team_a: tuple[str, str], team_b: tuple[str, str]) -> tuple[str, str]:
    a = "policy" if k < n_self else f"policy+{spec_name(team_a[1])}"
    return a, spec_name(team_b[0])


def run_gauntlet(
    policy: str,
    games: int,
    *,
    rules: RulesConfig,
    opponents: Sequence[str] = DEFAULT_OPPONENTS,
    partner: str | None = DEFAULT_PARTNER,
    fmt: str = "game",
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    batched: bool = True,
) -> list[dict[str, Any]]:
    """One summary (``stats.summarize``) per matchup, each over about ``games`` units
    (an integer of at least 1). ``batched`` (default): many games stepped at once on the
    batched engine in this process, one policy call per step for all its seats
    (:mod:`spades_env.eval.batched`); ``False``: one game at a time on ``workers`` processes
    (the same results). Two-player rules: no partner matchup."""
    check_count(games, "games")
    if rules.num_players == 2:
        partner = None  # heads-up: no partners
    out = []
    for k, (team_a, team_b) in enumerate(gauntlet_matchups(policy, opponents, partner)):
        label_a, label_b = _labels(k, len(opponents), team_a, team_b)
        s = run_matchup(
            team_a,
            team_b,
            games,
            rules=rules,
            fmt=fmt,
            seed=seed,
            workers=workers,
            progress=f"{label_a} vs {label_b}" if progress else False,
            batched=batched,
            mixed=k >= len(opponents),
            labels=(label_a, label_b),
        )
        out.append(s)
    return out


def gauntlet_table(policy: str, summaries: Sequence[dict[str, Any]]) -> str:
    """The terminal table of a gauntlet: one row per matchup."""
    key = "game_win" if summaries and "game_win" in summaries[0] else "hand_win"
    head = (
        f"{'matchup':<28} {'units':>6} {key.replace('_', ' ') + ' (95% CI)':>24} {'margin/hand (95% CI)':>26}"
    )
    lines = [f"gauntlet of {policy}", head, "-" * len(head)]
    for s in summaries:
        m = s["margin_per_hand"]
        margin = f"{_f(m['mean'])} [{_f(m['ci95'][0])}, {_f(m['ci95'][1])}]"
        lines.append(
            f"{s['team_a'] + ' vs ' + s['team_b']:<28} {s[key]['n']:>6} {_pct(s[key]):>24} {margin:>26}"
        )
    return "\n".join(lines)


__all__ = ["DEFAULT_OPPONENTS", "DEFAULT_PARTNER", "gauntlet_matchups", "gauntlet_table", "run_gauntlet"]
