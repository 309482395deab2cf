"""Videos of recorded games: ``spades replay FILE --video OUT`` (``.mp4`` or ``.gif``).

:func:`record_frames` replays a record (see :mod:`spades_env.io.records`) and yields one
:func:`spades_env.io.render.render_rgb` picture per action, plus one showing each completed trick
before it is gathered; :func:`write_video` writes frames as a GIF (Pillow, always available) or
an MP4 (H.264 through ``imageio-ffmpeg``: ``pip install "spades_env[video]"``). The output path
is checked (:func:`check_video_path`) before any frame is drawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.validate import SpadesError
from spades_env.io.records import _rules_of, _start_hand, load_record
from spades_env.io.render import render_rgb

VIDEO_SUFFIXES = (".mp4", ".gif")


class VideoError(SpadesError):
    """A video that cannot be written (bad path or format, missing encoder)."""


def check_video_path(path: str | Path) -> Path:
    """The output path, checked: a ``.mp4`` or ``.gif`` name in an existing folder, not a
    folder itself; for ``.mp4`` the encoder must be installed."""
    p = Path(path)
    if p.suffix.lower() not in VIDEO_SUFFIXES:
        raise VideoError(f"video {str(p)!r}: the name must end in .mp4 or .gif")
    if p.is_dir():
        raise VideoError(f"video {str(p)!r} is a directory")
    if not p.parent.is_dir():
        raise VideoError(f"video {str(p)!r}: folder {str(p.parent)!r} does not exist")
    if p.suffix.lower() == ".mp4":
        _mp4_writer(p)
    return p


def _mp4_writer(p: Path) -> Any:
    """``imageio.v2`` with its FFmpeg plugin, or VideoError naming the ``video`` extra."""
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401
    except ImportError as exc:
        raise VideoError(
            f"video {str(p)!r}: writing .mp4 needs imageio and imageio-ffmpeg ({exc}): "
            'pip install "spades_env[video]", or write a .gif'
        ) from None
    return imageio


def record_frames(record: Any, viewer: int | None = None) -> Iterator[np.ndarray]:
    """Pictures of a recorded game, one per action (the record is checked first with
    :func:`spades_env.io.records.replay_record`, so this replay cannot fail halfway)."""
    from spades_env.io.records import replay_record

    replay_record(record)  # RecordError before any frame
    data = load_record(record)
    game = SpadesGame(_rules_of(data["rules"]), seed=0, dealer=data["first_dealer"])
    for i, h in enumerate(data["hands"]):
        _start_hand(game, h, i, first=(i == 0))
        yield render_rgb(game, viewer)
        for a in h["actions"]:
            played = int(game.state[L.TRICKS_PLAYED])
            game.apply(a)
            if int(game.state[L.TRICKS_PLAYED]) > played:  # a trick was completed: show it
                yield render_rgb(game, viewer, last_trick=True)
            yield render_rgb(game, viewer)


def write_video(frames: Iterable[np.ndarray], path: str | Path, fps: float = 2.0) -> int:
    """Write ``frames`` (``uint8[H, W, 3]``) to ``path`` (``.gif`` or ``.mp4``); the frame count."""
    p = check_video_path(path)
    if not fps > 0:
        raise VideoError(f"fps must be a positive number, got {fps!r}")
    count = 0
    if p.suffix.lower() == ".gif":
        from PIL import Image

        images = [Image.fromarray(f).quantize(colors=64, method=Image.Quantize.FASTOCTREE) for f in frames]
        if not images:
            raise VideoError("no frames to write")
        images[0].save(
            p, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0, optimize=False
        )
        return len(images)
    imageio = _mp4_writer(p)
    with imageio.get_writer(p, fps=fps, codec="libx264", macro_block_size=8, quality=7) as writer:
        for f in frames:
            writer.append_data(f)
            count += 1
    return count


__all__ = ["VideoError", "check_video_path", "record_frames", "write_video"]
