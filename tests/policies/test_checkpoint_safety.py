"""Checkpoints that cannot play illegally (issue 37): non-finite weights refused at load naming
the tensor, unknown metadata keys refused naming the key, a bounded strict header, and every
policy's action checked against its mask (act, act_rows, the driver)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from helpers.bad_input import HUGE_INT, AlwaysZero, BatchedZero
from spades_env.core.game import SpadesGame
from spades_env.policies.base import PolicyError, act_rows, checked_action
from spades_env.policies.checkpoint import CheckpointError, load_actor, read_safetensors
from spades_env.policies.driver import drive

SOURCE = Path(__file__).resolve().parents[2] / "checkpoints" / "spades2_v1"


@pytest.fixture
def ckpt(tmp_path):
    d = tmp_path / "ckpt"
    shutil.copytree(SOURCE, d)
    return d


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused_naming_the_tensor(ckpt, value):
    w = {k: np.array(v) for k, v in read_safetensors(ckpt / "model.safetensors").items()}
    name = sorted(k for k in w if k.startswith("actor."))[0]
    w[name].reshape(-1)[3] = value
    save_file(w, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=f"tensor '{name}' holds 1 non-finite"):
        load_actor(ckpt)


@pytest.mark.parametrize("key", ["polcy", "rules_familly", "x" * 10_000])
def test_unknown_meta_keys_are_refused_naming_the_key(ckpt, key):
    meta = json.loads((ckpt / "meta.json").read_text())
    meta[key] = 1
    (ckpt / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="unknown key") as err:
        load_actor(ckpt)
    assert key[:20] in str(err.value) and len(str(err.value)) < 1500


@pytest.mark.parametrize(
    "text, words",
    [
        (lambda m: m.replace('"update": ', f'"update": {HUGE_INT}, "x": '), "5000 digits"),
        (lambda m: m[:-2] + ', "update": NaN}', "NaN"),
        (lambda m: m[:-2] + ', "format": 1}', "appears twice"),
    ],
)
def test_meta_json_is_read_strictly(ckpt, text, words):
    path = ckpt / "meta.json"
    path.write_text(text(path.read_text().rstrip() + "\n"))
    with pytest.raises(CheckpointError, match=words):
        load_actor(ckpt)


@pytest.mark.parametrize("key", ["obs_size", "critic_size"])
def test_a_top_level_size_that_contradicts_the_observation_version_is_refused(ckpt, key):
    meta = json.loads((ckpt / "meta.json").read_text())
    meta[key] = 10
    (ckpt / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"key '{key}' is 10, but observation version 2 has"):
        load_actor(ckpt)


def test_a_checkpoint_rewritten_in_place_is_read_again(ckpt):
    """The loader keeps what it read per folder, but not past a change to either file: a
    metadata file broken (or retrained) after a first load is what the next load reads."""
    import os

    from spades_env.policies import load

    assert load(str(ckpt), rules="two_player", seed=0) is not None
    meta = ckpt / "meta.json"
    stamp = meta.stat().st_mtime_ns
    meta.write_text("{")
    os.utime(meta, ns=(stamp + 10**9, stamp + 10**9))  # a later time even on a coarse clock
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load(str(ckpt), rules="two_player", seed=0)


def test_a_huge_integer_in_a_safetensors_header_is_a_checkpoint_error(ckpt):
    header = json.dumps({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).replace("[0, 4]", f"[0, {HUGE_INT}]")
    blob = struct.pack("<Q", len(header)) + header.encode() + b"\0" * 4
    (ckpt / "model.safetensors").write_bytes(blob)
    with pytest.raises(CheckpointError, match="5000 digits"):
        read_safetensors(ckpt / "model.safetensors")


def test_weights_file_must_be_a_regular_file(ckpt):
    (ckpt / "model.safetensors").unlink()
    (ckpt / "model.safetensors").symlink_to("/dev/zero")
    with pytest.raises(CheckpointError, match="regular file"):
        read_safetensors(ckpt / "model.safetensors")


def test_a_policy_that_plays_illegally_is_an_error_naming_it_in_the_driver():
    g = SpadesGame(seed=1)
    before = g.state.copy()
    with pytest.raises(PolicyError, match="always-zero.*not legal"):
        drive(g, {s: AlwaysZero() for s in range(4)})
    assert np.array_equal(g.state, before)  # the move was not played


@pytest.mark.parametrize("policy", [AlwaysZero(), BatchedZero()], ids=lambda p: p.name)
def test_act_rows_checks_every_row(policy):
    masks = np.zeros((3, 70), dtype=np.int8)
    masks[:, 67] = 1
    masks[1, 0] = 1
    with pytest.raises(PolicyError, match=f"{policy.name}.*row 0"):
        act_rows([policy] * 3, np.zeros((3, 10), np.float32), masks)


@pytest.mark.parametrize("action", ["3", None, 70, -1, 2.0, True])
def test_checked_action_refuses_values_that_are_not_action_ids(action):
    mask = np.ones(70, dtype=np.int8)
    with pytest.raises(PolicyError, match="not an action id"):
        checked_action(AlwaysZero(), action, mask)
