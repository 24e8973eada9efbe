"""Where a GRPO step's time goes, and whether the reward runs a batch concurrently.

1. Reward time: the async reward (WorkflowReward, the real executor and verifiers) on one
   workflow, then on a batch of 64, over the SIMULATED local pool with every worker's latency
   fixed (sigma 0) so the comparison measures concurrency, not luck. Goal: the batch of 64 takes
   <= 1.5x the time of one workflow. The verifier's memory (remembered verdicts and parses) is
   emptied before every timed call; batches are 64 different problems, or GRPO's shape (8
   problems x 8 rollouts, whose answers repeat), and a variant where every answer is new to the
   process (sympy's and math-verify's caches emptied too). The process's first batch (imports,
   sympy's lazy modules, the simulated pool's per-problem setup) is timed apart. Printed: wall
   and CPU of both, the sandboxed programs' own CPU (coding problems), and the ratio that CPU
   implies on an idle machine (wall is inflated by other jobs on a shared one).
2. A GRPO step's time split (generation, reward, the rest of the step: log-probs, loss,
   backward, optimizer), wall and CPU seconds per step, over a few real GRPO steps of the local
   profile's tiny model (warm-started here unless --model is given).
3. The step's arithmetic: the FLOPs of one step's generation and of its forward + backward
   (counted by torch's FlopCounterMode on a batch like GRPO's: the profile's prompts, completions
   the trained model samples), and this core's matmul rate at the model's shapes, measured in the
   same run with the same thread count: the time the arithmetic alone needs, next to the step's
   measured CPU time.

    python benchmarks/training_speed.py [--model DIR] [--steps 5] [--reward-only] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.quiet import quiet_environment  # noqa: E402

quiet_environment()

import yaml  # noqa: E402

from benchmarks.report import write_section  # noqa: E402
from conductor.config import DEFAULT_POOL_FILE  # noqa: E402
from conductor.training.config import local_profile  # noqa: E402
from conductor.cli.common import quiet_library_bars  # noqa: E402
from conductor.training.grpo import train_grpo  # noqa: E402
from conductor.training.pipeline import training_split  # noqa: E402
from conductor.training.problems import bank_splits, take_per_domain  # noqa: E402
from conductor.training.reward import WorkflowReward  # noqa: E402
from conductor.training.dataset import training_pool  # noqa: E402
from conductor.training.sft_data import completion_text, draw_example  # noqa: E402

LATENCY_MS = 200.0


def drop(figures: dict) -> None:
    """Where a trainer's per-step log dict goes in a benchmark: nowhere (its tables are the output)."""


def fixed_latency_pool_file(tmp: Path, concurrency: int | None = None) -> Path:
    data = yaml.safe_load(DEFAULT_POOL_FILE.read_text())
    for w in data["workers"]:
        w.setdefault("options", {})["latency_ms"] = {"median": LATENCY_MS, "sigma": 0.0}
        if concurrency is not None:
            w["concurrency"] = concurrency
    path = tmp / f"fixed-latency-{concurrency}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def children_cpu() -> float:
    """CPU seconds of this process's descendants (the sandbox's launchers and the programs they ran):
    what each live descendant used plus what the children it reaped used, plus the children this
    process reaped. Read from /proc (Linux); 0.0 where there is none."""
    import resource

    total = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = total.ru_utime + total.ru_stime
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return seconds
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in names:
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the name: state ppid ... utime(12) stime(13) cutime(14) cstime(15), 0-based from state
        parent[int(name)] = int(fields[1])
        ticks[int(name)] = sum(int(f) for f in fields[11:15])
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - found
        found |= frontier
    return seconds + sum(ticks[p] for p in found) / os.sysconf("SC_CLK_TCK")


def forget_verdicts() -> None:
    """Empty the verifier's memory (remembered verdicts and math-verify parses), so a timed batch
    grades every one of its answers itself."""
    from conductor.verify import math_answers
    from conductor.verify.memo import VERDICTS

    VERDICTS.clear()
    math_answers.clear_parses()


def warm_environment(pool, problems) -> None:  # noqa: ANN001
    """The simulated pool's own per-problem setup (its plausible wrong answers, checked wrong by the
    verifier), done before timing: it stands in for remote workers, whose CPU is not ours."""
    from conductor.simulation import is_simulated_worker
    from conductor.workers.simulated.answers import wrong_answers

    worker = next(pool.worker(s.id) for s in pool.specs if is_simulated_worker(s))
    for p in problems:
        wrong_answers(p, worker.bank.siblings(p))


def forget_parses() -> None:
    """Also empty sympy's and math-verify's own caches: every answer is then new to the process,
    as a real pool's answers to a first-seen problem are (the simulated pool's own setup checks its
    answers with the same verifier, which leaves them warm)."""
    from math_verify.parser import parse_latex_cached
    from sympy.core.cache import clear_cache

    parse_latex_cached.cache_clear()
    clear_cache()


def reward_time(pool_file: Path, repeats: int = 5, *, code: bool = True, group: int = 1,
                cold: bool = False) -> dict[str, float]:
    """Wall and CPU seconds of one workflow and of a batch of 64 (medians of `repeats`), with the
    verifier's memory emptied before every timed call. `group` > 1: the batch is 64 // group
    problems with `group` rollouts each (GRPO's shape: a group's answers repeat), else 64
    problems. Without `code`, no coding problems: their verification runs the program's tests in
    the sandbox (real processes, as many at once as there are cores; their CPU is not this
    process's and is not counted)."""
    import random

    bank = [p for p in bank_splits().test if code or p.domain != "code"]
    distinct = take_per_domain(bank, 64 // group, seed=0)
    pool = training_pool(pool_file, distinct)
    reward = WorkflowReward(pool, examples=False)
    ids = [s.id for s in pool.specs if s.provider != "conductor"]
    rng = random.Random(0)
    problems = [p for p in distinct for _ in range(group)]
    # a group's rollouts are sampled workflows: the worker each step goes to varies
    texts = [completion_text(p, wf, plan) for p in problems for plan, wf in [draw_example(p, range(len(ids)), rng)]]
    cols = {"problem": [p.model_dump_json() for p in problems], "pool_ids": [ids] * len(problems)}

    from conductor.verify import code_tests

    sandboxed: list[int] = []  # sandboxed test runs (each a real process; its CPU is not ours)
    real_run = code_tests.run

    def counted_run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        sandboxed.append(1)
        return real_run(*args, **kwargs)

    code_tests.run = counted_run

    sandbox_cpu: list[float] = []

    def run(n: int) -> tuple[float, float]:
        forget_verdicts()
        if cold:
            forget_parses()
        sandboxed.clear()
        k0 = children_cpu()
        t0, c0 = time.perf_counter(), time.process_time()
        out = asyncio.run(reward(prompts=[None] * n, completions=texts[:n], problem=cols["problem"][:n],
                                 pool_ids=cols["pool_ids"][:n]))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        sandbox_cpu.append(children_cpu() - k0)
        assert len(out) == n and all(r >= 0.5 for r in out)  # every workflow parsed and ran
        return wall, cpu

    # Timed apart, not in the medians: the first batch (imports and sympy's lazily loaded modules,
    # which a training run pays in its first step, and the simulated pool's per-problem setup: its
    # plausible wrong answers, each checked by the verifier), then the environment is warmed.
    try:
        first = run(len(texts))  # the first batch: pays the process's and the environment's start
        warm_environment(pool, distinct)
        run(len(texts))
        ones = [run(1) for _ in range(repeats)]
        batches, runs, kids = [], [], []
        for _ in range(repeats):
            batches.append(run(len(texts)))
            runs.append(len(sandboxed))
            kids.append(sandbox_cpu[-1])
    finally:
        code_tests.run = real_run
    return {"one": statistics.median(w for w, _ in ones), "batch": statistics.median(w for w, _ in batches),
            "cpu_one": statistics.median(c for _, c in ones), "cpu_batch": statistics.median(c for _, c in batches),
            "sandboxed": statistics.median(runs), "cpu_sandbox": statistics.median(kids), "load": os.getloadavg()[0], "first": first[0],
            "cpu_first": first[1]}


def reward_line(r: dict[str, float], label: str, show_first: bool = False) -> str:
    """One scenario's sentence: measured wall and CPU, the ratio, and what the CPU alone implies on
    an idle machine (the event loop and the verifier share one interpreter lock, so the batch's CPU
    adds to the fixed latency: (latency + CPU of 64) / (latency + CPU of one))."""
    ratio = r["batch"] / r["one"]
    idle = (LATENCY_MS / 1000 + r["cpu_batch"]) / (LATENCY_MS / 1000 + r["cpu_one"])
    line = (f"Reward time (simulated local pool, every worker call a fixed {LATENCY_MS:.0f} ms; {label}; load "
            f"{r['load']:.1f} on {os.cpu_count()} cores): one workflow {r['one'] * 1000:.0f} ms wall "
            f"({r['cpu_one'] * 1000:.0f} ms CPU), a batch of 64 {r['batch'] * 1000:.0f} ms wall "
            f"({r['cpu_batch'] * 1000:.0f} ms CPU, {r['cpu_batch'] * 1000 / 64:.2f} ms a workflow): ratio "
            f"{ratio:.2f}x (goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")
    if show_first:
        line += (f"; the process's first batch, before these (imports, sympy's lazily loaded modules, the simulated "
                 f"pool's per-problem setup): {r['first'] * 1000:.0f} ms wall ({r['cpu_first'] * 1000:.0f} ms CPU)")
    if r["sandboxed"]:
        # The sandboxed programs' CPU is theirs: on an idle machine the batch takes at least the latency
        # plus the larger of this process's CPU (one interpreter lock) and all the CPU spread over the cores.
        cores = os.cpu_count() or 1
        floor = (LATENCY_MS / 1000 + max(r["cpu_batch"], (r["cpu_batch"] + r["cpu_sandbox"]) / cores)) / (
            LATENCY_MS / 1000 + r["cpu_one"])
        return line + (f"; {r['sandboxed']:.0f} sandboxed test runs in the batch, which used "
                       f"{r['cpu_sandbox'] * 1000:.0f} ms of CPU in their own processes; from all this CPU, on an "
                       f"idle {cores}-core machine at best: {floor:.2f}x ({'met' if floor <= 1.5 else 'NOT met'}).")
    return line + f"; from this CPU alone, on an idle machine: {idle:.2f}x ({'met' if idle <= 1.5 else 'NOT met'})."


SCENARIOS = (
    (64, False, 1, "each worker's concurrency limit raised to 64, so the reward's own concurrency is what is "
                   "measured; 64 different problems, no coding ones", False),
    (64, False, 8, "limits raised to 64; GRPO's shape: 8 problems x 8 rollouts, no coding ones", False),
    (64, False, 1, "limits raised to 64; 64 different problems, no coding ones; every answer new to the process "
                   "(sympy's and math-verify's own caches emptied too)", True),
    (64, False, 8, "limits raised to 64; GRPO's shape, no coding ones; every answer new to the process", True),
    (64, True, 1, "limits raised to 64; 64 different problems over all four domains, so a quarter are coding "
                  "problems whose tests run in the sandbox, as many at once as there are cores", False),
    (64, True, 8, "limits raised to 64; GRPO's shape (8 problems x 8 rollouts) over all four domains", False),
    (None, True, 8, "the pool's own limits (8 calls in flight per worker: 64 one-step workflows over 4 "
                    "workers need at least two waves); GRPO's shape over all four domains", False),
)


def matmul_rate(rows: int, hidden: int, vocab: int, threads: int, seconds: float = 2.0) -> float:
    """FLOP/s of this core at the model's two kinds of products (activations x hidden^2, and the
    head: activations x vocabulary), fp32, `threads` torch threads."""
    import torch

    torch.set_num_threads(threads)
    x = torch.randn(rows, hidden)
    square, head = torch.randn(hidden, hidden), torch.randn(hidden, vocab)
    flops, t0 = 0.0, time.process_time()
    while time.process_time() - t0 < seconds:
        torch.mm(x, square)
        torch.mm(x, head)
        flops += 2.0 * rows * hidden * (hidden + vocab)
    return flops / (time.process_time() - t0)


def step_arithmetic(model_dir: Path, cfg, train) -> dict[str, float]:  # noqa: ANN001
    """FLOPs of one GRPO step of `cfg`'s shape for the model at `model_dir`, counted by torch."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.dataset import PoolSampling, build_rows, row_messages

    torch.set_num_threads(cfg.torch_threads or torch.get_num_threads())
    model, tok = load_causal_lm(model_dir), load_tokenizer(model_dir)
    tok.padding_side = "left"
    pool = training_pool(cfg.pool_file, train)
    questions = cfg.per_device_train_batch_size // cfg.num_generations
    rows = build_rows(train[:questions], pool, PoolSampling(), seed=0)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    enc = tok.apply_chat_template(prompts, add_generation_prompt=True, return_tensors="pt", padding=True,
                                  return_dict=True)
    with FlopCounterMode(display=False) as generation, torch.no_grad():
        out = model.generate(**enc, do_sample=True, temperature=1.0, num_return_sequences=cfg.num_generations,
                             max_new_tokens=cfg.max_completion_length, pad_token_id=tok.pad_token_id)
    with FlopCounterMode(display=False) as train_pass:
        model(input_ids=out, labels=out).loss.backward()
    reference = 0.0
    if cfg.beta > 0:  # the KL term: TRL runs the reference model (the same shapes) forward once a step
        with FlopCounterMode(display=False) as ref_pass, torch.no_grad():
            model(input_ids=out)
        reference = float(ref_pass.get_total_flops())
    return {"generation_flops": float(generation.get_total_flops()),
            "step_flops": float(train_pass.get_total_flops()) + reference, "reference_flops": reference,
            "sequences": float(out.shape[0]), "tokens": float(out.shape[1]),
            "prompt_tokens": float(enc["input_ids"].shape[1]), "hidden": float(model.config.hidden_size),
            "vocab": float(model.config.vocab_size)}


def arithmetic_line(a: dict[str, float], rate: float, split: dict[str, float], threads: int) -> str:
    gen_s, step_s = a["generation_flops"] / rate, a["step_flops"] / rate
    return (f"The step's arithmetic ({int(a['sequences'])} sequences of {int(a['tokens'])} tokens, "
            f"{int(a['prompt_tokens'])} of them the prompt, counted by torch's FlopCounterMode): generation "
            f"{a['generation_flops'] / 1e9:.1f} GFLOP, forward + backward {a['step_flops'] / 1e9:.1f} GFLOP"
            f"{' (the KL reference forward ' + format(a['reference_flops'] / 1e9, '.1f') + ' of it)' if a.get('reference_flops') else ''}. This "
            f"core's fp32 matmul rate at the model's shapes, measured in this run with {threads} torch thread(s): "
            f"{rate / 1e9:.1f} GFLOP/s, so the arithmetic alone needs {gen_s:.2f} s (generation) and {step_s:.2f} s "
            f"(forward + backward). Measured CPU per step: generation {split['cpu_generation_s']:.2f} s "
            f"({split['cpu_generation_s'] / gen_s:.1f}x its arithmetic), backward and the rest "
            f"{split['cpu_backward_s']:.2f} s ({split['cpu_backward_s'] / step_s:.1f}x).")


def main() -> None:
    quiet_library_bars()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="Warm-started model dir (default: warm-start one here).")
    ap.add_argument("--steps", type=int, default=5, help="GRPO steps timed for the step's time split.")
    ap.add_argument("--write", type=Path, default=None, help="Write the figures into this markdown file's section.")
    ap.add_argument("--reward-only", action="store_true",
                    help="Only the reward-time scenarios (prints them; writes nothing).")
    ap.add_argument("--threads", type=int, default=None, help="torch threads for the GRPO steps (default: the profile's).")
    ap.add_argument("--step-only", action="store_true",
                    help="Only the GRPO step's time split and its arithmetic (prints them; writes nothing).")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        lines = []
        for i, (conc, code, group, label, cold) in enumerate(() if ns.step_only else SCENARIOS):
            r = reward_time(fixed_latency_pool_file(tmp_path, conc), code=code, group=group, cold=cold)
            lines.append(reward_line(r, label, show_first=i == 0))
            print(lines[-1], flush=True)
        if ns.reward_only:
            return
        cfg = local_profile(tmp_path / "run", max_steps=ns.steps, eval_every=0, early_stopping_patience=0,
                            save_steps=10_000, **({"torch_threads": ns.threads} if ns.threads else {}))
        train, _ = training_split(cfg)
        if ns.model is None:
            from conductor.training.warm import warm_started_tiny

            warm_started_tiny(cfg, train, on_log=drop)
        else:
            cfg.model_name_or_path = str(ns.model)
        t0 = time.perf_counter()
        result = train_grpo(cfg, train, on_log=drop)
        s = result.time_split
        lines.append(
            f"GRPO step of the local profile ({cfg.per_device_train_batch_size} completions, tiny model, "
            f"torch threads {cfg.torch_threads}), mean of {int(s['steps'])} steps, wall / CPU seconds: generation "
            f"{s['wall_generation_s']:.2f} / {s['cpu_generation_s']:.2f}, reward {s['wall_reward_s']:.2f} / "
            f"{s['cpu_reward_s']:.2f}, backward and the rest {s['wall_backward_s']:.2f} / {s['cpu_backward_s']:.2f}; "
            f"whole step {s['wall_step_s']:.2f} / {s['cpu_step_s']:.2f} ({time.perf_counter() - t0:.0f} s for the run). "
            f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall is inflated by "
            "other jobs; CPU seconds are this process's).")
        arithmetic = step_arithmetic(result.model_dir, cfg, train)
        threads = cfg.torch_threads or os.cpu_count() or 1
        rate = matmul_rate(int(arithmetic["sequences"] * arithmetic["tokens"]), int(arithmetic["hidden"]),
                           int(arithmetic["vocab"]), threads)
        lines.append(arithmetic_line(arithmetic, rate, s, threads))
        print(lines[-2])
    body = "\n\n".join(lines)
    print(lines[-1])
    if ns.write and not ns.step_only:
        write_section(ns.write, "training-speed", "GRPO step time and reward concurrency (benchmarks/training_speed.py, "
                      "simulated pool)", body)


if __name__ == "__main__":
    main()
