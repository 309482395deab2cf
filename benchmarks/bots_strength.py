"""Quick duplicate head-to-heads of the scripted bots.

Each seed's deals are played twice with the partnerships swapped (the deal sequence depends on
the seed only), so the luck of the cards cancels. Prints points-per-hand margin, game win rate,
set rate, Nil success and bags per hand of team A.

    python benchmarks/bots_strength.py heuristic greedy --games 100
    python benchmarks/bots_strength.py search:samples=16 heuristic --hands 200
    python benchmarks/bots_strength.py cheat:samples=1 search:samples=150 --hands 100
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spades_env.core import layout as L  # noqa: E402
from spades_env.core.game import SpadesGame  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from spades_env.policies.bots import make_policy  # noqa: E402
from spades_env.policies.driver import bind_true_state, drive  # noqa: E402


class _Timed:
    """A seated policy that adds its card-play decision time to ``clock[seat]``."""

    def __init__(self, policy, game: SpadesGame, clock: list | None, seat: int) -> None:
        self.policy, self.game, self.clock, self.seat = policy, game, clock, seat

    def act(self, obs, mask):
        t = time.perf_counter()
        a = self.policy.act(obs, mask)
        if self.clock is not None and self.game.state[L.PHASE] == L.PH_PLAY:
            self.clock[self.seat][0] += time.perf_counter() - t
            self.clock[self.seat][1] += 1
        return a


def play(
    policies, rules, seed: int, max_hands: int | None = None, stats=None, clock=None
) -> tuple[int, int, int]:
    """Play one game to the target (or ``max_hands`` hands) with ``policies[seat]``, one hand
    at a time through the one driver (``spades_env.policies.driver.drive``, one-hand episodes).
    Returns (score NS, score EW, hands); appends per-hand records to ``stats`` and adds
    per-seat (seconds, card-play decisions) to ``clock``."""
    g = SpadesGame(rules, seed=seed, episode="hand")
    bind_true_state(g, policies)  # the cheating upper bound reads the true deal
    seated = [_Timed(p, g, clock, s) for s, p in enumerate(policies)]
    st = g.state
    hands = 0
    while True:
        drive(g, seated)  # one hand: the episode ends with it
        hands += 1
        if stats is not None:
            stats.append(
                (
                    [int(x) for x in st[L.BIDS : L.BIDS + 4]],
                    [int(x) for x in st[L.TRICKS_WON : L.TRICKS_WON + 4]],
                    [int(st[L.HAND_DELTA]), int(st[L.HAND_DELTA + 1])],
                )
            )
        if st[L.PHASE] != L.PH_HAND_END or (max_hands is not None and hands >= max_hands):
            break
        g.next_hand()
    return int(st[L.SCORES]), int(st[L.SCORES + 1]), hands


def team_stats(stats, team: int, n: int):
    """(contracts, sets, nils, nils made, bags) of ``team`` over hand records."""
    contracts = sets = nils = nils_made = bags = 0
    for bids, tricks, _ in stats:
        seats = range(team, n, 2)
        c = sum(bids[s] for s in seats if bids[s] not in (0, 14))
        t = sum(tricks[s] for s in seats if bids[s] not in (0, 14))
        for s in seats:
            if bids[s] in (0, 14):
                nils += 1
                nils_made += tricks[s] == 0
                bags += tricks[s]
        if c > 0:
            contracts += 1
            sets += t < c
            bags += max(0, t - c)
    return contracts, sets, nils, nils_made, bags


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z, p = 1.96, k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="team A policy (registry name)")
    ap.add_argument("b", help="team B policy")
    ap.add_argument("--games", type=int, default=50, help="duplicate game pairs to 500")
    ap.add_argument("--hands", type=int, default=0, help="play single hands instead of games (pairs)")
    ap.add_argument("--rules", default="tournament")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rules = load_rules(args.rules)
    n = rules.num_players
    single = args.hands > 0
    count = args.hands if single else args.games
    margins, wins, a_stats, b_stats = [], 0, [], []
    a_hands = 0
    a_clock = [0.0, 0]
    t0 = time.time()
    for i in range(count):
        seed = args.seed * 1_000_003 + i
        for swap in (0, 1):
            pol = []
            for s in range(n):
                name = args.a if (s % 2 == 0) != bool(swap) else args.b
                pol.append(make_policy(name, seed=seed * 8 + s, rules=rules))
            stats = []
            clock = [[0.0, 0] for _ in range(n)]
            ns, ew, hands = play(pol, rules, seed, max_hands=1 if single else None, stats=stats, clock=clock)
            a_team = swap  # team index of A
            for s in range(a_team, n, 2):
                a_clock[0] += clock[s][0]
                a_clock[1] += clock[s][1]
            sa, sb = (ns, ew) if a_team == 0 else (ew, ns)
            margins.append((sa - sb) / hands)
            wins += sa > sb
            a_hands += hands
            rotated = [(b[1:] + b[:1], t[1:] + t[:1], d[::-1]) for b, t, d in stats]  # seat 1 first
            a_stats += stats if a_team == 0 else rotated
            b_stats += stats if a_team == 1 else rotated
        if (i + 1) % max(1, count // 10) == 0:
            print(f"  {i + 1}/{count} pairs, {time.time() - t0:.0f}s", flush=True)
    m = np.array(margins)
    games = len(margins)
    lo, hi = wilson(wins, games)
    ca, sa_, na, nma, bga = team_stats(a_stats, 0, n)
    cb, sb_, nb, nmb, bgb = team_stats(b_stats, 0, n)
    rng = np.random.default_rng(0)
    boot = [rng.choice(m, m.size).mean() for _ in range(1000)]
    print(
        f"{args.a} vs {args.b}  ({args.rules}, {count} duplicate pairs, {a_hands} hands, {time.time() - t0:.0f}s)"
    )
    print(
        f"  points/hand margin A-B: {m.mean():+.1f}  (95% CI {np.percentile(boot, 2.5):+.1f}..{np.percentile(boot, 97.5):+.1f})"
    )
    print(
        f"  A: {1000 * a_clock[0] / max(a_clock[1], 1):.1f} ms per card-play decision ({a_clock[1]} decisions)"
    )
    print(f"  A wins {wins}/{games} = {wins / games:.1%}  (Wilson 95% {lo:.1%}..{hi:.1%})")
    for name, c, s, nn, nm, bg in ((args.a, ca, sa_, na, nma, bga), (args.b, cb, sb_, nb, nmb, bgb)):
        print(
            f"  {name:<20} set {s}/{c} = {s / max(c, 1):.1%}   nil {nm}/{nn} = {nm / max(nn, 1):.1%}   bags/hand {bg / max(len(a_stats), 1):.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
