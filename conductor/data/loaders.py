"""Load a source into Problems: from the hub (pinned id/config/split/revision) or a local file
in the source's own schema (JSONL or parquet), through `datasets` either way."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from conductor.data.schema import Problem
from conductor.data.sources import ALL_SOURCES, RowError, SourceSpec

SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
OnError = Literal["skip", "raise"]


class LoadReport(BaseModel):
    source: str
    origin: str  # the file or hub location read
    revision: str | None = None
    input_sha256: str | None = None
    rows: int = 0
    problems: list[Problem] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


def sample_path(name: str) -> Path:
    return SAMPLES_DIR / f"{name}.jsonl"


# `datasets` drives tqdm bars that break when created from several threads at once (the
# curation flow loads its sources in parallel task threads: "'tqdm' object has no attribute
# '_lock'"). Loads take turns; each one still downloads its files in parallel inside `datasets`.
_LOAD_LOCK = threading.Lock()


def _local_rows(path: Path) -> Iterable[dict[str, Any]]:
    import datasets

    kind = "parquet" if path.suffix == ".parquet" else "json"
    with _LOAD_LOCK:
        return datasets.load_dataset(kind, data_files=str(path), split="train")


def _hub_rows(spec: SourceSpec) -> Iterable[dict[str, Any]]:
    import datasets

    with _LOAD_LOCK:
        if spec.data_file:  # LiveCodeBench: its loading script does not run on datasets>=4; read the file
            url = f"hf://datasets/{spec.hf_id}@{spec.revision}/{spec.data_file}"
            return datasets.load_dataset("json", data_files=url, split="train")
        return datasets.load_dataset(spec.hf_id, spec.config, split=spec.split, revision=spec.revision)


def read_solutions(path: Path) -> dict[str, str]:
    """`<source>.solutions.jsonl`: {"id": native id, "solution": program} per line."""
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            item = json.loads(line)
            if not isinstance(item.get("id"), str) or not isinstance(item.get("solution"), str):
                raise ValueError(f"{path} line {n}: want string 'id' and 'solution'")
            out[item["id"]] = item["solution"]
    return out


def to_problems(spec: SourceSpec, rows: Iterable[dict[str, Any]], on_error: OnError = "skip",
                solutions: dict[str, str] | None = None) -> Iterator[Problem | RowError]:
    """Map rows; a row that does not fit becomes a RowError (yielded when skipping, raised otherwise)."""
    for i, row in enumerate(rows):
        try:
            problem = spec.to_problem(dict(row), spec)
        except (KeyError, ValueError, TypeError, AttributeError, json.JSONDecodeError) as exc:  # a field of the wrong type
            if isinstance(exc, RowError):
                err = exc
            else:
                err = RowError(spec.name, i, f"{type(exc).__name__}: {exc}")
            if on_error == "raise":
                raise err from exc
            yield err
            continue
        native = str(problem.meta.get("native_id", ""))
        if solutions and native in solutions:
            problem = problem.model_copy(update={"meta": {**problem.meta, "reference_solution": solutions[native]}})
        yield problem


def load_source(name: str | SourceSpec, path: str | Path | None = None, *, local: bool = True,
                on_error: OnError = "skip") -> LoadReport:
    """Load one source. `path` wins; else `local=True` reads the shipped sample file; else the hub."""
    spec = ALL_SOURCES[name] if isinstance(name, str) else name
    if spec.generated:
        return _load_generated(spec, path, on_error)
    if path is None and local:
        path = sample_path(spec.name)
    if path is not None:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{spec.name}: no such file {path}")
        rows, origin, revision = _local_rows(path), str(path), None
        solutions = read_solutions(path.with_name(path.name.split(".")[0] + ".solutions.jsonl"))
    else:
        rows, revision, solutions = _hub_rows(spec), spec.revision, {}
        origin = f"hf://{spec.hf_id}/{spec.config or ''}:{spec.split}@{spec.revision}"
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if path is not None else None
    report = LoadReport(source=spec.name, origin=origin, revision=revision, input_sha256=digest)
    for item in to_problems(spec, rows, on_error, solutions):
        report.rows += 1
        if isinstance(item, RowError):
            report.errors.append(str(item))
        else:
            report.problems.append(item)
    return report


def _load_generated(spec: SourceSpec, path: str | Path | None, on_error: OnError) -> LoadReport:
    """A bank source: its file (our own schema, read as plain JSON so `meta` keeps its keys) or,
    without one, the default generated bank. Only the train split is kept: held-out problems are
    for measuring what training learned."""
    from conductor.data.synthetic import DEFAULT_N, DEFAULT_SEED, generate_domain, split_of

    if path is not None:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{spec.name}: no such file {path}")
        data = path.read_bytes()
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
        # a bank file holds every domain: this source reads its own
        rows = [r for r in rows if r.get("source") == spec.name]
        items: list[Problem | RowError] = list(to_problems(spec, rows, on_error))
        report = LoadReport(source=spec.name, origin=str(path), input_sha256=hashlib.sha256(data).hexdigest())
    else:
        count = DEFAULT_N // 4
        items = list(generate_domain(spec.domain, count, DEFAULT_SEED))
        report = LoadReport(source=spec.name, origin=f"generated (n={count}, seed={DEFAULT_SEED})")
    for item in items:
        report.rows += 1
        if isinstance(item, RowError):
            report.errors.append(str(item))
        elif split_of(item.id) == "train":
            report.problems.append(item)
    return report
