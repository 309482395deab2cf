"""Responsiveness of ``spades serve``: from a click to the next drawn table, in headless Chromium.

A person plays hands in the app (served by uvicorn on loopback, driven by Playwright with
Debian's ``chromium``), clicking the first legal action each time, the bots at full speed
(``speed=instant``). For every click it measures, inside the page with ``performance.now()``:

* **click -> drawn**: the click, the action sent over the WebSocket, the server's check and
  step through the rules core, the view pushed back, the table redrawn and the next animation
  frame (the new state painted). The target is under 100 ms.
* **click -> your turn again**: the same, then the three bots' moves (at full speed) until the
  person can click again.

Measured in the same run for comparison: a ``fetch`` of ``/api/table/ID`` from the page (the
HTTP round trip with the view built, no redraw), the floor of any click. The search agent's
thinking time is reported apart: a second set of hands with the ``search`` bot as opponents
(``--search``), its time per move as the server measured it.

    .venv/bin/python benchmarks/web_latency.py --hands 2
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

CLICK_JS = """(id) => new Promise((resolve) => {
  const root = document.getElementById('table');
  const seq0 = Number(root.dataset.seq);
  const t0 = performance.now();
  const obs = new MutationObserver(() => {
    if (Number(root.dataset.seq) > seq0) {
      obs.disconnect();
      const drawn = performance.now() - t0;
      requestAnimationFrame(() => resolve([drawn, performance.now() - t0, t0]));
    }
  });
  obs.observe(root, {attributes: true});
  document.querySelector(`[data-action="${id}"]`).click();
})"""

READY_JS = """() => { const t = document.getElementById('table');
  return t.dataset.over === '1' || document.getElementById('continue')
         || document.querySelector('[data-action]:not(.sent)'); }"""

FETCH_JS = """async (tid) => { const t0 = performance.now();
  const r = await fetch('/api/table/' + tid); await r.json(); return performance.now() - t0; }"""


def _serve(records: Path):
    import uvicorn

    from spades_env.web.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(records)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}", app


def _stats(xs: list[float]) -> str:
    if not xs:
        return "-"
    p95 = sorted(xs)[max(0, math.ceil(0.95 * len(xs)) - 1)]  # nearest rank
    return (
        f"median {statistics.median(xs):6.1f} ms   p95 {p95:6.1f} ms   max {max(xs):6.1f} ms   (n={len(xs)})"
    )


def play_hands(page, url: str, hands: int, partner: str, opponents: str, seed: int):
    drawn, painted, turn, fetches = [], [], [], []
    for h in range(hands):
        page.goto(
            f"{url}/play?partner={partner}&opponents={opponents}&episode=hand&seed={seed + h}&speed=instant"
        )
        tid = page.get_attribute("#table", "data-table-id")
        page.wait_for_function(READY_JS, timeout=120000)
        while page.get_attribute("#table", "data-over") != "1":
            if page.query_selector("#continue"):
                page.click("#continue")
                page.wait_for_function(READY_JS, timeout=120000)
                continue
            fetches.append(page.evaluate(FETCH_JS, tid))
            action = page.get_attribute("[data-action]:not(.sent)", "data-action")
            d, p, t0 = page.evaluate(CLICK_JS, int(action))
            drawn.append(d)
            painted.append(p)
            page.wait_for_function(READY_JS, timeout=120000)
            turn.append(page.evaluate("(t0) => performance.now() - t0", t0))
    return drawn, painted, turn, fetches


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=2, help="hands played per set (default 2)")
    ap.add_argument("--partner", default="spades4_v1")
    ap.add_argument("--opponents", default="heuristic")
    ap.add_argument(
        "--search", default="search:budget=0.2", help="the search bot of the second set ('' skips it)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chromium", default=os.environ.get("SPADES_CHROMIUM") or shutil.which("chromium"))
    args = ap.parse_args()
    if not args.chromium:
        raise SystemExit("web_latency: needs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        server, thread, url, app = _serve(Path(tmp))
        browser = p.chromium.launch(executable_path=args.chromium, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 820})
        play_hands(page, url, 1, "random", "random", 10_000)  # warm-up: numba, the agents' weights
        drawn, painted, turn, fetches = play_hands(
            page, url, args.hands, args.partner, args.opponents, args.seed
        )
        load = os.getloadavg()
        print(f"spades serve, headless Chromium ({browser.version}), loopback; load average {load[0]:.2f}")
        print(
            f"set 1: you (S) with {args.partner}, against {args.opponents}; bots at full speed; {args.hands} hand(s)"
        )
        print(f"  click -> drawn          {_stats(drawn)}")
        print(f"  click -> painted        {_stats(painted)}")
        print(f"  click -> your turn      {_stats(turn)}   (three bots' moves included)")
        print(f"  fetch /api/table (peer) {_stats(fetches)}")
        if args.search:
            server_obj = app.state.server
            before = set(server_obj.tables)
            d2, _, t2, _ = play_hands(page, url, 1, args.partner, args.search, args.seed + 100)
            thinks: list[float] = []
            for tid, t in server_obj.tables.items():
                if tid not in before:
                    thinks += [v * 1000 for k, v in getattr(t, "think_log", []) if k in ("E", "W")]
            print(f"set 2: against {args.search}; 1 hand")
            print(f"  click -> drawn          {_stats(d2)}")
            print(f"  click -> your turn      {_stats(t2)}   (the search's thinking included)")
            print(f"  search thinking / move  {_stats(thinks)}   (server side, apart from the above)")
        ok = statistics.median(drawn) < 100
        print(
            f"target: click -> drawn under 100 ms: {'met' if ok else 'NOT met'} (median {statistics.median(drawn):.1f} ms)"
        )
        browser.close()
        server.should_exit = True
        thread.join(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
