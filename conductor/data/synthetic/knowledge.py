"""Choice (MMLU-style) and free-form (RLPR-style) items: facts from `facts.RELATIONS`, and short
quantitative questions (physics, chemistry, economics, statistics) whose wrong answers come from
the wrong formula. Both domains share these sources; they differ in how the answer is asked for."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from conductor.data.synthetic.facts import RELATIONS, Relation
from conductor.data.synthetic.phrasing import fill
from conductor.data.synthetic.types import Item


@dataclass(frozen=True)
class Quantity:
    """A computed answer with a unit, and the values the usual mistakes give."""

    subject: str
    statement: str  # asks for the value "in {unit}"
    value: Fraction
    wrong: tuple[Fraction, ...]
    unit: str


def plain(value: Fraction) -> str:
    """A decimal as people write it: 12, 2.5, 0.125 (values here have short decimal expansions)."""
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return text


def _terminating(value: Fraction) -> bool:
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def speed(rng: random.Random) -> Quantity:
    v, t = rng.randint(3, 120), rng.choice([2, 3, 4, 5, 6, 8])
    d = v * t
    who = rng.choice(["A train", "A cyclist", "A car", "A boat", "A runner", "A delivery van"])
    s = fill(rng, (
        "{who} covers {d} km in {t} hours at a steady pace. What is its average speed in km/h?",
        "Average speed of an object that travels {d} km in {t} h, in km/h?",
        "If {who_l} travels {d} kilometres in {t} hours, how fast is it going, in km/h?",
    ), who=who, who_l=who.lower(), d=d, t=t)
    return Quantity("physics", s, Fraction(v), (Fraction(d * t), Fraction(t, d), Fraction(d, t + 1)), "km/h")


def force(rng: random.Random) -> Quantity:
    m, a = rng.randint(2, 40), rng.randint(2, 12)
    s = fill(rng, (
        "A net force accelerates a {m} kg mass at {a} m/s^2. What is the force in newtons?",
        "What net force, in newtons, gives a {m}-kilogram cart an acceleration of {a} m/s²?",
        "Using Newton's second law, find the force (N) on a {m} kg object accelerating at {a} m/s^2.",
    ), m=m, a=a)
    return Quantity("physics", s, Fraction(m * a), (Fraction(m, a), Fraction(m + a), Fraction(m * a, 2)), "N")


def ohm(rng: random.Random) -> Quantity:
    i, r = rng.choice([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3), Fraction(5, 2), Fraction(4)]), rng.randint(2, 60)
    v = i * r
    s = fill(rng, (
        "A {v} V source drives current through a {r} ohm resistor. What current flows, in amperes?",
        "Find the current in amperes through a {r} Ω resistor with {v} volts across it.",
        "By Ohm's law, what is the current (A) when the voltage is {v} V and the resistance is {r} ohms?",
    ), v=plain(v), r=r)
    return Quantity("physics", s, i, (v * r, Fraction(r) / v, v / (r + 1)), "A")


def kinetic_energy(rng: random.Random) -> Quantity:
    m, v = rng.randint(1, 20) * 2, rng.randint(1, 15)
    s = fill(rng, (
        "What is the kinetic energy, in joules, of a {m} kg object moving at {v} m/s?",
        "A {m}-kg ball rolls at {v} m/s. Compute its kinetic energy in J.",
        "Find the kinetic energy (joules) of a mass of {m} kg travelling at {v} metres per second.",
    ), m=m, v=v)
    return Quantity("physics", s, Fraction(m * v * v, 2), (Fraction(m * v * v), Fraction(m * v, 2), Fraction(m * v)), "J")


MOLAR_MASS = {"water (H2O)": 18, "carbon dioxide (CO2)": 44, "methane (CH4)": 16, "ammonia (NH3)": 17,
              "oxygen gas (O2)": 32, "glucose (C6H12O6)": 180, "sulfuric acid (H2SO4)": 98,
              "calcium carbonate (CaCO3)": 100, "sodium hydroxide (NaOH)": 40, "nitrogen gas (N2)": 28}


def moles(rng: random.Random) -> Quantity:
    name, mass = rng.choice(sorted(MOLAR_MASS.items()))
    n = rng.choice([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3), Fraction(5), Fraction(1, 4), Fraction(10)])
    grams = n * mass
    s = fill(rng, (
        "How many moles are in {g} g of {name}? (Molar mass {mm} g/mol.)",
        "A sample of {name} weighs {g} grams. Given a molar mass of {mm} g/mol, how many moles is that?",
        "Convert {g} g of {name} to moles, using {mm} g/mol.",
    ), g=plain(grams), name=name, mm=mass)
    return Quantity("chemistry", s, n, (grams * mass, Fraction(mass) / grams, n * 2), "mol")


def simple_interest(rng: random.Random) -> Quantity:
    p, r, t = rng.choice([100, 200, 500, 800, 1000, 1200, 2000, 5000]), rng.randint(2, 9), rng.randint(2, 6)
    interest = Fraction(p * r * t, 100)
    compound = Fraction(p) * (Fraction(100 + r, 100) ** t) - p
    wrong = [p + interest, Fraction(p * r, 100)] + ([compound] if _terminating(compound) else [])
    s = fill(rng, (
        "How much simple interest, in dollars, does ${p} earn at {r}% per year over {t} years?",
        "A deposit of ${p} earns simple interest at an annual rate of {r}%. What is the interest after {t} years, in dollars?",
        "Compute the simple interest on a principal of {p} dollars at {r} percent a year for {t} years.",
    ), p=p, r=r, t=t)
    return Quantity("economics", s, interest, tuple(wrong), "dollars")


def price_elasticity(rng: random.Random) -> Quantity:
    dq, dp = rng.choice([5, 10, 15, 20, 30, 40]), rng.choice([2, 4, 5, 8, 10, 20])
    s = fill(rng, (
        "When the price of a good rises by {dp}%, the quantity demanded falls by {dq}%. What is the absolute value of the price elasticity of demand?",
        "Quantity demanded drops {dq}% after a {dp}% price increase. Find the magnitude of the price elasticity of demand.",
    ), dq=dq, dp=dp)
    return Quantity("economics", s, Fraction(dq, dp), (Fraction(dp, dq), Fraction(dq - dp), Fraction(dq * dp, 100)), "")


def data_range(rng: random.Random) -> Quantity:
    xs = [rng.randint(1, 99) for _ in range(rng.randint(5, 8))]
    lo, hi = min(xs), max(xs)
    s = fill(rng, (
        "What is the range of the data set {xs}?", "Find the range (largest minus smallest) of: {xs}.",
        "Daily temperatures were {xs}. What was the range?",
    ), xs=", ".join(map(str, xs)))
    return Quantity("statistics", s, Fraction(hi - lo), (Fraction(hi), Fraction(hi - lo + 1), Fraction(hi + lo, 2)), "")


QUANTITIES: tuple[Callable[[random.Random], Quantity], ...] = (
    speed, force, ohm, kinetic_energy, moles, simple_interest, price_elasticity, data_range,
)


def _others(rng: random.Random, relation: Relation, answer: str, k: int) -> list[str]:
    pool = sorted({a for _, a in relation.pairs if a != answer})
    return rng.sample(pool, k)


def fact_item(rng: random.Random, relation: Relation, k: int = 3) -> Item:
    x, answer = rng.choice(relation.pairs)
    return Item(subject=relation.subject, statement=fill(rng, relation.questions, x=x), answer=answer,
                distractors=_others(rng, relation, answer, k), kind=relation.key)


def _distinct_wrong(value: Fraction, wrong: tuple[Fraction, ...]) -> list[Fraction]:
    out: list[Fraction] = []
    for w in (*wrong, value + 1, value * 2, value - 1):
        if w != value and w not in out and w >= 0 and _terminating(w):
            out.append(w)
    return out


def choice_quantity(rng: random.Random, gen: Callable[[random.Random], Quantity]) -> Item:
    q = gen(rng)
    unit = f" {q.unit}" if q.unit else ""
    wrong = _distinct_wrong(q.value, q.wrong)[:3]
    return Item(subject=q.subject, statement=q.statement, answer=plain(q.value) + unit,
                distractors=[plain(w) + unit for w in wrong], kind=gen.__name__)


def freeform_quantity(rng: random.Random, gen: Callable[[random.Random], Quantity]) -> Item:
    q = gen(rng)
    return Item(subject=q.subject, statement=q.statement, answer=plain(q.value),
                distractors=[plain(w) for w in _distinct_wrong(q.value, q.wrong)[:4]], kind=gen.__name__)


def _fact_makers() -> list[Callable[[random.Random], Item]]:
    return [lambda rng, rel=rel: fact_item(rng, rel) for rel in RELATIONS]


def _quantity_makers(to_item: Callable[[random.Random, Callable[[random.Random], Quantity]], Item],
                     ) -> list[Callable[[random.Random], Item]]:
    return [lambda rng, gen=gen: to_item(rng, gen) for gen in QUANTITIES]


CHOICE_GENERATORS: tuple[Callable[[random.Random], Item], ...] = (*_fact_makers(), *_quantity_makers(choice_quantity))
FREEFORM_GENERATORS: tuple[Callable[[random.Random], Item], ...] = (
    *_fact_makers(), *_quantity_makers(freeform_quantity))
