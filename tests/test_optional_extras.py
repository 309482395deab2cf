"""A missing optional dependency says which extra to install (run without the extras: each test
hides the package through ``sys.modules``)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from spades_env.cli import main
from spades_env.core.game import SpadesGame
from spades_env.io.records import record_from_game


def _hide(monkeypatch, *packages: str) -> None:
    """Make ``import PACKAGE`` (and its submodules) fail as if it were not installed."""
    for name in list(sys.modules):
        if any(name.startswith(p + ".") for p in packages):
            monkeypatch.setitem(sys.modules, name, None)
    for p in packages:
        monkeypatch.setitem(sys.modules, p, None)


def test_rllib_without_ray_names_the_extra(monkeypatch):
    _hide(monkeypatch, "ray")
    monkeypatch.delitem(sys.modules, "spades_env.integrations.rllib", raising=False)
    with pytest.raises(ImportError, match=r'pip install "spades_env\[rllib\]"') as info:
        importlib.import_module("spades_env.integrations.rllib")
    assert isinstance(info.value, ModuleNotFoundError) and (info.value.name or "").startswith("ray")


def _record(tmp_path):
    g = SpadesGame(seed=3)
    while not g.is_hand_over:
        g.apply(g.legal_actions()[0])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record_from_game(g)))
    return path


@pytest.mark.parametrize("missing", [("imageio", "imageio_ffmpeg"), ("imageio",), ("imageio_ffmpeg",)])
def test_replay_mp4_without_the_video_extra_names_it(tmp_path, monkeypatch, capsys, missing):
    path = _record(tmp_path)
    _hide(monkeypatch, *missing)
    assert main(["replay", str(path), "--video", str(tmp_path / "x.mp4")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the replay
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("spades replay: video ")
    assert 'pip install "spades_env[video]"' in err and "or write a .gif" in err
    assert not (tmp_path / "x.mp4").exists()


def test_write_video_mp4_without_the_video_extra_names_it(tmp_path, monkeypatch):
    import numpy as np

    from spades_env.io.video import VideoError, check_video_path, write_video

    _hide(monkeypatch, "imageio", "imageio_ffmpeg")
    with pytest.raises(VideoError, match=r'pip install "spades_env\[video\]"'):
        check_video_path(tmp_path / "x.mp4")
    with pytest.raises(VideoError, match=r'pip install "spades_env\[video\]"'):
        write_video([np.zeros((8, 8, 3), np.uint8)], tmp_path / "x.mp4")
    assert write_video([np.zeros((8, 8, 3), np.uint8)], tmp_path / "x.gif") == 1  # GIF needs no extra


def test_sb3_adapter_without_sb3_names_the_extra(monkeypatch):
    from spades_env.envs import vector_adapters

    _hide(monkeypatch, "stable_baselines3")
    with pytest.raises(ImportError, match=r'pip install "spades_env\[training\]"'):
        vector_adapters._build_sb3_vec_env()
