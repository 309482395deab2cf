"""The actor-critic network: a masked-softmax actor on one seat's observation, and a
centralized critic that reads the full state (every hand) but never acts.

* actor: ``obs [N, 771] -> logits [N, 70]``; illegal actions get ``MASKED_LOGIT`` so their
  probability is exactly 0, and the entropy is a sum over legal actions only.
* critic: ``[obs of the acting seat, every seat's hand and discards relative to the acting
  seat] [N, 1187] -> [N, 2]``: the value of the acting seat's team and of the other team.
* ``score_clip`` (optional, recorded in a checkpoint's ``arch``): both nets first clip the
  input's two score entries (score / target score) to ``[-score_clip, score_clip]``, so that a
  team thousands of points behind reads as one ``score_clip`` targets behind, a value training
  reached, and not -40 (``spades_env.core.observation.score_clip_bounds``; the NumPy actor of
  ``spades_env.policies.checkpoint`` does the same).
* ``precision`` (:func:`matmul_precision`): the trainer may run the forwards under torch's CPU
  autocast to bfloat16; the logits and values leave the network as float32 either way.
* every input may be a dense tensor or :class:`training.sparse_input.SparseRows` (the same rows
  in CSR form): then the first layer is computed from the non-zero entries only, with the same
  weights (:func:`run_mlp`).
"""

from __future__ import annotations

import contextlib
import warnings

import torch
from torch import nn

from spades_env.core.observation import score_clip_bounds
from training.sparse_input import SparseRows, sparse_linear

Input = torch.Tensor | SparseRows
"""A network input: dense ``[N, size]`` float32, or the same rows in CSR form."""

MASKED_LOGIT = -1.0e8
"""Logit of an illegal action: exp() of it underflows to exactly 0 after the softmax."""


class ClippedSequential(nn.Sequential):
    """``nn.Sequential`` that first clips its input entry-wise to ``[lo, hi]`` (buffers that a
    state dict does not save, so the weight names stay those of a plain ``nn.Sequential``)."""

    def __init__(self, layers: list[nn.Module], lo: torch.Tensor, hi: torch.Tensor) -> None:
        super().__init__(*layers)
        self.register_buffer("lo", lo, persistent=False)
        self.register_buffer("hi", hi, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(torch.clamp(x, self.lo, self.hi))


def mlp(sizes: list[int], out: int, out_gain: float, score_clip: float | None = None) -> nn.Sequential:
    """Linear+ReLU layers of ``sizes`` then a linear output (orthogonal init, as in CleanRL);
    with ``score_clip``, the input's score entries are clipped first (see the module doc)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, 2**0.5)
        nn.init.zeros_(lin.bias)
        # in place: the Linear's output is not needed for its backward, and a fresh [N, 512]
        # tensor per layer costs more than the ReLU itself
        layers += [lin, nn.ReLU(inplace=True)]
    last = nn.Linear(sizes[-1], out)
    nn.init.orthogonal_(last.weight, out_gain)
    nn.init.zeros_(last.bias)
    layers.append(last)
    if score_clip is None:
        return nn.Sequential(*layers)
    lo, hi = score_clip_bounds(sizes[0], score_clip)
    return ClippedSequential(layers, torch.from_numpy(lo), torch.from_numpy(hi))


def run_mlp(net: nn.Sequential, x: Input) -> torch.Tensor:
    """``net(x)``; for :class:`SparseRows` the first ``nn.Linear`` (after the score clip of a
    :class:`ClippedSequential`) runs on the non-zero entries only."""
    if not isinstance(x, SparseRows):
        return net(x)
    layers = list(net)
    if isinstance(net, ClippedSequential):
        x = x.clipped(net.lo.numpy(), net.hi.numpy())
    h = sparse_linear(x, layers[0].weight, layers[0].bias)
    for layer in layers[1:]:
        h = layer(h)
    return h


PRECISIONS = {"float32": torch.float32, "bfloat16": torch.bfloat16}
"""The trainer's ``precision`` values and the dtype each multiplies in."""


def bf16_matmul_native() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (Intel AMX or AVX512-BF16);
    elsewhere torch emulates them, slower than float32."""
    cpu = torch.backends.cpu.get_cpu_capability()
    probes = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return cpu.startswith("AVX512") and any(getattr(torch.cpu, p, lambda: False)() for p in probes)


def matmul_precision(precision: str) -> contextlib.AbstractContextManager:
    """The context the trainer's forwards run in: nothing for ``"float32"``; for
    ``"bfloat16"``, ``torch.autocast("cpu", torch.bfloat16)``: ``nn.Linear`` multiplies in
    bfloat16 (float32 accumulation) from float32 weights, and the gradients flow back to the
    float32 weights. Run the backward outside it. Warns once where the CPU has no bfloat16
    matrix units (:func:`bf16_matmul_native`)."""
    if precision == "float32":
        return contextlib.nullcontext()
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    if not bf16_matmul_native():
        warnings.warn(
            "precision 'bfloat16': this CPU has no bfloat16 matrix units (AMX / AVX512-BF16); "
            "torch emulates them, slower than float32",
            RuntimeWarning,
            stacklevel=2,
        )
    return torch.autocast("cpu", dtype=torch.bfloat16)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (``mask == 0``) set to ``MASKED_LOGIT``."""
    return logits.masked_fill(~mask.bool(), MASKED_LOGIT)


def legal_probs(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``exp(logp)`` at legal actions and exactly 0 at illegal ones (``mask == 0``), the same
    values as ``logp.exp()`` of masked log-probabilities, without exponentiating the illegal
    actions' ``MASKED_LOGIT``: below about -87 (where exp underflows) the vectorized exp
    leaves its fast path, about 10x slower per entry."""
    legal = mask.to(logp.dtype)
    return (logp * legal).exp() * legal


def sample_legal(probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from ``probs`` ``[N, A]`` (rows of a masked softmax: illegal
    actions exactly 0) by the inverse of the cumulative distribution, one uniform draw a row
    (``torch.multinomial`` draws an exponential for every entry). Never an action of
    probability 0."""
    cdf = probs.cumsum(-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=cdf.dtype) * cdf[:, -1:]
    a = (cdf <= u).sum(-1)  # the first action whose cumulative probability exceeds u
    # u * total may round up to the total: then the last action of non-zero probability
    last = probs.shape[1] - 1 - (probs.flip(-1) > 0).to(torch.int8).argmax(-1)
    return torch.minimum(a, last)


def masked_entropy_of(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy from masked log-probabilities, summed over legal actions only: ``[N]``."""
    return -(legal_probs(logp, mask) * logp).sum(-1)


def masked_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked softmax, summed over legal actions only: ``[N]``."""
    return masked_entropy_of(torch.log_softmax(masked_logits(logits, mask), dim=-1), mask)


def masked_kl(logp_p: torch.Tensor, logp_q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``KL(p || q)`` of two masked policies given as log-probabilities, summed over legal
    actions only: ``[N]``."""
    return (legal_probs(logp_p, mask) * (logp_p - logp_q)).sum(-1)


class ActorCritic(nn.Module):
    """Actor on the seat's observation, critic on the full state (see the module doc)."""

    def __init__(
        self,
        obs_size: int,
        critic_size: int,
        num_actions: int,
        hidden: tuple[int, ...] = (256, 256),
        critic_hidden: tuple[int, ...] = (256, 256),
        score_clip: float | None = None,
    ) -> None:
        super().__init__()
        self.obs_size, self.critic_size, self.num_actions = obs_size, critic_size, num_actions
        self.hidden, self.critic_hidden = tuple(hidden), tuple(critic_hidden)
        self.score_clip = None if score_clip is None else float(score_clip)
        self.actor = mlp([obs_size, *hidden], num_actions, 0.01, self.score_clip)
        self.critic = mlp([critic_size, *critic_hidden], 2, 1.0, self.score_clip)

    def logits(self, obs: Input, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits ``[N, 70]``."""
        return masked_logits(run_mlp(self.actor, obs).float(), mask)

    def value(self, critic_in: Input) -> torch.Tensor:
        """``[N, 2]``: value of the acting seat's team, and of the other team."""
        return run_mlp(self.critic, critic_in).float()

    def act(
        self, obs: Input, mask: torch.Tensor, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample actions from the masked policy; returns (actions, their log-probabilities)."""
        logp = torch.log_softmax(self.logits(obs, mask), dim=-1)
        actions = sample_legal(legal_probs(logp, mask), generator)
        return actions, logp.gather(-1, actions[:, None]).squeeze(-1)

    def log_probs(self, obs: Input, mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of every action under the masked policy, ``[N, 70]`` (illegal
        actions: about ``MASKED_LOGIT``, probability exactly 0)."""
        return torch.log_softmax(self.logits(obs, mask), dim=-1)

    def evaluate(
        self, obs: Input, mask: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probabilities of ``actions`` and the masked entropy, both ``[N]``, and the
        log-probabilities of every action, ``[N, 70]`` (:meth:`log_probs`)."""
        logp = self.log_probs(obs, mask)
        return logp.gather(-1, actions[:, None]).squeeze(-1), masked_entropy_of(logp, mask), logp

    def arch(self) -> dict:
        """The shapes that a checkpoint's metadata records to rebuild this network (and its
        ``score_clip``, where it has one)."""
        arch = {
            "obs_size": self.obs_size,
            "critic_size": self.critic_size,
            "num_actions": self.num_actions,
            "hidden": list(self.hidden),
            "critic_hidden": list(self.critic_hidden),
        }
        if self.score_clip is not None:
            arch["score_clip"] = self.score_clip
        return arch
