"""Gold answers are RIGHT, not just self-consistent: for many kinds of problem the answer is
recomputed here from the question text alone (regular expressions and independent formulas) and
compared with the gold through the real verifier; fact questions are checked against the fact
named in the question, and choice letters against the option they point at."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction

import pytest

from conductor.data.schema import Problem
from conductor.data.synthetic import generate_bank
from conductor.data.synthetic.facts import RELATIONS
from conductor.verify import verify


@pytest.fixture(scope="module")
def bank() -> list[Problem]:
    return generate_bank()


def ints(text: str) -> list[int]:
    """The integers of a text, in order (decimals such as 2.5 are skipped)."""
    return [int(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text) if "." not in x]


def _rhs(text: str) -> Fraction:
    frac = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", text)
    if frac:
        value = Fraction(int(frac[2]), int(frac[3]))
        return -value if frac[1] else value
    return Fraction(int(text))


def linear_equation(q: str) -> Fraction:
    m = re.search(r"\$(-?\d+)x ([+-]) (\d+) = (.+?)\$", q)
    assert m, q
    a, b = int(m[1]), int(m[3]) * (1 if m[2] == "+" else -1)
    return (_rhs(m[4]) - b) / a


def gcd_lcm(q: str) -> int:
    a, b = ints(q)[:2]
    asks_gcd = re.search(r"greatest common divisor|gcd|largest integer that divides|longest tile", q)
    return math.gcd(a, b) if asks_gcd else a * b // math.gcd(a, b)


def power_mod(q: str) -> int:
    m = re.search(r"\$(\d+)\^\{(\d+)\}", q)
    mod = re.search(r"(?:divided by|\\bmod|division by) (\d+)", q)
    assert m and mod, q
    return pow(int(m[1]), int(m[2]), int(mod[1]))


def choose(q: str) -> int:
    if m := re.search(r"dbinom\{(\d+)\}\{(\d+)\}", q):
        return math.comb(int(m[1]), int(m[2]))
    if m := re.search(r"(\d+)-element subsets does a set with (\d+)", q):
        return math.comb(int(m[2]), int(m[1]))
    k, n = ints(q)[:2]  # "a committee of k ... from n", "pick k of n"
    return math.comb(n, k)


def dice_sum(q: str) -> Fraction:
    (s,) = ints(q)[-1:]
    return Fraction(sum(a + b == s for a in range(1, 7) for b in range(1, 7)), 36)


def coin_flips(q: str) -> Fraction:
    n, k = ints(q)[:2]
    return Fraction(math.comb(n, k), 2 ** n)


def triangle_area(q: str) -> Fraction:
    b, h = ints(q)[:2]
    return Fraction(b * h, 2)


def hypotenuse(q: str) -> int:
    a, b = ints(q)[:2]
    return math.isqrt(a * a + b * b)


def polygon_angles(q: str) -> int:
    return (ints(q)[0] - 2) * 180


def multiples_in_range(q: str) -> int:
    if m := re.search(r"multiples of (\d+) are less than or equal to (\d+)", q):
        k, hi = int(m[1]), int(m[2])
    elif m := re.search(r"from 1 to (\d+) inclusive are divisible by (\d+)", q):
        hi, k = int(m[1]), int(m[2])
    else:
        m = re.search(r"multiples of (\d+) between 1 and (\d+)", q)
        assert m, q
        k, hi = int(m[1]), int(m[2])
    return hi // k


def speed(q: str) -> Fraction:
    d, t = ints(q)[:2]
    return Fraction(d, t)


def force(q: str) -> int:
    m, a = ints(q)[:2]
    return m * a


def kinetic_energy(q: str) -> Fraction:
    m, v = ints(q)[:2]
    return Fraction(m * v * v, 2)


MATH_SOLVERS: dict[str, Callable[[str], Fraction | int]] = {f.__name__: f for f in (
    linear_equation, gcd_lcm, power_mod, choose, dice_sum, coin_flips, triangle_area, hypotenuse,
    polygon_angles, multiples_in_range)}
QUANTITY_SOLVERS: dict[str, Callable[[str], Fraction | int]] = {f.__name__: f for f in (speed, force, kinetic_energy)}


def as_latex(value: Fraction | int) -> str:
    v = Fraction(value)
    return str(v.numerator) if v.denominator == 1 else f"\\frac{{{v.numerator}}}{{{v.denominator}}}"


def gold_text(p: Problem) -> str:
    if p.domain == "choice":
        return (p.choices or [])[ord(p.answer or "A") - ord("A")]
    return p.answer or ""


def test_math_golds_match_an_independent_solution(bank: list[Problem]) -> None:
    checked, wrong = 0, []
    for p in bank:
        solver = MATH_SOLVERS.get(p.meta["kind"]) if p.domain == "math" else None
        if solver is None:
            continue
        mine = as_latex(solver(p.question))
        checked += 1
        if not verify(p, f"\\boxed{{{mine}}}").correct:
            wrong.append((p.meta["kind"], p.question, p.answer, mine))
    assert checked > 250
    assert wrong == []


def test_quantity_golds_match_an_independent_solution(bank: list[Problem]) -> None:
    checked, wrong = 0, []
    for p in bank:
        solver = QUANTITY_SOLVERS.get(p.meta["kind"]) if p.domain in ("choice", "freeform") else None
        if solver is None:
            continue
        value = Fraction(solver(p.question))
        checked += 1
        number = re.match(r"-?[\d.]+", gold_text(p))
        assert number, gold_text(p)
        if Fraction(number[0]) != value:
            wrong.append((p.domain, p.question, gold_text(p), value))
    assert checked > 150
    assert wrong == []


def test_fact_golds_are_the_fact_the_question_names(bank: list[Problem]) -> None:
    relations = {r.key: r for r in RELATIONS}
    checked, wrong = 0, []
    for p in bank:
        relation = relations.get(p.meta["kind"])
        if relation is None:
            continue
        named = [(x, a) for x, a in relation.pairs if x in p.question]
        x, answer = max(named, key=lambda pair: len(pair[0]))  # "South Korea" over "Korea"
        checked += 1
        if gold_text(p) != answer:
            wrong.append((p.question, gold_text(p), answer))
        if p.domain == "choice" and answer not in (p.choices or []):
            wrong.append((p.question, "answer missing from the options", answer))
    assert checked > 500
    assert wrong == []
