"""The local web app of ``spades serve``: play, watch and replay Spades in a browser.

The server (:mod:`spades_env.web.app`, Starlette served by uvicorn) holds the games; the page
draws the table it is sent and sends action ids back, nothing more: every rule, legal move and
score comes from the rules core. :mod:`spades_env.web.tables` holds the games and replays
(no web imports). Needs the ``web`` extra: ``pip install "spades_env[web]"``.
"""

from __future__ import annotations

EXTRA_HINT = (
    'spades serve needs the web extra: pip install "spades_env[web]" (starlette, uvicorn, websockets)'
)
"""What to install when the web app's dependencies are missing."""


def missing_dependency() -> str | None:
    """The name of a missing dependency of the app, or None when it can run."""
    import importlib.util

    for module in ("starlette", "uvicorn", "websockets"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


__all__ = ["EXTRA_HINT", "missing_dependency"]
