"""training.retest: a search's labels searched again, the share it reproduces."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core.actions import NUM_ACTIONS
from spades_env.policies.bots.netsearch import NetSearchPolicy, load_actor_of
from training.retest import network_choices, retest_labels


def _data(n: int = 60, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Rows with 2-4 legal actions; the network picks the first legal one, the label overrides
    it on every third row; every fifth row was not searched, every seventh is forced."""
    rng = np.random.default_rng(seed)
    obs = rng.random((n, 803)).astype(np.float16)
    mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
    net = np.zeros(n, dtype=np.int64)
    action = np.zeros(n, dtype=np.int8)
    values = np.full((n, NUM_ACTIONS), np.nan, dtype=np.float16)
    for i in range(n):
        legal = np.sort(rng.choice(52, size=1 if i % 7 == 0 else int(rng.integers(2, 5)), replace=False))
        mask[i, legal] = True
        net[i] = legal[0]
        action[i] = legal[-1] if i % 3 == 0 else legal[0]
        if i % 5:
            values[i, legal] = 1.0
    return {"obs": obs, "mask": mask, "action": action, "values": values}, net


class _Fixed:
    """Answers each row with a given action (looked up by its observation), counting calls."""

    def __init__(self, data: dict[str, np.ndarray], answer: np.ndarray) -> None:
        self.by_obs = {data["obs"][i].astype(np.float32).tobytes(): int(answer[i]) for i in range(len(answer))}
        self.seen: list[bytes] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        key = np.asarray(observation, dtype=np.float32).tobytes()
        self.seen.append(key)
        return self.by_obs[key]


def _eligible(data, net):
    searched = np.isfinite(data["values"].astype(np.float32)).any(1) & (data["mask"].sum(1) >= 2)
    return searched & (data["action"] != net), searched & (data["action"] == net)


def test_a_search_that_repeats_its_labels_reproduces_every_override():
    data, net = _data()
    over, kept = _eligible(data, net)
    out = retest_labels(data, net, _Fixed(data, data["action"]), rows=1000)
    assert out["overrides"] == over.sum() > 5 and out["searched"] == (over | kept).sum()
    assert out["retested_overrides"] == over.sum() and out["retested_kept"] == kept.sum()
    assert out["reproduced"] == 1.0 and out["overrides_again"] == 1.0 and out["kept"] == 1.0
    assert out["override_share"] == pytest.approx(over.sum() / (over | kept).sum(), abs=1e-4)


def test_a_search_that_returns_to_the_network_reproduces_none():
    data, net = _data()
    out = retest_labels(data, net, _Fixed(data, net), rows=1000)
    assert out["reproduced"] == 0.0 and out["overrides_again"] == 0.0 and out["kept"] == 1.0


def test_another_override_counts_as_overriding_but_not_as_reproduced():
    data, net = _data()
    other = np.array([np.flatnonzero(m)[min(1, m.sum() - 1)] for m in data["mask"]])
    answer = np.where(data["action"] != net, other, net)  # overrides: the second legal card, not the label
    over, _ = _eligible(data, net)
    differs = over & (other != data["action"])
    assert differs.sum() > 0
    out = retest_labels(data, net, _Fixed(data, answer), rows=1000)
    assert out["reproduced"] == pytest.approx(1 - differs.sum() / over.sum(), abs=1e-4)
    assert out["overrides_again"] == 1.0


def test_only_searched_rows_with_a_choice_are_retested_and_rows_caps_each_kind():
    data, net = _data(n=90)
    over, kept = _eligible(data, net)
    pol = _Fixed(data, data["action"])
    out = retest_labels(data, net, pol, rows=4, seed=3)
    assert out["retested_overrides"] == 4 and out["retested_kept"] == 4 and len(pol.seen) == 8
    allowed = {data["obs"][i].astype(np.float32).tobytes() for i in np.flatnonzero(over | kept)}
    assert set(pol.seen) <= allowed
    again = _Fixed(data, data["action"])
    retest_labels(data, net, again, rows=4, seed=3)
    assert again.seen == pol.seen  # the sample is a function of the seed


def test_nothing_to_retest_gives_none_and_bad_arguments_are_refused():
    data, net = _data()
    out = retest_labels(data, data["action"].astype(np.int64), _Fixed(data, data["action"]), rows=5)
    assert out["overrides"] == 0 and out["reproduced"] is None and out["kept"] == 1.0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="rows"):
            retest_labels(data, net, _Fixed(data, net), rows=bad)
    with pytest.raises(ValueError, match="net_choice"):
        retest_labels(data, net[:-1], _Fixed(data, net), rows=5)


def test_network_choices_is_the_actors_masked_argmax_and_the_search_agrees_where_forced():
    from spades_env.envs.aec import env as make_env

    e = make_env(rules="house")
    e.reset(seed=5)
    obs, masks = [], []
    for _agent in e.agent_iter(max_iter=60):
        o, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        e.step(int(np.flatnonzero(o["action_mask"])[0]))
    obs, masks = np.array(obs), np.array(masks)
    actor = load_actor_of("spades4_net_v1")
    got = network_choices(actor, obs, masks, batch=7)
    want = np.argmax(np.where(masks.astype(bool), actor(obs.astype(np.float32)), -np.inf), axis=1)
    assert (got == want).all() and masks[np.arange(len(got)), got].all()
    pol = NetSearchPolicy(rules="house", seed=1, samples=2, actor=actor)
    forced = np.flatnonzero(masks.sum(1) == 1)
    for i in forced[:3]:
        assert pol.act(obs[i], masks[i]) == got[i]
