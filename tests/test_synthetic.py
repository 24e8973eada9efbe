"""The generated problem bank: determinism, counts, split, phrasing variety, and every gold answer
right / every distractor wrong under the project's real verifiers (math-verify, choice, free-form)."""

from __future__ import annotations

import collections
import re

import pytest

from conductor.data.schema import DOMAINS, Problem
from conductor.data.synthetic import HELDOUT_PERCENT, generate_bank, generate_domain, split_bank, split_of
from conductor.verify import verify

# Words any English question may hold; everything else counts as a "non-trivial" word.
STOPWORDS = {"the", "a", "an", "of", "is", "what", "in", "to", "and", "or", "it", "its", "for", "on", "with", "by",
             "which", "that", "this", "be", "are", "as", "at", "from", "how", "many", "one", "your"}


@pytest.fixture(scope="module")
def bank() -> list[Problem]:
    return generate_bank()


def by_domain(problems: list[Problem]) -> dict[str, list[Problem]]:
    out: dict[str, list[Problem]] = collections.defaultdict(list)
    for p in problems:
        out[p.domain].append(p)
    return out


def answer_text(problem: Problem, value: str) -> str:
    """How a worker states a final answer (the simulated pool's own format)."""
    if problem.domain == "math":
        return f"Let me work through it.\nThe final answer is $\\boxed{{{value}}}$."
    return f"Thinking it over.\nAnswer: {value}"


def test_counts_per_domain_and_schema(bank: list[Problem]) -> None:
    assert len(bank) == 2400
    counts = collections.Counter(p.domain for p in bank)
    assert counts == {d: 600 for d in DOMAINS}
    assert len({p.id for p in bank}) == len(bank)
    for p in bank:
        assert p.source == f"synthetic_{p.domain}"
        assert isinstance(p.meta["subject"], str) and p.meta["subject"]
        if p.domain == "code":
            assert p.tests and p.meta["reference_solution"] and 2 <= len(p.meta["wrong_solutions"]) <= 4
            assert (p.meta.get("func_name") is not None) == (p.tests[0].testtype == "functional")
        elif p.domain == "choice":
            assert p.choices is not None and len(p.choices) == 4 and len(set(p.choices)) == 4
            assert p.answer in "ABCD" and len(p.answer or "") == 1
        else:
            assert p.answer and len(p.meta["distractors"]) >= 2


def test_several_subjects_per_domain(bank: list[Problem]) -> None:
    subjects = {d: {p.meta["subject"] for p in ps} for d, ps in by_domain(bank).items()}
    assert {"algebra", "probability", "geometry", "number theory"} <= subjects["math"]
    assert {"biology", "history", "law", "physics"} <= subjects["choice"]
    assert {"biology", "history", "law", "physics"} <= subjects["freeform"]
    assert subjects["code"] == {"arrays", "strings", "math"}


def test_same_seed_same_bank_other_seed_other_bank() -> None:
    a, b, c = generate_bank(200, seed=7), generate_bank(200, seed=7), generate_bank(200, seed=8)
    assert [p.model_dump() for p in a] == [p.model_dump() for p in b]
    assert len({p.id for p in a} & {p.id for p in c}) < 20  # a few short facts may coincide


def test_smaller_bank_is_a_prefix_per_domain() -> None:
    small, large = generate_domain("math", 30, seed=3), generate_domain("math", 60, seed=3)
    assert [p.id for p in small] == [p.id for p in large[:30]]


def test_split_is_stable_and_near_the_target(bank: list[Problem]) -> None:
    train, heldout = split_bank(bank)
    assert len(train) + len(heldout) == len(bank)
    assert {p.id for p in train}.isdisjoint({p.id for p in heldout})
    assert abs(len(heldout) / len(bank) - HELDOUT_PERCENT / 100) < 0.04
    for p in heldout:
        assert split_of(p.id) == "heldout" == p.meta["split"]
    for domain, ps in by_domain(heldout).items():
        assert len(ps) > 60, domain  # every domain is held out, not just some
    # the split is a function of the id alone: the same problem splits the same way in another bank
    again = {p.id: p for p in split_bank(generate_bank(400))[1]}
    assert all(p.meta["split"] == "heldout" for p in again.values())


def test_no_non_trivial_word_is_in_every_problem_of_a_domain(bank: list[Problem]) -> None:
    for domain, ps in by_domain(bank).items():
        words = [set(re.findall(r"[a-z]+", p.question.lower())) - STOPWORDS for p in ps]
        assert set.intersection(*words) == set(), domain
        # and no such word is in nearly all of them either
        common, count = collections.Counter(w for ws in words for w in ws).most_common(1)[0]
        assert count < 0.9 * len(ps), (domain, common, count)


def test_phrasing_varies_within_one_kind_of_problem(bank: list[Problem]) -> None:
    for domain, ps in by_domain(bank).items():
        openings = {" ".join(p.question.split()[:3]) for p in ps}
        assert len(openings) > 100, domain
        with_context = sum(1 for p in ps if "\n\n" in p.question or p.question.split()[0].endswith((".", ":")))
        assert 0.1 * len(ps) < with_context, domain
    code = by_domain(bank)["code"]
    assert {p.meta["format"] for p in code} == {"stdin", "functional"}
    same_task = [p for p in code if p.meta["task"] == "count_primes"]
    assert len({p.question.split("\n")[0] for p in same_task}) > 5


@pytest.mark.parametrize("domain", ["math", "choice", "freeform"])
def test_every_gold_verifies_and_every_distractor_does_not(bank: list[Problem], domain: str) -> None:
    problems = by_domain(bank)[domain]
    wrong_gold, right_distractor = [], []
    for p in problems:
        assert p.answer is not None
        if not verify(p, answer_text(p, p.answer)).correct:
            wrong_gold.append((p.id, p.answer))
        for d in p.meta["distractors"]:
            if verify(p, answer_text(p, str(d))).correct:
                right_distractor.append((p.id, p.answer, d))
    assert wrong_gold == []
    assert right_distractor == []


def test_choice_distractors_are_the_other_letters_and_plausible(bank: list[Problem]) -> None:
    for p in by_domain(bank)["choice"]:
        assert sorted([p.answer, *p.meta["distractors"]]) == ["A", "B", "C", "D"]
        gold_text = p.choices[ord(p.answer) - ord("A")]  # type: ignore[index, arg-type]
        # plausible: wrong options look like the right one (all numbers with the same unit, or all words)
        for option in p.choices or []:
            assert bool(re.match(r"-?\d", option)) == bool(re.match(r"-?\d", gold_text)), (p.question, p.choices)
