"""The web app in headless Chromium (Debian's ``chromium``, driven by Playwright for Python
with ``executable_path``; no browser is downloaded): a person plays a whole hand by clicking
legal actions, a Blind Nil exchange included; a watched game with pause, step and the hands
shown; a replay stepped forwards and backwards.

Skipped only outside CI (the ``CI`` variable unset) when Chromium or Playwright is missing;
under CI a missing browser fails. With ``SPADES_WEB_SCREENSHOTS=DIR`` it also saves the docs'
screenshots into DIR.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("SPADES_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
UNDER_CI = bool(os.environ.get("CI"))
if not UNDER_CI:
    if CHROMIUM is None:
        pytest.skip("no chromium (apt-get install chromium); CI installs it", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("uvicorn")
assert CHROMIUM is not None, "CI must install Debian's chromium (.ci/run)"

import uvicorn  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402

from spades_env.io.records import replay_record  # noqa: E402
from spades_env.web.app import create_app  # noqa: E402

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = os.environ.get("SPADES_WEB_SCREENSHOTS")


class Server:
    """The app served by uvicorn in a thread on a free loopback port."""

    def __init__(self, records: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(
            create_app(records), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                return f"http://127.0.0.1:{self.port}"
            time.sleep(0.05)
        raise RuntimeError("uvicorn did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    records = tmp_path_factory.mktemp("records")
    with Server(records) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield url, records, browser
        finally:
            browser.close()


def new_page(browser) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 820})
    page.set_default_timeout(60000)  # a searching agent may think for seconds on a loaded machine
    return page


def wait_ready(page: Page) -> str:
    """Wait until the human can click something (or the game is over); what it is."""
    page.wait_for_function(
        """() => { const t = document.getElementById('table');
                  return t.dataset.over === '1' || document.getElementById('continue')
                         || document.querySelector('[data-action]:not(.sent)'); }"""
    )
    if page.get_attribute("#table", "data-over") == "1":
        return "over"
    if page.query_selector("#continue"):
        return "continue"
    return "act"


def shot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / name))


def test_play_a_hand_with_a_blind_nil_exchange_by_clicking(site) -> None:
    url, records, browser = site
    page = new_page(browser)
    for seed in range(40):  # a deal where the human is offered Blind Nil
        page.goto(f"{url}/play?partner=spades4_v1&opponents=heuristic&episode=hand&seed={seed}&speed=instant")
        wait_ready(page)
        if page.get_attribute("#table", "data-phase") == "blind":
            break
    else:
        pytest.fail("no deal offered Blind Nil")
    root = "#table"
    assert page.get_attribute(root, "data-to-act") == "2"
    # before the decision the hand is face down, and only Blind Nil / See cards can be clicked
    assert page.locator("#seat-bottom .card.back").count() == 13
    assert sorted(page.eval_on_selector_all("[data-action]", "els => els.map(e => e.dataset.action)")) == [
        "66",
        "67",
    ]
    page.click('[data-action="66"]')
    phases, passed = [], []
    clicks = 0
    while True:
        what = wait_ready(page)
        if what == "over":
            break
        if what == "continue":
            page.click("#continue")
            continue
        phase = page.get_attribute(root, "data-phase")
        phases.append(phase)
        assert page.get_attribute(root, "data-to-act") == "2"
        actions = page.eval_on_selector_all("[data-action]", "els => els.map(e => Number(e.dataset.action))")
        assert actions and all(0 <= a < 70 for a in actions)
        if phase == "exchange":
            assert "exchange" in page.inner_text("#actions").lower()
            passed.append(max(actions, key=lambda a: a % 13))
        elif phase == "play" and len(passed) and clicks == len(passed):
            # the exchange is shown: what you passed and what you received
            text = page.inner_text("#seat-bottom")
            assert "You passed" in text and "you received" in text
            shot(page, "play.png")
        # as a Blind Nil bidder would: pass the highest cards, play the lowest
        pick = (
            max(actions, key=lambda a: a % 13) if phase == "exchange" else min(actions, key=lambda a: a % 13)
        )
        page.click(f'[data-action="{pick}"]')
        clicks += 1
    assert "exchange" in phases and phases.count("play") == 13
    assert page.get_attribute(root, "data-phase") == "hand_end"
    summary = page.inner_text("#summary")
    assert "Blind Nil" in summary and "Score change" in summary
    if SHOTS:
        shot(page, "hand-summary.png")
    # the game is a record in the folder, the human seat marked
    saved = [p for p in records.glob("*-play-*.json")]
    assert saved
    rec = json.loads(max(saved, key=lambda p: p.stat().st_mtime).read_text())
    assert rec["meta"]["human_seats"] == [2] and replay_record(rec).final["hands"] == 1
    page.close()


def test_a_refused_click_shows_its_reason(site) -> None:
    url, _, browser = site
    page = new_page(browser)
    page.goto(f"{url}/play?partner=random&opponents=random&seed=3&speed=instant")
    assert wait_ready(page) == "act"
    seq = page.get_attribute("#table", "data-seq")
    # a forged message from the page (an id that is not legal now): refused, nothing changes
    page.evaluate("() => ws.send(JSON.stringify({type: 'act', action: 69, seq: view.seq}))")
    page.wait_for_function("() => document.getElementById('message').dataset.error === '1'")
    assert "not" in page.inner_text("#message")
    assert page.get_attribute("#table", "data-seq") == seq
    page.goto(f"{url}/replay?record=../../etc/passwd")
    assert "cannot be opened" in page.inner_text("body")
    page.close()


def test_watch_pause_step_and_show_hands(site) -> None:
    url, _, browser = site
    page = new_page(browser)
    page.goto(f"{url}/watch?players=spades4_v1,heuristic,spades4_v1,heuristic&seed=5&speed=fast")
    page.wait_for_function("() => Number(document.getElementById('table').dataset.seq) >= 3")
    assert page.locator("#seat-left .card.back").count() > 0  # hidden by default
    page.click("#pause")
    page.wait_for_function("() => document.getElementById('pause').textContent.includes('resume')")
    page.check("#show-hands")
    page.wait_for_function("() => document.querySelectorAll('#seat-left .diagram .suitrow').length === 4")
    seq = int(page.get_attribute("#table", "data-seq"))
    time.sleep(0.6)
    assert int(page.get_attribute("#table", "data-seq")) == seq  # paused: nothing moves
    page.click("#step")
    page.wait_for_function(f"() => Number(document.getElementById('table').dataset.seq) === {seq + 1}")
    page.select_option("#speed", "normal")
    page.click("#pause")  # resume
    page.wait_for_function(
        "() => document.getElementById('table').dataset.phase === 'play' && document.querySelectorAll('#center .card').length >= 2",
        timeout=60000,
    )
    page.click("#pause")
    shot(page, "watch.png")
    assert page.query_selector("[data-action]") is None  # nothing to click in a watched game
    page.close()


def test_replay_steps_forwards_and_backwards(site) -> None:
    url, records, browser = site
    page = new_page(browser)
    page.goto(f"{url}/play?partner=random&opponents=random&episode=hand&seed=8&speed=instant")
    while (what := wait_ready(page)) != "over":
        if what == "continue":
            page.click("#continue")
        else:
            page.click("[data-action]:not(.sent)")
    name = page.inner_text("#controls").split("saved as ")[1].strip()
    page.goto(f"{url}/")
    page.click(f"text={name}")
    page.wait_for_selector('#table[data-mode="replay"]')
    pos = lambda: int(page.get_attribute("#table", "data-pos"))  # noqa: E731
    assert pos() == 0 and page.locator("#seat-left .diagram .suitrow").count() == 4  # every hand shown
    assert len(re.findall(r"10|[2-9JQKA]", page.inner_text("#seat-left .diagram"))) == 13
    page.click('[data-seek="next"]')
    page.wait_for_function("() => document.getElementById('table').dataset.pos === '1'")
    page.click('[data-seek="next_trick"]')
    page.wait_for_function("() => document.getElementById('table').dataset.phase === 'play'")
    start = pos()
    page.click('[data-seek="next_trick"]')
    page.wait_for_function(f"() => Number(document.getElementById('table').dataset.pos) > {start}")
    assert "Last trick to" in page.inner_text("#center")
    page.click('[data-seek="prev"]')
    page.wait_for_function("() => document.querySelectorAll('#center .card').length === 3")
    for _ in range(12):
        page.click('[data-seek="next"]')
    page.wait_for_function(f"() => Number(document.getElementById('table').dataset.pos) > {start + 8}")
    shot(page, "replay.png")
    page.click('[data-seek="end"]')
    page.wait_for_function("() => document.getElementById('table').dataset.phase === 'hand_end'")
    assert "Score change" in page.inner_text("#summary")
    page.click('[data-seek="start"]')
    page.wait_for_function("() => document.getElementById('table').dataset.pos === '0'")
    page.close()
