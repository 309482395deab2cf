"""Pictures: rgb_array frames of the table (what they show, per viewer), videos of recorded
games through `spades replay --video` (gif and mp4), bad output paths refused before work."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.io.records import record_from_game, save_record
from spades_env.io.render import HEIGHT, WIDTH, render_rgb
from spades_env.io.video import VideoError, check_video_path, record_frames, write_video


def _played(seed: int = 3, actions: int = 30, rules: str = "tournament") -> SpadesGame:
    g = SpadesGame(rules, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(actions):
        if g.is_hand_over:
            g.next_hand()
        g.apply(int(rng.choice(g.legal_actions())))
    return g


@pytest.mark.parametrize("rules", ["tournament", "two_player", "openspiel"])
def test_frame_is_an_rgb_picture(rules):
    g = _played(rules=rules)
    for viewer in (None, 0, 1):
        f = render_rgb(g, viewer)
        assert f.shape == (HEIGHT, WIDTH, 3) and f.dtype == np.uint8
        assert len(np.unique(f.reshape(-1, 3), axis=0)) > 10  # a picture, not a blank


def test_viewer_sees_only_its_own_hand():
    g = _played()
    other = g.copy()
    # swap two hidden hands: the viewer's picture cannot change, the all-hands one must
    st = other.state
    st[L.HANDS + 1], st[L.HANDS + 3] = int(st[L.HANDS + 3]), int(st[L.HANDS + 1])
    if bin(int(st[L.HANDS + 1])).count("1") == bin(int(st[L.HANDS + 3])).count("1"):
        assert (render_rgb(g, viewer=0) == render_rgb(other, viewer=0)).all()
    assert not (render_rgb(g) == render_rgb(other)).all()


def test_frames_follow_the_game():
    g = SpadesGame(seed=1)
    f0 = render_rgb(g)
    g.apply(g.legal_actions()[0])
    assert not (render_rgb(g) == f0).all()  # whose turn, bids
    # a completed trick is shown on request
    rng = np.random.default_rng(0)
    while int(g.state[L.TRICKS_PLAYED]) == 0:
        g.apply(int(rng.choice(g.legal_actions())))
    assert not (render_rgb(g, last_trick=True) == render_rgb(g)).all()


def _record(tmp_path, hands: int = 1):
    g = SpadesGame(seed=5)
    rng = np.random.default_rng(5)
    done = 0
    while done < hands:
        if g.is_hand_over:
            done += 1
            if done < hands:
                g.next_hand()
            continue
        g.apply(int(rng.choice(g.legal_actions())))
    path = tmp_path / "game.json"
    save_record(record_from_game(g), path)
    return path, g


def test_record_frames_one_per_action(tmp_path):
    path, g = _record(tmp_path)
    frames = list(record_frames(str(path)))
    actions = len(g.hand_logs[0].actions)
    assert len(frames) == 1 + actions + 13  # the deal, each action, each completed trick
    Image.fromarray(frames[-1]).save(tmp_path / "last.png")


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_replay_video_cli(tmp_path, suffix):
    if suffix == ".mp4":
        pytest.importorskip("imageio_ffmpeg")
    path, _ = _record(tmp_path)
    out = tmp_path / f"game{suffix}"
    cmd = [sys.executable, "-m", "spades_env.cli", "replay", str(path), "--video", str(out), "--fps", "8"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "Video:" in res.stdout and out.stat().st_size > 10_000
    if suffix == ".gif":
        with Image.open(out) as im:
            assert im.n_frames > 50 and im.size == (WIDTH, HEIGHT)


@pytest.mark.parametrize(
    "out, message",
    [("nodir/x.mp4", "does not exist"), ("x.avi", "must end in .mp4 or .gif"), (".", "must end in")],
)
def test_replay_video_bad_path_exits_2_first(tmp_path, out, message):
    path, _ = _record(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "spades_env.cli", "replay", str(path), "--video", out],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""  # refused before the replay


def test_check_video_path(tmp_path):
    (tmp_path / "d.gif").mkdir()
    with pytest.raises(VideoError, match="is a directory"):
        check_video_path(tmp_path / "d.gif")
    with pytest.raises(VideoError, match="fps"):
        write_video([np.zeros((8, 8, 3), np.uint8)], tmp_path / "x.gif", fps=0)
    assert write_video([np.zeros((8, 8, 3), np.uint8)] * 3, tmp_path / "x.gif", fps=4) == 3
