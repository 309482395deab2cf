"""Rollout-valued decisions (training.rollouts): the candidates, the replay of the true deal
(the policy's own bid is valued at exactly the margin its hand scored), the saved chunks read by
training.bc, and config errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

from spades_env.core.actions import BID_BASE, NUM_ACTIONS  # noqa: E402
from training.bc import saved_data  # noqa: E402
from training.config import ConfigError  # noqa: E402
from training.rollouts import (  # noqa: E402
    Table,
    candidate_bids,
    deviation_report,
    format_report,
    load_rollout_config,
    play,
    rollout_values,
    run,
)
from training.rules_family import load_family  # noqa: E402

V5 = str(ROOT / "checkpoints" / "spades4_net_v1")
BIDS = ROOT / "configs" / "train" / "rollouts_bids.yaml"
SMALL = [
    f"policy={V5}",
    "rules_family=[tournament, house, {name: no_blind, blind_nil: false, blind_nil_exchange: 0}]",
    "rules_weights=[]",
    "hands=24",
    "chunk_hands=12",
    "num_envs=8",
    "rollout_batch=64",
    "progress=false",
]


def _mask(*actions: int) -> np.ndarray:
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m[list(actions)] = 1
    return m


def test_candidate_bids_are_the_legal_bids_near_the_own_and_nil():
    every = _mask(*range(BID_BASE, BID_BASE + 14))
    assert candidate_bids(BID_BASE + 4, every, 2, True) == [BID_BASE + b for b in (0, 2, 3, 4, 5, 6)]
    assert candidate_bids(BID_BASE + 4, every, 1, False) == [BID_BASE + b for b in (3, 4, 5)]
    assert candidate_bids(BID_BASE + 1, every, 2, True) == [BID_BASE + b for b in (0, 1, 2, 3)]
    assert candidate_bids(BID_BASE + 13, every, 2, False) == [BID_BASE + b for b in (11, 12, 13)]
    # a bid the rules close (here: Nil, and 6) is never a candidate
    some = _mask(*(BID_BASE + b for b in (1, 2, 3, 4, 5, 7)))
    assert candidate_bids(BID_BASE + 4, some, 2, True) == [BID_BASE + b for b in (2, 3, 4, 5)]


def test_rollouts_replay_the_true_deal_and_value_the_candidates():
    cfg = load_rollout_config(BIDS, SMALL)
    table = Table(cfg, load_family(list(cfg.rules_family))[0])
    kept, bids = play(cfg, table, 12, seed=3)
    n = len(bids["action"])
    assert n >= 12 and len(kept["action"]) > 0
    assert np.isfinite(bids["played"]).all()
    values = rollout_values(cfg, table, bids)
    own = values[np.arange(n), bids["action"].astype(np.int64)]
    # deterministic players on the same deal: the own bid's rollout is the hand as it was played
    np.testing.assert_array_equal(own, bids["played"])
    for i in range(n):
        cands = candidate_bids(int(bids["action"][i]), bids["mask"][i], cfg.bid_window, cfg.nil)
        valued = np.flatnonzero(np.isfinite(values[i])).tolist()
        assert valued == sorted(cands) and len(cands) >= 2
        assert all(bids["mask"][i][a] for a in valued)
    # a rollout's value is a hand's margin in whole points
    assert (np.abs(values[np.isfinite(values)]) % 1 == 0).all()
    # the policy's decisions only: its team's seats, never the opponents'
    assert set(table.team[bids["slot"]].tolist()) <= {0, 1}


def test_run_saves_chunks_that_training_bc_reads(tmp_path):
    cfg = load_rollout_config(BIDS, SMALL)
    data = run(cfg, tmp_path)
    files = sorted(data.glob("chunk_*.npz"))
    assert len(files) == 2
    stamp = files[0].stat().st_mtime_ns
    run(cfg, tmp_path)  # made again: the chunks it has are kept
    assert files[0].stat().st_mtime_ns == stamp
    longer = load_rollout_config(BIDS, [*SMALL, "hands=36"])
    run(longer, tmp_path)  # a longer run keeps the shorter one's chunks and adds one
    assert files[0].stat().st_mtime_ns == stamp and len(list(data.glob("chunk_*.npz"))) == 3
    from training.runs import RunFolderError

    with pytest.raises(RunFolderError, match=r"seed: .* -> 77.*--overwrite"):  # other data: refused
        run(load_rollout_config(BIDS, [*SMALL, "hands=36", "seed=77"]), tmp_path)
    assert len(list(data.glob("chunk_*.npz"))) == 3
    d = saved_data([str(data)], values=True)
    valued = np.isfinite(d["values"].astype(np.float32)).any(axis=1)
    assert valued.sum() >= 24 and (~valued).sum() > 0  # bids valued, kept decisions labelled only
    rows = np.flatnonzero(valued)
    assert d["mask"][rows][:, BID_BASE : BID_BASE + 14].any(axis=1).all()
    assert d["mask"][np.arange(len(d["action"])), d["action"].astype(np.int64)].all()


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("policy=", "'policy': must name a checkpoint"),
        ("keep_play=1.5", "'keep_play': must be in"),
        ("bid_window=-1", "'bid_window': must be 0..13"),
        ("hands=0", "'hands': must be >= 1"),
        ("workers=0", "'workers'"),
        ("rules_weights=[1, 2]", "rules_weights"),
    ],
)
def test_config_errors_name_the_key(override, words):
    with pytest.raises(ConfigError, match=words):
        load_rollout_config(BIDS, [*SMALL, override])


def test_a_policy_without_a_batched_form_is_refused():
    cfg = load_rollout_config(BIDS, [*SMALL[1:], "policy=greedy"])
    with pytest.raises(ConfigError, match="no batched form"):
        Table(cfg, load_family(list(cfg.rules_family))[0])


def test_report_prices_each_change_of_bid_against_the_own(tmp_path):
    cfg = load_rollout_config(BIDS, SMALL)
    data = run(cfg, tmp_path)
    d = saved_data([str(data)], values=True)
    v = d["values"].astype(np.float32)
    act = d["action"].astype(np.int64)
    rows = np.flatnonzero(np.isfinite(v).any(axis=1) & (act != BID_BASE))
    report = deviation_report([str(data)])
    every = report[0]
    assert every["situation"] == "every bid" and every["bids"] == rows.size
    # "+1" by hand: the mean over decisions whose own bid + 1 was a candidate
    up = [v[i, act[i] + 1] - v[i, act[i]] for i in rows if act[i] < BID_BASE + 13 and np.isfinite(v[i, act[i] + 1])]
    assert every["+1"][2] == len(up) and every["+1"][0] == pytest.approx(float(np.mean(up)), abs=1e-4)
    parts = report[1:]
    assert sum(r["bids"] for r in parts[:2]) >= every["bids"] - parts[2]["bids"]
    text = format_report(report)
    assert text.count("\n") == len(report) + 1 and "| every bid |" in text and "bid -2" in text


def test_report_of_a_folder_without_chunks_is_a_clear_error(tmp_path, capsys):
    from training.rollouts import main

    with pytest.raises(ConfigError, match="--report: no rollout chunks"):
        deviation_report([str(tmp_path)])
    assert main(["--report", str(tmp_path / "nope")]) == 2
    assert "no rollout chunks (chunk_*.npz) in" in capsys.readouterr().err
    # repeated --report flags add up: the first folder is read (and named), not dropped
    assert main(["--report", str(tmp_path / "first"), "--report", str(tmp_path / "second")]) == 2
    assert f"no rollout chunks (chunk_*.npz) in {tmp_path / 'first'}" in capsys.readouterr().err


def test_repeated_set_flags_all_apply(capsys):
    """``--set a --set b`` and ``--set a b`` give the same overrides (the first is not dropped)."""
    from training.rollouts import main

    for argv in (["--set", "hands=0", "--set", "chunk_hands=0"], ["--set", "hands=0", "chunk_hands=0"]):
        assert main(["--config", str(BIDS), *argv]) == 2
        err = capsys.readouterr().err
        assert "overrides hands=0 chunk_hands=0" in err and "key 'hands'" in err


def test_workers_make_the_same_data(tmp_path):
    one = saved_data([str(run(load_rollout_config(BIDS, SMALL), tmp_path / "one"))], values=True)
    two = saved_data([str(run(load_rollout_config(BIDS, [*SMALL, "workers=2"]), tmp_path / "two"))], values=True)
    for key in ("obs", "mask", "action"):
        np.testing.assert_array_equal(one[key], two[key])
    np.testing.assert_array_equal(one["values"], two["values"])
    valued = np.isfinite(one["values"].astype(np.float32)).any(axis=1)
    assert valued.sum() > 0 and (~valued).sum() > 0  # valued bids, kept decisions
