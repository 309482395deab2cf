"""The evaluation arena: duplicate deals, hands / games / best-of-3 matches, a knockout
bracket with byes, round-robin ratings, mixed partnerships, the partner matrix (crossplay),
best responses (exploit), and reports with confidence intervals (JSON, terminal table, PNG
plot)."""

from spades_env.eval.boards import BoardResult, Seating, make_jobs, seatings
from spades_env.eval.crossplay import crossplay
from spades_env.eval.duplicate import play_boards, run_duplicate
from spades_env.eval.exploit import exploit
from spades_env.eval.match import PlayResult, parse_team, play, team_label
from spades_env.eval.stats import bootstrap_ci, summarize, wilson_ci
from spades_env.eval.tournament import draw_bracket, run_bracket, run_mixed_table, run_round_robin

__all__ = [
    "BoardResult",
    "PlayResult",
    "Seating",
    "bootstrap_ci",
    "crossplay",
    "draw_bracket",
    "exploit",
    "make_jobs",
    "parse_team",
    "play",
    "play_boards",
    "run_bracket",
    "run_duplicate",
    "run_mixed_table",
    "run_round_robin",
    "seatings",
    "summarize",
    "team_label",
    "wilson_ci",
]
