"""The registry: one SourceSpec per source, with the function that maps one row of the
source's own schema to a Problem. Revisions live in ONE table (`REVISIONS`)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from conductor.data.lcb import decode_private_tests, to_test_cases
from conductor.answers import last_boxed
from conductor.data.schema import DOMAINS, Domain, Problem

Role = Literal["train", "eval"]
RowFn = Callable[[dict[str, Any], "SourceSpec"], Problem]

# Hub revisions to load. We could not look up commit hashes from this machine (no hub access),
# so every source is pinned to `main` here, in this one table: replace with commit hashes
# (`huggingface_hub.HfApi().dataset_info(id).sha`) before a production run you want reproducible.
REVISIONS: dict[str, str] = {
    "math": "main",
    "math500": "main",
    "mmlu": "main",
    "mmlu_test": "main",
    "rlpr": "main",
    "lcb_v1": "main",
    "lcb_v6": "main",
    "gpqa_diamond": "main",
    "aime25": "main",
    "bigcodebench": "main",
}


class RowError(ValueError):
    """A row that does not fit its source's schema; names the source and the row."""

    def __init__(self, source: str, row: int | str, why: str) -> None:
        super().__init__(f"{source} row {row}: {why}")
        self.source, self.row, self.why = source, row, why


class SourceSpec(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    hf_id: str
    config: str | None = None
    split: str
    domain: Domain
    role: Role
    to_problem: RowFn
    data_file: str | None = None  # read this file of the hub repo instead of its loading script
    # Generated here (conductor.data.synthetic), not read from the hub: rows are Problems in our
    # own schema, and without a file the loader generates the default bank. Its train split only.
    generated: bool = False

    @property
    def revision(self) -> str:
        return REVISIONS[self.name]


def _text_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def _need(row: dict[str, Any], *keys: str) -> None:
    missing = [k for k in keys if row.get(k) in (None, "")]
    if missing:
        raise KeyError(f"missing {', '.join(missing)}")


def math_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "problem", "solution")
    answer = row.get("answer") or last_boxed(row["solution"])
    if not answer:
        raise ValueError("no \\boxed{} answer in solution")
    native = row.get("unique_id") or _text_id(row["problem"])
    return Problem(id=Problem.make_id(spec.name, native), source=spec.name, domain="math",
                   question=row["problem"], answer=str(answer),
                   meta={"level": row.get("level"), "subject": row.get("type") or row.get("subject"),
                         "native_id": native})


def mmlu_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "question", "choices")
    choices, answer = list(row["choices"]), row.get("answer")
    if len(choices) != 4 or not isinstance(answer, int) or not 0 <= answer < 4:
        raise ValueError(f"want 4 choices and an answer 0-3, got {len(choices)} choices, answer {answer!r}")
    native = f"{row.get('subject', '')}:{_text_id(row['question'], *choices)}"
    return Problem(id=Problem.make_id(spec.name, native), source=spec.name, domain="choice",
                   question=row["question"], choices=[str(c) for c in choices], answer="ABCD"[answer],
                   meta={"subject": row.get("subject"), "native_id": native})


def rlpr_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "prompt", "reward_model")
    users = [m["content"] for m in row["prompt"] if m.get("role") == "user"]
    truth = (row["reward_model"] or {}).get("ground_truth")
    if not users or truth in (None, ""):
        raise ValueError("no user message or no reward_model.ground_truth")
    extra = row.get("extra_info") or {}
    native = str(extra.get("index")) if extra.get("index") is not None else _text_id(users[-1])
    return Problem(id=Problem.make_id(spec.name, native), source=spec.name, domain="freeform",
                   question=users[-1], answer=str(truth),
                   meta={"data_source": row.get("data_source"), "ability": row.get("ability"), "native_id": native})


def lcb_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "question_id", "question_content", "public_test_cases")
    tests = json.loads(row["public_test_cases"]) + decode_private_tests(row.get("private_test_cases") or "")
    if not tests:
        raise ValueError("no tests")
    metadata = json.loads(row.get("metadata") or "{}")
    return Problem(id=Problem.make_id(spec.name, row["question_id"]), source=spec.name, domain="code",
                   question=row["question_content"], tests=to_test_cases(tests),
                   meta={"func_name": metadata.get("func_name"), "starter_code": row.get("starter_code", ""),
                         "title": row.get("question_title"), "platform": row.get("platform"),
                         "difficulty": row.get("difficulty"), "contest_date": str(row.get("contest_date", "")),
                         "native_id": row["question_id"]})


GPQA_SEED = 0


def gpqa_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    keys = ("Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
    _need(row, *keys)
    native = row.get("Record ID") or _text_id(row["Question"])
    options = [str(row[k]).strip() for k in keys[1:]]
    order = list(range(4))
    random.Random(f"{GPQA_SEED}:{native}").shuffle(order)  # seeded per row: same letters everywhere
    choices = [options[i] for i in order]
    return Problem(id=Problem.make_id(spec.name, native), source=spec.name, domain="choice",
                   question=str(row["Question"]).strip(), choices=choices, answer="ABCD"[order.index(0)],
                   meta={"domain": row.get("High-level domain"), "native_id": native})


def aime_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "problem", "answer")
    native = str(row.get("id") or _text_id(row["problem"]))
    return Problem(id=Problem.make_id(spec.name, native), source=spec.name, domain="math",
                   question=row["problem"], answer=str(row["answer"]).strip(), meta={"native_id": native})


def bcb_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    _need(row, "task_id", "complete_prompt", "test")
    meta: dict[str, Any] = {"test": row["test"], "entry_point": row.get("entry_point", "task_func"),
                            "code_prompt": row.get("code_prompt", ""), "native_id": row["task_id"]}
    if row.get("canonical_solution"):
        meta["reference_solution"] = (row.get("code_prompt") or "") + row["canonical_solution"]
    return Problem(id=Problem.make_id(spec.name, row["task_id"]), source=spec.name, domain="code",
                   question=row["complete_prompt"], meta=meta)


LCB = "livecodebench/code_generation_lite"
SOURCES: dict[str, SourceSpec] = {s.name: s for s in [
    SourceSpec(name="math", hf_id="DigitalLearningGmbH/MATH-lighteval", config="default", split="train",
               domain="math", role="train", to_problem=math_row),
    SourceSpec(name="mmlu", hf_id="cais/mmlu", config="all", split="validation", domain="choice", role="train",
               to_problem=mmlu_row),
    SourceSpec(name="rlpr", hf_id="openbmb/RLPR-Train-Dataset", split="train", domain="freeform", role="train",
               to_problem=rlpr_row),
    SourceSpec(name="lcb_v1", hf_id=LCB, split="train", domain="code", role="train", to_problem=lcb_row,
               data_file="test.jsonl"),  # release_v1
    SourceSpec(name="math500", hf_id="HuggingFaceH4/MATH-500", split="test", domain="math", role="eval",
               to_problem=math_row),
    SourceSpec(name="mmlu_test", hf_id="cais/mmlu", config="all", split="test", domain="choice", role="eval",
               to_problem=mmlu_row),
    SourceSpec(name="lcb_v6", hf_id=LCB, split="train", domain="code", role="eval", to_problem=lcb_row,
               data_file="test6.jsonl"),  # the problems release_v6 added
    SourceSpec(name="gpqa_diamond", hf_id="Idavidrein/gpqa", config="gpqa_diamond", split="train",
               domain="choice", role="eval", to_problem=gpqa_row),
    SourceSpec(name="aime25", hf_id="yentinglin/aime_2025", split="train", domain="math", role="eval",
               to_problem=aime_row),
    SourceSpec(name="bigcodebench", hf_id="bigcode/bigcodebench", split="v0.1.4", domain="code", role="eval",
               to_problem=bcb_row),
]}


def bank_row(row: dict[str, Any], spec: SourceSpec) -> Problem:
    """A generated problem, stored in our own schema (what `conductor data bank` writes)."""
    problem = Problem.model_validate(row)
    if problem.domain != spec.domain or problem.source != spec.name:
        raise ValueError(f"a {problem.domain} problem from {problem.source} in source {spec.name}")
    return problem


# The generated bank, one source per domain. Kept out of SOURCES: curation adds them only when
# asked (`CurationConfig.bank`), so the hub sources and their per-source quota are unchanged.
BANK_SOURCES: dict[str, SourceSpec] = {s.name: s for s in [
    SourceSpec(name=f"synthetic_{domain}", hf_id="", split="train", domain=domain, role="train",
               to_problem=bank_row, generated=True)
    for domain in DOMAINS
]}
ALL_SOURCES: dict[str, SourceSpec] = {**SOURCES, **BANK_SOURCES}
TRAIN_SOURCES = [s for s in SOURCES.values() if s.role == "train"]
EVAL_SOURCES = [s for s in SOURCES.values() if s.role == "eval"]
