"""Checkpoints as Policies, with NumPy only: no torch, no source tree.

A checkpoint is a directory holding ``model.safetensors`` (the network weights) and
``meta.json`` (format, observation version, action table, network shapes, rules, training
config, evaluation results); any of the directory, ``model.safetensors`` or ``meta.json``
names it. Training writes them (``training.checkpoint``, PyTorch); this module reads them
anywhere ``spades_env`` is installed:

* :func:`load_meta` checks the metadata: a missing or corrupt file, another format,
  observation version or action table, or a key of the wrong type (``arch.hidden`` that is not
  a list of positive integers, ``rules`` that is not a valid rules mapping, ``policy`` that is
  not a mapping) raises :class:`CheckpointError` naming the file and the key.
* :func:`read_safetensors` reads the safetensors format (an 8-byte little-endian header
  length, a JSON header of names, dtypes, shapes and byte offsets, then the raw data) into
  NumPy arrays; it never unpickles.
* :class:`NumpyActor` is the actor of ``training.network.ActorCritic`` (Linear+ReLU layers,
  a linear output, masked logits) as a NumPy forward pass; ``tests/policies/test_checkpoint.py``
  checks it against the torch network on the shipped checkpoint and on random weights.
* :func:`load_policy` gives a :class:`CheckpointPolicy` (the Policy protocol); its
  ``act_batch(obs[B], mask[B])`` decides a batch in one forward pass, and
  :func:`act_policies` decides row ``i`` with ``policies[i]`` (many seats of many games, each
  with its own generator, one forward pass): both give exactly the actions of ``act`` called
  row by row (see :func:`act_policies` for how);
  :func:`spades_env.policies.load` (so ``spades eval``, ``spades tournament``, ``spades
  play``) sends names that look like paths here.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.files import brief, parse_json, read_bytes_bounded, read_json_file
from spades_env.core.jit import jit
from spades_env.core.observation import (
    OBS_SIZE,
    OBS_VERSION,
    STATE_VEC_SIZE,
    score_clip_bounds,
    score_clip_ok,
)
from spades_env.core.rules import RulesConfig, RulesError, load_rules, rules_from_dict
from spades_env.core.validate import SpadesError
from spades_env.policies.base import PolicyError, acts_as, policy_name
from spades_env.policies.coverage import warn_untrained

FORMAT = "spades_env.checkpoint/1"
MODEL_FILE, META_FILE = "model.safetensors", "meta.json"
STATE_FILE, STATE_JSON = "train_state.safetensors", "train_state.json"

MASKED_LOGIT = -1.0e8
"""Logit of an illegal action: exp() of it underflows to exactly 0 after the softmax."""

OBS_SIZES = {OBS_VERSION: (OBS_SIZE, STATE_VEC_SIZE)}
"""Observation versions a checkpoint may have been trained on: (observation, critic input) sizes.
Only this version's: checkpoints of observation version 1 load with spades_env 0.1.0."""

_MAX_WIDTH = 1 << 16  # widest hidden layer a checkpoint may declare
_MAX_META_BYTES = 16 * 1024 * 1024
_MAX_WEIGHTS_BYTES = 2 * 1024 * 1024 * 1024
_MAX_HEADER_BYTES = 100 * 1024 * 1024  # the safetensors format's own limit

META_KEYS: dict[str, str] = {
    "format": "the checkpoint format, " + repr("spades_env.checkpoint/1"),
    "obs_version": "the observation version the network was trained on",
    "obs_size": "the observation's size",
    "critic_size": "the critic input's (state vector's) size",
    "actions": "the action table (names of the ids 0..69)",
    "arch": "network shapes: hidden, critic_hidden, obs_size, critic_size, num_actions, score_clip",
    "code_revision": "the git revision of the code that saved it",
    "saved_at": "when it was saved (UTC)",
    "rules": "the rules it was trained under",
    "rules_family": "the rules family it was trained under",
    "rules_weights": "the family's sampling weights",
    "config": "the training config",
    "trainer": "the module that trained it",
    "policy": "how it plays: {'deterministic': bool}",
    "bc": "behaviour cloning's record (teacher, data, history)",
    "best_response": "a best response's record (agent, seats, init)",
    "update": "the PPO update it was saved at",
    "decisions": "decisions trained on",
    "evaluation": "evaluation results",
    "run": "the training run's record (added by the run's tooling)",
    "history": "the training history (added by the run's tooling)",
    "interrupted": "whether the run was interrupted when it was saved",
}
"""Every key a checkpoint's ``meta.json`` may hold; any other key is refused, naming it (a typo
would otherwise silently do nothing)."""


class CheckpointError(SpadesError):
    """A checkpoint that is missing, corrupt or does not fit this code (names file and problem);
    a ``ValueError``, and one of the errors the ``spades`` command reports in one line."""


def action_table() -> list[str]:
    """Names of the action ids 0..69 as stored in every checkpoint."""
    return [action_to_str(a) for a in range(NUM_ACTIONS)]


def checkpoint_dir(path: str | Path) -> Path:
    """The checkpoint directory named by the directory itself, its weights or its metadata."""
    if not isinstance(path, (str, Path)):
        raise CheckpointError(f"a checkpoint path must be a string or a Path, got {type(path).__name__}")
    p = Path(path)
    if p.name in (MODEL_FILE, META_FILE, STATE_FILE, STATE_JSON):
        p = p.parent
    if not p.exists():
        raise CheckpointError(f"{p}: no such checkpoint (missing directory)")
    if not p.is_dir():
        raise CheckpointError(f"{p}: a checkpoint is a directory holding {MODEL_FILE} and {META_FILE}")
    return p


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, read boundedly and strictly
    (:func:`spades_env.core.files.read_json_file`); a missing, oversized or corrupt file is a
    :class:`CheckpointError`."""
    if not Path(path).exists():
        raise CheckpointError(f"{path}: missing file")
    data = read_json_file(path, "checkpoint metadata", CheckpointError, limit=_MAX_META_BYTES)
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: corrupt metadata (not a JSON object)")
    return data


# ---- metadata ----------------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_widths(mp: Path, key: str, value: Any) -> None:
    if not isinstance(value, list) or not all(_is_int(v) and 1 <= v <= _MAX_WIDTH for v in value):
        raise CheckpointError(
            f"{mp}: key '{key}' must be a list of layer widths (integers 1..{_MAX_WIDTH}), got {value!r}"
        )


def check_meta(meta: dict[str, Any], mp: Path) -> dict[str, Any]:
    """Check a checkpoint's metadata (``mp``: the file, for messages); returns ``meta``."""
    unknown = sorted((k for k in meta if k not in META_KEYS), key=str)
    if unknown:
        raise CheckpointError(
            f"{mp}: unknown key {brief(unknown[0], 60)} in the checkpoint metadata; known keys: "
            f"{', '.join(META_KEYS)}"
        )
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{mp}: unknown checkpoint format {brief(meta.get('format'))} (expected {FORMAT!r})")
    version = meta.get("obs_version")
    if not _is_int(version) or version not in OBS_SIZES:
        raise CheckpointError(
            f"{mp}: observation version {version!r} is not one this code reads (it reads version "
            f"{OBS_VERSION}; version-1 checkpoints load with spades_env 0.1.0)"
        )
    if meta.get("actions") != action_table():
        raise CheckpointError(f"{mp}: the action table differs from this code's action ids")
    arch = meta.get("arch")
    if not isinstance(arch, dict) or not {"hidden", "critic_hidden"} <= set(arch):
        raise CheckpointError(f"{mp}: metadata has no valid 'arch' (network shapes)")
    _check_widths(mp, "arch.hidden", arch["hidden"])
    _check_widths(mp, "arch.critic_hidden", arch["critic_hidden"])
    obs_size, critic_size = OBS_SIZES[version]
    for key, size in (("obs_size", obs_size), ("critic_size", critic_size)):
        if key in meta and meta[key] != size:
            raise CheckpointError(
                f"{mp}: key '{key}' is {brief(meta[key])}, but observation version {version} has {size}"
            )
    if arch.get("obs_size") != obs_size or arch.get("critic_size") != critic_size:
        raise CheckpointError(
            f"{mp}: network input sizes {arch.get('obs_size')}/{arch.get('critic_size')} do not match "
            f"observation version {version}'s observation ({obs_size}) and state ({critic_size}) sizes"
        )
    if not score_clip_ok(arch.get("score_clip")):
        raise CheckpointError(
            f"{mp}: key 'arch.score_clip' must be a positive number (or absent), got {arch['score_clip']!r}"
        )
    if arch.get("num_actions", NUM_ACTIONS) != NUM_ACTIONS:
        raise CheckpointError(
            f"{mp}: key 'arch.num_actions' must be {NUM_ACTIONS}, got {arch['num_actions']!r}"
        )
    if "rules" in meta:
        rules = meta["rules"]
        if not isinstance(rules, dict):
            raise CheckpointError(
                f"{mp}: key 'rules' must be a mapping of rule names to values, got {rules!r}"
            )
        try:
            rules_from_dict(rules, where=f"{mp}: key 'rules'")
        except RulesError as exc:
            raise CheckpointError(str(exc)) from None
    if "policy" in meta:
        pol = meta["policy"]
        if not isinstance(pol, dict):
            raise CheckpointError(
                f"{mp}: key 'policy' must be a mapping such as {{\"deterministic\": true}}, got {pol!r}"
            )
        if not isinstance(pol.get("deterministic", False), bool):
            raise CheckpointError(
                f"{mp}: key 'policy.deterministic' must be true or false, got {pol['deterministic']!r}"
            )
        unknown = sorted(set(pol) - {"deterministic"})
        if unknown:
            raise CheckpointError(
                f"{mp}: unknown key 'policy.{unknown[0]}' (a checkpoint's policy holds only 'deterministic'; "
                "a network with a search bot is a composite agent declared in an agent.json, "
                "see spades_env.policies.agents)"
            )
    return meta


def load_meta(path: str | Path) -> dict[str, Any]:
    """The checked metadata of a checkpoint (see :func:`check_meta`)."""
    mp = checkpoint_dir(path) / META_FILE
    return check_meta(read_json(mp), mp)


# ---- safetensors -------------------------------------------------------------------------------
_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a NumPy array (``BF16`` becomes float32).

    A missing file, or one whose header, dtypes, shapes or offsets do not add up, raises
    :class:`CheckpointError` naming the file."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: missing file")

    def bad(why: str) -> CheckpointError:
        return CheckpointError(f"{path}: corrupt safetensors file ({why})")

    data = read_bytes_bounded(path, "weights file", CheckpointError, limit=_MAX_WEIGHTS_BYTES)
    if len(data) < 8:
        raise bad("shorter than its 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise bad(f"header length {n} exceeds the file size {len(data)}")
    if n > _MAX_HEADER_BYTES:
        raise bad(f"header length {n} exceeds the format's limit of {_MAX_HEADER_BYTES} bytes")
    try:
        header = parse_json(bytes(data[8 : 8 + n]), "header", CheckpointError)
    except CheckpointError as exc:
        raise bad(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise bad("header is not a JSON object")
    body = memoryview(data)[8 + n :]
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise bad(f"tensor {brief(name)}: header entry needs dtype, shape and data_offsets")
        dtype, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in _DTYPES and dtype != "BF16":
            raise bad(f"tensor {brief(name)}: unsupported dtype {brief(dtype)}")
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise bad(f"tensor {brief(name)}: bad shape {brief(shape)}")
        if (
            not isinstance(offs, list)
            or len(offs) != 2
            or not all(_is_int(o) for o in offs)
            or not 0 <= offs[0] <= offs[1] <= len(body)
        ):
            raise bad(f"tensor {brief(name)}: bad data_offsets {brief(offs)}")
        np_dtype = np.dtype("<u2" if dtype == "BF16" else _DTYPES[dtype])
        count = math.prod(shape)
        if offs[1] - offs[0] != count * np_dtype.itemsize:
            raise bad(f"tensor {brief(name)}: {offs[1] - offs[0]} bytes for shape {brief(shape)} of {dtype}")
        arr = np.frombuffer(body, dtype=np_dtype, count=count, offset=offs[0]).reshape(shape)
        if dtype == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            bad_count = int(arr.size - np.isfinite(arr).sum())
            raise CheckpointError(
                f"{path}: tensor {brief(name)} holds {bad_count} non-finite value(s) (NaN or inf) "
                f"of its {arr.size}; a network with them cannot choose legal actions, so it is not loaded"
            )
        out[name] = arr
    return out


# ---- the actor as a NumPy forward pass ----------------------------------------------------------
class NumpyActor:
    """The actor of ``training.network.ActorCritic`` in NumPy: ``obs [N, OBS_SIZE] -> logits [N, 70]``.

    ``weights`` holds ``actor.{2k}.weight`` (``[out, in]``, as torch's ``nn.Linear``) and
    ``actor.{2k}.bias`` for each layer ``k`` of ``hidden`` plus the output layer. With
    ``score_clip``, the observation's two score entries are first clipped to ``[-score_clip,
    score_clip]``, as the torch network does (``training.network``)."""

    def __init__(
        self,
        weights: dict[str, np.ndarray],
        hidden: list[int] | tuple[int, ...],
        obs_size: int = OBS_SIZE,
        num_actions: int = NUM_ACTIONS,
        where: str | Path = "weights",
        score_clip: float | None = None,
    ) -> None:
        sizes = [obs_size, *hidden, num_actions]
        self.layers: list[tuple[np.ndarray, np.ndarray]] = []
        for k in range(len(sizes) - 1):
            w_key, b_key = f"actor.{2 * k}.weight", f"actor.{2 * k}.bias"
            want = {w_key: (sizes[k + 1], sizes[k]), b_key: (sizes[k + 1],)}
            for key, shape in want.items():
                if key not in weights:
                    raise CheckpointError(f"{where}: weights do not match the network: missing {key}")
                got = weights[key]
                if tuple(got.shape) != shape or got.dtype.kind != "f":
                    raise CheckpointError(
                        f"{where}: weight {key} has shape {tuple(got.shape)} {got.dtype}, "
                        f"the network expects {shape} float"
                    )
            w = np.ascontiguousarray(weights[w_key].T, dtype=np.float32)  # [in, out]
            self.layers.append((w, np.asarray(weights[b_key], dtype=np.float32)))
        known = {f"actor.{2 * k}.{part}" for k in range(len(sizes) - 1) for part in ("weight", "bias")}
        extra = sorted(k for k in weights if k.startswith("actor.") and k not in known)
        if extra:
            raise CheckpointError(f"{where}: weights do not match the network: unexpected {extra[:4]}")
        self.obs_size, self.num_actions = obs_size, num_actions
        self.score_clip = score_clip
        self._bounds = None if score_clip is None else score_clip_bounds(obs_size, score_clip)

    def _input(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        if self._bounds is None:
            return x
        return np.clip(x, *self._bounds)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Raw (unmasked) logits ``float32 [N, num_actions]`` of ``obs [N, obs_size]``."""
        x = self._input(obs)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = x @ w
            x += b
            if i < last:
                np.maximum(x, 0.0, out=x)
        return x

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits: illegal actions (``mask == 0``) get ``MASKED_LOGIT``."""
        return np.where(np.asarray(mask).astype(bool), self(obs), np.float32(MASKED_LOGIT))

    def forward_batch(self, obs: np.ndarray) -> np.ndarray:
        """Raw logits of a batch, as ``__call__`` up to float32 rounding (another summation
        order): the first layer over the observation's non-zero entries only (a compiled
        loop; an observation is mostly zeros), the other layers as matrix products."""
        x = self._input(obs)
        w, b = self.layers[0]
        h = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
        _sparse_affine(x, w, b, len(self.layers) > 1, h)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers[1:], start=1):
            h = h @ w
            h += b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h


@jit
def _sparse_affine(x, w, b, relu, out):
    """``out = x @ w + b`` (then ReLU when ``relu``) summing over the non-zero ``x`` only."""
    rows, k_in = x.shape
    width = w.shape[1]
    for r in range(rows):
        acc = out[r]
        for j in range(width):
            acc[j] = 0.0
        for k in range(k_in):
            v = x[r, k]
            if v != 0.0:
                for j in range(width):
                    acc[j] += v * w[k, j]
        for j in range(width):
            t = acc[j] + b[j]
            acc[j] = t if (t > 0.0 or not relu) else 0.0


def load_actor(path: str | Path) -> tuple[NumpyActor, dict[str, Any]]:
    """The checked metadata and the actor network of a checkpoint (NumPy; never unpickles)."""
    d = checkpoint_dir(path)
    meta = load_meta(d)
    weights = read_safetensors(d / MODEL_FILE)
    obs_size = OBS_SIZES[meta["obs_version"]][0]
    arch = meta["arch"]
    actor = NumpyActor(
        weights, arch["hidden"], obs_size=obs_size, where=d / MODEL_FILE, score_clip=arch.get("score_clip")
    )
    return actor, meta


_CACHE: dict[tuple[str, int, int], tuple[NumpyActor, dict[str, Any]]] = {}
_LOCK = threading.Lock()


def _cached(path: str | Path) -> tuple[NumpyActor, dict[str, Any]]:
    d = checkpoint_dir(path).resolve()
    # a checkpoint rewritten in place (weights or metadata) is read again
    key = (str(d), *(f.stat().st_mtime_ns if f.exists() else 0 for f in (d / MODEL_FILE, d / META_FILE)))
    with _LOCK:
        if key not in _CACHE:
            if len(_CACHE) > 16:
                _CACHE.clear()
            _CACHE[key] = load_actor(d)
        return _CACHE[key]


class CheckpointPolicy:
    """A trained actor playing one seat from its observation (Policy protocol).

    It samples from the masked softmax with its own seeded generator, or with
    ``deterministic=True`` plays the most likely legal action."""

    def __init__(
        self,
        actor: NumpyActor,
        seed: int | None = None,
        deterministic: bool = False,
        name: str = "checkpoint",
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.actor = actor
        self.deterministic = deterministic
        self.name = name
        self.meta = meta or {}
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action for one seat: sampled (or argmax) from the masked policy."""
        mask = np.asarray(action_mask).reshape(-1)
        if not mask.any():
            raise ValueError(f"{self.name}: the action mask has no legal action")
        obs = np.asarray(observation, dtype=np.float32).reshape(1, -1)
        logits = self.actor.logits(obs, mask.reshape(1, -1))[0]
        if not np.isfinite(logits[mask != 0]).all():
            raise PolicyError(
                f"policy {policy_name(self)}: its network gave non-finite scores (NaN or inf) to the "
                "legal actions; it cannot choose one"
            )
        if self.deterministic:
            return int(np.argmax(logits))
        z = logits.astype(np.float64)
        p = np.exp(z - z.max())
        p[mask == 0] = 0.0
        p /= p.sum()
        return int(self.rng.choice(p.size, p=p))

    def batch_key(self) -> Hashable | None:
        """Checkpoint policies of one actor and ``deterministic`` setting decide together
        (:func:`act_policies`)."""
        if not acts_as(self, CheckpointPolicy):
            return None
        return ("checkpoint", id(self.actor), bool(self.deterministic))

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, peers: Sequence[Any] | None = None
    ) -> np.ndarray:
        """``int64 [B]``: the actions ``act`` would return for the rows in order (row ``i`` by
        ``peers[i]``, default this policy; each generator draws one number per row, row 0
        first), in one forward pass."""
        policies = list(peers) if peers is not None else [self] * len(observations)
        return act_policies(policies, observations, action_masks)

    def with_seed(self, seed: int | None) -> CheckpointPolicy:
        """The same network and settings with a fresh generator seeded ``seed``."""
        return CheckpointPolicy(
            self.actor, seed=seed, deterministic=self.deterministic, name=self.name, meta=self.meta
        )


LOGIT_TOL_ABS, LOGIT_TOL_REL = 1e-3, 1e-5
"""How far a float32 logit of the batched forward (``NumpyActor.forward_batch``: other
summation orders than the one-row product of ``act``) may lie from ``act``'s: at most
``LOGIT_TOL_ABS + LOGIT_TOL_REL * max |logit of the row|``. Measured on the shipped checkpoint:
at most 1.2e-4 with logits up to 306, a twenty-fourth of the allowance there (4e-3)."""


def act_policies(
    policies: list[CheckpointPolicy], observations: np.ndarray, action_masks: np.ndarray
) -> np.ndarray:
    """``int64 [B]``: row ``i`` decided by ``policies[i]`` (checkpoint policies of one actor
    and ``deterministic`` setting), exactly as ``policies[i].act(obs[i],
    mask[i])`` called for ``i = 0, 1, ...``, with one forward pass for the batch.

    How the results stay identical to ``act``: a row's logits from the batch may differ from
    its one-row logits in the last bits (:data:`LOGIT_TOL_ABS`). Deterministic: the argmax of
    the batch's logits is kept where the best legal logit leads the next by more than twice
    that allowance, else the row is recomputed alone as ``act`` does. Sampling: ``act`` is
    ``rng.choice(70, p)``, which draws ``u = rng.random()`` and returns the first action whose
    cumulative probability exceeds ``u``; here each row's own generator draws ``u`` (so the
    generators advance exactly as under ``act``), the action is read from the batch's
    cumulative probabilities, and where ``u`` lies within the allowance's effect (4 times the
    logit allowance) of the chosen action's bounds the row is recomputed alone with that ``u``.
    A row with one legal action gets it without a forward pass (its generator still draws its
    ``u``, as ``rng.choice`` does).
    """
    obs = np.asarray(observations, dtype=np.float32)
    mask = np.asarray(action_masks)
    if obs.ndim != 2 or mask.ndim != 2 or len(obs) != len(mask) or len(policies) != len(obs):
        raise ValueError(
            f"act_policies: need observations [B, {OBS_SIZE}], masks [B, {NUM_ACTIONS}] and B policies, "
            f"got {obs.shape}, {mask.shape} and {len(policies)}"
        )
    b = len(obs)
    out = np.empty(b, dtype=np.int64)
    if b == 0:
        return out
    first = policies[0]
    for p in policies:
        if (
            p.actor is not first.actor
            or p.deterministic != first.deterministic
        ):
            raise ValueError(
                "act_policies: the policies must share one actor and deterministic setting"
            )
    legal = mask != 0
    if not legal.any(axis=1).all():
        i = int(np.flatnonzero(~legal.any(axis=1))[0])
        raise ValueError(f"{policies[i].name}: the action mask of row {i} has no legal action")
    # each row's u in row order (a generator shared by rows draws as act called row by row would)
    u = None if first.deterministic else np.array([p.rng.random() for p in policies])
    forced = legal.sum(axis=1) == 1  # one legal action: act returns it whatever the logits
    out[forced] = np.argmax(legal[forced], axis=1)
    rows = np.flatnonzero(~forced)
    if rows.size == 0:
        return out
    xr, legal_r = obs[rows], legal[rows]
    raw = first.actor.forward_batch(xr)
    bad_rows = ~np.isfinite(np.where(legal_r, raw, 0.0)).all(axis=1)
    if bad_rows.any():
        i = int(rows[np.flatnonzero(bad_rows)[0]])
        raise PolicyError(
            f"policy {policy_name(policies[i])} (row {i}): its network gave non-finite scores (NaN "
            "or inf) to the legal actions; it cannot choose one"
        )
    tol = LOGIT_TOL_ABS + LOGIT_TOL_REL * np.abs(raw).max(axis=1)
    logits = np.where(legal_r, raw, np.float32(MASKED_LOGIT))

    def alone(i: int) -> np.ndarray:  # row i of the batch computed as act computes it
        return first.actor.logits(obs[i : i + 1], mask[i : i + 1])[0]

    n = rows.size
    if first.deterministic:
        pick = np.argmax(logits, axis=1)
        best = logits[np.arange(n), pick]
        second = np.where(np.arange(NUM_ACTIONS) == pick[:, None], -np.inf, logits).max(axis=1)
        for j in np.flatnonzero(best - second <= 2 * tol):
            pick[j] = int(np.argmax(alone(int(rows[j]))))
        out[rows] = pick
        return out
    assert u is not None
    ur = u[rows]
    z = logits.astype(np.float64)
    pr = np.exp(z - z.max(axis=1, keepdims=True))
    pr[~legal_r] = 0.0
    pr /= pr.sum(axis=1, keepdims=True)
    cdf = pr.cumsum(axis=1)
    cdf /= cdf[:, -1:]
    pick = np.minimum((cdf <= ur[:, None]).sum(axis=1), NUM_ACTIONS - 1)  # searchsorted(u, "right")
    hi = cdf[np.arange(n), pick]
    lo = np.where(pick > 0, cdf[np.arange(n), np.maximum(pick - 1, 0)], -np.inf)
    eps = 4 * tol
    for j in np.flatnonzero((hi - ur <= eps) | (ur - lo <= eps)):
        i = int(rows[j])
        zi = alone(i).astype(np.float64)
        p1 = np.exp(zi - zi.max())
        p1[~legal[i]] = 0.0
        p1 /= p1.sum()
        c1 = p1.cumsum()
        c1 /= c1[-1]
        pick[j] = int(c1.searchsorted(u[i], side="right"))
    out[rows] = pick
    return out


# The repository's shipped policy for each number of players (named in the error above).
_SHIPPED_FOR = {4: "spades4_v1", 2: "spades2_v1"}
"""The shipped agent for each number of players (named when a checkpoint is asked to play the other)."""


def play_settings(
    path: str | Path, meta: dict[str, Any], rules: RulesConfig | str | dict | None, deterministic: bool | None
) -> bool:
    """Check that ``rules`` (when given) have the checkpoint's number of players, warn
    (:class:`~spades_env.policies.coverage.UntrainedRulesWarning`) if they have a setting its
    training never used, and return whether it plays deterministically (``None``: as
    ``meta.json``'s ``policy.deterministic``)."""
    if rules is not None:
        want = load_rules(rules).num_players
        have = (meta.get("rules") or {}).get("num_players", want)
        if have != want:
            raise CheckpointError(
                f"{checkpoint_dir(path) / META_FILE}: trained for {have} players, asked to play {want} "
                f"(use a policy trained on {want}-player rules, such as the shipped agent "
                f"{_SHIPPED_FOR.get(want, 'none')})"
            )
        warn_untrained(str(checkpoint_dir(path)), meta, rules)
    if deterministic is None:
        return bool((meta.get("policy") or {}).get("deterministic", False))
    return bool(deterministic)


def load_policy(
    path: str | Path,
    seed: int | None = None,
    rules: RulesConfig | str | dict | None = None,
    deterministic: bool | None = None,
) -> CheckpointPolicy:
    """The network of a checkpoint (directory, ``model.safetensors`` or ``meta.json``) as a
    Policy; ``rules``, when given, must have the checkpoint's number of players.
    ``deterministic`` None: as the checkpoint's ``meta.json`` says (``policy.deterministic``,
    default false). Agent ids and composite agents load through
    :func:`spades_env.policies.load`."""
    actor, meta = _cached(path)
    deterministic = play_settings(path, meta, rules, deterministic)
    return CheckpointPolicy(actor, seed=seed, deterministic=deterministic, name=str(path), meta=meta)


__all__ = [
    "FORMAT",
    "MASKED_LOGIT",
    "CheckpointError",
    "CheckpointPolicy",
    "NumpyActor",
    "act_policies",
    "action_table",
    "checkpoint_dir",
    "check_meta",
    "load_actor",
    "load_meta",
    "load_policy",
    "read_json",
    "read_safetensors",
]
