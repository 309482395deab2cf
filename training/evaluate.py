"""Evaluation during a PPO run: duplicate games of a checkpoint (partnered with itself, both
seatings of every board; heads-up with the seats swapped under two-player rules) against each
``eval_opponents`` team, under each ``eval_rules``
(default: the training rules), with 95% CIs; the results go to the checkpoint's metadata, to
``history.jsonl`` and to TensorBoard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from training.checkpoint import update_meta

if TYPE_CHECKING:
    from training.ppo import Trainer


def evaluate(tr: Trainer, ckpt: Path) -> dict[str, Any]:
    """``{"update", "decisions", opponent or "<rules>/<opponent>": {game_win, margin...}}``."""
    from spades_env.eval import run_duplicate, summarize

    cfg = tr.cfg
    spec = str(ckpt)
    out: dict[str, Any] = {"update": tr.update, "decisions": tr.decisions}
    for label, rules in cfg.eval_rules_list():
        for opp in cfg.eval_opponents:
            boards = run_duplicate(
                (spec, spec),
                (opp, opp),
                cfg.eval_boards,
                seed=cfg.seed + 1,
                rules=rules,
                workers=cfg.eval_workers,
            )
            s = summarize(boards, "game", names=("policy", opp))
            out[opp if label is None else f"{label}/{opp}"] = {
                "game_win": s["game_win"]["rate"],
                "game_win_ci95": s["game_win"]["ci95"],
                "margin_per_hand": s["margin_per_hand"]["mean"],
                "margin_ci95": s["margin_per_hand"]["ci95"],
                "games": s["game_win"]["n"],
            }
    tr.eval_results.append(out)
    update_meta(ckpt, evaluation=tr.eval_results)
    return out


def eval_scalars(result: dict[str, Any]) -> dict[str, float]:
    """The scalars of one evaluation for ``history.jsonl`` and TensorBoard."""
    row = {}
    for key, r in result.items():
        if isinstance(r, dict):
            row[f"eval/{key}/game_win"] = r["game_win"]
            row[f"eval/{key}/game_win_ci_lo"] = r["game_win_ci95"][0]
            row[f"eval/{key}/game_win_ci_hi"] = r["game_win_ci95"][1]
            row[f"eval/{key}/margin_per_hand"] = r["margin_per_hand"]
    return row


__all__ = ["eval_scalars", "evaluate"]
