"""The generated problem bank: `generate_bank(n, seed)` and `split_bank(problems)`.

Problem i of a domain is drawn from its own RNG, seeded by (seed, domain, i), so a bank is the
same on every machine and a smaller bank is a prefix of a larger one per domain. A problem's id is
a hash of its content (`Problem.make_id(source, hash of text + answer)`), and its split is a hash
of its id: the same problem lands in the same split whatever bank it came from.
"""

from __future__ import annotations

import functools

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
from conductor.data.synthetic.styles import DEFAULT_STYLE, style
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


def _text_item(rng: random.Random, domain: Domain) -> tuple[Problem, str]:
    maker = rng.choice(_ITEM_MAKERS[domain])
    item = maker(rng)
    question = dress(rng, domain, item.statement)
    kind = item.kind or getattr(maker, "__name__", "")
    if domain != "choice":
        return _problem(domain, question, item.answer,
                        {"subject": item.subject, "kind": kind, "distractors": list(item.distractors)}), item.statement
    options = [item.answer, *item.distractors[:3]]
    rng.shuffle(options)
    gold = "ABCD"[options.index(item.answer)]
    return _problem(domain, question, gold, {"subject": item.subject, "kind": kind, "distractors": [
        letter for letter in "ABCD" if letter != gold]}, choices=options), item.statement


def _code_item(rng: random.Random) -> tuple[Problem, str]:
    built = build_code_problem(rng, rng.choice(CODE_TASKS))
    question = dress(rng, "code", built.statement)
    meta: dict[str, object] = {"subject": built.subject, "kind": built.task, "task": built.task,
                               "format": built.mode, "reference_solution": built.reference,
                               "wrong_solutions": built.wrong, "starter_code": built.starter_code}
    if built.func_name:
        meta["func_name"] = built.func_name
    return _problem("code", question, None, meta, tests=built.tests), built.statement


def _draw(domain: Domain, seed: int, index: int, attempt: int) -> tuple[Problem, str]:
    """The bank's problem and its bare statement (before `dress`)."""
    rng = random.Random(f"{seed}:{domain}:{index}:{attempt}")
    return _code_item(rng) if domain == "code" else _text_item(rng, domain)


def redress(problem: Problem, statement: str, phrasing: str, *, seed: int, index: int, retry: int = 0) -> Problem:
    """The same problem (id, answer, choices, tests, meta) asked in another style's words, from an
    RNG of its own: the bank's draw is untouched, so the problem is exactly the bank's."""
    if phrasing == DEFAULT_STYLE:
        return problem
    rng = random.Random(f"{seed}:{problem.domain}:{index}:{phrasing}:{retry}")
    return problem.model_copy(update={"question": style(phrasing)(rng, problem.domain, statement),
                                      "meta": {**problem.meta, "phrasing": phrasing}})


def _per_domain(n: int) -> dict[Domain, int]:
    base, extra = divmod(n, len(DOMAINS))
    return {d: base + (1 if i < extra else 0) for i, d in enumerate(DOMAINS)}


def _key(question: str) -> str:
    return " ".join(question.casefold().split())


def generate_domain(domain: Domain, count: int, seed: int = DEFAULT_SEED, phrasing: str = DEFAULT_STYLE) -> list[Problem]:
    """`count` distinct problems of one domain (distinct question texts). With another `phrasing`
    (styles.STYLES): the same problems, each re-dressed in that style (distinct texts too)."""
    style(phrasing)  # an unknown name fails before any work
    problems: list[Problem] = []
    seen: set[str] = set()
    seen_redressed: set[str] = set()
    for index in range(count):
        for attempt in range(_MAX_TRIES):
            problem, statement = _draw(domain, seed, index, attempt)
            key = _key(problem.question)
            if key not in seen:
                seen.add(key)
                break
        else:
            raise RuntimeError(f"{domain}: no new problem after {_MAX_TRIES} draws at index {index}")
        if phrasing != DEFAULT_STYLE:
            # the bank's texts are distinct; a style's (lowercased, shorter) may repeat one, or by chance
            # match the bank's own: dress again
            for retry in range(_MAX_TRIES):
                problem_r = redress(problem, statement, phrasing, seed=seed, index=index, retry=retry)
                if _key(problem_r.question) not in seen_redressed and problem_r.question != problem.question:
                    break
            else:
                raise RuntimeError(f"{domain}: no distinct {phrasing} text after {_MAX_TRIES} tries at index {index}")
            seen_redressed.add(_key(problem_r.question))
            problem = problem_r
        problems.append(problem)
    return problems


def generate_bank(n: int = DEFAULT_N, seed: int = DEFAULT_SEED, phrasing: str = DEFAULT_STYLE) -> list[Problem]:
    """`n` problems, split as evenly as possible over math, choice, freeform and code. `phrasing`
    names a style (`styles.STYLES`): the default is the bank's own; another gives the same
    problems (ids, answers, order) in that style's words."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return [p for domain, count in _per_domain(n).items() for p in generate_domain(domain, count, seed, phrasing)]


@functools.lru_cache(maxsize=8)
def cached_bank_split(n: int = DEFAULT_N, seed: int = DEFAULT_SEED,
               phrasing: str = DEFAULT_STYLE) -> tuple[tuple[Problem, ...], tuple[Problem, ...]]:
    """`split_bank(generate_bank(n, seed, phrasing))`, generated once a process (~0.7 s) for every
    reader of it (training's splits, the kind reader). Tuples: callers share it, so they copy."""
    train, heldout = split_bank(generate_bank(n=n, seed=seed, phrasing=phrasing))
    return tuple(train), tuple(heldout)


def split_bank(problems: Iterable[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(train, heldout) by the stable hash of each id (HELDOUT_PERCENT % held out)."""
    train: list[Problem] = []
    heldout: list[Problem] = []
    for p in problems:
        (heldout if split_of(p.id) == "heldout" else train).append(p)
    return train, heldout
