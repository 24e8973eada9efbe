"""How a training run reaches an experiment tracker without the library importing one: a
tracker factory is discovered through the `conductor.trackers` entry point group (registry/
provides MLflow's), or passed in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol


class Tracker(Protocol):
    run_id: str

    def __enter__(self) -> Tracker: ...
    def __exit__(self, *exc: object) -> None: ...
    def log_step(self, row: Mapping[str, float]) -> None: ...
    def finish(self, model_dir: str | Path | None, *, history: Sequence[Mapping[str, float]] = (),
               eval_history: Sequence[Mapping[str, float]] = (), samples: Sequence[Mapping[str, Any]] = (),
               summary: Mapping[str, float | None] = {}) -> Any: ...


# Called as `factory(params, simulated=...)`: `simulated` labels the run and its plots.
TrackerFactory = Callable[..., Tracker]


def discover_tracker(name: str = "mlflow") -> TrackerFactory | None:
    for ep in entry_points(group="conductor.trackers"):
        if ep.name == name:
            return ep.load()
    return None
