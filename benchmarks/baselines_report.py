"""The strength of the baselines, per rules preset: the tables of docs/baselines.md.

    .venv/bin/python benchmarks/baselines_report.py [--rows all] [--min-hands 1000]
        [--workers 2] [--search search:samples=200] [--worktree /tmp/l2_old] [--out runs/baselines]

Every row is a duplicate matchup (partnerships swapped on the same deals) in games to the
preset's target, played board by board until it holds at least ``--min-hands`` hands; it
prints the margin per hand (bootstrap 95% CI over boards), the game win rate (Wilson 95% CI)
and both teams' set rate, Nil and Blind Nil success, Blind Nil bids and bags per hand, and
writes everything to ``--out/<row>.json``. ``heuristic@old`` is L2 as it was at ``--commit``
(see ``benchmarks/legacy_policy.py``). The presets: ``tournament``, ``house`` (Blind Nil only
100 behind) and ``no_blind`` (tournament rules without Blind Nil). Also printed: the Blind Nil
table L2 reads (success rate and margin of declaring and seeing, per exchange size), and the
search's seconds per decision by phase.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

PRESETS = {
    "tournament": "tournament",
    "house": "house",
    "no_blind": {"blind_nil": False, "blind_nil_exchange": 0},
}


def rows(search: str) -> dict[str, tuple[str, str, str]]:
    """Row name -> (preset, team A, team B)."""
    return {
        "t_blind_vs_l2": ("tournament", "blind", "heuristic"),
        "t_l3_vs_blind": ("tournament", search, "blind"),
        "t_l2_vs_old": ("tournament", "heuristic", "heuristic@old"),
        "t_l3_vs_l2": ("tournament", search, "heuristic"),
        "h_l3_vs_l2": ("house", search, "heuristic"),
        "h_l2_vs_old": ("house", "heuristic", "heuristic@old"),
        "n_l3_vs_l2": ("no_blind", search, "heuristic"),
        "n_l2_vs_old": ("no_blind", "heuristic", "heuristic@old"),
    }


def _spec(name: str, worktree: str):
    if name == "heuristic@old":
        from legacy_policy import LegacyFactory

        return LegacyFactory(worktree)
    return name


def play_row(preset, a, b, min_hands: int, workers: int, seed: int, worktree: str, label: str) -> dict:
    """Boards of A against B until ``min_hands`` hands are played; the arena's summary. A team
    is one name (two of it) or a pair of names (a mixed pair: four runs per deal)."""
    from spades_env.core.rules import load_rules
    from spades_env.eval.duplicate import make_jobs, play_board
    from spades_env.eval.stats import summarize

    base = PRESETS[preset]
    rules = load_rules(base) if isinstance(base, str) else load_rules("tournament").replace(**base)
    ta = tuple(_spec(x, worktree) for x in a) if isinstance(a, tuple) else (_spec(a, worktree),) * 2
    tb = tuple(_spec(x, worktree) for x in b) if isinstance(b, tuple) else (_spec(b, worktree),) * 2
    jobs = make_jobs(ta, tb, 5000, seed=seed, rules=rules, fmt="game")
    results, hands = [], 0
    t0 = time.perf_counter()
    last = t0
    with mp.get_context("fork").Pool(workers) as pool:
        for r in pool.imap(play_board, jobs, chunksize=1):
            results.append(r)
            hands += sum(len(res.hands) for _, res in r.runs)
            if time.perf_counter() - last > 10:
                last = time.perf_counter()
                print(f"  {label}: {len(results)} boards, {hands} hands, {last - t0:.0f} s", flush=True)
            if hands >= min_hands:
                pool.terminate()
                break
    names = tuple("+".join(t) if isinstance(t, tuple) else t for t in (a, b))
    out = summarize(results, "game", names, seed=seed)
    out["preset"] = preset
    out["seconds"] = time.perf_counter() - t0
    return out


def search_timing(search: str, hands: int = 3) -> dict[str, float]:
    """Mean seconds per decision of the search by phase (tournament rules, four search seats)."""
    from spades_env.core.game import SpadesGame
    from spades_env.core.observation import OBS_SIZE, encode_observation
    from spades_env.policies.bots import make_policy

    g = SpadesGame("tournament", seed=11)
    pols = [make_policy(search, seed=s) for s in range(4)]
    obs = np.empty(OBS_SIZE, np.float32)
    tot: dict[str, float] = {}
    cnt: dict[str, int] = {}
    done = 0
    first = True
    while not g.is_over and done < hands:
        if g.is_hand_over:
            g.next_hand()
            done += 1
            first = False
            continue
        seat = g.current_player
        encode_observation(g.state, g.params, seat, obs)
        mask = g.legal_mask()
        ph = g.phase
        t = time.perf_counter()
        a = pols[seat].act(obs, mask)
        dt = time.perf_counter() - t
        if not first:  # the first hand compiles
            tot[ph] = tot.get(ph, 0.0) + dt
            cnt[ph] = cnt.get(ph, 0) + 1
        g.apply(a)
    return {ph: tot[ph] / cnt[ph] for ph in tot}


def fmt_row(name: str, r: dict) -> str:
    m = r["margin_per_hand"]
    gw = r.get("game_win") or {}
    ta, tb = r["teams"]

    def pct(x):
        return "-" if not x or x.get("rate") is None else f"{100 * x['rate']:.0f}%"

    return (
        f"| {name} | {r['preset']} | {r['team_a']} vs {r['team_b']} | {r['hands']} | "
        f"{m['mean']:+.1f} [{m['ci95'][0]:+.1f}, {m['ci95'][1]:+.1f}] | "
        f"{100 * gw.get('rate', float('nan')):.1f}% [{100 * gw.get('ci95', [float('nan')] * 2)[0]:.0f}, "
        f"{100 * gw.get('ci95', [float('nan')] * 2)[1]:.0f}] | "
        f"{pct(ta['set_rate'])} / {pct(tb['set_rate'])} | {pct(ta['nil_success'])} / {pct(tb['nil_success'])} | "
        f"{pct(ta['blind_nil_success'])} / {pct(tb['blind_nil_success'])} | "
        f"{ta['blind_nil_bids_per_hand']:.2f} / {tb['blind_nil_bids_per_hand']:.2f} | "
        f"{ta['bags_per_hand']:.2f} / {tb['bags_per_hand']:.2f} |"
    )


HEADER = (
    "| row | preset | A vs B | hands | margin/hand A-B [95% CI] | A games won [95% CI] | set A / B | "
    "Nil made A / B | Blind Nil made A / B | Blind Nil bids/hand A / B | bags/hand A / B |\n"
    "|---|---|---|---:|---|---|---|---|---|---|---|"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="all", help="comma-separated row names, or all")
    ap.add_argument("--min-hands", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search", default="search:samples=200", help="the L3 spec of the rows")
    ap.add_argument("--worktree", default="/tmp/l2_old")
    ap.add_argument("--commit", default="bbf3458", help="revision of heuristic@old")
    ap.add_argument("--out", type=Path, default=Path("runs/baselines"))
    a = ap.parse_args()
    import subprocess

    # every module the workers need, imported before they fork (nothing re-read mid-run)
    import spades_env.policies.bots.greedy  # noqa: F401
    import spades_env.policies.bots.heuristic  # noqa: F401
    import spades_env.policies.bots.search  # noqa: F401
    from spades_env.policies.bots.blind_value import table_summary

    all_rows = rows(a.search)
    names = list(all_rows) if a.rows == "all" else [r.strip() for r in a.rows.split(",")]
    unknown = [n for n in names if n not in all_rows]
    if unknown:
        ap.error(f"unknown rows {unknown}; rows: {list(all_rows)}")
    if any("old" in all_rows[n][2] for n in names) and not Path(a.worktree).exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", a.worktree, a.commit], check=True)
    a.out.mkdir(parents=True, exist_ok=True)
    print("Blind Nil table (tournament scoring, at 0-0):")
    print("| players | exchange | partner bid first | deals | Blind Nil made | margin declaring | margin seeing |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for t in table_summary():
        print(
            f"| {t['players']} | {t['exchange'] if t['exchange'] is not None else '-'} | "
            f"{t['partner_has_bid'] if t['partner_has_bid'] is not None else '-'} | {t['deals']} | "
            f"{100 * t['blind_success']:.1f}% | {t['margin_blind']:+.1f} | {t['margin_see']:+.1f} |"
        )
    timing = search_timing(a.search)
    print(f"\n{a.search} seconds per decision by phase: " + ", ".join(f"{k} {v:.4f}" for k, v in timing.items()))
    (a.out / "search_timing.json").write_text(json.dumps({"search": a.search, "seconds": timing}, indent=2))
    lines = []
    for n in names:
        preset, ta, tb = all_rows[n]
        print(f"\n{n}: {ta} vs {tb} on {preset}", flush=True)
        r = play_row(preset, ta, tb, a.min_hands, a.workers, a.seed, a.worktree, n)
        (a.out / f"{n}.json").write_text(json.dumps(r, indent=2, default=float))
        lines.append(fmt_row(n, r))
        print(HEADER)
        print(lines[-1], flush=True)
    print("\n" + HEADER)
    print("\n".join(lines))
    (a.out / "table.md").write_text(HEADER + "\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
