"""Curation: load every source, drop bad rows, exact and near duplicates, decontaminate the
training set against every evaluation set, take a stratified seeded sample, write the result
with a manifest. The steps are separate functions so a Prefect flow can cache them per source."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from conductor.data.dedupe import content_hash, near_duplicates, word_ngrams
from conductor.data.loaders import LoadReport, OnError, load_source
from conductor.data.schema import Problem
from conductor.data.sources import ALL_SOURCES, BANK_SOURCES, EVAL_SOURCES, SOURCES, TRAIN_SOURCES
from conductor.profiles import Profile, get_profile

Progress = Callable[[str], None]


class CurationConfig(BaseModel):
    """What curation builds; each description is the field's documentation and CLI help."""

    profile: Profile = Field(
        default="local", description="The profile whose data sets are curated: the sample files shipped in the repo"
        " (local, small-real) or the pinned hub data sets (production).")
    total: int = Field(default=960, gt=0, description="Training problems, split evenly over the train sources.")
    seed: int = Field(default=0, description="Seed of the sampling.")
    near_dup_threshold: float = Field(
        default=0.8, gt=0, le=1, description="MinHash Jaccard similarity above which two questions are near-duplicates.")
    contamination_ngram: int = Field(
        default=13, gt=0, description="Word n-gram length: a train question sharing one with an eval question is dropped.")
    on_error: OnError = Field(default="skip", description="A malformed source row: skip it (recorded) or raise.")
    paths: dict[str, str] = Field(
        default_factory=dict, description="Source name -> local file that replaces the profile's data for it.")
    bank: bool = Field(
        default=False,
        description="Also add the generated bank's whole train split (sources synthetic_*); `total` is the quota of the real sources only.")

    @property
    def source_names(self) -> list[str]:
        return list(SOURCES) + (list(BANK_SOURCES) if self.bank else [])

    @property
    def from_samples(self) -> bool:
        """Whether the profile curates the sample files (else the pinned hub data sets)."""
        return get_profile(self.profile).curation == "samples"

    @property
    def per_source(self) -> int:
        return self.total // len(TRAIN_SOURCES)


class Dropped(BaseModel):
    source: str
    id: str | None = None
    reason: Literal["bad-row", "duplicate", "near-duplicate", "contaminated", "not-sampled"]
    detail: str = ""


class SourceEntry(BaseModel):
    name: str
    role: Literal["train", "eval"]
    origin: str
    revision: str | None
    rows: int
    loaded: int
    bad_rows: int = 0
    duplicates: int = 0
    near_duplicates: int = 0
    contaminated: int = 0
    kept: int = 0  # after filtering (train) / as loaded (eval)
    selected: int = 0  # written out
    input_sha256: str | None = None  # of the local file read (None: the hub, see `revision`)
    sha256: str = ""  # of what was written for this source


class Manifest(BaseModel):
    created_at: str
    config: CurationConfig
    sources: dict[str, SourceEntry]
    dropped: list[Dropped]
    files: dict[str, str]  # relative path -> sha256

    def table(self) -> list[dict[str, object]]:
        """One row per source, for a table artifact or a CLI table."""
        return [s.model_dump(exclude={"origin"}) for s in self.sources.values()]


class Curated(BaseModel):
    train: list[Problem]
    eval: dict[str, list[Problem]]
    sources: dict[str, SourceEntry]
    dropped: list[Dropped]


def load_one(name: str, config: CurationConfig) -> LoadReport:
    path = config.paths.get(name)
    return load_source(name, path, local=config.from_samples, on_error=config.on_error)


def _entry(report: LoadReport) -> SourceEntry:
    spec = ALL_SOURCES[report.source]
    return SourceEntry(name=spec.name, role=spec.role, origin=report.origin, revision=report.revision,
                       input_sha256=report.input_sha256,
                       rows=report.rows, loaded=len(report.problems), bad_rows=len(report.errors))


def curate(reports: dict[str, LoadReport], config: CurationConfig, progress: Progress | None = None) -> Curated:
    step = progress or (lambda _msg: None)
    entries = {name: _entry(r) for name, r in reports.items()}
    dropped = [Dropped(source=name, reason="bad-row", detail=e) for name, r in reports.items() for e in r.errors]
    train_specs = [s for s in [*TRAIN_SOURCES, *BANK_SOURCES.values()] if s.name in reports]
    evals = {s.name: reports[s.name].problems for s in EVAL_SOURCES if s.name in reports}

    step("exact duplicates")
    pool: list[Problem] = []
    seen: dict[str, str] = {}
    for spec in train_specs:
        for p in reports[spec.name].problems:
            key = content_hash(p.question)
            if key in seen:
                entries[spec.name].duplicates += 1
                dropped.append(Dropped(source=spec.name, id=p.id, reason="duplicate",
                                       detail=f"same question text as {seen[key]}"))
                continue
            seen[key] = p.id
            pool.append(p)

    step("near duplicates")
    dup_of = near_duplicates([p.question for p in pool], config.near_dup_threshold, seed=config.seed)
    for i, j in dup_of.items():
        entries[pool[i].source].near_duplicates += 1
        dropped.append(Dropped(source=pool[i].source, id=pool[i].id, reason="near-duplicate",
                               detail=f"like {pool[j].id}"))
    pool = [p for i, p in enumerate(pool) if i not in dup_of]

    step("decontamination")
    owner: dict[int, str] = {}
    for problems in evals.values():
        for p in problems:
            for gram in word_ngrams(p.question, config.contamination_ngram):
                owner.setdefault(gram, p.id)
    clean: list[Problem] = []
    for p in pool:
        hit = next((owner[g] for g in word_ngrams(p.question, config.contamination_ngram) if g in owner), None)
        if hit is None:
            clean.append(p)
            continue
        entries[p.source].contaminated += 1
        dropped.append(Dropped(source=p.source, id=p.id, reason="contaminated",
                               detail=f"{config.contamination_ngram}-gram overlap with {hit}"))

    step("stratified sample")
    rng = random.Random(config.seed)
    train: list[Problem] = []
    for spec in train_specs:
        mine = sorted((p for p in clean if p.source == spec.name), key=lambda p: p.id)
        entries[spec.name].kept = len(mine)
        take = rng.sample(mine, len(mine) if spec.generated else min(config.per_source, len(mine)))
        entries[spec.name].selected = len(take)
        train.extend(take)
        if len(mine) > len(take):
            chosen = {p.id for p in take}
            dropped += [Dropped(source=spec.name, id=p.id, reason="not-sampled") for p in mine if p.id not in chosen]
    train.sort(key=lambda p: (p.source, p.id))
    for name, problems in evals.items():
        entries[name].kept = entries[name].selected = len(problems)
    return Curated(train=train, eval=evals, sources=entries, dropped=dropped)


def _write_jsonl(path: Path, problems: list[Problem]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(p.model_dump_json() + "\n" for p in problems).encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_outputs(curated: Curated, config: CurationConfig, out: Path) -> Manifest:
    out = Path(out)
    files = {"train.jsonl": _write_jsonl(out / "train.jsonl", curated.train)}
    sources = {k: v.model_copy() for k, v in curated.sources.items()}
    for name, problems in curated.eval.items():
        files[f"eval/{name}.jsonl"] = sources[name].sha256 = _write_jsonl(out / "eval" / f"{name}.jsonl", problems)
    for name, entry in sources.items():
        if entry.role == "train":
            mine = [p for p in curated.train if p.source == name]
            entry.sha256 = hashlib.sha256("".join(p.model_dump_json() + "\n" for p in mine).encode()).hexdigest()
    manifest = Manifest(created_at=datetime.now(UTC).isoformat(timespec="seconds"), config=config,
                        sources=sources, dropped=curated.dropped, files=files)
    (out / "manifest.json").write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


def run_curation(config: CurationConfig, out: Path, progress: Progress | None = None) -> Manifest:
    """Everything in one process (the CLI); the Prefect flow runs the same steps as tasks."""
    step = progress or (lambda _msg: None)
    reports = {}
    for name in config.source_names:
        step(f"load {name}")
        reports[name] = load_one(name, config)
    curated = curate(reports, config, step)
    step("write")
    return write_outputs(curated, config, out)


def read_manifest(path: Path) -> Manifest:
    return Manifest.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
