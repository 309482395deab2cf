"""Function-preserving widening (``init_widen``): the weights of a narrower actor-critic of the
same depth placed in a wider one so that the wider network computes exactly the same logits
and values at the start.

Each weight matrix keeps the narrow network's entries in its leading block; the rows of the new
units keep the wider network's fresh initialization (so they compute something), and every
column that reads a new unit is zero (so nothing they compute reaches an old unit or the
output). The first gradient step then moves those columns, and the new units join in.
"""

from __future__ import annotations

import torch


def widen_state(narrow: dict[str, torch.Tensor], wide: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``wide`` (a state dict, e.g. a freshly initialized wider network's) with ``narrow``'s
    tensors in the leading block of each tensor of the same name, and every weight column past
    the narrow tensor's zeroed. ValueError naming the tensor if a name is missing on either side
    or a narrow tensor is larger or of another rank than the wide one."""
    if set(narrow) != set(wide):
        missing, extra = sorted(set(wide) - set(narrow)), sorted(set(narrow) - set(wide))
        raise ValueError(f"widening needs the same layers: missing {missing[:4]}, unexpected {extra[:4]}")
    out: dict[str, torch.Tensor] = {}
    for name, w in wide.items():
        n = narrow[name]
        if n.dim() != w.dim() or any(a > b for a, b in zip(n.shape, w.shape, strict=True)):
            raise ValueError(f"{name}: cannot widen shape {tuple(n.shape)} into {tuple(w.shape)}")
        t = w.detach().clone()
        if t.dim() == 2:
            t[:, n.shape[1] :] = 0  # columns that read new units (none in a first layer)
            t[: n.shape[0], : n.shape[1]] = n
        else:
            t[: n.shape[0]] = n
        out[name] = t
    return out


def widening_problem(narrow: dict, wide: dict) -> str | None:
    """Why an ``arch`` (checkpoint metadata: ``hidden``, ``critic_hidden``) cannot widen into
    another, or None: the same inputs and outputs, the same depth, no layer narrower."""
    for key in ("obs_size", "critic_size", "num_actions"):
        if key in narrow and key in wide and narrow[key] != wide[key]:
            return f"{key} {narrow[key]} differs from {wide[key]}"
    for key in ("hidden", "critic_hidden"):
        a, b = list(narrow.get(key, [])), list(wide.get(key, []))
        if len(a) != len(b):
            return f"{key} {a} and {b} differ in depth"
        if any(x > y for x, y in zip(a, b, strict=True)):
            return f"{key} {a} is wider than {b} somewhere"
    return None


__all__ = ["widen_state", "widening_problem"]
