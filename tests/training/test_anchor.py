"""PPO's KL anchor (``anchor_coef``) and sharpened start (``init_logit_scale``): the masked KL
by hand, the config errors, the anchor's log-probabilities recorded at the learner's decisions,
the policy held near ``init_from``, exact resume with the anchor on, the scaled logits keeping
every argmax."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

# test_training puts the source tree on sys.path (training/ is a top-level package of it) and
# has the smoke config, the fast overrides and the one-thread fixture
from helpers.training import FAST, ROOT, SMOKE, one_thread  # noqa: E402, F401
from training.config import ConfigError  # noqa: E402
from training.network import masked_kl  # noqa: E402
from training.ppo import load_train_config, train  # noqa: E402


def test_masked_kl_by_hand():
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    p = torch.log(torch.tensor([[0.5, 0.5, 1e-30], [0.2, 0.3, 0.5]]))
    q = torch.log(torch.tensor([[0.25, 0.75, 1e-30], [0.2, 0.3, 0.5]]))
    p[0, 2] = q[0, 2] = -1e8  # an illegal action, as the network's masked logits give it
    kl = masked_kl(p, q, mask)
    want = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert kl[0].item() == pytest.approx(want, rel=1e-6)
    assert kl[1].item() == pytest.approx(0.0, abs=1e-7)
    assert (masked_kl(q, p, mask)[0] - kl[0]).abs().item() > 1e-3  # not symmetric


def test_anchor_config_errors():
    with pytest.raises(ConfigError, match="'anchor_coef'.*init_from"):
        load_train_config(SMOKE, ["anchor_coef=0.5"])
    with pytest.raises(ConfigError, match="'anchor_coef'.*0 or more"):
        load_train_config(SMOKE, ["anchor_coef=-1", "init_from=x"])
    with pytest.raises(ConfigError, match="'anchor_coef'"):
        load_train_config(SMOKE, ["anchor_coef=.nan", "init_from=x"])


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A checkpoint to fine-tune from: the smoke config's run."""
    run = tmp_path_factory.mktemp("anchor_start")
    train(load_train_config(SMOKE, FAST), run)
    return run / "final"


def test_anchor_holds_the_policy_near_init_from(start, tmp_path):
    from training.checkpoint import load_checkpoint

    ref = {k: v.clone() for k, v in load_checkpoint(start)[0].actor.state_dict().items()}
    ov = [*FAST, f"init_from={start}", "total_decisions=4096", "learning_rate=0.003", "target_kl=0"]
    free = train(load_train_config(SMOKE, ov), tmp_path / "free")
    held = train(load_train_config(SMOKE, [*ov, "anchor_coef=50"]), tmp_path / "held")
    assert free.anchor is None and held.anchor is not None
    # the anchor is the init_from actor, frozen
    for k, v in held.anchor.actor.state_dict().items():
        assert torch.equal(v, ref[k]), k
    assert not any(p.requires_grad for p in held.anchor.parameters())
    # its log-probabilities were recorded at the learner's decisions of the last rollout
    li = held.buf_learner
    assert li.any()
    obs = torch.from_numpy(held.buf_obs[li])
    mask = torch.from_numpy(held.buf_mask[li])
    with torch.no_grad():
        want = held.anchor.log_probs(obs, mask).numpy()
    legal = held.buf_mask[li].astype(bool)  # (rounding: the rollout's batches were other rows)
    assert np.allclose(held.buf_anchor[li][legal], want[legal], atol=1e-5)
    assert np.all(held.buf_anchor[li][~legal] < -1e7)
    # the same run without the anchor drifted much further from it (Adam moves every weight
    # either way: the policies are compared, on the held run's last learner states)
    with torch.no_grad():
        kl_free = masked_kl(torch.from_numpy(want), free.model.log_probs(obs, mask), mask).mean()
        kl_held = masked_kl(torch.from_numpy(want), held.model.log_probs(obs, mask), mask).mean()
    assert kl_held < 0.25 * kl_free, (kl_held, kl_free)


def test_anchor_resume_is_exact(start, tmp_path):
    ov = [*FAST, f"init_from={start}", "anchor_coef=1", "total_decisions=2048", "checkpoint_every=1"]
    cfg = load_train_config(SMOKE, ov)
    full = train(cfg, tmp_path / "full")
    train(cfg, tmp_path / "half", stop_update=2)
    resumed = train(cfg, tmp_path / "resumed", resume=tmp_path / "half" / "checkpoints" / "ckpt_000002")
    for k, v in full.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[k], v), k


def test_init_logit_scale_sharpens_and_keeps_the_argmax(start, tmp_path):
    from training.checkpoint import load_checkpoint
    from training.ppo import Trainer

    base = load_checkpoint(start)[0]
    ov = [*FAST, f"init_from={start}", "init_logit_scale=3", "anchor_coef=1"]
    tr = Trainer(load_train_config(SMOKE, ov), tmp_path / "sharp")
    obs = torch.from_numpy(tr.engine._obs.copy())
    mask = torch.from_numpy(tr.engine._mask.copy())
    with torch.no_grad():
        raw0, raw = base.actor(obs), tr.model.actor(obs)
        assert torch.allclose(raw, 3 * raw0, atol=1e-5)
        assert torch.allclose(tr.anchor.actor(obs), raw)  # the anchor is the sharpened start
        lp0, lp = base.log_probs(obs, mask), tr.model.log_probs(obs, mask)
    assert torch.equal(lp0.argmax(-1), lp.argmax(-1))
    legal = mask.bool()
    ent = lambda x: -(torch.where(legal, x.exp() * x, torch.zeros_like(x))).sum(-1)  # noqa: E731
    assert (ent(lp) <= ent(lp0) + 1e-6).all() and ent(lp).mean() < ent(lp0).mean()
    # the critic is not touched
    for k, v in base.critic.state_dict().items():
        assert torch.equal(tr.model.critic.state_dict()[k], v), k


def test_init_logit_scale_config_errors():
    with pytest.raises(ConfigError, match="'init_logit_scale'.*init_from"):
        load_train_config(SMOKE, ["init_logit_scale=2"])
    for bad in ("0", "-1"):
        with pytest.raises(ConfigError, match="'init_logit_scale'.*positive"):
            load_train_config(SMOKE, [f"init_logit_scale={bad}", "init_from=x"])
    with pytest.raises(ConfigError, match="'init_logit_scale'.*finite"):  # every float key: finite
        load_train_config(SMOKE, ["init_logit_scale=.inf", "init_from=x"])


def test_finetune_config_loads():
    # the lineage's first PPO stage (configs/train/pipeline.yaml's ppo1): anchored, sharpened v4
    cfg = load_train_config(ROOT / "configs" / "train" / "finetune_pool.yaml")
    assert cfg.anchor_coef == 0.5 and cfg.init_logit_scale == 3.0
    assert cfg.init_from == "runs/family/final2/final"  # the pipeline's stage final2
    assert cfg.pool_opponent_share == 0.5 and cfg.scripted_opponent_share == 0.5 and cfg.score_clip == 2.0
    assert cfg.pool_start and cfg.pool_size == 1


def test_pool_start_puts_the_started_policy_in_the_pool(start, tmp_path):
    """``pool_start``: the sharpened start is the pool's one snapshot before any update, pool
    games face it from their first decision, and it stays frozen while the learner moves."""
    from training.league import POOL
    from training.ppo import Trainer

    ov = [
        *FAST,
        f"init_from={start}",
        "init_logit_scale=2",
        "pool_start=true",
        "pool_size=1",
        "pool_every=100000",
        "pool_opponent_share=0.5",
        "scripted_opponent_share=0",
        "scripted_partner_share=0",
        "learning_rate=0.003",
        "total_decisions=4096",
    ]
    tr = Trainer(load_train_config(SMOKE, ov), tmp_path / "pool")
    assert len(tr.pool) == 1 and (tr.kind == POOL).any()
    frozen = {k: v.clone() for k, v in tr.pool[0].state_dict().items()}
    for k, v in tr.model.state_dict().items():
        assert torch.equal(frozen[k], v), k
    done = train(load_train_config(SMOKE, ov), tmp_path / "run")
    assert len(done.pool) == 1
    for k, v in done.pool[0].state_dict().items():
        assert torch.equal(v, frozen[k]), k  # the same start, never replaced
    assert any(not torch.equal(v, frozen[k]) for k, v in done.model.state_dict().items())
    with pytest.raises(ConfigError, match="'pool_start'.*pool_size"):
        load_train_config(SMOKE, ["pool_start=true", "pool_size=0"])


def test_anchor_untrained_coef_config_errors():
    with pytest.raises(ConfigError, match="'anchor_untrained_coef'.*anchor_coef"):
        load_train_config(SMOKE, ["anchor_untrained_coef=0", "init_from=x"])
    with pytest.raises(ConfigError, match="'anchor_untrained_coef'.*0 or more"):
        load_train_config(SMOKE, ["anchor_untrained_coef=-1", "anchor_coef=1", "init_from=x"])


def test_anchor_by_rules_follows_the_starts_training_rules():
    from spades_env.core.rules import load_rules, rules_with
    from training.ppo import anchor_by_rules

    cfg = load_train_config(
        SMOKE, ["init_from=checkpoints/spades4_net_v4", "anchor_coef=0.3", "anchor_untrained_coef=0", "hidden=[512,512]"]
    )
    family = [
        load_rules("tournament"),
        rules_with({"blind_nil_exchange": 0}),  # net_v4 met Blind Nil only with 3 cards
        load_rules("house"),
        load_rules("openspiel"),  # a failed Nil's tricks count: not in net_v4's rules
        rules_with({"blind_nil": False}),
    ]
    got = anchor_by_rules(cfg, family)
    assert got.dtype == np.float32
    assert got.tolist() == pytest.approx([0.3, 0.0, 0.3, 0.0, 0.3])


def test_anchor_untrained_coef_weighs_each_game_by_its_rules(start, tmp_path):
    """The start (the smoke run: tournament rules) anchored at 50 where it trained and at 0
    where it did not (no exchange): the recorded weights follow each game's rules; a family of
    untrained rules only trains as a run without the anchor, one of trained rules only as the
    plain anchor does."""
    ov = [*FAST, f"init_from={start}", "total_decisions=4096", "learning_rate=0.003", "target_kl=0"]
    ex0 = "{name: ex0, blind_nil_exchange: 0}"
    by_rules = ["anchor_coef=50", "anchor_untrained_coef=0"]
    mixed = train(load_train_config(SMOKE, [*ov, *by_rules, f"rules_family=[tournament, {ex0}]"]), tmp_path / "m")
    assert mixed.anchor_by_rules.tolist() == [50.0, 0.0]
    li = mixed.buf_learner
    rules_of_row = np.broadcast_to(mixed.engine.rules_index, li.shape)  # the last step's games
    assert set(np.unique(mixed.buf_anchor_w[li]).tolist()) == {0.0, 50.0}
    assert np.array_equal(mixed.buf_anchor_w[-1], mixed.anchor_by_rules[rules_of_row[-1]])

    def weights(extra: list[str], family: str, name: str) -> dict:
        return train(load_train_config(SMOKE, [*ov, *extra, f"rules_family={family}"]), tmp_path / name).model.state_dict()

    free, untrained = weights([], f"[{ex0}]", "free"), weights(by_rules, f"[{ex0}]", "untrained")
    for k, v in free.items():
        assert torch.equal(untrained[k], v), k
    plain, trained = weights(["anchor_coef=50"], "[tournament]", "plain"), weights(by_rules, "[tournament]", "trained")
    free_t = weights([], "[tournament]", "free_t")
    assert max((plain[k] - free_t[k]).abs().max().item() for k in plain) > 1e-3  # the anchor acts
    for k, v in plain.items():
        assert torch.allclose(trained[k], v, atol=1e-5), k
