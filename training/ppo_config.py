"""The arguments of a PPO run: :class:`TrainConfig`, one documented field per knob, read from
``configs/train/*.yaml`` (:func:`load_train_config`; an unknown key or a bad value is a
:class:`~training.config.ConfigError` naming the key and the file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spades_env.core.observation import score_clip_ok
from spades_env.core.rules import load_rules
from training.config import load_config
from training.network import PRECISIONS
from training.rules_family import entry_label, load_entry, load_family, validate_family


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a training run (``configs/train/*.yaml``; ``--set key=value`` overrides)."""

    run_name: str = "run"
    """Name of the run: the default run directory is ``runs/<run_name>``."""
    seed: int = 0
    """Seed of everything: deals, seat roles, action sampling, minibatches, scripted bots."""
    rules: str = "tournament"
    """Rules preset name or YAML path (``configs/rules``); unused when ``rules_family`` is set."""
    rules_family: tuple[Any, ...] = ()
    """A family of rules, one drawn per game by its seed (:mod:`training.rules_family`): preset
    names, YAML paths, or mappings of rule keys on a ``base`` preset with an optional ``name``,
    e.g. ``[tournament, house, {blind_nil: false, blind_nil_exchange: 0, name: no_blind}]``.
    Every member must have the same number of players. Empty: every game plays ``rules``."""
    rules_weights: tuple[float, ...] = ()
    """Weights of the ``rules_family`` members (one each; empty: equal)."""
    max_hands: int = -1
    """Override the rules' hand cap per game (-1: keep the preset's)."""
    total_decisions: int = 1_000_000
    """Stop after this many decisions (all seats of all games, learner or not), rounded down to
    whole updates (used when ``total_updates`` is 0)."""
    total_updates: int = 0
    """Stop after this many updates (0: ``total_decisions // (num_envs * num_steps)``). The
    learning-rate annealing runs over this many updates."""
    num_envs: int = 256
    """Games played in lockstep."""
    num_steps: int = 64
    """Decisions per game per rollout (a rollout is ``num_envs * num_steps`` decisions)."""
    torch_threads: int = 1
    """``torch.set_num_threads`` (0: leave torch's default)."""
    sparse_input: bool = True
    """Compute the actor's and the critic's first layer from the inputs' non-zero entries only
    (:mod:`training.sparse_input`; the same weights and, to float rounding, the same results as
    the dense layer, several times faster). ``false``: dense ``nn.Linear`` inputs."""
    precision: str = "float32"
    """The network's matrix products in the trainer's forwards: ``float32``, or ``bfloat16``
    (torch's CPU autocast: weights, gradients, Adam, losses and log-probabilities stay float32;
    :func:`training.network.matmul_precision`). bfloat16 is several times faster on CPUs with
    bfloat16 matrix units (Intel AMX, AVX512-BF16) and slower on others; checkpoints and
    evaluation are float32 either way."""
    keep_freed_memory: bool = True
    """Keep freed memory in the process for the next tensors instead of returning it to the
    system (glibc only; :mod:`training.allocator`): fewer page faults, a faster update."""
    max_minutes: float = 0.0
    """Stop after this many minutes of wall time in this process, saving and evaluating as at
    the end (0: no limit; ``total_decisions`` still applies)."""

    hand_reward_scale: float = 0.01
    """Reward shaping: each team's hand score change times this, paid when a hand is scored."""
    win_reward: float = 1.0
    """Reward shaping: +this to the team that wins a game, -this to the other."""
    gamma: float = 0.999
    """Discount per decision (of either team)."""
    gae_lambda: float = 0.95
    """GAE lambda."""

    learning_rate: float = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = False
    """Decay the learning rate linearly to 0 over the run."""
    update_epochs: int = 2
    """Passes over each rollout."""
    num_minibatches: int = 4
    """Minibatches per pass."""
    clip_coef: float = 0.2
    """PPO ratio clip."""
    ent_coef: float = 0.01
    """Entropy bonus (masked entropy: legal actions only)."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early when the approximate KL exceeds this (0: never)."""
    norm_adv: bool = True
    """Normalize advantages per minibatch (over learner decisions)."""

    init_from: str = ""
    """Checkpoint whose weights start the run (e.g. a ``training.bc`` warm start; its network
    shapes must match ``hidden`` / ``critic_hidden``). Empty: random initial weights."""
    policy_warmup_updates: int = 0
    """Updates at the start that train only the critic (the policy stays as initialized), so
    that a warm-started policy is not pushed around by an untrained critic."""
    init_logit_scale: float = 1.0
    """Multiply the ``init_from`` actor's output layer (weights and bias, so every logit) by
    this at the start of the run, e.g. 3: the same most likely action everywhere, a sharper
    policy to sample from. A behaviour-cloned policy fitted to soft targets samples far worse
    than its deterministic play; PPO then improves the noisy player, whose best bids differ
    (more Nil), not the one that is shipped. The anchor (``anchor_coef``) is scaled too."""
    anchor_coef: float = 0.0
    """Weight of a KL penalty, ``KL(anchor || policy)`` over the legal actions of every learner
    decision, that holds the policy near the ``init_from`` policy (the anchor, frozen; e.g. the
    imitation of L3) while PPO fine-tunes it. 0: no anchor. Needs ``init_from``."""
    anchor_untrained_coef: float | None = None
    """The anchor's weight in games whose rules have a setting the ``init_from`` network never
    trained under (its ``meta.json`` training rules,
    :func:`spades_env.policies.coverage.untrained_settings`): there the start knows nothing worth
    holding to, e.g. 0 to let the run learn rules new to it while ``anchor_coef`` holds its play
    under the rules it was trained on. None: ``anchor_coef`` everywhere."""
    deterministic: bool = False
    """How the saved checkpoints play as a Policy (arena, CLI): the most likely legal action
    (true) or a sample from the masked policy (false). Training always samples."""

    hidden: tuple[int, ...] = (256, 256)
    """Actor hidden layer sizes."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Critic hidden layer sizes."""
    score_clip: float | None = None
    """Clip the network's two score inputs (score / target score) to ``[-score_clip,
    score_clip]`` (``training.network``; recorded in the checkpoint). None: no clip."""

    pool_opponent_share: float = 0.2
    """Share of games whose other team is a frozen past snapshot of the learner."""
    scripted_opponent_share: float = 0.05
    """Share of games whose other team is a scripted bot."""
    scripted_partner_share: float = 0.05
    """Share of games where the learner's partner is a scripted bot (4-player rules)."""
    scripted_bots: tuple[str, ...] = ("heuristic",)
    """Bots registry names for scripted seats (one drawn per game)."""
    pool_size: int = 5
    """Snapshots kept in the opponent pool (oldest dropped)."""
    pool_every: int = 20
    """Updates between snapshots added to the pool."""
    pool_start: bool = False
    """Put the started policy (``init_from``, after ``init_logit_scale``) in the pool before
    the first update, so that pool games face it from the start (with a large ``pool_every``,
    a fixed opponent: the policy the run started from)."""

    checkpoint_every: int = 50
    """Updates between checkpoints (``checkpoints/ckpt_NNNNNN`` and ``checkpoints/latest``)."""
    keep_checkpoints: int = 3
    """Numbered checkpoints kept (older ones are deleted; ``latest`` and ``final`` stay)."""
    eval_every: int = 0
    """Updates between duplicate evaluations (0: only at the end; needs a checkpoint)."""
    eval_boards: int = 20
    """Duplicate boards per evaluation opponent (each board played from both sides)."""
    eval_opponents: tuple[str, ...] = ("greedy", "heuristic")
    """Opponent teams of the evaluation (bots registry names)."""
    eval_max_hands: int = -1
    """Hand cap of evaluation games (-1: the training rules')."""
    eval_rules: tuple[Any, ...] = ()
    """Rules the evaluation plays, each as a ``rules_family`` entry, reported per rules as
    ``<label>/<opponent>`` (empty: the training rules, or the family's first member, reported
    as ``<opponent>``)."""
    eval_workers: int = 1
    """Processes for the evaluation."""
    tensorboard: bool = True
    """Write TensorBoard scalars to ``<run dir>/tb``."""
    progress: bool = True
    """Show a progress bar."""

    def validate(self) -> tuple[str, str] | None:
        """The first (key, problem) of an out-of-range value, or None."""
        positive = (
            "num_envs",
            "num_steps",
            "update_epochs",
            "num_minibatches",
            "pool_every",
            "total_decisions",
        )
        if self.total_updates < 0:
            return "total_updates", "must be 0 or more"
        for k in positive:
            if getattr(self, k) < 1:
                return k, "must be at least 1"
        if self.max_minutes < 0:
            return "max_minutes", "must be 0 or more"
        for k in ("checkpoint_every", "keep_checkpoints", "eval_every", "eval_boards", "eval_workers"):
            if getattr(self, k) < 0:
                return k, "must be 0 or more"
        for k in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                return k, "must be in [0, 1]"
        for k in ("pool_opponent_share", "scripted_opponent_share", "scripted_partner_share"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                return k, "must be in [0, 1]"
        if self.pool_opponent_share + self.scripted_opponent_share > 1.0:
            return (
                "scripted_opponent_share",
                "pool_opponent_share + scripted_opponent_share must be at most 1",
            )
        if self.precision not in PRECISIONS:
            return "precision", f"must be one of {list(PRECISIONS)}, got {self.precision!r}"
        if self.learning_rate <= 0:
            return "learning_rate", "must be positive"
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            return "num_minibatches", "must divide num_envs * num_steps"
        if not self.hidden or not self.critic_hidden or min(self.hidden + self.critic_hidden) < 1:
            return "hidden", "layer sizes must be positive (at least one layer)"
        if not score_clip_ok(self.score_clip):
            return "score_clip", "must be a positive number or null"
        if not 0 < self.init_logit_scale < float("inf"):
            return "init_logit_scale", "must be a positive finite number"
        if self.init_logit_scale != 1.0 and not self.init_from:
            return "init_logit_scale", "needs init_from (the policy whose logits it scales)"
        if not self.anchor_coef >= 0 or self.anchor_coef == float("inf"):
            return "anchor_coef", "must be a finite number, 0 or more"
        if self.anchor_coef > 0 and not self.init_from:
            return "anchor_coef", "needs init_from (the policy the penalty holds the run near)"
        if self.anchor_untrained_coef is not None:
            if not self.anchor_untrained_coef >= 0 or self.anchor_untrained_coef == float("inf"):
                return "anchor_untrained_coef", "must be a finite number, 0 or more, or null"
            if self.anchor_coef <= 0:
                return "anchor_untrained_coef", "needs anchor_coef > 0 (the anchor it weighs by rules)"
        if self.policy_warmup_updates < 0:
            return "policy_warmup_updates", "must be 0 or more"
        if self.pool_size < 0:
            return "pool_size", "must be 0 or more"
        if self.pool_start and self.pool_size == 0:
            return "pool_start", "needs pool_size of at least 1 (the pool it puts the started policy in)"
        if (self.scripted_opponent_share > 0 or self.scripted_partner_share > 0) and not self.scripted_bots:
            return "scripted_bots", "needs at least one bot name when a scripted share is positive"
        from spades_env.policies.bots import PolicyNameError, parse_policy_name

        for k in ("scripted_bots", "eval_opponents"):
            for name in getattr(self, k):
                try:
                    parse_policy_name(name)
                except PolicyNameError as exc:
                    return k, str(exc)
        if not self.rules_family:
            try:
                load_rules(self.rules)
            except (ValueError, OSError) as exc:
                return "rules", str(exc)
        problem = validate_family(self.rules_family, self.rules_weights, self.max_hands)
        if problem:
            return problem
        if self.eval_rules:
            problem = validate_family(self.eval_rules, (), self.eval_max_hands)
            if problem:
                return "eval_rules", problem[1]
            if {r.num_players for r in load_family(self.eval_rules)} != {self.rules_list()[0].num_players}:
                return "eval_rules", "must have the training rules' number of players"
        return None

    def rules_list(self, max_hands: int | None = None) -> list:
        """The rules the training games play: the family's members, or ``[rules]`` (with the
        ``max_hands`` override)."""
        mh = self.max_hands if max_hands is None or max_hands < 0 else max_hands
        if self.rules_family:
            return load_family(self.rules_family, mh)
        r = load_rules(self.rules)
        return [r.replace(max_hands=mh) if mh >= 0 else r]

    def rules_config(self, max_hands: int | None = None):
        """The rules of this run (with the ``max_hands`` override): ``rules``, or the family's
        first member."""
        return self.rules_list(max_hands)[0]

    def eval_rules_list(self) -> list[tuple[str | None, Any]]:
        """(label, rules) of each evaluation rules; label None for the default single rules."""
        if not self.eval_rules:
            return [(None, self.rules_config(self.eval_max_hands))]
        mh = self.eval_max_hands if self.eval_max_hands >= 0 else self.max_hands
        return [(entry_label(e), load_entry(e, mh)) for e in self.eval_rules]

    def updates(self) -> int:
        """The number of updates of the run (``total_updates``, or from ``total_decisions``)."""
        if self.total_updates:
            return self.total_updates
        return max(self.total_decisions // (self.num_envs * self.num_steps), 1)


def load_train_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML file and ``key=value`` overrides (ConfigError if bad)."""
    return load_config(TrainConfig, path, overrides)


__all__ = ["TrainConfig", "load_train_config"]
