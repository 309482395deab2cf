"""A network policy with L3 playing its cards after an opponent's Blind Nil (or Nil; or the partner's Nil), against the network alone.

    .venv/bin/python benchmarks/search_defence.py checkpoints/spades_family_v5
        [--teacher search:samples=200] [--against blind_nil [nil]] [--cover nil blind_nil]
        [--rules house tournament]
        [--games 400] [--seed 0] [--workers 2]

The policy acts everywhere except at its card plays in a hand where an opponent bid one of
``--against`` (default: Blind Nil), or where its partner bid one of ``--cover`` (default: none);
there the ``--teacher`` (L3, an information-fair search
over deals consistent with what the seat knows) plays the card. Both the policy alone and this
hybrid play the matrix rows (partnered with themselves against L2, and with an L2 partner
against two L2 players) on the same duplicate deals, so the difference is what decision-time
search in the Nil defence is worth. Where no opponent bids what ``--against`` names the two are
the same player.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spades_env.eval.matrix import matrix_rules, matrix_table, run_matrix  # noqa: E402
from spades_env.policies.checkpoint import load_policy  # noqa: E402
from spades_env.policies.composite import (  # noqa: E402
    DEFAULT_AGAINST,
    DEFENDED_BIDS,
    SearchDefencePolicy,
    search_seed,
)
from spades_env.policies.registry import resolve_policy  # noqa: E402


class SearchDefence:
    """A picklable factory ``f(seed, rules)`` (arena workers): the checkpoint's network alone
    (``teacher`` empty), or a :class:`SearchDefencePolicy` of it and ``teacher``."""

    def __init__(
        self, policy: str, teacher: str = "", against: tuple[str, ...] = DEFAULT_AGAINST, cover: tuple[str, ...] = ()
    ) -> None:
        self.policy, self.teacher, self.against, self.cover = policy, teacher, tuple(against), tuple(cover)
        what = "/".join(self.against) + (f", covers partner's {'/'.join(self.cover)}" if self.cover else "")
        self.__name__ = Path(policy).name + (f"+{teacher.split(':')[0]} vs {what}" if teacher else " network")

    def __call__(self, seed, rules):
        net = load_policy(self.policy, seed=seed, rules=rules, search_defence=False)
        if not self.teacher:
            return net
        bot = resolve_policy(self.teacher, search_seed(seed), rules)
        return SearchDefencePolicy(net, bot, self.__name__, against=self.against, cover=self.cover)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="a checkpoint folder (its network: a policy.search_defence of its own is left out)")
    p.add_argument("--teacher", default="search:samples=200")
    p.add_argument(
        "--against", nargs="+", choices=sorted(DEFENDED_BIDS), default=list(DEFAULT_AGAINST),
        help="the opponents' bids after which the teacher plays (default: blind_nil)",
    )
    p.add_argument(
        "--cover", nargs="+", choices=sorted(DEFENDED_BIDS), default=[],
        help="the partner's bids after which the teacher plays too (default: none)",
    )
    p.add_argument("--rules", nargs="+", default=["house", "tournament"])
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    rules = [matrix_rules(r) for r in args.rules]
    for spec in (SearchDefence(args.policy), SearchDefence(args.policy, args.teacher, tuple(dict.fromkeys(args.against)), tuple(dict.fromkeys(args.cover)))):
        for entry in run_matrix(
            spec, args.games, rules, opponents=("heuristic",), seed=args.seed, workers=args.workers, progress=False
        ):
            print(matrix_table(spec.__name__, entry), "\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
