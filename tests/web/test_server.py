"""The web app's routes through Starlette's test client: pages, the table's WebSocket, the
refusals (bad URLs, stale and forged actions, files outside --records DIR), 20 games at once,
a closed tab resumed from its record, replays, and ``spades serve`` itself."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers.signals import as_in_a_terminal

pytest.importorskip("starlette")
pytest.importorskip("httpx")

import warnings  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx vs httpx2
    from starlette.testclient import TestClient  # noqa: E402

from spades_env.io.records import replay_record  # noqa: E402
from spades_env.web.app import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    d = tmp_path / "records"
    d.mkdir()
    return d


@pytest.fixture
def client(records: Path) -> TestClient:
    with TestClient(create_app(records)) as c:
        yield c


def open_table(client: TestClient, url: str) -> str:
    r = client.get(url, follow_redirects=False)
    assert r.status_code == 303, r.text
    loc = r.headers["location"]
    assert loc.startswith("/table/")
    return loc.rsplit("/", 1)[1]


def next_view(ws) -> dict:
    v = ws.receive_json()
    assert v.get("kind") != "error", v
    return v


def play_out(ws, choose=lambda v: v["legal"][0]["id"], limit: int = 5000) -> dict:
    """Drive a played table to its end: act when the human is to act, close summaries."""
    v = next_view(ws)
    for _ in range(limit):
        if v["over"]:
            return v
        if v["summary"] is not None:
            ws.send_json({"type": "continue", "seq": v["seq"]})
        elif v["legal"]:
            ws.send_json({"type": "act", "action": choose(v), "seq": v["seq"]})
        v = next_view(ws)
    raise AssertionError("the game did not end")


# ---- pages ------------------------------------------------------------------------------------
def test_start_page_offers_presets_agents_and_records(client: TestClient, records: Path) -> None:
    r = client.get("/")
    assert r.status_code == 200
    for word in (
        "tournament",
        "two_player",
        "house",
        "spades4_v1",
        "spades2_v1",
        "heuristic",
        "search:budget=0.2",
    ):
        assert word in r.text
    assert "cheat" not in r.text  # evaluation-only: it reads the hidden cards
    page = client.get(f"/table/{open_table(client, '/play?seed=1')}")
    assert page.status_code == 200
    assert 'id="table"' in page.text and "data-phase" in page.text and "data-to-act" in page.text
    js = client.get("/static/table.js")
    assert js.status_code == 200 and "data-action" in js.text
    for name in ("app.py", "tables.py", "__init__.py", "../app.py", "..%2Fapp.py", "page.html", "nope.js"):
        assert client.get(f"/static/{name}").status_code == 404, name  # the page's files only


def test_play_url_seats_the_players_it_names(client: TestClient) -> None:
    tid = open_table(
        client, "/play?seat=E&partner=random&opponents=greedy,heuristic&rules=house&episode=match&seed=5"
    )
    v = client.get(f"/api/table/{tid}").json()
    assert v["viewer"] == 1 and v["rules"] == "house" and v["episode"] == "match"
    assert [s["player"] for s in v["seats"]] == ["heuristic", "you", "greedy", "random"]
    # the human's own hand only (hidden while a Blind Nil decision is open), never another's
    assert all(s["hand"] is None for s in v["seats"] if s["seat"] != 1)


@pytest.mark.parametrize(
    "url, words",
    [
        ("/play?seat=X", "seat 'X'"),
        ("/play?seat=P1", "not a seat"),
        ("/play?partner=nobody", "partner"),
        ("/play?partner=/etc/passwd", "choose one of"),
        ("/play?opponents=random,random,random", "opponents"),
        ("/play?episode=forever", "episode"),
        ("/play?seed=-3", "seed"),
        ("/play?seed=1e9", "seed"),
        ("/play?rules=/etc/passwd", "rules"),
        ("/play?rules=../../configs/rules/house.yaml", "rules"),
        ("/play?rules=two_player&opponents=spades4_v1", "spades4_v1"),
        ("/watch?players=random,random", "players"),
        ("/watch?players=checkpoints/spades4_net_v1", "choose one of"),
        ("/play?speed=-1", "speed '-1': one of instant, fast, normal, slow"),
        ("/watch?hands=yes", "hands 'yes': 1 to show every hand, 0 to hide them"),
    ],
)
def test_bad_set_up_is_refused_with_its_reason(client: TestClient, url: str, words: str) -> None:
    r = client.get(url, follow_redirects=False)
    assert r.status_code == 400
    assert 'data-error="1"' in r.text and words in r.text


def test_speed_and_hands_of_a_new_table(client: TestClient) -> None:
    tid = open_table(client, "/watch?players=random&speed=fast&hands=1&seed=1")
    v = client.get(f"/api/table/{tid}").json()
    assert v["speed"] == "fast" and all(s["hand"] is not None for s in v["seats"])
    tid = open_table(client, "/watch?players=random&hands=0&seed=1")
    assert all(s["hand"] is None for s in client.get(f"/api/table/{tid}").json()["seats"])


def test_a_rules_file_of_the_records_folder(client: TestClient, records: Path) -> None:
    shutil.copy(ROOT / "configs" / "rules" / "house.yaml", records / "myhouse.yaml")
    assert '<option value="myhouse.yaml">' in client.get("/").text  # offered on the start page
    tid = open_table(client, "/play?rules=myhouse.yaml&seed=2")
    assert client.get(f"/api/table/{tid}").json()["rules"] == "myhouse.yaml"


# ---- files: only inside --records DIR ------------------------------------------------------------
def _finished_record(client: TestClient, records: Path) -> str:
    tid = open_table(client, "/play?partner=random&opponents=random&episode=hand&seed=11&speed=instant")
    with client.websocket_connect(f"/ws/{tid}") as ws:
        v = play_out(ws)
    assert v["over"] and v["record"]
    return v["record"]


@pytest.mark.parametrize("route", ["/replay", "/resume"])
def test_no_file_outside_the_records_folder(
    client: TestClient, records: Path, tmp_path: Path, route: str
) -> None:
    name = _finished_record(client, records)
    outside = tmp_path / "secret.json"
    shutil.copy(records / name, outside)  # a valid record, but outside the folder
    (records / "link.json").symlink_to(outside)
    bad = [
        "../secret.json",
        str(outside),
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "..%2Fsecret.json",
        "....//secret.json",
        "link.json",
        "sub/x.json",
        "",
        ".json",
    ]
    for b in bad:
        r = client.get(f"{route}?record={b}", follow_redirects=False)
        assert r.status_code in (400, 404), (b, r.status_code)
        assert "refused" in r.text.lower() or "cannot be opened" in r.text, b
        assert '"format"' not in r.text
    assert client.get(f"/replay?record={name}", follow_redirects=False).status_code == 303


def test_a_malformed_record_is_refused_by_name(client: TestClient, records: Path) -> None:
    name = _finished_record(client, records)
    data = json.loads((records / name).read_text())
    data["hands"][0]["actions"][5] = 69  # not legal there
    (records / "bad.json").write_text(json.dumps(data))
    r = client.get("/replay?record=bad.json", follow_redirects=False)
    assert r.status_code == 400 and "hands[0].actions[5]" in r.text
    up = client.post("/replay?name=mine.json", content=b"{not json")
    assert up.status_code == 400 and "not valid JSON" in up.json()["error"]
    assert "/tmp" not in up.json()["error"]
    assert up.json()["error"].startswith("mine.json: not valid JSON")  # named once
    big = client.post("/replay", content=b" " * (5 * 1024 * 1024))
    assert big.status_code == 413


# ---- the table's socket: moves and refusals ---------------------------------------------------------
def _human_turn(ws) -> dict:
    v = next_view(ws)
    while not v["legal"]:
        if v["summary"] is not None:
            ws.send_json({"type": "continue", "seq": v["seq"]})
        v = next_view(ws)
    return v


def test_stale_forged_and_malformed_messages_change_nothing(client: TestClient) -> None:
    tid = open_table(client, "/play?partner=random&opponents=random&seed=4&speed=instant")
    with client.websocket_connect(f"/ws/{tid}") as ws:
        v = _human_turn(ws)
        legal = {a["id"] for a in v["legal"]}
        illegal = next(a for a in range(70) if a not in legal)
        bad = [
            ({"type": "act", "action": illegal, "seq": v["seq"]}, "not"),
            ({"type": "act", "action": 70, "seq": v["seq"]}, "action id"),
            ({"type": "act", "action": 10**30, "seq": v["seq"]}, "action id"),
            ({"type": "act", "action": "AS", "seq": v["seq"]}, "action id"),
            ({"type": "act", "action": True, "seq": v["seq"]}, "action id"),
            ({"type": "act", "action": min(legal), "seq": v["seq"] - 1}, "old view"),
            ({"type": "act", "action": min(legal)}, "old view"),
            ({"type": "continue", "seq": v["seq"]}, "no hand summary"),
            ({"type": "show_hands", "value": True}, "hidden"),
            ({"type": "fly"}, "unknown message"),
            ({"type": "seek", "to": "end"}, "unknown message"),
            ({"type": "speed", "value": "warp"}, "speed"),
            ([1, 2], "malformed"),
        ]
        for msg, words in bad:
            ws.send_json(msg)
            e = ws.receive_json()
            assert e["kind"] == "error" and words in e["message"], (msg, e)
        ws.send_text("not json at all")
        assert "malformed" in ws.receive_json()["message"]
        ws.send_text("x" * 10000)
        assert "too long" in ws.receive_json()["message"]
        after = client.get(f"/api/table/{tid}").json()
        assert after["seq"] == v["seq"] and after["seats"] == v["seats"] and after["events"] == v["events"]
        # a good move goes through once; the same message again is stale
        move = {"type": "act", "action": v["legal"][0]["id"], "seq": v["seq"]}
        ws.send_json(move)
        v2 = next_view(ws)
        assert v2["seq"] == v["seq"] + 1
        ws.send_json(move)
        again = ws.receive_json()
        while again.get("kind") != "error":  # views of the bots' moves may come first
            again = ws.receive_json()
        assert "old view" in again["message"]


def test_a_move_out_of_turn_is_refused(client: TestClient) -> None:
    for seed in range(30):  # a deal where a bot acts first (the dealer's left)
        tid = open_table(client, f"/play?seat=S&partner=random&opponents=random&seed={seed}&speed=slow")
        v = client.get(f"/api/table/{tid}").json()
        if v["to_act"] != 2:
            break
    with client.websocket_connect(f"/ws/{tid}") as ws:
        v = next_view(ws)
        assert v["to_act"] != 2 and v["legal"] == []
        ws.send_json({"type": "act", "action": 67, "seq": v["seq"]})
        e = ws.receive_json()
        assert e["kind"] == "error" and "not your turn" in e["message"]
    assert client.get(f"/api/table/{tid}").json()["seq"] == v["seq"]


def test_watch_table_refuses_actions_and_hides_hands_until_asked(client: TestClient) -> None:
    tid = open_table(client, "/watch?players=random&seed=3&speed=slow")
    with client.websocket_connect(f"/ws/{tid}") as ws:
        v = next_view(ws)
        assert v["mode"] == "watch" and all(s["hand"] is None for s in v["seats"])
        ws.send_json({"type": "act", "action": 67, "seq": v["seq"]})
        assert "watched" in ws.receive_json()["message"]
        ws.send_json({"type": "pause"})
        v = next_view(ws)
        assert v["paused"]
        ws.send_json({"type": "show_hands", "value": True})
        v = next_view(ws)
        assert all(len(s["hand"]) == 13 for s in v["seats"])
        seq = v["seq"]
        ws.send_json({"type": "step"})
        v = next_view(ws)
        assert v["seq"] == seq + 1 and v["paused"]  # one move, still paused
        ws.send_json({"type": "speed", "value": "instant"})
        ws.send_json({"type": "resume"})
        for _ in range(400):
            v = next_view(ws)
            if v["hand_no"] == 2:
                break
        assert v["hand_no"] == 2  # the watched table went on through the summary by itself


def test_blind_nil_exchange_and_hint(client: TestClient) -> None:
    """Choose Blind Nil when it is offered: the hand stays hidden until then, the exchange
    shows the cards passed and received; the hint's choice is a legal move."""
    for seed in range(40):
        tid = open_table(
            client, f"/play?partner=random&opponents=random&episode=hand&seed={seed}&speed=instant"
        )
        with client.websocket_connect(f"/ws/{tid}") as ws:
            v = _human_turn(ws)
            if v["phase"] != "blind":
                continue
            me = v["seats"][2]
            assert me["hand"] is None and me["hidden_blind"] and {a["id"] for a in v["legal"]} == {66, 67}
            ws.send_json({"type": "act", "action": 66, "seq": v["seq"]})
            v = _human_turn(ws)
            assert v["phase"] == "exchange" and v["seats"][2]["hand"] is not None
            passed = v["legal"][0]["id"]
            ws.send_json({"type": "act", "action": passed, "seq": v["seq"]})
            v = _human_turn(ws)
            while v["phase"] == "exchange":
                ws.send_json({"type": "act", "action": v["legal"][0]["id"], "seq": v["seq"]})
                v = _human_turn(ws)
            me = v["seats"][2]
            assert passed in me["passed"] and len(me["received"]) == v["exchange_cards"]
            assert set(me["passed"]).isdisjoint(me["hand"])  # what you pass leaves your hand
            assert set(me["received"]) - set(me["passed"]) <= set(me["hand"])
            assert me["bid"] == "Blind Nil"
            assert v["seats"][1]["passed"] is None  # an opponent's exchange is not shown
            ws.send_json({"type": "hint", "value": True})
            h = next_view(ws)
            while not h.get("hint"):
                h = next_view(ws)
            assert h["hint"]["best"] in {a["id"] for a in h["legal"]}
            assert 0.0 < sum(a["p"] for a in h["hint"]["top"]) <= 1.0001
            return
    pytest.fail("no deal offered the human Blind Nil")


def test_two_player_game_with_the_draw(client: TestClient) -> None:
    tid = open_table(
        client, "/play?rules=two_player&seat=P1&opponents=random&episode=hand&seed=9&speed=instant"
    )
    seen = set()
    with client.websocket_connect(f"/ws/{tid}") as ws:

        def choose(v: dict) -> int:
            seen.add(v["phase"])
            if v["phase"] == "draw":
                assert v["shown_card"] is not None and {a["id"] for a in v["legal"]} == {68, 69}
            return v["legal"][-1]["id"]

        v = play_out(ws, choose)
    assert {"draw", "bid", "play"} <= seen and v["over"] and v["num_seats"] == 2


# ---- many games, closed tabs, records ----------------------------------------------------------------
def test_twenty_concurrent_games_to_the_end(client: TestClient, records: Path) -> None:
    n = 20
    with contextlib.ExitStack() as stack:
        socks = []
        for i in range(n):
            tid = open_table(
                client,
                f"/play?seat={'NESW'[i % 4]}&partner=random&opponents=greedy&episode=hand&seed={100 + i}&speed=instant",
            )
            socks.append(stack.enter_context(client.websocket_connect(f"/ws/{tid}")))
        done: dict[int, dict] = {}
        rounds = 0
        while len(done) < n:
            rounds += 1
            assert rounds < 5000
            for i, ws in enumerate(socks):  # one message of each game in turn: they interleave
                if i in done:
                    continue
                v = next_view(ws)
                if v["over"]:
                    done[i] = v
                elif v["summary"] is None and v["legal"]:
                    ws.send_json({"type": "act", "action": v["legal"][-1]["id"], "seq": v["seq"]})
    assert client.get("/").status_code == 200
    saved = sorted(records.glob("*.json"))
    assert len(saved) == n
    for p in saved:  # every game is a legal record, the human seat marked
        rp = replay_record(p)
        meta = json.loads(p.read_text())["meta"]
        assert rp.final["hands"] == 1 and len(meta["human_seats"]) == 1 and meta["players"].count("you") == 1


def test_a_closed_tab_leaves_the_server_healthy_and_the_game_resumes(records: Path) -> None:
    with TestClient(create_app(records)) as client:
        tid = open_table(client, "/play?partner=heuristic&opponents=heuristic&seed=21&speed=instant")
        with client.websocket_connect(f"/ws/{tid}") as ws:
            for _ in range(3):  # three of the human's moves, then the tab closes
                v = _human_turn(ws)
                ws.send_json({"type": "act", "action": v["legal"][0]["id"], "seq": v["seq"]})
            v = next_view(ws)
        assert client.get("/").status_code == 200
        before = client.get(f"/api/table/{tid}").json()
        assert open_table(client, f"/resume?record={before['record']}") == tid  # still in memory
    with TestClient(create_app(records)) as client:  # a restarted server: from the record
        tid2 = open_table(client, f"/resume?record={before['record']}")
        after = client.get(f"/api/table/{tid2}").json()
        assert tid2 != tid and after["viewer"] == before["viewer"]
        for key in ("hand_no", "trick", "teams"):
            assert after[key] == before[key]
        assert [s["bid"] for s in after["seats"]] == [s["bid"] for s in before["seats"]]
        assert after["seats"][2]["hand"] == before["seats"][2]["hand"]
        with client.websocket_connect(f"/ws/{tid2}") as ws:
            v = _human_turn(ws)
            ws.send_json({"type": "act", "action": v["legal"][0]["id"], "seq": v["seq"]})
            assert next_view(ws)["seq"] == v["seq"] + 1


def test_replay_steps_forwards_and_backwards(client: TestClient, records: Path) -> None:
    name = _finished_record(client, records)
    actions = json.loads((records / name).read_text())["hands"][0]["actions"]
    tid = open_table(client, f"/replay?record={name}")
    with client.websocket_connect(f"/ws/{tid}") as ws:
        v = next_view(ws)
        assert v["kind"] == "replay" and v["pos"] == 0 and v["total"] == len(actions)
        assert all(len(s["hand"]) == 13 for s in v["seats"]) and v["humans"] == [2]

        def seek(to):
            ws.send_json({"type": "seek", "to": to})
            return next_view(ws)

        assert seek("next")["pos"] == 1
        assert seek("prev")["pos"] == 0
        assert seek("prev")["pos"] == 0  # clamped
        t = seek("next_trick")  # the end of the bidding (and exchange)
        assert t["phase"] == "play" and t["trick"] == [] and t["pos"] >= 4
        t2 = seek("next_trick")
        assert (
            t2["trick"] == [] and t2["last_trick"] is not None and sum(s["tricks"] for s in t2["seats"]) == 1
        )
        assert seek("prev_trick")["pos"] == t["pos"]
        end = seek("end")
        assert end["pos"] == len(actions) and end["phase"] == "hand_end" and end["summary"] is not None
        assert seek(10**9)["pos"] == len(actions)
        ws.send_json({"type": "act", "action": 0, "seq": end["seq"]})
        assert "seek" in ws.receive_json()["message"]
        ws.send_json({"type": "seek", "to": "sideways"})
        assert "unknown replay step" in ws.receive_json()["message"]
    up = client.post("/replay?name=x.json", content=(records / name).read_bytes())
    assert up.status_code == 200 and up.json()["url"].startswith("/table/")


# ---- the command --------------------------------------------------------------------------------
def test_serve_without_the_extra_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import spades_env.cli.serve as serve
    from spades_env.cli.main import main

    monkeypatch.setattr(serve, "missing_dependency", lambda: "starlette")
    assert main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "spades_env[web]"' in err and "starlette" in err


def test_spades_serve_prints_its_url_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spades_env.cli",
            "serve",
            "--port",
            str(port),
            "--records",
            str(tmp_path / "r"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        preexec_fn=as_in_a_terminal,
    )
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                    assert r.status == 200 and b"Play" in r.read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the server did not answer")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err
