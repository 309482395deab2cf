"""Policies: anything that picks an action from one seat's observation.

* :class:`Policy` (the protocol: ``act``; a policy that can decide many games in one call
  also has ``batch_key`` and ``act_batch``: :class:`BatchPolicy`), :class:`RandomPolicy`;
* :func:`act_rows`: row ``i``'s action by ``policies[i]``, each batched form in one call (what
  the arena, the driver and training use);
* :func:`load`: a Policy from a bot name, a shipped agent id or a checkpoint path;
* :mod:`spades_env.policies.driver`: the one driver that steps games with seated policies;
* :mod:`spades_env.policies.bots`: the scripted baselines, from random to search;
* :mod:`spades_env.policies.checkpoint`: networks read with NumPy (no torch);
* :class:`UntrainedRulesWarning` (:mod:`spades_env.policies.coverage`): a network loaded for
  rules with a setting its training never used;
* :mod:`spades_env.policies.composite`: a network with a search bot in declared situations.
"""

from spades_env.policies.base import BatchPolicy, Policy, RandomPolicy, act_rows
from spades_env.policies.coverage import UntrainedRulesWarning
from spades_env.policies.registry import load

__all__ = ["BatchPolicy", "Policy", "RandomPolicy", "UntrainedRulesWarning", "act_rows", "load"]
