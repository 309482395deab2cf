"""A policy's model-card rows, per rules preset: against L2, `blind` and L3, and with an L2 partner.

    .venv/bin/python benchmarks/policy_report.py checkpoints/spades_family_v4 [--min-hands 1000]
        [--rows vs_l2,vs_blind,l2_partner,vs_l3] [--presets tournament,house,no_blind]
        [--search search:samples=200] [--workers 2] [--out runs/policy_report]

Every row is a duplicate matchup (partnerships swapped on the same deals; four runs per deal
for the mixed pair) in games to the preset's target, played board by board until it holds at
least ``--min-hands`` hands (``benchmarks/baselines_report.play_row``). It prints a markdown
table (margin per hand with its bootstrap 95% CI over boards, games won with the Wilson 95% CI,
both teams' set rate, Nil and Blind Nil success, Blind Nil bids and bags per hand) and writes
every summary to ``--out/<preset>_<row>.json``. The rows:

* ``vs_l2``: the policy partnered with itself against two L2 (``heuristic``) players;
* ``vs_blind``: against two ``blind`` players (L2's card play, Blind Nil whenever allowed);
* ``l2_partner``: the policy with an L2 partner against two L2 players;
* ``vs_l3``: against two L3 players (``--search``; ``search:samples=200`` takes 5-13 ms a
  decision here, within issue 11's 0.1 s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from baselines_report import HEADER, PRESETS, fmt_row, play_row  # noqa: E402


def rows(policy: str, search: str) -> dict[str, tuple]:
    """Row name -> (team A, team B)."""
    return {
        "vs_l2": (policy, "heuristic"),
        "vs_blind": (policy, "blind"),
        "l2_partner": ((policy, "heuristic"), "heuristic"),
        "vs_l3": (policy, search),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", help="a checkpoint path or a bots name")
    ap.add_argument("--rows", default="vs_l2,vs_blind,l2_partner,vs_l3")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--min-hands", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search", default="search:samples=200", help="the L3 of the vs_l3 rows")
    ap.add_argument("--out", type=Path, default=Path("runs/policy_report"))
    a = ap.parse_args()
    # every module the workers need, imported before they fork
    import spades_env.policies.bots.heuristic  # noqa: F401
    import spades_env.policies.bots.search  # noqa: F401
    import spades_env.policies.checkpoint  # noqa: F401

    table = rows(a.policy, a.search)
    names = [r.strip() for r in a.rows.split(",") if r.strip()]
    presets = [p.strip() for p in a.presets.split(",") if p.strip()]
    bad = [n for n in names if n not in table] + [p for p in presets if p not in PRESETS]
    if bad:
        ap.error(f"unknown rows or presets {bad}; rows: {list(table)}, presets: {list(PRESETS)}")
    a.out.mkdir(parents=True, exist_ok=True)
    lines = []
    t0 = time.perf_counter()
    for preset in presets:
        for n in names:
            ta, tb = table[n]
            label = f"{preset}_{n}"
            print(f"\n{label}: {ta} vs {tb}", flush=True)
            r = play_row(preset, ta, tb, a.min_hands, a.workers, a.seed, "", label)
            (a.out / f"{label}.json").write_text(json.dumps(r, indent=2, default=float))
            lines.append(fmt_row(n, r))
            print(HEADER)
            print(lines[-1], flush=True)
    print(f"\n{a.policy}, at least {a.min_hands} hands a row ({time.perf_counter() - t0:.0f} s)\n")
    print(HEADER)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
