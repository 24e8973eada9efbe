"""Curation as Prefect tasks: thin wrappers over `conductor.data.curate`.

Loading a source and curating are cached on their inputs and on the task's code
(INPUTS + TASK_SOURCE), with results and cache keys persisted under CONDUCTOR_HOME, so a rerun
with the same inputs (in any process) loads nothing and recomputes nothing. The input file's
sha256 is an input of the load task: editing a sample file invalidates its cache entry. A bank
source (`synthetic_*`, generated rather than read) is fingerprinted by what generates it instead:
the number of problems, the seed and the generator's code."""

from __future__ import annotations

import hashlib
from pathlib import Path

from prefect import task
from prefect.cache_policies import INPUTS, TASK_SOURCE

from conductor.config import load_settings
from conductor.data.curate import Curated, CurationConfig, Manifest, curate, load_one, write_outputs
from conductor.data.loaders import LoadReport, sample_path
from conductor.data.sources import ALL_SOURCES, SOURCES

CACHED = INPUTS + TASK_SOURCE


def cache_dirs(home: Path | None = None) -> tuple[Path, Path]:
    """(results, cache keys) under CONDUCTOR_HOME."""
    home = home or load_settings().ensure_home()
    return home / "prefect" / "results", home / "prefect" / "cache-keys"


def generator_version() -> str:
    """The bank generator's version: a hash of its code (conductor/data/synthetic/*.py). Derived,
    not a constant someone must remember to bump, so a changed generator never reuses a cached bank."""
    import conductor.data.synthetic as synthetic

    digest = hashlib.sha256()
    for file in sorted(Path(synthetic.__file__).parent.glob("*.py")):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def input_fingerprint(name: str, config: CurationConfig) -> str:
    """What the load of `name` depends on beyond its parameters: the file's bytes (a given or
    shipped file), the pinned hub revision (production), or for a generated bank source without a
    file its generator's parameters and version."""
    if name in config.paths:
        return hashlib.sha256(Path(config.paths[name]).read_bytes()).hexdigest()
    if ALL_SOURCES[name].generated:
        from conductor.data.synthetic import DEFAULT_N, DEFAULT_SEED

        # the loader generates DEFAULT_N // 4 problems of its domain with DEFAULT_SEED
        return f"generated:n={DEFAULT_N // 4},seed={DEFAULT_SEED},generator={generator_version()}"
    if config.profile == "local":
        return hashlib.sha256(Path(sample_path(name)).read_bytes()).hexdigest()
    return f"hub@{SOURCES[name].revision}"


@task(name="load-source", cache_policy=CACHED, persist_result=True, task_run_name="load-{name}")
def load_source_task(name: str, config: CurationConfig, fingerprint: str) -> LoadReport:
    return load_one(name, config)


@task(name="curate", cache_policy=CACHED, persist_result=True)
def curate_task(reports: dict[str, LoadReport], config: CurationConfig) -> Curated:
    return curate(reports, config)


@task(name="write-curated", persist_result=False)
def write_task(curated: Curated, config: CurationConfig, out: str) -> Manifest:
    return write_outputs(curated, config, Path(out))
