"""spades_env.policies.checkpoint: checkpoints read and played with NumPy only.

The NumPy forward pass equals the torch network of training/ (shipped checkpoint and random
weights), the own safetensors reader equals the safetensors library, corrupt files and
malformed metadata end in a CheckpointError naming the file and the key (issue 13), in process
and through the ``spades`` command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.observations import game_observations
from spades_env.core.observation import OBS_SIZE, OBS_VERSION
from spades_env.core.rules import load_rules
from spades_env.policies.checkpoint import (
    OBS_SIZES,
    CheckpointError,
    CheckpointPolicy,
    NumpyActor,
    load_actor,
    load_meta,
    load_policy,
    read_safetensors,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "spades4_net_v1"



# ---- the NumPy forward pass against the torch network --------------------------------------------
def _torch_net(meta: dict, tensors: dict | None = None):
    torch = pytest.importorskip("torch")
    from training.network import ActorCritic

    obs_size, critic_size = OBS_SIZES[meta["obs_version"]]
    a = meta["arch"]
    torch.manual_seed(0)
    net = ActorCritic(obs_size, critic_size, 70, tuple(a["hidden"]), tuple(a["critic_hidden"]))
    if tensors is not None:
        net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in tensors.items()})
    return net.eval()


def test_numpy_actor_matches_torch_on_the_shipped_checkpoint():
    torch = pytest.importorskip("torch")
    meta = json.loads((SHIPPED / "meta.json").read_text())
    tensors = read_safetensors(SHIPPED / "model.safetensors")
    net = _torch_net(meta, tensors)
    actor = NumpyActor(tensors, meta["arch"]["hidden"], obs_size=OBS_SIZES[meta["obs_version"]][0])
    obs, masks = game_observations()
    x = obs
    rng = np.random.default_rng(0)
    x = np.concatenate([x, rng.random(x.shape, dtype=np.float32)])  # and arbitrary inputs
    masks = np.concatenate([masks, masks])
    with torch.no_grad():
        want = net.logits(torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(masks)).numpy()
    got = actor.logits(x, masks)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert (got.argmax(1) == want.argmax(1)).all()


@pytest.mark.parametrize("hidden", [(64, 32), (16,), ()])
def test_numpy_actor_matches_torch_on_random_weights(hidden):
    torch = pytest.importorskip("torch")
    meta = {"obs_version": OBS_VERSION, "arch": {"hidden": list(hidden), "critic_hidden": [8]}}
    net = _torch_net(meta)
    for p in net.parameters():  # not the orthogonal init alone: random biases too
        torch.nn.init.normal_(p, std=0.3)
    tensors = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    actor = NumpyActor(tensors, list(hidden))
    x = np.random.default_rng(1).normal(size=(64, OBS_SIZE)).astype(np.float32)
    with torch.no_grad():
        want = net.actor(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(actor(x), want, rtol=1e-4, atol=1e-4)


def test_the_loaded_policy_plays_as_the_torch_network():
    """``spades_env.policies.load`` (and the registry's ``resolve_policy``) give a policy that
    plays the torch network's most likely legal action, or samples its masked softmax."""
    torch = pytest.importorskip("torch")
    from spades_env.policies import load
    from spades_env.policies.registry import resolve_policy

    meta = json.loads((SHIPPED / "meta.json").read_text())
    net = _torch_net(meta, read_safetensors(SHIPPED / "model.safetensors"))
    obs, masks = game_observations(150, seed=9)
    x = torch.from_numpy(np.ascontiguousarray(obs))
    with torch.no_grad():
        logits = net.logits(x, torch.from_numpy(masks)).double()
    ours = load(str(SHIPPED), seed=3)
    assert isinstance(ours, CheckpointPolicy) and ours.deterministic  # as meta.json says
    a = [ours.act(o, m) for o, m in zip(obs, masks, strict=True)]
    assert a == logits.argmax(1).tolist()
    # sampled: the masked softmax of the torch network's logits, drawn by the policy's generator
    sampled = resolve_policy(str(SHIPPED), 3, load_rules("tournament"))
    sampled.deterministic = False
    rng = np.random.default_rng(3)
    want = []
    for row, m in zip(torch.softmax(logits, -1).numpy(), masks, strict=True):
        p = row.copy()
        p[m == 0] = 0.0
        want.append(int(rng.choice(p.size, p=p / p.sum())))
    b = [sampled.act(o, m) for o, m in zip(obs, masks, strict=True)]
    assert b == want and b != a
    assert all(m[x] for x, m in zip(a + b, np.concatenate([masks, masks]), strict=True))


def test_shipped_checkpoint_loads_without_torch():
    code = (
        "import sys\n"
        "from spades_env.policies.checkpoint import load_policy\n"
        "from spades_env.policies.registry import resolve_policy\n"
        "from spades_env.core.rules import load_rules\n"
        f"p = resolve_policy({str(SHIPPED)!r}, 0, load_rules('tournament'))\n"
        "print(type(p).__module__, p.deterministic, 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["spades_env.policies.checkpoint", "True", "False"]


# ---- the safetensors reader --------------------------------------------------------------------
def test_reader_matches_the_safetensors_library():
    st = pytest.importorskip("safetensors.numpy")
    want = st.load_file(str(SHIPPED / "model.safetensors"))
    got = read_safetensors(SHIPPED / "model.safetensors")
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
        np.testing.assert_array_equal(got[k], want[k])


def test_reader_dtypes(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {
        "a": np.arange(6, dtype=np.float16).reshape(2, 3),
        "b": np.arange(4, dtype=np.int64),
        "c": np.array([True, False]),
        "d": np.zeros((0, 3), dtype=np.float64),
    }
    st.save_file(arrays, str(tmp_path / "x.safetensors"))
    got = read_safetensors(tmp_path / "x.safetensors")
    for k, v in arrays.items():
        np.testing.assert_array_equal(got[k], v)
        assert got[k].dtype == v.dtype


@pytest.mark.parametrize(
    "mangle, why",
    [
        (lambda b: b[:5], "shorter than its 8-byte header"),
        (lambda b: (10**9).to_bytes(8, "little") + b[8:], "exceeds the file size"),
        (lambda b: b[:8] + b"!" + b[9:], "header is not JSON"),
        (lambda b: b[:-100], "bad data_offsets"),
        (lambda b: b"\x80\x04\x95" + b[3:], ""),  # a pickle opcode where the length is
    ],
)
def test_corrupt_weights_are_a_checkpoint_error(tmp_path, mangle, why):
    ck = tmp_path / "ck"
    ck.mkdir()
    shutil.copy(SHIPPED / "meta.json", ck / "meta.json")
    (ck / "model.safetensors").write_bytes(mangle((SHIPPED / "model.safetensors").read_bytes()))
    with pytest.raises(CheckpointError, match=r"model\.safetensors: corrupt safetensors file.*" + why):
        load_actor(ck)


def test_weights_of_another_shape(tmp_path):
    ck = tmp_path / "ck"
    ck.mkdir()
    meta = json.loads((SHIPPED / "meta.json").read_text())
    meta["arch"]["hidden"] = [512, 256]
    (ck / "meta.json").write_text(json.dumps(meta))
    (ck / "model.safetensors").symlink_to(SHIPPED / "model.safetensors")
    with pytest.raises(CheckpointError, match=r"model\.safetensors: weight actor\.2\.weight has shape"):
        load_actor(ck)


# ---- malformed metadata (issue 13) -------------------------------------------------------------
BAD_META = [
    ({"arch.hidden": "abc"}, r"'arch\.hidden' must be a list of layer widths"),
    ({"arch.hidden": [-1]}, r"'arch\.hidden' must be a list of layer widths"),
    ({"arch.hidden": [2.5]}, r"'arch\.hidden' must be a list of layer widths"),
    ({"arch.hidden": 512}, r"'arch\.hidden' must be a list of layer widths"),
    ({"arch.hidden": [True]}, r"'arch\.hidden' must be a list of layer widths"),
    ({"arch.critic_hidden": [0]}, r"'arch\.critic_hidden' must be a list"),
    ({"rules": "x"}, r"key 'rules' must be a mapping"),
    ({"rules": {"num_players": 3}}, r"key 'rules'.*num_players"),
    ({"rules": {"colour": 1}}, r"key 'rules'.*unknown rule key"),
    ({"policy": "greedy"}, r"key 'policy' must be a mapping"),
    ({"policy": {"deterministic": "yes"}}, r"'policy\.deterministic' must be true or false"),
    ({"obs_version": True}, r"observation version True"),
    ({"obs_version": 99}, r"observation version 99"),
]


def _bad_checkpoint(tmp_path: Path, change: dict) -> Path:
    ck = tmp_path / "bad_ck"
    ck.mkdir()
    meta = json.loads((SHIPPED / "meta.json").read_text())
    for key, value in change.items():
        d = meta
        *parents, last = key.split(".")
        for p in parents:
            d = d[p]
        d[last] = value
    (ck / "meta.json").write_text(json.dumps(meta))
    (ck / "model.safetensors").symlink_to(SHIPPED / "model.safetensors")
    return ck


@pytest.mark.parametrize("change, message", BAD_META)
def test_malformed_meta_is_a_checkpoint_error(tmp_path, change, message):
    ck = _bad_checkpoint(tmp_path, change)
    before = (ck / "meta.json").read_bytes()
    loaders = [load_meta, load_actor, load_policy]
    try:  # the torch loader of training/ checks the same way (one load_meta)
        from training.checkpoint import load_checkpoint

        loaders.append(load_checkpoint)
    except ImportError:
        pass
    for load in loaders:
        with pytest.raises(CheckpointError, match=r"bad_ck/meta\.json: .*" + message):
            load(ck)
    assert (ck / "meta.json").read_bytes() == before


@pytest.mark.parametrize("change, message", BAD_META[:4] + BAD_META[6:7] + BAD_META[9:10])
def test_malformed_meta_through_the_cli(tmp_path, change, message):
    ck = _bad_checkpoint(tmp_path, change)
    cmd = [sys.executable, "-m", "spades_env.cli", "eval", str(ck), "random", "--games", "2", "--no-progress"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert "meta.json" in lines[0]
    import re

    assert re.search(message, lines[0]), lines[0]
