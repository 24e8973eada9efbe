"""Curation as Prefect tasks: thin wrappers over `conductor.data.curate`.

Loading a source and curating are cached on their inputs and on the task's code
(INPUTS + TASK_SOURCE), with results and cache keys persisted under CONDUCTOR_HOME, so a rerun
with the same inputs (in any process) loads nothing and recomputes nothing. The input file's
sha256 is an input of the load task: editing a sample file invalidates its cache entry. A bank
source (`synthetic_*`, generated rather than read) is fingerprinted by what generates it instead:
the number of problems, the seed and the generator's code."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime
from pathlib import Path

from prefect import task
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE

from conductor.config import load_settings
from conductor.data.curate import Curated, CurationConfig, Manifest, curate, load_one, write_outputs
from conductor.data.loaders import LoadReport, sample_path
from conductor.data.sources import ALL_SOURCES, SOURCES
from tasks.traces import warehouse_file
from warehouse.records import DatasetManifest
from warehouse.store import TraceStore

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
    if config.from_samples:
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


def curated_datasets(curated: Curated, manifest: Manifest, out: str) -> list[DatasetManifest]:
    """The training set and each evaluation set as data set manifests, named after the file each
    was written to (`curated/<profile>/train.jsonl`, `.../eval/<source>.jsonl`)."""
    config, sources = manifest.config, manifest.sources
    created = datetime.fromisoformat(manifest.created_at)
    base = f"curated/{config.profile}"
    train_sources = {k: v.model_dump(mode="json") for k, v in sources.items() if v.role == "train"}
    sets = [DatasetManifest.named(
        f"{base}/train", [p.id for p in curated.train], source="mixed", split="train", created_at=created,
        path=str(Path(out) / "train.jsonl"), revision=manifest.files["train.jsonl"],
        manifest={"config": config.model_dump(mode="json"), "sources": train_sources,
                  "dropped": dict(Counter(d.reason for d in manifest.dropped))})]
    for name, problems in sorted(curated.eval.items()):
        entry = sources[name]
        sets.append(DatasetManifest.named(
            f"{base}/eval/{name}", [p.id for p in problems], source=name, split="eval", created_at=created,
            path=str(Path(out) / "eval" / f"{name}.jsonl"), revision=entry.revision or entry.input_sha256,
            manifest={"config": config.model_dump(mode="json"), "source": entry.model_dump(mode="json")}))
    return sets


@task(name="record-curated", retries=3, retry_delay_seconds=[1, 5, 20], cache_policy=NO_CACHE)
def record_task(curated: Curated, manifest: Manifest, out: str, db_path: str | None = None) -> list[str]:
    """The curated problems and their data sets (`problems`, `datasets`, `dataset_problems`): upserts,
    so a rerun of the same curation rewrites the same rows. Returns the data set ids."""
    sets = curated_datasets(curated, manifest, out)
    with TraceStore(warehouse_file(db_path)) as store:
        store.write_problems([*curated.train, *(p for ps in curated.eval.values() for p in ps)])
        for dataset in sets:
            store.write_dataset(dataset)
    return [d.dataset_id for d in sets]
