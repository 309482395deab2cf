"""``spades bench [NAME] [ARGS...]``: run a benchmark script from ``benchmarks/``.

The benchmarks are scripts of the source checkout, not part of the installed package: from a
wheel install this command says so and exits 2 (everything else the CLI needs ships inside)."""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"  # the checkout's, when there is one


def available() -> list[str]:
    """Names of the benchmark scripts in ``benchmarks/``."""
    return sorted(p.stem for p in BENCH_DIR.glob("*.py"))


def run(args: argparse.Namespace) -> int:
    names = available()
    if args.name not in names:
        print(
            f"spades bench: no benchmark {args.name!r}; available: "
            f"{', '.join(names) or 'none (benchmarks/ comes with the source checkout, not the package)'}",
            file=sys.stderr,
        )
        return 2
    path = BENCH_DIR / f"{args.name}.py"
    old_argv = sys.argv
    sys.argv = [str(path), *args.args]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        sys.argv = old_argv
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark from benchmarks/ (default: aec_throughput)")
    p.add_argument("name", nargs="?", default="aec_throughput", help="benchmark script name")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    p.set_defaults(func=run)
