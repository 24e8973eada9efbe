"""What keeping freed memory (`keep_freed_memory`, conductor/training/memory.py) saves a training
run: the same short `conductor train --profile local` (a smaller warm start and a few GRPO steps,
SIMULATED pool), run in turn with it off and on, each in its own process from a fresh run
directory; printed: each run's user and system CPU, minor page faults, peak memory, and the
ratios on / off. Both runs do the same arithmetic: the switch changes where freed blocks go,
not what is computed.

    python benchmarks/training_memory.py [--sft-problems 200] [--steps 20] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.quiet import quiet_environment  # noqa: E402

quiet_environment()

from benchmarks.report import write_section  # noqa: E402

CONDUCTOR = str(Path(sys.executable).with_name("conductor"))


def one_run(keep: bool, sft_problems: int, steps: int) -> dict[str, float]:
    """A training run in a child process; its own resource use (RUSAGE_CHILDREN before and after)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        cmd = [CONDUCTOR, "train", "--profile", "local", "--out", f"{home}/run", "--max-steps", str(steps),
               "--no-track", "--no-warehouse", "--set", f"sft_problems={sft_problems}",
               "--set", f"keep_freed_memory={str(keep).lower()}"]
        subprocess.run(cmd, env={**env, "CONDUCTOR_HOME": home}, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"user": after.ru_utime - before.ru_utime, "system": after.ru_stime - before.ru_stime,
            "faults": after.ru_minflt - before.ru_minflt, "peak_mib": after.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sft-problems", type=int, default=200, help="warm-start problems (x the profile's 4 draws)")
    ap.add_argument("--steps", type=int, default=20, help="GRPO steps")
    ap.add_argument("--write", type=Path, default=None, help="write the table into this markdown file's section")
    ns = ap.parse_args()
    off = one_run(False, ns.sft_problems, ns.steps)
    on = one_run(True, ns.sft_problems, ns.steps)
    lines = ["| keep_freed_memory | user CPU-s | system CPU-s | CPU-s in all | minor page faults | peak RSS (MiB, the larger child so far) |",
             "|---|---|---|---|---|---|"]
    for name, r in (("false (glibc's defaults)", off), ("true (the default)", on)):
        lines.append(f"| {name} | {r['user']:.0f} | {r['system']:.0f} | {r['user'] + r['system']:.0f} | "
                     f"{r['faults']:,.0f} | {r['peak_mib']:.0f} |")
    total = (on["user"] + on["system"]) / (off["user"] + off["system"])
    body = "\n".join(lines) + (
        f"\n\nOn / off: CPU {total:.2f}x, system CPU {on['system'] / off['system']:.2f}x, page faults "
        f"{on['faults'] / off['faults']:.2f}x. `conductor train --profile local --max-steps {ns.steps} --set "
        f"sft_problems={ns.sft_problems}` (SIMULATED pool), each run in its own process and fresh home, one after "
        f"the other. `python benchmarks/training_memory.py`.")
    print(body, flush=True)
    if ns.write:
        write_section(ns.write, "training-memory", "Training CPU: keeping freed memory (benchmarks/training_memory.py)",
                      body)


if __name__ == "__main__":
    main()
