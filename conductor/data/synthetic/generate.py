"""The generated problem bank: `generate_bank(n, seed)` and `split_bank(problems)`.

Problem i of a domain is drawn from its own RNG, seeded by (seed, domain, i), so a bank is the
same on every machine and a smaller bank is a prefix of a larger one per domain. A problem's id is
a hash of its content (`Problem.make_id(source, hash of text + answer)`), and its split is a hash
of its id: the same problem lands in the same split whatever bank it came from.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable
from typing import Literal

from conductor.data.schema import DOMAINS, Domain, Problem
from conductor.data.synthetic.code_items import build_code_problem
from conductor.data.synthetic.code_tasks import CODE_TASKS
from conductor.data.synthetic.knowledge import CHOICE_GENERATORS, FREEFORM_GENERATORS
from conductor.data.synthetic.math_items import MATH_GENERATORS
from conductor.data.synthetic.phrasing import dress
from conductor.data.synthetic.types import Item

Split = Literal["train", "heldout"]
HELDOUT_PERCENT = 20
DEFAULT_N = 2400
DEFAULT_SEED = 0
SOURCE_PREFIX = "synthetic_"
_MAX_TRIES = 200  # redraws when a draw repeats an earlier problem's text

ItemMaker = Callable[[random.Random], Item]
_ITEM_MAKERS: dict[Domain, tuple[ItemMaker, ...]] = {
    "math": MATH_GENERATORS, "choice": CHOICE_GENERATORS, "freeform": FREEFORM_GENERATORS,
}


def source_name(domain: Domain) -> str:
    return f"{SOURCE_PREFIX}{domain}"


def split_of(problem_id: str) -> Split:
    """Stable: a hash of the id, HELDOUT_PERCENT of ids held out."""
    bucket = int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) % 100
    return "heldout" if bucket < HELDOUT_PERCENT else "train"


def _problem(domain: Domain, question: str, answer: str | None, meta: dict[str, object], **fields: object) -> Problem:
    source = source_name(domain)
    native = hashlib.sha256(f"{question}\x1f{answer}\x1f{fields.get('choices')}".encode()).hexdigest()[:16]
    pid = Problem.make_id(source, native)
    return Problem(id=pid, source=source, domain=domain, question=question, answer=answer,
                   meta={**meta, "native_id": native, "split": split_of(pid), "generator": "conductor.data.synthetic"},
                   **fields)  # type: ignore[arg-type]


def _text_item(rng: random.Random, domain: Domain) -> Problem:
    maker = rng.choice(_ITEM_MAKERS[domain])
    item = maker(rng)
    question = dress(rng, domain, item.statement)
    kind = item.kind or getattr(maker, "__name__", "")
    if domain != "choice":
        return _problem(domain, question, item.answer,
                        {"subject": item.subject, "kind": kind, "distractors": list(item.distractors)})
    options = [item.answer, *item.distractors[:3]]
    rng.shuffle(options)
    gold = "ABCD"[options.index(item.answer)]
    return _problem(domain, question, gold, {"subject": item.subject, "kind": kind, "distractors": [
        letter for letter in "ABCD" if letter != gold]}, choices=options)


def _code_item(rng: random.Random) -> Problem:
    built = build_code_problem(rng, rng.choice(CODE_TASKS))
    question = dress(rng, "code", built.statement)
    meta: dict[str, object] = {"subject": built.subject, "kind": built.task, "task": built.task,
                               "format": built.mode, "reference_solution": built.reference,
                               "wrong_solutions": built.wrong, "starter_code": built.starter_code}
    if built.func_name:
        meta["func_name"] = built.func_name
    return _problem("code", question, None, meta, tests=built.tests)


def _draw(domain: Domain, seed: int, index: int, attempt: int) -> Problem:
    rng = random.Random(f"{seed}:{domain}:{index}:{attempt}")
    return _code_item(rng) if domain == "code" else _text_item(rng, domain)


def _per_domain(n: int) -> dict[Domain, int]:
    base, extra = divmod(n, len(DOMAINS))
    return {d: base + (1 if i < extra else 0) for i, d in enumerate(DOMAINS)}


def generate_domain(domain: Domain, count: int, seed: int = DEFAULT_SEED) -> list[Problem]:
    """`count` distinct problems of one domain (distinct question texts)."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for index in range(count):
        for attempt in range(_MAX_TRIES):
            problem = _draw(domain, seed, index, attempt)
            key = " ".join(problem.question.casefold().split())
            if key not in seen:
                seen.add(key)
                problems.append(problem)
                break
        else:
            raise RuntimeError(f"{domain}: no new problem after {_MAX_TRIES} draws at index {index}")
    return problems


def generate_bank(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> list[Problem]:
    """`n` problems, split as evenly as possible over math, choice, freeform and code."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return [p for domain, count in _per_domain(n).items() for p in generate_domain(domain, count, seed)]


def split_bank(problems: Iterable[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(train, heldout) by the stable hash of each id (HELDOUT_PERCENT % held out)."""
    train: list[Problem] = []
    heldout: list[Problem] = []
    for p in problems:
        (heldout if split_of(p.id) == "heldout" else train).append(p)
    return train, heldout
