"""The evaluation arena: duplicate deals, hands / games / best-of-3 matches, a knockout
bracket with byes, round-robin ratings, mixed partnerships, and reports with confidence
intervals (JSON, terminal table, PNG plot)."""

from spades_env.eval.duplicate import BoardResult, Seating, make_jobs, play_boards, run_duplicate, seatings
from spades_env.eval.match import (
    PlayResult,
    check_policy_name,
    parse_team,
    play,
    register_policy_loader,
    resolve_policy,
    team_label,
)
from spades_env.eval.stats import bootstrap_ci, summarize, wilson_ci
from spades_env.eval.tournament import draw_bracket, run_bracket, run_mixed_table, run_round_robin

__all__ = [
    "BoardResult",
    "PlayResult",
    "Seating",
    "bootstrap_ci",
    "check_policy_name",
    "draw_bracket",
    "make_jobs",
    "parse_team",
    "play",
    "play_boards",
    "register_policy_loader",
    "resolve_policy",
    "run_bracket",
    "run_duplicate",
    "run_mixed_table",
    "run_round_robin",
    "seatings",
    "summarize",
    "team_label",
    "wilson_ci",
]
