"""What "simulated" means, and how it is shown: the one definition of both.

A worker is simulated when its provider is the simulated one; a pool is simulated when ANY
worker it offers is, since one simulated worker's answers make the pool's figures describe a
simulation, not models. Every pool value answers it through this rule (`PoolFile.simulated`,
`Pool.simulated`, `Method.simulated`, `TrainResult.simulated` from the pool a run loaded), and
every label, refusal and `runs.simulated` reads one of those values, never the pool's file name or
the profile's. It is asked of the workers offered: a Method offering a real sub-pool of a mixed
file is real.

A run on a simulated pool is reported with one banner, `SIMULATED_BANNER`, in every output (the
CLI's lines, the summary artifacts, plot titles, the evaluation table): `simulated_note` is its
one format. tests/test_simulated_once.py fails on a second rule or a second wording."""

from __future__ import annotations

from collections.abc import Iterable

from conductor.types import WorkerSpec

SIMULATED_PROVIDER = "simulated"
SIMULATED_BANNER = "SIMULATED pool: an environment, not a benchmark"


def is_simulated_worker(spec: WorkerSpec) -> bool:
    """Whether this worker is simulated: the one per-worker rule."""
    return spec.provider == SIMULATED_PROVIDER


def any_simulated(specs: Iterable[WorkerSpec]) -> bool:
    """THE rule for "is this pool simulated": simulated when any worker offered is."""
    return any(is_simulated_worker(w) for w in specs)


def simulated_note(simulated: bool) -> str:
    """The banner as it follows a title or a line: " (SIMULATED pool: ...)", or "" for a real pool."""
    return f" ({SIMULATED_BANNER})" if simulated else ""
