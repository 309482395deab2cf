"""The Starlette app of ``spades serve``: pages, the table's WebSocket and the records.

Routes (the page's table is pushed over ``/ws/{id}``; the page sends action ids only):

==========================================  ======================================================
``GET /``                                   the start page: play, watch, replay, resume
``GET /play?seat&partner&opponents&rules``  a new game with you at ``seat``; redirects to
``&episode=hand|game|match&seed``           ``/table/{id}``
``GET /watch?players=A,B,C,D&rules&seed``   a new watched game; redirects to ``/table/{id}``
``GET /replay?record=NAME``                 a record of ``--records DIR``; redirects to ``/table/{id}``
``POST /replay`` (a record's JSON as body)  an uploaded record; answers ``{"url": "/table/{id}"}``
``GET /resume?record=NAME``                 a played game continued from its record
``GET /table/{id}``                         the table page (reload it to get back to a game)
``WS /ws/{id}``                             the table: views pushed, messages in (see below)
``GET /api/table/{id}``                     the current view as JSON
``GET /records``                            the records of ``--records DIR`` as JSON
==========================================  ======================================================

Messages from the page (JSON): ``{"type": "act", "action": ID, "seq": N}`` (``seq`` of the view
the click was made on), ``{"type": "continue", "seq": N}`` (close a hand summary),
``{"type": "speed", "value": "instant|fast|normal|slow"}``, ``{"type": "pause"|"resume"|"step"}``,
``{"type": "show_hands", "value": bool}``, ``{"type": "hint", "value": bool}``, and in a replay
``{"type": "seek", "to": "start|end|next|prev|next_trick|prev_trick|next_hand|prev_hand|N"}``.
The server answers with views (``{"kind": "table" | "replay", ...}``) or
``{"kind": "error", "message": ...}``; a refused message changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from spades_env.core.rules import preset_names
from spades_env.web.tables import (
    EPISODES,
    MAX_RECORD_BYTES,
    SPEEDS,
    Replay,
    Table,
    WebError,
    list_records,
    new_table,
    open_replay,
    play_setup,
    policy_choices,
    resume_table,
    safe_file,
    watch_setup,
)

MAX_MESSAGE = 4096
"""The longest WebSocket message the server reads (a real one is under 100 bytes)."""
MAX_TABLES = 500
"""Tables kept in memory; the oldest finished (then oldest) go first."""
# a new table's ``hands`` parameter: every hand shown, or (the default) only one's own
SHOW_HANDS = ("1", "true", "shown")
HIDE_HANDS = ("0", "false", "hidden")


ASSETS = {
    "page.html": "text/html",
    "index.html": "text/html",
    "table.html": "text/html",
    "start.js": "text/javascript",
    "table.js": "text/javascript",
    "style.css": "text/css",
}
"""The page's files: package data of ``spades_env.web``, served under ``/static/`` by name."""


def _asset(name: str) -> str:
    return resources.files("spades_env.web").joinpath(name).read_text(encoding="utf-8")


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = _asset("page.html").replace("{{title}}", _esc(title)).replace("{{body}}", body)
    return HTMLResponse(html, status_code=status)


def _esc(text: Any) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _refusal(message: str, status: int = 400) -> HTMLResponse:
    return _page(
        "Refused",
        f'<div class="refusal" id="message" data-error="1"><h2>That cannot be opened</h2>'
        f'<p>{_esc(message)}</p><p><a href="/">Back to the start page</a></p></div>',
        status,
    )


class Server:
    """The app's state: the tables and replays in memory, the records folder."""

    def __init__(self, records: Path | None) -> None:
        self.records = Path(records) if records is not None else None
        if self.records is not None:
            self.records.mkdir(parents=True, exist_ok=True)
        self.tables: dict[str, Table | Replay] = {}

    def add(self, t: Table | Replay) -> str:
        if len(self.tables) >= MAX_TABLES:
            old = sorted(
                self.tables.values(),
                key=lambda x: (not getattr(x, "over", True), getattr(x, "created", 0.0)),
            )
            for x in old[: len(self.tables) - MAX_TABLES + 1]:
                self.tables.pop(x.id, None)
        self.tables[t.id] = t
        return t.id

    def rules_files(self) -> list[str]:
        """The rules files (``*.yaml``) of the records folder, offered beside the presets."""
        if self.records is None:
            return []
        return sorted(p.name for p in self.records.glob("*.y*ml") if p.is_file() and p.suffix in (".yaml", ".yml"))

    # -- pages
    async def index(self, request: Request) -> Response:
        presets = preset_names()
        choices4, choices2 = policy_choices(4), policy_choices(2)

        def options(values: list[str], selected: str) -> str:
            return "".join(
                f'<option value="{_esc(v)}"{" selected" if v == selected else ""}>{_esc(v)}</option>'
                for v in values
            )

        recs = list_records(self.records) if self.records is not None else []
        rows = []
        for r in recs[:50]:
            name = _esc(r["name"])
            who = ", ".join(map(str, r["players"])) if isinstance(r["players"], list) else ""
            resume = f' · <a href="/resume?record={name}">resume</a>' if r["unfinished"] else ""
            hands = "" if r["hands"] is None else f" · {r['hands']} hand(s)"
            rows.append(
                f'<li><a href="/replay?record={name}">{name}</a> <span class="muted">{_esc(who)}{hands}'
                f"</span>{resume}</li>"
            )
        body = (
            _asset("index.html")
            .replace("{{rules}}", options(presets + self.rules_files(), "tournament"))
            .replace("{{partners}}", options(choices4, "spades4_v1"))
            .replace("{{opponents}}", options(choices4, "heuristic"))
            .replace("{{players}}", options(choices4 + choices2, "spades4_v1"))
            .replace("{{records}}", "".join(rows) or '<li class="muted">no records yet</li>')
            .replace("{{records_dir}}", _esc(self.records) if self.records else "(none: games are not saved)")
        )
        return _page("Spades", body)

    async def play(self, request: Request) -> Response:
        return await self._new(request, play_setup)

    async def watch(self, request: Request) -> Response:
        return await self._new(request, watch_setup)

    async def _new(self, request: Request, make: Any) -> Response:
        params = dict(request.query_params)
        if "speed" in params and params["speed"] not in SPEEDS:
            return _refusal(f"speed {params['speed']!r}: one of {', '.join(SPEEDS)}")
        if "hands" in params and params["hands"] not in SHOW_HANDS + HIDE_HANDS:
            return _refusal(f"hands {params['hands']!r}: 1 to show every hand, 0 to hide them")
        try:
            setup = make(params, self.records)
            table = await run_in_threadpool(new_table, setup, self.records)
        except WebError as exc:
            return _refusal(str(exc))
        if "speed" in params:
            table.speed = params["speed"]
        if params.get("hands") in SHOW_HANDS:
            table.show_hands = True
        self.add(table)
        return RedirectResponse(f"/table/{table.id}", status_code=303)

    async def replay(self, request: Request) -> Response:
        if request.method == "POST":
            return await self._upload(request)
        name = request.query_params.get("record", "")
        if self.records is None:
            return _refusal("the server was started without --records DIR: upload a record instead", 404)
        try:
            path = safe_file(self.records, name, (".json",))
            rp = await run_in_threadpool(open_replay, path, name)
        except WebError as exc:
            return _refusal(str(exc), 404 if "no file" in str(exc) else 400)
        self.add(rp)
        return RedirectResponse(f"/table/{rp.id}", status_code=303)

    async def _upload(self, request: Request) -> Response:
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_RECORD_BYTES):
            return JSONResponse({"error": f"a record is at most {MAX_RECORD_BYTES // 1024} KiB"}, 413)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_RECORD_BYTES:
                return JSONResponse({"error": f"a record is at most {MAX_RECORD_BYTES // 1024} KiB"}, 413)
        name = request.query_params.get("name", "uploaded record")[:120]
        with tempfile.TemporaryDirectory() as tmp:  # read as a file: the strict JSON reader
            path = Path(tmp) / "upload.json"
            path.write_bytes(body)
            try:
                rp = await run_in_threadpool(open_replay, path, name)
            except WebError as exc:
                # open_replay names the record already: drop the temporary file's path
                return JSONResponse({"error": str(exc).replace(f"{path}: ", "").replace(str(path), name)}, 400)
        rp.name = name
        self.add(rp)
        return JSONResponse({"url": f"/table/{rp.id}"})

    async def resume(self, request: Request) -> Response:
        name = request.query_params.get("record", "")
        if self.records is None:
            return _refusal("the server was started without --records DIR", 404)
        for t in self.tables.values():  # the game is still in memory: go back to it
            if isinstance(t, Table) and t.record_name == name and not t.over:
                return RedirectResponse(f"/table/{t.id}", status_code=303)
        try:
            path = safe_file(self.records, name, (".json",))
            table = await run_in_threadpool(resume_table, path, self.records)
        except WebError as exc:
            return _refusal(str(exc), 404 if "no file" in str(exc) else 400)
        self.add(table)
        return RedirectResponse(f"/table/{table.id}", status_code=303)

    async def table_page(self, request: Request) -> Response:
        tid = request.path_params["tid"]
        t = self.tables.get(tid)
        if t is None:
            return _refusal(
                f"no table {tid!r} on this server (it may have been restarted): resume it from its record",
                404,
            )
        body = _asset("table.html").replace("{{id}}", _esc(tid))
        return _page("Spades table" if isinstance(t, Table) else "Spades replay", body)

    async def api_table(self, request: Request) -> Response:
        t = self.tables.get(request.path_params["tid"])
        if t is None:
            return JSONResponse({"error": "no such table"}, 404)
        return JSONResponse(await run_in_threadpool(t.view))

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS or name.endswith(".html"):
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(_asset(name), media_type=ASSETS[name], headers={"Cache-Control": "no-cache"})

    async def api_records(self, request: Request) -> Response:
        return JSONResponse(list_records(self.records) if self.records is not None else [])

    # -- the table's socket
    async def socket(self, ws: WebSocket) -> None:
        await ws.accept()
        t = self.tables.get(ws.path_params["tid"])
        if t is None:
            await ws.send_json({"kind": "error", "message": "no such table"})
            await ws.close()
            return
        try:
            await ws.send_json(await run_in_threadpool(t.view))
            receiver = asyncio.ensure_future(ws.receive_text())
            while True:
                delay = t.delay() if isinstance(t, Table) else None
                done, _ = await asyncio.wait({receiver}, timeout=delay)
                if receiver in done:
                    text = receiver.result()
                    receiver = asyncio.ensure_future(ws.receive_text())
                    reply = await self.handle(t, text)
                    await ws.send_json(reply)
                else:
                    assert isinstance(t, Table)
                    if await run_in_threadpool(t.advance):
                        await ws.send_json(await run_in_threadpool(t.view))
        except (WebSocketDisconnect, RuntimeError):
            pass  # the tab was closed: the game stays (and its record is on disk)
        finally:
            if isinstance(t, Table):
                try:
                    await run_in_threadpool(t.save)
                except OSError:
                    pass
            if "receiver" in locals() and not receiver.done():
                receiver.cancel()

    async def handle(self, t: Table | Replay, text: str) -> dict[str, Any]:
        """One message from a page: the new view, or an error that changed nothing."""
        try:
            if len(text) > MAX_MESSAGE:
                raise WebError(f"message too long ({len(text)} characters)")
            try:
                msg = json.loads(text)
            except ValueError:
                raise WebError("malformed message: not JSON") from None
            if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
                raise WebError("malformed message: a JSON object with a 'type' is expected")
            kind = msg["type"]
            if isinstance(t, Replay):
                if kind != "seek":
                    raise WebError(f"a replay takes 'seek' messages, not {kind!r}")
                t.seek(msg.get("to"))
            elif kind == "act":
                await run_in_threadpool(t.act, msg.get("action"), msg.get("seq"))
            elif kind == "continue":
                t.continue_(msg.get("seq"))
            elif kind == "speed":
                if msg.get("value") not in SPEEDS:
                    raise WebError(f"speed {msg.get('value')!r}: give {', '.join(SPEEDS)}")
                t.speed = msg["value"]
            elif kind in ("pause", "resume"):
                t.paused = kind == "pause"
            elif kind == "step":
                t.paused = True
                t.last_move = 0.0
                await run_in_threadpool(t.advance)
            elif kind == "show_hands":
                if t.setup.mode != "watch":
                    raise WebError("the other hands are hidden while you play")
                t.show_hands = bool(msg.get("value"))
            elif kind == "hint":
                t.hint = bool(msg.get("value"))
            else:
                raise WebError(f"unknown message type {kind!r}")
        except WebError as exc:
            return {"kind": "error", "message": str(exc)}
        view = await run_in_threadpool(t.view)
        return view


def create_app(records: str | Path | None = None) -> Starlette:
    """The web app; games are saved as records in ``records`` (None: not saved)."""
    server = Server(Path(records) if records is not None else None)
    routes = [
        Route("/", server.index),
        Route("/play", server.play),
        Route("/watch", server.watch),
        Route("/replay", server.replay, methods=["GET", "POST"]),
        Route("/resume", server.resume),
        Route("/table/{tid}", server.table_page),
        Route("/api/table/{tid}", server.api_table),
        Route("/records", server.api_records),
        WebSocketRoute("/ws/{tid}", server.socket),
        Route("/static/{name}", server.static),
    ]
    app = Starlette(routes=routes)
    app.state.server = server
    app.state.started = time.time()
    return app


__all__ = ["EPISODES", "MAX_MESSAGE", "Server", "create_app"]
