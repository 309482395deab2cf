"""The masked-policy operations of training.network that avoid slow paths (probabilities without
exponentiating the illegal actions' logit, inverse-CDF sampling, in-place ReLU) against the
plain formulas they replace, and training.allocator."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE  # noqa: E402
from training import network  # noqa: E402
from training.allocator import keep_freed_memory  # noqa: E402
from training.network import (  # noqa: E402
    ActorCritic,
    legal_probs,
    masked_entropy_of,
    masked_kl,
    masked_logits,
    sample_legal,
)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def _masked_logp(n: int, a: int, seed: int, scale: float = 3.0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    mask = (torch.rand(n, a, generator=g) < 0.3).to(torch.int8)
    mask[torch.arange(n), torch.randint(0, a, (n,), generator=g)] = 1  # a legal action a row
    logits = torch.randn(n, a, generator=g) * scale
    return torch.log_softmax(masked_logits(logits, mask), -1), mask


def test_legal_probs_equal_exp_of_masked_log_probs():
    logp, mask = _masked_logp(300, 70, 0)
    p = legal_probs(logp, mask)
    assert torch.equal(p[mask == 0], torch.zeros(int((mask == 0).sum())))  # exactly 0
    assert torch.equal(p[mask == 1], logp.exp()[mask == 1])  # the same exp of the same values
    assert torch.allclose(p.sum(-1), torch.ones(300), atol=1e-5)


def test_entropy_and_kl_and_their_gradients_match_the_plain_formulas():
    logits = torch.randn(64, 70, generator=torch.Generator().manual_seed(1)) * 4
    _, mask = _masked_logp(64, 70, 2)
    legal = mask.bool()
    anchor = torch.log_softmax(masked_logits(torch.randn(64, 70), mask), -1)

    def plain(x: torch.Tensor) -> torch.Tensor:  # the formulas before legal_probs
        lp = torch.log_softmax(torch.where(legal, x, torch.full_like(x, network.MASKED_LOGIT)), -1)
        ent = -(torch.where(legal, lp.exp() * lp, torch.zeros_like(lp))).sum(-1)
        kl = (torch.where(legal, anchor.exp(), torch.zeros_like(lp)) * torch.where(legal, anchor - lp, 0)).sum(-1)
        return ent.sum() + 0.5 * kl.sum()

    def ours(x: torch.Tensor) -> torch.Tensor:
        lp = torch.log_softmax(masked_logits(x, mask), -1)
        return masked_entropy_of(lp, mask).sum() + 0.5 * masked_kl(anchor, lp, mask).sum()

    x1, x2 = logits.clone().requires_grad_(), logits.clone().requires_grad_()
    v1, v2 = plain(x1), ours(x2)
    v1.backward()
    v2.backward()
    assert torch.allclose(v1, v2, rtol=1e-5, atol=1e-4)
    assert torch.isfinite(x2.grad).all()
    assert torch.allclose(x1.grad, x2.grad, rtol=1e-4, atol=1e-6)
    assert torch.equal(x2.grad[~legal], torch.zeros(int((~legal).sum())))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.1, 60.0))
def test_sample_legal_never_draws_an_illegal_action(seed, scale):
    logp, mask = _masked_logp(200, 70, seed, scale)
    a = sample_legal(legal_probs(logp, mask), torch.Generator().manual_seed(seed))
    assert a.dtype == torch.int64 and a.shape == (200,)
    assert bool(mask[torch.arange(200), a].all())


def test_sample_legal_draws_each_action_with_its_probability():
    probs = torch.tensor([0.0, 0.1, 0.0, 0.25, 0.6, 0.05, 0.0])
    n = 200_000
    a = sample_legal(probs.expand(n, -1).contiguous(), torch.Generator().manual_seed(3))
    freq = torch.bincount(a, minlength=7).double() / n
    sigma = (probs.double() * (1 - probs.double()) / n).sqrt()
    assert torch.all((freq - probs.double()).abs() <= 5 * sigma + 1e-12), freq
    assert freq[0] == 0 and freq[2] == 0 and freq[6] == 0


def test_sample_legal_is_reproducible_from_the_generator():
    logp, mask = _masked_logp(500, 70, 4)
    p = legal_probs(logp, mask)
    a1 = sample_legal(p, torch.Generator().manual_seed(9))
    a2 = sample_legal(p, torch.Generator().manual_seed(9))
    a3 = sample_legal(p, torch.Generator().manual_seed(10))
    assert torch.equal(a1, a2) and not torch.equal(a1, a3)


def test_sample_legal_top_of_the_range_takes_the_last_legal_action(monkeypatch):
    # u * total rounding up to the total would count every action: the guard takes the last
    # action of non-zero probability instead
    monkeypatch.setattr(network.torch, "rand", lambda n, _k, generator=None, dtype=None: torch.ones(n, 1, dtype=dtype))
    probs = torch.tensor([[0.2, 0.0, 0.8, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.5]])
    assert sample_legal(probs).tolist() == [2, 0, 3]


def test_actor_critic_with_in_place_relu_matches_plain_relu():
    torch.manual_seed(0)
    model = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, 70, (64, 32), (48, 16), score_clip=2.0)
    ref = ActorCritic(OBS_SIZE, STATE_VEC_SIZE, 70, (64, 32), (48, 16), score_clip=2.0)
    ref.load_state_dict(model.state_dict())
    for m in ref.modules():
        if isinstance(m, torch.nn.ReLU):
            m.inplace = False
    assert any(isinstance(m, torch.nn.ReLU) and m.inplace for m in model.modules())
    rng = np.random.default_rng(0)
    obs = torch.from_numpy((rng.random((32, OBS_SIZE)) < 0.07).astype(np.float32))
    crit = torch.from_numpy((rng.random((32, STATE_VEC_SIZE)) < 0.07).astype(np.float32))
    _, mask = _masked_logp(32, 70, 5)
    actions = sample_legal(legal_probs(torch.log_softmax(masked_logits(torch.zeros(32, 70), mask), -1), mask))
    grads = []
    for net in (model, ref):
        net.zero_grad()
        logp, ent, _ = net.evaluate(obs, mask, actions)
        loss = -logp.mean() - 0.01 * ent.mean() + net.value(crit).pow(2).mean()
        loss.backward()
        grads.append([p.grad.clone() for p in net.parameters()])
    for g1, g2 in zip(*grads, strict=True):
        assert torch.equal(g1, g2)


def test_keep_freed_memory():
    applied = keep_freed_memory()
    if sys.platform.startswith("linux"):
        import platform

        if platform.libc_ver()[0] == "glibc":
            assert applied
    x = torch.randn(4096, 512)  # allocations still work, and again after a free
    del x
    assert torch.relu(torch.randn(4096, 512)).shape == (4096, 512)
