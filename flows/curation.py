"""The curation flow: one cached load task per source, a cached curation task, the files written,
the problems and data sets recorded in the warehouse (`datasets`, `dataset_problems`), and the
manifest published as a Prefect table artifact."""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import create_table_artifact

from conductor.data.curate import CurationConfig, Manifest
from tasks.curate import (CACHED, cache_dirs, curate_task, input_fingerprint, load_source_task, record_task,
                          write_task)


@flow(name="curation", log_prints=True)
def curation_flow(out: str, config: CurationConfig | None = None, db_path: str | None = None) -> Manifest:
    """Curate into `out` as `config` says (default: `CurationConfig()`, whose fields and defaults
    are the one statement of what a curation takes); the generated bank's sources join when
    `config.bank`. The sets are recorded in the warehouse at `db_path` (default: the profile's)."""
    config = config or CurationConfig()
    results, keys = cache_dirs()
    policy = CACHED.configure(key_storage=keys)
    load = load_source_task.with_options(cache_policy=policy, result_storage=results)
    futures = {name: load.submit(name, config, input_fingerprint(name, config)) for name in config.source_names}
    reports = {name: f.result() for name, f in futures.items()}
    curated = curate_task.with_options(cache_policy=policy, result_storage=results)(reports, config)
    manifest = write_task(curated, config, out)
    record_task(curated, manifest, out, db_path)
    create_table_artifact(
        key="curation-manifest",
        table=manifest.table(),
        description=f"Curation ({config.profile}) -> {out}: "
        f"{sum(s.selected for s in manifest.sources.values() if s.role == 'train')} training problems, "
        f"{len(manifest.dropped)} rows dropped",
    )
    return manifest


if __name__ == "__main__":
    import sys

    curation_flow(out=sys.argv[1] if len(sys.argv) > 1 else "curated")
