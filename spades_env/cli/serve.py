"""``spades serve``: play, watch and replay Spades in your browser (a local web app).

Starts the app on ``http://127.0.0.1:8000/`` (``--host``, ``--port``) and prints its URL; Ctrl-C
stops it. Every game played in the app is saved as a record in ``--records DIR`` (default
``spades_records``), the human seat marked in its meta; the replay page opens those records
(or an uploaded one). Needs the web extra: ``pip install "spades_env[web]"``. Binds to
loopback unless ``--host`` says otherwise: the app has no accounts, so give another address
only on a network you trust.
"""

from __future__ import annotations

import argparse
import sys

from spades_env.cli.common import doc_paragraph
from spades_env.web import EXTRA_HINT, missing_dependency


def run(args: argparse.Namespace) -> int:
    missing = missing_dependency()
    if missing is not None:
        print(f"spades serve: {EXTRA_HINT} ({missing} is not installed)", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"spades serve: --port {args.port} is not a port 0..65535", file=sys.stderr)
        return 2
    import uvicorn

    from spades_env.web.app import create_app

    app = create_app(args.records)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"spades serve: open http://{host}:{args.port}/ (records in {args.records}; Ctrl-C stops)", flush=True
    )
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    print("spades serve: stopped.")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve", help="play, watch and replay in the browser", description=doc_paragraph(__doc__)
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--records", default="spades_records", help="folder of the game records (default spades_records)"
    )
    p.set_defaults(func=run)
