"""keep_freed_memory: a freed large block stays with the process for the next allocation, so a
training step stops faulting its pages in anew (conductor/training/memory.py). Each case runs in a
fresh interpreter: the setting is process-wide and cannot be undone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conductor.training.memory import keep_freed_memory

# Allocate, touch and free 64 MiB ten times; print the minor page faults that cost.
PROGRAM = textwrap.dedent("""
    import resource, sys
    from conductor.training.config import ConductorTrainingConfig, apply_process_settings
    apply_process_settings(ConductorTrainingConfig(output_dir="unused", use_cpu=True, keep_freed_memory=sys.argv[1] == "keep"))
    b = bytearray(64 * 2**20); del b
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        b = bytearray(64 * 2**20); del b
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def faults(mode: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], env={**clean, **env}, check=True,
                         capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_blocks_are_reused_instead_of_faulted_in_again() -> None:
    # 10 x 64 MiB of 4 KiB pages is ~164,000 faults when each block is mapped anew
    assert faults("default") > 100_000
    assert faults("keep") < 1_000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_users_own_malloc_setting_stands() -> None:
    # set by the user (here: glibc's own default threshold), it is not overridden
    assert faults("keep", MALLOC_MMAP_THRESHOLD_="131072") > 100_000


def test_it_says_whether_it_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert keep_freed_memory() is False
