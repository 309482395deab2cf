"""End-to-end training throughput against SB3 MaskablePPO and against the machine's matmul rate.

    .venv/bin/python benchmarks/training_throughput.py [--config configs/train/shipped.yaml]
        [--updates 3] [--rounds 3] [--threads 1] [--no-mix]

Everything is measured in one run, in ``--rounds`` interleaved rounds (ours, SB3, the matmul
rates, the opponent mix), and each figure is the median over the rounds.

* **ours**: ``training.ppo.Trainer`` with the config's network and PPO settings (default the
  shipped config), ``--updates`` updates per round after one warm-up update: collection
  (network forward for every seat, engine steps, critic inputs) plus the PPO update, with
  ``policy_warmup_updates=0`` (the shipped config's critic-only warm-up would otherwise leave
  the actor out of every timed update) and ``init_from`` off. Checkpoints, evaluation and
  TensorBoard are off. Pure self-play (scripted and pool shares 0) twice: with the sparse first
  layers (``sparse_input: true``, the default: :mod:`training.sparse_input`) and with dense ones;
  and, unless ``--no-mix``, the config's own opponent mix (sparse). Decisions/s = decisions
  collected / (collection + update).
* **SB3**: sb3-contrib ``MaskablePPO`` on ``SpadesSB3VecEnv`` (the same batched engine, as many
  games, the same rollout length, epochs, minibatches and layer sizes, ReLU as ours), learner
  team N-S, the other team uniformly random Python Policies; its critic reads the observation
  (ours the 1187-float full state). SB3 counts learner decisions (training samples); ``all
  seats`` adds the opponents' decisions the env plays inside each step.
* **matmul rate**: ``torch.mm`` on this machine for every GEMM the network's layers need (read
  from the trainer's ``nn.Linear`` modules): the forward ``x @ W.T`` at the collection batch
  (``num_envs`` rows) and, at the minibatch size, the forward and the two backward GEMMs
  (``dW = g.T @ x``; ``dX = g @ W``, not for a first layer: its input needs no gradient).
  FLOPs are ``2 * rows * in * out`` per GEMM (bias, ReLU, softmax, Adam not counted), the
  rows counted while the trainer runs (wrappers around ``value``, ``act`` and ``evaluate``;
  ``target_kl`` may stop an update early). The matmul-limited rate is the decisions/s the
  trainer would reach if it spent time only in those GEMMs at the measured rates; the
  fraction = achieved decisions/s / that rate (= decisions/s x FLOPs per decision / the
  FLOP-weighted matmul rate), for the dense trainer. The sparse trainer skips most of the first
  layers' FLOPs (the inputs' zeros); the GEMM work it leaves is printed (its first layers
  counted at the non-zero entries), and its rate counted as the dense network's work.
* **bfloat16**: where the CPU multiplies bfloat16 matrices in hardware (Intel AMX or
  AVX512-BF16; :func:`training.network.bf16_matmul_native`) and unless ``--no-bf16``, ours
  also runs with ``precision: bfloat16`` (torch's CPU autocast around the forwards; float32
  weights, gradients, Adam and losses), dense and sparse first layers, and the matmul rates
  are measured in bfloat16 too: the bfloat16 trainer's fraction is against the bfloat16
  GEMM-limited rate. SB3 stays float32: its rollout buffer calls ``.numpy()`` on the values,
  which fails for bfloat16 tensors under autocast (``TypeError: Got unsupported ScalarType
  BFloat16``), so float32 is the best its users can run.
* **allocator**: glibc keeps freed memory for reuse in this process
  (:func:`training.allocator.keep_freed_memory`, what the trainer does by default), for SB3 as
  for ours; ``--system-malloc`` leaves the system's settings for both.
* **threads**: ``--threads`` torch threads and numba threads (the compiled L2 seats of the
  opponent mix), numba's ``workqueue`` layer by default (``--threading-layer default`` keeps
  numba's own choice, OpenMP here, whose pool torch shares).
* **profile**: where ours spends its time (self-play): engine ``step``, critic inputs
  (``state_vectors`` + gather), collection forwards, the rest of collection (buffers,
  sampling, bookkeeping); update forwards, advantages, backward, gradient clipping + Adam, and
  the rest of the update (losses, minibatch gathers). Timing wrappers are installed in this
  process around those calls (about a microsecond each, a few hundred calls per update).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from training.network import bf16_matmul_native  # noqa: E402


def linears(module: nn.Module) -> list[tuple[int, int]]:
    """(in, out) of every ``nn.Linear`` of ``module``, in order."""
    return [(m.in_features, m.out_features) for m in module.modules() if isinstance(m, nn.Linear)]


def fwd_flops(layers: list[tuple[int, int]]) -> int:
    """Forward GEMM FLOPs per row."""
    return sum(2 * i * o for i, o in layers)


def train_flops(layers: list[tuple[int, int]]) -> int:
    """Forward + backward GEMM FLOPs per row (no input gradient for the first layer)."""
    return sum(2 * i * o * (2 if k == 0 else 3) for k, (i, o) in enumerate(layers))


def gemm_seconds(
    b: int, i: int, o: int, kind: str, dtype: torch.dtype = torch.float32, min_time: float = 0.03
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) per call of one GEMM of a Linear(i, o) layer
    at ``b`` rows in ``dtype``: ``fwd`` x[b,i] @ W.T, ``dw`` g.T[o,b] @ x[b,i], ``dx`` g[b,o] @ W[o,i]."""
    x = torch.randn(b, i).to(dtype)
    w = torch.randn(o, i).to(dtype)
    g = torch.randn(b, o).to(dtype)
    a, c = {"fwd": (x, w.t()), "dw": (g.t(), x), "dx": (g, w)}[kind]
    mm = torch.mm
    mm(a, c)
    n = 1
    while True:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            mm(a, c)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if dt >= min_time:
            return dt / n, max(dc, 1e-9) / n
        n *= 4 if dt < min_time / 8 else 2


class MatmulModel:
    """Measured GEMM rates (FLOP per wall second, and per CPU second) for one network's shapes;
    GEMM-limited seconds per row of forward / training."""

    def __init__(
        self, nets: dict[str, list[tuple[int, int]]], collect_b: int, mb: int, dtype: torch.dtype = torch.float32
    ) -> None:
        self.nets, self.collect_b, self.mb, self.dtype = nets, collect_b, mb, dtype
        self.rates: dict[tuple, list[tuple[float, float]]] = defaultdict(list)

    def measure(self) -> None:
        for layers in self.nets.values():
            for k, (i, o) in enumerate(layers):
                for b, kind in [(self.collect_b, "fwd"), (self.mb, "fwd"), (self.mb, "dw")] + (
                    [(self.mb, "dx")] if k else []
                ):
                    w, c = gemm_seconds(b, i, o, kind, self.dtype)
                    f = 2 * b * i * o
                    self.rates[(b, i, o, kind)].append((f / w, f / c))

    def rate(self, b: int, i: int, o: int, kind: str, basis: int = 0) -> float:
        """Median FLOP/s; ``basis`` 0: per wall second, 1: per CPU second."""
        return statistics.median(r[basis] for r in self.rates[(b, i, o, kind)])

    def fwd_row_seconds(self, net: str, basis: int = 0) -> float:
        return sum(2 * i * o / self.rate(self.collect_b, i, o, "fwd", basis) for i, o in self.nets[net])

    def train_row_seconds(self, net: str, basis: int = 0) -> float:
        t = 0.0
        for k, (i, o) in enumerate(self.nets[net]):
            for kind in ("fwd", "dw") + (("dx",) if k else ()):
                t += 2 * i * o / self.rate(self.mb, i, o, kind, basis)
        return t

    def peak(self, basis: int = 0) -> tuple[float, tuple]:
        key = max(self.rates, key=lambda k: self.rate(*k, basis))
        return self.rate(*key, basis), key


class Counted:
    """Wraps a method: rows it was called on (by grad mode) and seconds spent in it."""

    def __init__(self, fn, rows_arg: int = 0) -> None:
        self.fn, self.rows_arg = fn, rows_arg
        self.rows = {True: 0, False: 0}
        self.seconds = {True: 0.0, False: 0.0}

    def __call__(self, *args, **kw):
        grad = torch.is_grad_enabled()
        t0 = time.perf_counter()
        out = self.fn(*args, **kw)
        self.seconds[grad] += time.perf_counter() - t0
        if self.rows_arg >= 0:
            self.rows[grad] += int(args[self.rows_arg].shape[0])
        return out

    def reset(self) -> None:
        self.rows = {True: 0, False: 0}
        self.seconds = {True: 0.0, False: 0.0}


_BACKWARD = Counted(torch.Tensor.backward, -1)
_CLIP = Counted(torch.nn.utils.clip_grad_norm_, -1)
torch.Tensor.backward = lambda *a, **k: _BACKWARD(*a, **k)  # timed (this process only)
torch.nn.utils.clip_grad_norm_ = _CLIP


class Ours:
    """Our trainer, instrumented (counting rows, timing the parts)."""

    def __init__(self, config: str, overrides: list[str]) -> None:
        from training.ppo import Trainer, load_train_config

        self.cfg = cfg = load_train_config(
            config,
            [
                *overrides,
                "eval_boards=0",
                "tensorboard=false",
                "checkpoint_every=0",
                "init_from=",
                "policy_warmup_updates=0",
            ],
        )
        self.tr = tr = Trainer(cfg, "/tmp/unused_bench")
        self.w = {
            "value": Counted(tr.model.value),
            "act": Counted(tr.model.act),
            "evaluate": Counted(tr.model.evaluate),
            "step": Counted(tr.engine.step, -1),
            "hidden": Counted(tr._hidden, -1),
            "advantages": Counted(tr.advantages, -1),
        }
        tr.model.value, tr.model.act, tr.model.evaluate = self.w["value"], self.w["act"], self.w["evaluate"]
        tr.engine.step, tr._hidden, tr.advantages = self.w["step"], self.w["hidden"], self.w["advantages"]
        self.w["adam"] = Counted(tr.optimizer.step, -1)
        tr.optimizer.step = self.w["adam"]
        self.w["backward"], self.w["clip"] = _BACKWARD, _CLIP
        tr.collect()
        tr.learn(1000)  # warm-up (allocates)
        self.total_updates = 1000
        self.runs: list[dict] = []

    def run(self, updates: int) -> dict:
        tr = self.tr
        for w in self.w.values():
            w.reset()
        tc = tl = cc = cl = 0.0
        clock, cpu = time.perf_counter, time.process_time
        for _ in range(updates):
            t0, c0 = clock(), cpu()
            tr.collect()
            t1, c1 = clock(), cpu()
            tr.learn(self.total_updates)
            t2, c2 = clock(), cpu()
            tc += t1 - t0
            tl += t2 - t1
            cc += c1 - c0
            cl += c2 - c1
        w = self.w
        r = {
            "decisions": updates * self.cfg.num_envs * self.cfg.num_steps,
            "collect": tc,
            "update": tl,
            "cpu": cc + cl,
            "rows": {k: dict(w[k].rows) for k in ("value", "act", "evaluate")},
            "t": {k: (w[k].seconds[False], w[k].seconds[True]) for k in w},
        }
        self.runs.append(r)
        return r


class SB3:
    """sb3-contrib MaskablePPO on the same engine and layer sizes."""

    def __init__(self, config: str, seed: int = 0) -> None:
        from sb3_contrib import MaskablePPO

        from spades_env.envs.vector_adapters import SpadesSB3VecEnv
        from spades_env.policies.base import RandomPolicy
        from training.ppo import load_train_config
        from training.sb3_train import log_nowhere

        cfg = load_train_config(config)
        opp = {1: RandomPolicy(seed + 1), 3: RandomPolicy(seed + 3)}
        env = SpadesSB3VecEnv(cfg.num_envs, cfg.rules_config(), opponents=opp, seed=seed)
        self.batch = cfg.num_envs * cfg.num_steps
        self.model = MaskablePPO(
            "MlpPolicy",
            env,
            n_steps=cfg.num_steps,
            batch_size=self.batch // cfg.num_minibatches,
            n_epochs=cfg.update_epochs,
            learning_rate=cfg.learning_rate,
            seed=seed,
            policy_kwargs={
                "net_arch": {"pi": list(cfg.hidden), "vf": list(cfg.critic_hidden)},
                "activation_fn": nn.ReLU,
            },
            device="cpu",
            verbose=0,
        )
        log_nowhere(self.model)
        self.epochs = cfg.update_epochs
        self.model.learn(total_timesteps=self.batch)  # warm-up rollout and update

    def run(self, rollouts: int) -> tuple[float, float]:
        """Learner decisions per wall second and per CPU second over ``rollouts`` rollouts +
        updates."""
        n0 = self.model.num_timesteps
        t0, c0 = time.perf_counter(), time.process_time()
        self.model.learn(total_timesteps=rollouts * self.batch, reset_num_timesteps=False)
        n = self.model.num_timesteps - n0
        return n / (time.perf_counter() - t0), n / (time.process_time() - c0)

    def flops_per_decision(self) -> int:
        p = self.model.policy
        actor = linears(p.mlp_extractor.policy_net) + linears(p.action_net)
        critic = linears(p.mlp_extractor.value_net) + linears(p.value_net)
        return fwd_flops(actor) + fwd_flops(critic) + self.epochs * (train_flops(actor) + train_flops(critic))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "train" / "shipped.yaml"))
    p.add_argument("--updates", type=int, default=3, help="timed PPO updates per round (after one warm-up)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    p.add_argument(
        "--sb3-rollouts", type=int, default=1, help="timed MaskablePPO rollouts + updates per round"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads for all of it")
    p.add_argument("--no-mix", action="store_true", help="skip the config's opponent mix")
    p.add_argument(
        "--no-bf16",
        action="store_true",
        help="skip our trainer with precision=bfloat16 (skipped anyway where the CPU has no bfloat16 matrix units)",
    )
    p.add_argument(
        "--system-malloc",
        action="store_true",
        help="leave glibc's allocator settings alone for everyone (ours: keep_freed_memory=false); by "
        "default freed memory is kept for reuse in this process, for SB3 as for ours",
    )
    p.add_argument(
        "--threading-layer",
        default="workqueue",
        help="numba threading layer for the compiled L2 seats (default workqueue; numba's default picks "
        "OpenMP, whose thread pool torch shares: see benchmarks/README.md)",
    )
    args = p.parse_args()
    if not args.system_malloc:  # the whole process: SB3 runs here too and gets the same allocator
        from training.allocator import keep_freed_memory

        keep_freed_memory()
    if args.threading_layer != "default":
        numba.config.THREADING_LAYER = args.threading_layer
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(args.threads)
    np.seterr(all="ignore")
    print(
        f"config {args.config}; torch {torch.__version__}, {args.threads} thread(s) (torch and numba, "
        f"numba layer {numba.threading_layer()}); load average "
        f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; glibc allocator: "
        f"{'system defaults' if args.system_malloc else 'freed memory kept for reuse, for ours and SB3 (training.allocator)'}",
        flush=True,
    )
    t = f"torch_threads={args.threads}"
    malloc = f"keep_freed_memory={str(not args.system_malloc).lower()}"
    self_play = ["pool_opponent_share=0", "scripted_opponent_share=0", "scripted_partner_share=0", t, malloc]
    pure = Ours(args.config, [*self_play, "sparse_input=true"])
    dense = Ours(args.config, [*self_play, "sparse_input=false"])
    mixed = None if args.no_mix else Ours(args.config, [t, malloc, "sparse_input=true"])
    bf16 = not args.no_bf16 and bf16_matmul_native()
    if not args.no_bf16 and not bf16:
        print("precision=bfloat16 skipped: this CPU has no bfloat16 matrix units (AMX / AVX512-BF16)")
    half = Ours(args.config, [*self_play, "sparse_input=false", "precision=bfloat16"]) if bf16 else None
    half_sparse = Ours(args.config, [*self_play, "sparse_input=true", "precision=bfloat16"]) if bf16 else None
    sb3 = SB3(args.config)
    cfg = pure.cfg
    nets = {"actor": linears(pure.tr.model.actor), "critic": linears(pure.tr.model.critic)}
    mb = cfg.num_envs * cfg.num_steps // cfg.num_minibatches
    mm = MatmulModel(nets, cfg.num_envs, mb)
    mm16 = MatmulModel(nets, cfg.num_envs, mb, torch.bfloat16)
    sb3_rates: list[float] = []
    loads = []
    for r in range(args.rounds):
        steps = [
            lambda: pure.run(args.updates),
            lambda: dense.run(args.updates),
            lambda: sb3_rates.append(sb3.run(args.sb3_rollouts)),
            mm.measure,
        ]
        if mixed is not None:
            steps.append(lambda: mixed.run(args.updates))
        if bf16:
            steps += [lambda: half.run(args.updates), lambda: half_sparse.run(args.updates), mm16.measure]
        for s in steps if r % 2 == 0 else steps[::-1]:
            s()
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}/{args.rounds} done, load average {loads[-1]:.2f}", flush=True)

    med = statistics.median

    def rates(o: Ours) -> tuple[float, float, float, float]:
        """(end to end, collection only, update only) decisions per wall second, and end to end
        per CPU second."""
        return (
            med(x["decisions"] / (x["collect"] + x["update"]) for x in o.runs),
            med(x["decisions"] / x["collect"] for x in o.runs),
            med(x["decisions"] / x["update"] for x in o.runs),
            med(x["decisions"] / x["cpu"] for x in o.runs),
        )

    sb3_learner, sb3_cpu = med(r[0] for r in sb3_rates), med(r[1] for r in sb3_rates)
    sb3_all = 2 * sb3_learner  # the random team decides as often as the learner team
    print(
        f"\nmedians of {args.rounds} interleaved rounds; load average {min(loads):.2f}-{max(loads):.2f}; "
        f"network: actor {nets['actor']}, critic {nets['critic']}; collection batch {cfg.num_envs}, "
        f"minibatch {mb}, {cfg.update_epochs} epochs"
    )
    print("\n| trainer | decisions/s end to end | collection only | update only | per CPU-second |")
    print("|---|---:|---:|---:|---:|")
    table = [("ours, self-play only", pure), ("ours, self-play only, dense first layers", dense)]
    table += [("ours, config's opponent mix", mixed)] if mixed else []
    if bf16:
        table += [
            ("ours, self-play only, bfloat16, dense first layers", half),
            ("ours, self-play only, bfloat16, sparse first layers", half_sparse),
        ]
    for name, o in table:
        tot, col, upd, cpu = rates(o)
        print(f"| {name} | {tot:,.0f} | {col:,.0f} | {upd:,.0f} | {cpu:,.0f} |")
    print(
        f"| SB3 MaskablePPO, SpadesSB3VecEnv (learner decisions) | {sb3_learner:,.0f} | | | {sb3_cpu:,.0f} |"
    )
    print(f"| SB3 MaskablePPO, all seats' decisions | {sb3_all:,.0f} | | | {2 * sb3_cpu:,.0f} |")
    tot, _, _, tot_cpu = rates(pure)
    line = (
        f"\nratio to SB3, training samples per second: self-play {tot / sb3_learner:.2f}x "
        f"(per CPU-second {tot_cpu / sb3_cpu:.2f}x; dense first layers {rates(dense)[0] / sb3_learner:.2f}x)"
    )
    if mixed:
        line += f"; the config's opponent mix (every decision, scripted seats' too) {rates(mixed)[0] / sb3_learner:.2f}x"
    if bf16:
        line += (
            f"; precision=bfloat16 (SB3 stays float32: it cannot run under autocast) dense first layers "
            f"{rates(half)[0] / sb3_learner:.2f}x, sparse {rates(half_sparse)[0] / sb3_learner:.2f}x"
        )
    print(line + f"; decisions simulated per second (all seats): {tot / sb3_all:.2f}x (target >= 2x)")

    # ---- against the matmul rate (self-play) ----
    sf = sb3.flops_per_decision()
    per, ideal_c, ideal_u, n, rows = matmul_fraction(dense, mm, rates(dense), sf, (sb3_learner, sb3_cpu))
    if half is not None:
        matmul_fraction(half, mm16, rates(half), sf, None)

    # ---- the sparse first layers: the GEMM FLOPs they leave ----
    buf = pure.tr
    nnz_obs = float((buf.buf_obs != 0).sum(-1).mean())
    nnz_crit = nnz_obs + float((buf.buf_hidden != 0).sum(-1).mean())
    (a_in, a_out), (c_in, c_out) = nets["actor"][0], nets["critic"][0]
    saved_fwd = 2 * ((a_in - nnz_obs) * a_out), 2 * ((c_in - nnz_crit) * c_out)
    skipped_coll = rows["act"][False] * saved_fwd[0] + rows["value"][False] * saved_fwd[1]
    # forward and dW of each first layer run on the non-zero entries only
    skipped_upd = 2 * (rows["evaluate"][True] * saved_fwd[0] + rows["value"][True] * saved_fwd[1])
    sp_per = per - (skipped_coll + skipped_upd) / n
    tot = rates(dense)[0]
    sp_tot = rates(pure)[0]
    print(
        f"sparse first layers (the default): {nnz_obs:.1f} of {a_in} observation entries and {nnz_crit:.1f} of "
        f"{c_in} critic-input entries are non-zero on average, so the GEMM work is {sp_per / 1e6:.2f} MFLOP per "
        f"decision (dense {per / 1e6:.2f}); {sp_tot:,.0f} decisions/s = {sp_tot / tot:.2f}x the dense trainer, "
        f"{sp_tot * per / 1e9:.1f} GFLOP/s counted as the dense network's work ({sp_tot / (n / (ideal_c + ideal_u)):.1%} of "
        f"the dense matmul-limited rate; over 100% is work skipped, not a faster GEMM)"
    )

    # ---- profile (self-play, last round) ----
    profiled = [("sparse first layers", pure), ("dense first layers", dense)]
    profiled += [("bfloat16, dense first layers", half)] if half is not None else []
    for label, o in profiled:
        profile(label, o.runs[-1])
    return 0


def matmul_fraction(
    o: Ours, mm: MatmulModel, achieved: tuple, sb3_flops: int, sb3_rates: tuple[float, float] | None
) -> tuple[float, float, float, int, dict]:
    """Print the measured GEMM rates in ``mm``'s dtype for the network's shapes, and the dense
    trainer ``o``'s end-to-end rate as a fraction of the matmul-limited rate (its rows counted in
    its last round). Returns (GEMM FLOPs per decision, the last round's GEMM-limited collection
    and update seconds, its decisions, its rows)."""
    cfg, nets = o.cfg, {"actor": linears(o.tr.model.actor), "critic": linears(o.tr.model.critic)}
    dt = str(mm.dtype).removeprefix("torch.")
    mb = mm.mb
    print(f"\nmatmul rate (torch.mm {dt}, median of the rounds), GFLOP per wall second (per CPU second):")
    print(f"| layer (in x out) | fwd @ {cfg.num_envs} | fwd @ {mb} | dW @ {mb} | dX @ {mb} |")
    print("|---|---:|---:|---:|---:|")
    for net, layers in nets.items():
        for k, (i, out) in enumerate(layers):
            keys = [(cfg.num_envs, "fwd"), (mb, "fwd"), (mb, "dw")] + ([(mb, "dx")] if k else [])
            cells = [
                f"{mm.rate(b, i, out, kd) / 1e9:.1f} ({mm.rate(b, i, out, kd, 1) / 1e9:.1f})" for b, kd in keys
            ]
            print(f"| {net} {i} x {out} | " + " | ".join(cells + ([] if k else ["-"])) + " |")
    # the matmul target is about the dense GEMMs: the dense trainer's rate against them
    last = o.runs[-1]
    n = last["decisions"]
    rows = last["rows"]
    tot, _, _, tot_cpu = achieved
    f_act, f_crit = fwd_flops(nets["actor"]), fwd_flops(nets["critic"])
    g_act, g_crit = train_flops(nets["actor"]), train_flops(nets["critic"])
    coll_flops = rows["act"][False] * f_act + rows["value"][False] * f_crit
    upd_flops = rows["evaluate"][True] * g_act + rows["value"][True] * g_crit
    per = (coll_flops + upd_flops) / n
    print(
        f"the dense trainer in {cfg.precision}: FLOPs per decision (GEMMs, rows counted in the last round): "
        f"collection {coll_flops / n / 1e6:.2f} M (actor {f_act / 1e6:.2f} M + critic {f_crit / 1e6:.2f} M a row), "
        f"update {upd_flops / n / 1e6:.2f} M (actor {g_act / 1e6:.2f} M + critic {g_crit / 1e6:.2f} M a row and "
        f"epoch); total {per / 1e6:.2f} M"
    )

    def ideal_seconds(basis: int) -> tuple[float, float]:
        c = rows["act"][False] * mm.fwd_row_seconds("actor", basis) + rows["value"][False] * mm.fwd_row_seconds(
            "critic", basis
        )
        u = rows["evaluate"][True] * mm.train_row_seconds("actor", basis) + rows["value"][
            True
        ] * mm.train_row_seconds("critic", basis)
        return c, u

    for basis, label, rate in ((0, "wall", tot), (1, "CPU", tot_cpu)):
        c, u = ideal_seconds(basis)
        eff = (coll_flops + upd_flops) / (c + u)
        limit = n / (c + u)
        peak, at = mm.peak(basis)
        line = (
            f"per {label} second: FLOP-weighted {dt} matmul rate for this work {eff / 1e9:.1f} GFLOP/s (peak GEMM "
            f"{peak / 1e9:.1f} at {at[0]} x {at[1]} x {at[2]} {at[3]}); matmul-limited rate {limit:,.0f} decisions/s; "
            f"achieved end to end {rate:,.0f} x {per / 1e6:.2f} MFLOP = {rate * per / 1e9:.1f} GFLOP/s = "
            f"{rate / limit:.1%} of it ({rate * per / peak:.1%} of peak GEMM; target >= 50%)"
        )
        if sb3_rates is not None:
            line += f"; SB3 {sb3_flops / 1e6:.2f} MFLOP per learner decision, {sb3_rates[basis] * sb3_flops / eff:.1%}"
        print(line)
    ideal_c, ideal_u = ideal_seconds(0)
    print(
        f"GEMM-limited time of the dense {cfg.precision} trainer's last round (wall rates): collection "
        f"{ideal_c:.2f} s, update {ideal_u:.2f} s (of {last['collect']:.2f} s and {last['update']:.2f} s measured)"
    )
    return per, ideal_c, ideal_u, n, rows


def profile(label: str, last: dict) -> None:
    """Where one self-play round's time went."""
    t_ = last["t"]
    n = last["decisions"]
    coll, upd = last["collect"], last["update"]
    step, hidden = sum(t_["step"]), sum(t_["hidden"])
    cf = t_["value"][0] + t_["act"][0]
    uf = t_["value"][1] + t_["evaluate"][1]
    adv = sum(t_["advantages"])
    total = coll + upd
    print(f"\nwhere the time goes (self-play, {label}, last round, {n} decisions, {total:.2f} s):")
    parts = [
        ("collection: engine step (obs, masks)", step),
        ("collection: critic inputs (state_vectors + gather)", hidden),
        ("collection: network forwards (value, act)", cf),
        ("collection: the rest (buffers, torch glue, bookkeeping)", coll - step - hidden - cf),
        ("update: network forwards (value, evaluate)", uf),
        ("update: advantages (GAE, numpy)", adv),
        ("update: backward", sum(t_["backward"])),
        ("update: gradient clipping + Adam", sum(t_["clip"]) + sum(t_["adam"])),
        (
            "update: the rest (losses, minibatch gathers, .item())",
            upd - uf - adv - sum(sum(t_[k]) for k in ("backward", "clip", "adam")),
        ),
    ]
    for name, sec in parts:
        print(f"  {name:<58} {sec:6.3f} s  {sec / total:5.1%}")


if __name__ == "__main__":
    sys.exit(main())
