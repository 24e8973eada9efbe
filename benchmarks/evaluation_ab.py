"""Harness overhead of two source trees, interleaved: A, B, A, B on the same machine minutes apart.

Each run is one subprocess importing `conductor` from its tree (for a commit: `git archive
COMMIT | tar -x -C DIR`), timing the library path (`solve_many`) of one method over 200
SIMULATED problems (fixed 50 ms per call, 16 questions in flight, as benchmarks/evaluation.py)
`--reps` times after one untimed run; it prints the median wall ÷ ideal and CPU ms per call.
Single runs of benchmarks/evaluation.py vary by about ±0.1 at load 3–5; medians of interleaved
runs compare two trees under the same load.

    python benchmarks/evaluation_ab.py /tmp/main-tree . [--methods budget:sim-small moa] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import asyncio, os, statistics, sys, tempfile, time
tree, spec, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tree)
from pathlib import Path
import conductor
assert Path(conductor.__file__).resolve().is_relative_to(Path(tree).resolve()), conductor.__file__
from benchmarks.evaluation import fixed_pool, ideal_s
from conductor.data.synthetic import generate_bank
from conductor.evaluation.methods import method_from_spec
from conductor.executor import RunOptions
from conductor.solve import solve_many
from conductor.types import Task
from conductor.workers.registry import BuildContext
pool_file = fixed_pool(50, Path(tempfile.mkdtemp()))
bank = [p for p in generate_bank(400, seed=5) if p.domain != "code"][:200]
async def run():
    m = method_from_spec(spec, pool_file, problems=bank)
    async with m.open_pool(BuildContext(problems=bank)) as pool:
        t0, c0 = time.perf_counter(), time.process_time()
        traces = await solve_many([Task.of(p) for p in bank], pool, m.planner, RunOptions(config=m.execution))
        return time.perf_counter() - t0, time.process_time() - c0, traces
asyncio.run(run())  # untimed: the simulator's one-off answer checks
out = []
for _ in range(reps):
    wall, cpu, traces = asyncio.run(run())
    out.append((wall / ideal_s(traces, 0.05, 16), 1000 * cpu / sum(t.calls for t in traces)))
print(statistics.median(o[0] for o in out), min(o[0] for o in out), max(o[0] for o in out),
      statistics.median(o[1] for o in out), os.getloadavg()[0])
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree_a", type=Path)
    parser.add_argument("tree_b", type=Path)
    parser.add_argument("--methods", nargs="+", default=["budget:sim-small", "moa", "template:fanout"])
    parser.add_argument("--reps", type=int, default=3, help="timed runs per subprocess (median taken)")
    parser.add_argument("--rounds", type=int, default=2, help="A, B alternations per method")
    ns = parser.parse_args()
    print("| method | tree | round | wall ÷ ideal (median) | range | CPU ms / call | load |\n|---|---|---|---|---|---|---|")
    for spec in ns.methods:
        for r in range(ns.rounds):
            for tree in (ns.tree_a, ns.tree_b):
                done = subprocess.run([sys.executable, "-c", CHILD, str(tree.resolve()), spec, str(ns.reps)],
                                      capture_output=True, text=True, check=True, env=os.environ | {"PYTHONPATH": ""})
                med, lo, hi, cpu, load = (float(x) for x in done.stdout.split()[-5:])
                print(f"| {spec} | {tree} | {r + 1} | {med:.3f} | {lo:.3f}–{hi:.3f} | {cpu:.3f} | {load:.1f} |",
                      flush=True)


if __name__ == "__main__":
    main()
