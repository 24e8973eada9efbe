"""Executor scheduling overhead, with simulated workers of fixed latency.

Prints, in one run:
  - wall time / critical-path latency for a chain, a fan-out (3 attempts + aggregator) and a diamond;
  - DAG-parallel / one-by-one speedup against the ideal (sum of step latencies / critical path);
  - wall time of N workflows run together / one workflow.

    python benchmarks/executor.py [--latency-ms 100] [--together 200] [--repeats 3] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import section_parser, write_if_asked  # noqa: E402
from conductor.config import ExecutionConfig  # noqa: E402
from conductor.data.schema import Problem  # noqa: E402
from conductor.executor import RunOptions, execute  # noqa: E402
from conductor.types import Task  # noqa: E402
from conductor.types import WorkerSpec  # noqa: E402
from conductor.workers.pool import Pool  # noqa: E402
from conductor.workers.registry import BuildContext  # noqa: E402
from conductor.workflow import ALL, Workflow  # noqa: E402

SHAPES: dict[str, Workflow] = {
    "chain (3)": Workflow(model_id=(0, 1, 2), subtasks=("a", "b", "c"), access_list=((), (0,), (1,))),
    "fan-out (3 + aggregator)": Workflow(
        model_id=(0, 1, 2, 0), subtasks=("a", "b", "c", "merge"), access_list=((), (), (), ALL)
    ),
    "diamond (1, 2, 1)": Workflow(
        model_id=(0, 1, 2, 0), subtasks=("plan", "left", "right", "join"), access_list=((), (0,), (0,), (1, 2))
    ),
}


def make_pool(latency_ms: float, problems: list[Problem]) -> Pool:
    opts = {"latency_ms": {"median": latency_ms, "sigma": 0}, "output_tokens": {"median": 50}, "skills": {"math": 1.0}}
    specs = [WorkerSpec(id=f"w{i}", provider="simulated", concurrency=10_000, options=opts) for i in range(3)]
    return Pool.from_specs(specs, BuildContext(problems=problems))


async def timed(workflow: Workflow, problem: Problem, pool: Pool, cfg: ExecutionConfig) -> float:
    t = time.perf_counter()
    trace = await execute(workflow, Task.of(problem), pool, RunOptions(config=cfg))
    assert all(s.status == "ok" for s in trace.steps), trace.stop_reason
    return time.perf_counter() - t


def best(values: list[float]) -> float:
    return min(values)


async def main(args: argparse.Namespace) -> str:
    problems = [Problem(id=f"p{i}", source="bench", domain="math", question=f"q{i}", answer="1") for i in range(args.together)]
    pool = make_pool(args.latency_ms, problems)
    lat = args.latency_ms / 1000
    parallel, serial = ExecutionConfig(), ExecutionConfig(parallel=False)
    rows = ["| workflow | steps | critical path | wall (DAG) | wall ÷ critical path | one-by-one ÷ DAG | ideal | speedup ÷ ideal |",
            "|---|---|---|---|---|---|---|---|"]
    print(f"fixed worker latency {args.latency_ms:g} ms, best of {args.repeats}")
    for name, wf in SHAPES.items():
        crit = wf.depth() * lat
        dag = best([await timed(wf, problems[0], pool, parallel) for _ in range(args.repeats)])
        seq = best([await timed(wf, problems[0], pool, serial) for _ in range(args.repeats)])
        ideal = len(wf) / wf.depth()
        speedup = seq / dag
        rows.append(
            f"| {name} | {len(wf)} | {crit * 1000:.0f} ms | {dag * 1000:.1f} ms | {dag / crit:.3f} | "
            f"{speedup:.2f}× | {ideal:.2f}× | {speedup / ideal:.3f} |"
        )
    fan = SHAPES["fan-out (3 + aggregator)"]
    one = best([await timed(fan, problems[0], pool, parallel) for _ in range(args.repeats)])
    many_runs = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        await asyncio.gather(*(execute(fan, Task.of(p), pool, RunOptions(config=parallel)) for p in problems))
        many_runs.append(time.perf_counter() - t)
    many = best(many_runs)
    together = (
        f"\n{args.together} fan-out workflows run together: {many * 1000:.1f} ms vs one alone {one * 1000:.1f} ms "
        f"→ {many / one:.3f}× the time of one ({args.together * len(fan)} calls, "
        f"{args.together * len(fan) / many:,.0f} calls/s)"
    )
    table = "\n".join(rows) + "\n" + together
    print(table)
    return (
        f"Simulated workers with a fixed {args.latency_ms:g} ms latency (`python benchmarks/executor.py`), "
        f"best of {args.repeats}, on {platform.machine()} {platform.system()} with Python "
        f"{platform.python_version()} ({_cores()} cores). Goal: wall ≤ 1.05 × critical path; "
        f"fan-out speedup ≥ 0.95 × ideal.\n\n{table}\n"
    )


def _cores() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    parser = section_parser(__doc__, "executor")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--together", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    ns = parser.parse_args()
    write_if_asked(ns.write, "executor", "Executor scheduling", asyncio.run(main(ns)))
