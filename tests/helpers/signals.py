"""Child processes that meet Ctrl-C as in a terminal."""

from __future__ import annotations

import signal


def as_in_a_terminal() -> None:
    """``preexec_fn`` of a command a test presses Ctrl-C in: SIGINT at its default, as in a
    terminal. A suite started as a background job of a non-interactive shell (``.ci/run ... &``)
    has SIGINT ignored, every child inherits that, and a Python started with SIGINT ignored
    installs no KeyboardInterrupt handler: the command would (rightly) ignore the Ctrl-C, as
    under ``nohup``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
