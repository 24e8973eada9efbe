"""The shipped local (simulated) pool as tests use it: its file, a copy with every worker's
latency fixed, a served app over it, and one question to ask."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
POOL = REPO / "deployments" / "pools" / "local.yaml"
ASK = [{"role": "user", "content": "What is 17 * 3?"}]


def local_pool(latency_ms: float, sigma: float = 0.0) -> dict[str, Any]:
    """The local pool's YAML as a dict, every worker answering after `latency_ms` (lognormal
    `sigma`; 0: exactly), to change further or write with `yaml.safe_dump`."""
    pool = yaml.safe_load(POOL.read_text(encoding="utf-8"))
    for worker in pool["workers"]:
        worker.setdefault("options", {})["latency_ms"] = {"median": latency_ms, "sigma": sigma}
    return pool


@contextmanager
def served_local_pool(home: Path, keys: Sequence[str], **config: Any) -> Iterator[str]:
    """`conductor serve`'s app on 127.0.0.1 over the local pool, staging and warehouse under
    `home`, no registry models; yields its URL. `config`: more ServeConfig fields."""
    from server.build import build_app
    from server.config import ServeConfig
    from server.guards import KeyRing
    from server.running import running_server

    settings = ServeConfig(pool_file=POOL, staging_dir=home / "staging", warehouse_path=home / "wh.duckdb",
                           flush_interval_s=0.1, registry_uri=f"sqlite:///{home / 'none.db'}", **config)
    with running_server(build_app(settings, KeyRing(list(keys)))) as url:
        yield url
