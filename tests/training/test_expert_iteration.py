"""Expert iteration (training.expert_iteration): one tiny run of two rounds end to end."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from spades_env.core import layout as L
from spades_env.core.observation import O_PHASE
from spades_env.policies import load
from training import expert_iteration as ei
from training.config import ConfigError
from training.expert_iteration import fit, load_ei_config, network_dir, round_bc_config, run

SMOKE = "configs/train/expert_iteration_smoke.yaml"


def test_two_tiny_rounds_end_to_end_and_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(ei, "CHECK_BOARDS", 20)
    cfg = load_ei_config(SMOKE, ["progress=false"])
    last = run(cfg, tmp_path)
    r1, r2 = tmp_path / "round_1", tmp_path / "round_2"
    assert last == (r2 / "final").resolve()
    # round 2's search ran with round 1's network
    rec2 = json.loads((r2 / "final" / "meta.json").read_text())["bc"]
    assert str((r1 / "final").resolve()) in rec2["teacher"] and rec2["expert_iteration_round"] == 2
    assert rec2["fitted"] == 2 * cfg.decisions  # its own data and round 1's (replay_rounds 1)
    # the data: every decision labelled, the searched ones (bids, cards) with values
    with np.load(r1 / "data" / "chunk_00001.npz") as z:
        obs, values, mask = z["obs"], z["values"].astype(np.float32), z["mask"]
    phase = obs[:, O_PHASE : O_PHASE + 8].argmax(1)
    valued = np.isfinite(values).any(1)
    play = (phase == L.PH_PLAY) & (mask.sum(1) > 1)
    assert play.sum() > 0 and valued[play].all()
    assert valued[phase == L.PH_BID].all()
    assert not np.isfinite(values[~mask.astype(bool)]).any()  # values only on legal actions
    # the new network plays (NumPy, as any checkpoint)
    pol = load(str(r2 / "final"), seed=0)
    assert hasattr(pol, "actor")
    # a rerun skips the finished rounds; a lost round is made again from its saved chunks
    chunks = sorted((r2 / "data").glob("chunk_*.npz"))
    stamps = [c.stat().st_mtime_ns for c in chunks]
    (r2 / "round.json").unlink()
    assert run(cfg, tmp_path) == last
    assert [c.stat().st_mtime_ns for c in chunks] == stamps  # reused, not made again
    assert (r2 / "round.json").is_file()
    # each round played against the start on three presets, and the curve drawn
    check = json.loads((r2 / "round.json").read_text())["vs_start"]
    assert sorted(check) == sorted(ei.CHECK_RULES)
    for v in check.values():
        assert v["hands"] == 40 and v["ci95"][0] <= v["mean"] <= v["ci95"][1]
    assert (tmp_path / "rounds.png").stat().st_size > 0
    # the labels searched again: counts within the round's data, shares in [0, 1]
    retest = json.loads((r2 / "round.json").read_text())["retest"]
    assert 0 < retest["searched"] <= cfg.decisions and 0 <= retest["overrides"] <= retest["searched"]
    assert retest["retested_overrides"] == min(cfg.retest, retest["overrides"])
    assert retest["retested_kept"] == min(cfg.retest, retest["searched"] - retest["overrides"]) > 0
    for k in ("reproduced", "overrides_again", "kept"):
        assert retest[k] is None or 0.0 <= retest[k] <= 1.0
    assert retest["kept"] > 0.5  # a second search mostly keeps the network's choice where the first did
    # round 1 made again while round 2 (made from its old network) exists: refused, nothing changed
    record = (r1 / "round.json").read_text()
    (r1 / "round.json").unlink()
    with pytest.raises(ConfigError, match="later rounds exist"):
        run(cfg, tmp_path)
    assert [c.stat().st_mtime_ns for c in chunks] == stamps
    (r1 / "round.json").write_text(record)
    # a finished round made under another config is not silently mixed in
    with pytest.raises(ConfigError, match="another config"):
        run(load_ei_config(SMOKE, ["progress=false", "soft_temperature=5.0"]), tmp_path)


def test_the_fit_follows_the_targets_it_is_given(tmp_path):
    """``targets: action`` fits the search's chosen actions, ``values`` the softmax of its values:
    where the two disagree (the label made the worst-valued action), each fit moves the network
    toward its own target."""
    from spades_env.core.actions import NUM_ACTIONS
    from training.bc import generate
    from training.network import masked_logits

    cfg = load_ei_config(SMOKE, ["progress=false"])
    bcfg = dataclasses.replace(round_bc_config(cfg, 1, network_dir(cfg.start)), learning_rate=1e-3, epochs=6, val_share=0.0,
                               decisions=320)
    data = generate(bcfg, tmp_path / "data")
    v = data["values"].astype(np.float32)
    rows = np.flatnonzero(np.isfinite(v).sum(1) >= 2)
    assert len(rows) > 100
    data = {k: a[rows] for k, a in data.items()}
    v = np.where(np.isfinite(v[rows]), v[rows], np.inf)
    worst = v.argmin(1)
    best = np.where(np.isfinite(v), v, -np.inf).argmax(1)
    data["action"] = worst.astype(np.int8)
    chosen = {}
    for targets in ("action", "values"):
        model, _ = fit(bcfg, data, "float32", targets)
        with torch.no_grad():
            lg = masked_logits(model.actor(torch.from_numpy(data["obs"]).float()), torch.from_numpy(data["mask"]))
        chosen[targets] = lg.argmax(-1).numpy()
        assert lg.shape[1] == NUM_ACTIONS
    assert (chosen["action"] == worst).mean() > 0.6
    top = np.where(np.isfinite(v), v, -np.inf)
    picked = top[np.arange(len(rows)), chosen["values"]]
    assert (picked == top[np.arange(len(rows)), best]).mean() > 0.6  # a best-valued action (ties count)
    assert (chosen["values"] == worst).mean() < 0.3


def test_suit_augment_reaches_the_rounds_fit():
    """``suit_augment`` passes to each round's fit, which then trains on relabelled rows: its
    network treats a position and its side-suit relabelling more alike than without."""
    from spades_env.core.symmetry import action_columns, observation_columns
    from training.bc import teacher_chunk
    from training.network import masked_logits

    cfg = load_ei_config(SMOKE, ["progress=false", "suit_augment=true"])
    bcfg = dataclasses.replace(round_bc_config(cfg, 1, network_dir(cfg.start)), learning_rate=1e-3, epochs=8, val_share=0.0)
    assert bcfg.suit_augment is True
    data = teacher_chunk("tournament", "greedy", 2000, 16, seed=1)
    data["values"] = np.where(data["mask"], 0.0, np.nan).astype(np.float16)
    perm = (2, 0, 1, 3)
    x0, m0 = torch.from_numpy(data["obs"].astype(np.float32)), torch.from_numpy(data["mask"])
    x1, m1 = x0[:, observation_columns(perm)], m0[:, action_columns(perm)]
    back = np.argsort(action_columns(perm))
    distance = {}
    for augment in (False, True):
        model, _ = fit(dataclasses.replace(bcfg, suit_augment=augment), data, "float32", "action")
        with torch.no_grad():
            p0 = torch.softmax(masked_logits(model.actor(x0), m0), -1)
            p1 = torch.softmax(masked_logits(model.actor(x1), m1), -1)[:, back]
        distance[augment] = float(0.5 * (p1 - p0).abs().sum(-1).mean())
    assert distance[True] < 0.75 * distance[False], distance  # measured 0.08 against 0.13


def test_config_refusals():
    for bad, key in (("search=heuristic", "search"), ("search=netsearch:net=x", "search"), ("rounds=0", "rounds"),
                     ("precision=float16", "precision"), ("targets=both", "targets"), ("retest=-1", "retest")):
        with pytest.raises(ConfigError, match=key):
            load_ei_config(SMOKE, [bad])


def test_a_rules_family_and_a_label_filter_reach_the_rounds_data():
    fam = '[house, {name: no_blind, blind_nil: false, blind_nil_exchange: 0}]'
    cfg = load_ei_config(SMOKE, [f"rules_family={fam}", "rules_weights=[1, 2]", "label=nil_cards"])
    bcfg = round_bc_config(cfg, 1, network_dir(cfg.start))
    assert bcfg.label == "nil_cards" and bcfg.rules_weights == (1, 2)
    assert [r if isinstance(r, str) else r["name"] for r in bcfg.rules_family] == ["house", "no_blind"]
    assert bcfg.validate() is None  # netsearch reads each game's rules from its observation
    for bad, key in (("label=nils", "label"), ("play_share=1.5", "play_share"), ("rules_weights=[1, 2, 3]", "rules_weights")):
        with pytest.raises(ConfigError, match=key):
            load_ei_config(SMOKE, [f"rules_family={fam}", "label=nil_cards", bad])
    own_line = round_bc_config(load_ei_config(SMOKE, ["label=nil_cards", "play_share=0"]), 1, network_dir(cfg.start))
    assert own_line.play_by == bcfg.play_by and own_line.play_share == 0.0  # the network plays the unlabelled rest
    assert own_line.validate() is None


def test_more_rounds_extend_a_run_and_other_knobs_do_not():
    """Raising ``rounds`` keeps the finished rounds (their key has no round count); a knob that
    changes a round's data or fit does not."""
    net = network_dir("spades4_net_v1")
    two, three = load_ei_config(SMOKE), load_ei_config(SMOKE, ["rounds=3"])
    assert ei._round_config(two, 1, net) == ei._round_config(three, 1, net)
    assert ei._round_config(two, 1, net) != ei._round_config(load_ei_config(SMOKE, ["decisions=700"]), 1, net)
    assert ei._round_config(two, 1, net) == ei._round_config(load_ei_config(SMOKE, ["retest=0"]), 1, net)
