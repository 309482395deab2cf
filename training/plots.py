"""Pictures of training runs: :func:`plot_history` draws a PPO run's ``learning_curve.png`` from
``history.jsonl`` (losses, entropy and KL, win rates in training games, and the duplicate
evaluations with 95% CIs, one line per opponent, or per rules and opponent under
``eval_rules``); :func:`plot_bc_stages` draws the behaviour-cloning stages of a lineage (loss
and held-out accuracy per epoch, stage after stage); :func:`plot_stage_strength` draws each
stage's margin against L2 per rules preset from the stages' ``spades matrix`` reports;
:func:`plot_runs` overlays several PPO runs' curves (e.g. the same run in float32 and bfloat16)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def _save(fig, out_png: Path) -> None:
    """Lay out, write (making the folder) and close a figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=100)
    plt.close(fig)


def plot_history(history_path: Path, out_png: Path) -> Path | None:
    """The learning curve (losses, entropy, episode stats, evaluations) as a PNG."""
    if not history_path.is_file():
        return None
    rows = [json.loads(line) for line in history_path.read_text().splitlines() if line.strip()]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    x = [r["decisions"] for r in rows]
    for ax, keys, title in (
        (axes[0, 0], ("loss/pg_loss", "loss/v_loss"), "losses"),
        (axes[0, 1], ("train/entropy", "train/approx_kl"), "entropy, KL"),
        (
            axes[1, 0],
            ("episode/win_vs_pool", "episode/win_vs_scripted", "episode/win_vs_scripted_scripted_partner"),
            "win rate in training games (moving average)",
        ),
    ):
        for k in keys:
            pts = [(xx, r[k]) for xx, r in zip(x, rows, strict=True) if k in r]
            if pts:
                xs, ys = (np.array(v) for v in zip(*pts, strict=True))
                if k.startswith("episode/") and len(ys) >= 10:  # few games per update: smooth
                    w = max(len(ys) // 20, 5)
                    ys = np.convolve(ys, np.ones(w) / w, mode="valid")
                    xs = xs[w - 1 :]
                ax.plot(xs, ys, label=k.split("/")[-1])
        ax.set_title(title)
        ax.set_xlabel("decisions")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    ax = axes[1, 1]
    evals = [r for r in rows if "eval" in r]
    for opp in sorted({k for r in evals for k in r["eval"] if isinstance(r["eval"][k], dict)}):
        pts = [(r["decisions"], r["eval"][opp]) for r in evals if opp in r["eval"]]
        xs = [p[0] for p in pts]
        ys = [p[1]["game_win"] for p in pts]
        lo = [p[1]["game_win"] - p[1]["game_win_ci95"][0] for p in pts]
        hi = [p[1]["game_win_ci95"][1] - p[1]["game_win"] for p in pts]
        ax.errorbar(
            xs,
            ys,
            yerr=[lo, hi],
            marker="o",
            capsize=3,
            label=opp.replace("/", ": vs ") if "/" in opp else f"vs {opp}",
        )
    ax.set_title("duplicate evaluation: games won (95% CI)")
    ax.set_xlabel("decisions")
    ax.set_ylim(0, 1)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return out_png


def plot_bc_stages(stages: dict[str, Path], out_png: Path) -> Path | None:
    """Loss and held-out accuracy (all decisions, card play, bidding) per epoch of each
    behaviour-cloning stage, ``{stage name: its history.json}``, one after the other; a third
    panel, the held-out card-play regret (points a card play gives up by the teacher's values),
    where a stage recorded it. The figure, or None where no history exists."""
    runs = {name: json.loads(Path(h).read_text()) for name, h in stages.items() if Path(h).is_file()}
    if not runs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regret = "val_regret_card_play"
    with_regret = any(all(regret in r for r in rows) for rows in runs.values())
    fig, axes = plt.subplots(1, 3 if with_regret else 2, figsize=(16 if with_regret else 11, 4))
    ax_loss, ax_acc = axes[0], axes[1]
    at = 0
    for name, rows in runs.items():
        x = np.arange(at + 1, at + len(rows) + 1)
        ax_loss.plot(x, [r["loss"] for r in rows], marker="o", label=name)
        for key, style in (("val_accuracy", "-"), ("val_accuracy_card_play", "--"), ("val_accuracy_bidding", ":")):
            if all(key in r for r in rows):
                ax_acc.plot(x, [r[key] for r in rows], style, marker="o", label=f"{name}: {key[4:].replace('_', ' ')}")
        if with_regret and all(regret in r for r in rows):
            axes[2].plot(x, [r[regret] for r in rows], marker="o", label=name)
        for ax in axes:
            ax.axvline(at + 0.5, color="0.8", lw=0.8)
        at += len(rows)
    ax_loss.set(title="training loss (each stage against its own teacher)", xlabel="epoch")
    ax_acc.set(title="held-out agreement with the stage's teacher", xlabel="epoch", ylim=(0, 1))
    ax_loss.legend(fontsize=8)
    ax_acc.legend(fontsize=7)
    if with_regret:
        axes[2].set(title="held-out card-play regret (teacher's points)", xlabel="epoch", ylabel="points a card play")
        axes[2].legend(fontsize=8)
    _save(fig, out_png)
    return out_png


def plot_stage_strength(matrices: dict[str, Path], out_png: Path, opponent: str = "heuristic") -> Path | None:
    """Margin per hand (95% CI) of the policy partnered with itself against ``opponent``, per
    rules preset, for each stage of a lineage, ``{stage name: its matrix.json}`` (``spades
    matrix``), stage after stage along the x axis; None if no report has that matchup."""
    series: dict[str, list[tuple[int, float, float, float]]] = {}
    names = [n for n, p in matrices.items() if Path(p).is_file()]
    for k, name in enumerate(names):
        report = json.loads(Path(matrices[name]).read_text())
        for block in report.get("rules", []):
            for m in block.get("matchups", []):
                if m.get("team_a") == "policy" and m.get("team_b") == opponent:
                    mp = m["margin_per_hand"]
                    series.setdefault(block["label"], []).append((k, mp["mean"], *mp["ci95"]))
    if not series:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for j, (label, pts) in enumerate(series.items()):
        x = np.array([p[0] for p in pts]) + (j - (len(series) - 1) / 2) * 0.08
        mean = np.array([p[1] for p in pts])
        err = np.array([[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]])
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, label=label)
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_xticks(range(len(names)), names)
    ax.set(title=f"margin per hand against {opponent} (partnered with itself, 95% CI)", xlabel="stage", ylabel="points per hand")
    ax.legend(fontsize=8)
    _save(fig, out_png)
    return out_png


def _history(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _smoothed(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A moving average over a twentieth of the points (at least 5) where there are 10 or more."""
    if len(ys) < 10:
        return xs, ys
    w = max(len(ys) // 20, 5)
    return xs[w - 1 :], np.convolve(ys, np.ones(w) / w, mode="valid")


def plot_runs(histories: dict[str, Path], out_png: Path) -> Path | None:
    """Several PPO runs' curves on shared axes, one colour a run: value loss, entropy, games won
    against scripted opponents in training (moving averages), and the duplicate evaluations'
    margin per hand with 95% CIs. None if no history has rows."""
    runs = {name: _history(p) for name, p in histories.items() if Path(p).is_file()}
    runs = {name: rows for name, rows in runs.items() if rows}
    if not runs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    panels = (
        (axes[0, 0], "loss/v_loss", "value loss"),
        (axes[0, 1], "train/entropy", "policy entropy"),
        (axes[1, 0], "episode/win_vs_scripted", "games won against scripted opponents in training"),
    )
    for j, (name, rows) in enumerate(runs.items()):
        colour = f"C{j}"
        for ax, key, title in panels:
            pts = [(r["decisions"], r[key]) for r in rows if key in r]
            if pts:
                xs, ys = _smoothed(*(np.array(v, dtype=float) for v in zip(*pts, strict=True)))
                ax.plot(xs, ys, color=colour, label=name)
            ax.set(title=title, xlabel="decisions")
        evals = [r for r in rows if "eval" in r]
        opps = sorted({k for r in evals for k, v in r["eval"].items() if isinstance(v, dict)})
        for k, opp in enumerate(opps):
            pts = [(r["decisions"], r["eval"][opp]) for r in evals if opp in r["eval"]]
            mean = np.array([p[1]["margin_per_hand"] for p in pts])
            err = np.array([[m - p[1]["margin_ci95"][0] for m, p in zip(mean, pts, strict=True)],
                            [p[1]["margin_ci95"][1] - m for m, p in zip(mean, pts, strict=True)]])
            axes[1, 1].errorbar([p[0] for p in pts], mean, yerr=err, color=colour, marker="os^v"[k % 4],
                                capsize=3, label=f"{name} vs {opp}")
    axes[1, 1].set(title="duplicate evaluation: margin per hand (95% CI)", xlabel="decisions")
    for ax in axes.flat:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    _save(fig, out_png)
    return out_png


__all__ = ["plot_bc_stages", "plot_history", "plot_runs", "plot_stage_strength"]
