"""A small seeded factory of problems in the Problem schema for the simulated pool's statistical
tests: math/choice/freeform with gold answers and distractors, and code problems built from a few
tiny programs with real tests (many problems share a program's tests, so sandbox verdicts are
cached and few programs actually run)."""

from __future__ import annotations

import random

from conductor.data.schema import DOMAINS, Problem, TestCase

MATH_SUBJECTS = ("algebra", "number theory", "geometry", "counting and probability")
CHOICE_SUBJECTS = ("high_school_biology", "world_history", "professional_law", "college_physics")
FREEFORM_SUBJECTS = ("physics", "chemistry", "economics")
WORDS = ("entropy", "enthalpy", "momentum", "inflation", "catalyst", "isotope", "torque", "elasticity")

# (reference, wrong solutions or None to let the simulator mutate the reference, tests)
CODE_TEMPLATES: tuple[tuple[str, tuple[str, ...] | None, tuple[tuple[str, str], ...]], ...] = (
    ("n = int(input())\nprint(n * 3 + 1)\n", ("n = int(input())\nprint(n * 3)\n", "n = int(input())\nprint(n + 1)\n"),
     (("2\n", "7\n"), ("5\n", "16\n"))),
    ("a, b = map(int, input().split())\nprint(max(a, b))\n", ("a, b = map(int, input().split())\nprint(min(a, b))\n",),
     (("3 9\n", "9\n"), ("8 1\n", "8\n"))),
    ("s = input().strip()\nprint(s[::-1])\n", None, (("abc\n", "cba\n"), ("hello\n", "olleh\n"))),
    ("n = int(input())\nprint(sum(range(1, n + 1)))\n", None, (("4\n", "10\n"), ("10\n", "55\n"))),
)


def _math(i: int, rng: random.Random) -> Problem:
    a, b, c = rng.randint(2, 40), rng.randint(2, 40), rng.randint(1, 99)
    gold = a * b + c
    if i % 10 == 0:  # a few nested-brace answers
        return Problem(id=f"f-math-{i}", source="factory_math", domain="math",
                       question=f"#{i}: What is sin(60 degrees) times {a}/{a}?", answer="\\frac{\\sqrt{3}}{2}",
                       meta={"subject": "precalculus", "distractors": ["\\frac{1}{2}", "\\frac{\\sqrt{2}}{2}"]})
    return Problem(id=f"f-math-{i}", source="factory_math", domain="math",
                   question=f"#{i}: Compute {a} * {b} + {c}.", answer=str(gold),
                   meta={"subject": rng.choice(MATH_SUBJECTS), "distractors": [str(gold + c), str(a * b - c)]})


def _choice(i: int, rng: random.Random) -> Problem:
    letter = rng.choice("ABCD")
    return Problem(id=f"f-choice-{i}", source="factory_choice", domain="choice",
                   question=f"#{i}: Which statement is true?\nA. one\nB. two\nC. three\nD. four",
                   answer=letter, choices=["one", "two", "three", "four"],
                   meta={"subject": rng.choice(CHOICE_SUBJECTS)})


def _freeform(i: int, rng: random.Random) -> Problem:
    gold, *wrong = rng.sample(WORDS, 4)
    return Problem(id=f"f-free-{i}", source="factory_free", domain="freeform",
                   question=f"#{i}: Name the quantity described in case {i}.", answer=gold,
                   meta={"subject": rng.choice(FREEFORM_SUBJECTS), "distractors": wrong})


def _code(i: int, rng: random.Random) -> Problem:
    reference, wrong, tests = CODE_TEMPLATES[i % len(CODE_TEMPLATES)]
    meta: dict[str, object] = {"reference_solution": reference}
    if wrong is not None:
        meta["wrong_solutions"] = list(wrong)
    return Problem(id=f"f-code-{i}", source="factory_code", domain="code",
                   question=f"#{i}: Program task {i % len(CODE_TEMPLATES)} (variant {i}).",
                   tests=[TestCase(input=a, output=b) for a, b in tests], meta=meta)


_MAKERS = {"math": _math, "choice": _choice, "freeform": _freeform, "code": _code}


def make_problems(n_per_domain: int, seed: int = 0, domains: tuple[str, ...] = DOMAINS) -> list[Problem]:
    rng = random.Random(seed)
    return [_MAKERS[d](i, rng) for d in domains for i in range(n_per_domain)]
