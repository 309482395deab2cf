"""The CLI (issue 37): Ctrl-C ends long commands with status 130 and one line (workers
included), --out is checked by writing before any work, demo records under the mercy rule
replay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from helpers.signals import as_in_a_terminal
from spades_env.io.records import replay_record


def _interrupt(args, cwd):
    """Run a command, press Ctrl-C (SIGINT to its process group) once it has started its
    boards (its progress bar is on stderr), and return its status and stderr."""
    p = subprocess.Popen(
        [sys.executable, "-m", "spades_env.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: Ctrl-C reaches the workers too
        preexec_fn=as_in_a_terminal,
    )
    seen: list[str] = []
    started = threading.Event()

    def read() -> None:
        for chunk in iter(lambda: p.stderr.read(1), ""):
            seen.append(chunk)
            if "board" in "".join(seen[-200:]):
                started.set()
        started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started.wait(timeout=300)
    time.sleep(1.0)  # a board or two under way
    os.killpg(p.pid, signal.SIGINT)
    try:
        p.wait(timeout=120)
    except subprocess.TimeoutExpired:  # never leave a 400,000-game run behind
        os.killpg(p.pid, signal.SIGKILL)
        raise
    reader.join(timeout=30)
    return p.returncode, "".join(seen)


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "random", "random", "--games", "400000", "--workers", "2", "--format", "hand"],
        ["gauntlet", "random", "--opponents", "random", "--games", "400000", "--workers", "2"],
    ],
    ids=lambda a: a[0],
)
def test_ctrl_c_exits_130_with_one_line(tmp_path, args):
    rc, err = _interrupt(args, tmp_path)
    lines = [ln for ln in err.splitlines() if ln.strip() and "board/s" not in ln and "%|" not in ln]
    assert rc == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert lines == [f"spades {args[0]}: interrupted (Ctrl-C)"], err


def test_out_that_cannot_be_written_is_refused_before_any_work(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "spades_env.cli", "eval", "random", "random", "--games", "100000", "--out", "/proc/self/spades-out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "--out" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1  # refused before any board: no progress bar


def test_demo_record_under_the_mercy_rule_replays(tmp_path):
    rules = tmp_path / "mercy.yaml"
    rules.write_text("mercy_rule: true\nmercy_threshold: -10\ntarget_score: 150\nmax_hands: 8\n")
    rec = tmp_path / "demo.json"
    p = subprocess.run(
        [sys.executable, "-m", "spades_env.cli", "demo", "--rules", str(rules), "--record", str(rec)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    replay_record(rec)
    r = subprocess.run(
        [sys.executable, "-m", "spades_env.cli", "replay", str(rec)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
