"""Math problems (MATH-style): each generator draws numbers, states the problem in one of several
ways (bare, or as a small story), and computes the gold answer and the wrong answers a careless
solver would give (off by one, a sign error, the wrong formula). Answers are exact: integers,
fractions, or multiples of pi, written the way MATH writes them (`\\frac{3}{8}`, `49\\pi`)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from fractions import Fraction

from conductor.data.synthetic.phrasing import fill
from conductor.data.synthetic.types import Item, ordinal

Value = Fraction | int


def latex(value: Value) -> str:
    """An exact number as MATH writes it: `12`, `-\\frac{3}{4}`."""
    v = Fraction(value)
    if v.denominator == 1:
        return str(v.numerator)
    sign = "-" if v < 0 else ""
    return f"{sign}\\frac{{{abs(v.numerator)}}}{{{v.denominator}}}"


def numeric_item(subject: str, statement: str, gold: Value, wrong: list[Value], suffix: str = "") -> Item:
    """Distractors are the wrong values that differ from the gold (and from each other)."""
    g = Fraction(gold)
    seen, distractors = {g}, []
    for w in [*wrong, g + 1, g - 1, 2 * g + 1]:
        fw = Fraction(w)
        if fw not in seen:
            seen.add(fw)
            distractors.append(latex(fw) + suffix)
    return Item(subject=subject, statement=statement, answer=latex(g) + suffix, distractors=distractors[:4])


def linear_equation(rng: random.Random) -> Item:
    a = rng.choice([2, 3, 4, 5, 6, 7, 8, 9, -2, -3, -4, -5])
    x = Fraction(rng.randint(-12, 12), rng.choice([1, 1, 1, 2, 3]))
    b = rng.randint(-20, 20)
    c = a * x + b
    eq = f"{a}x {'+' if b >= 0 else '-'} {abs(b)} = {latex(c)}"
    statement = fill(rng, (
        "Solve for $x$: ${eq}$.", "Find $x$ if ${eq}$.", "What value of $x$ satisfies ${eq}$?",
        "If ${eq}$, what is $x$?", "Determine the solution of the equation ${eq}$.",
    ), eq=eq)
    return numeric_item("algebra", statement, x, [(c + b) / a, (c - b) * a, -x, (b - c) / a])


def evaluate_quadratic(rng: random.Random) -> Item:
    a, b, c = rng.randint(1, 5), rng.randint(-9, 9), rng.randint(-10, 10)
    k = rng.choice([i for i in range(-5, 6) if i])
    f = f"{a}x^2 {'+' if b >= 0 else '-'} {abs(b)}x {'+' if c >= 0 else '-'} {abs(c)}"
    gold = a * k * k + b * k + c
    statement = fill(rng, (
        "Let $f(x) = {f}$. Compute $f({k})$.", "Evaluate ${f}$ at $x = {k}$.",
        "What is the value of ${f}$ when $x = {k}$?", "Given $g(x) = {f}$, find $g({k})$.",
    ), f=f, k=k)
    return numeric_item("algebra", statement, gold, [a * k * k - b * k + c, a * k * k + b * k, -a * k * k + b * k + c])


def sum_of_roots(rng: random.Random) -> Item:
    r1, r2 = rng.randint(-9, 9), rng.randint(-9, 9)
    s, p = r1 + r2, r1 * r2
    poly = f"x^2 {'-' if s >= 0 else '+'} {abs(s)}x {'+' if p >= 0 else '-'} {abs(p)} = 0"
    want = rng.choice(["sum", "product"])
    statement = fill(rng, (
        "What is the {want} of the roots of ${poly}$?", "Find the {want} of all solutions to ${poly}$.",
        "The equation ${poly}$ has two roots. Compute their {want}.",
    ), want=want, poly=poly)
    gold, other = (s, p) if want == "sum" else (p, s)
    return numeric_item("algebra", statement, gold, [-gold, other, gold + 2])


def slope(rng: random.Random) -> Item:
    x1, y1 = rng.randint(-9, 9), rng.randint(-9, 9)
    x2 = x1 + rng.choice([i for i in range(-7, 8) if i])
    y2 = y1 + rng.choice([i for i in range(-9, 10) if i])
    m = Fraction(y2 - y1, x2 - x1)
    statement = fill(rng, (
        "What is the slope of the line through $({x1}, {y1})$ and $({x2}, {y2})$?",
        "A line passes through the points $({x1},{y1})$ and $({x2},{y2})$. Find its slope.",
        "Compute the slope of the segment joining $({x1}, {y1})$ to $({x2}, {y2})$.",
        "On a graph, a straight path goes from $({x1}, {y1})$ to $({x2}, {y2})$. How steep is it, as a slope?",
    ), x1=x1, y1=y1, x2=x2, y2=y2)
    return numeric_item("algebra", statement, m, [1 / m, -m, Fraction(x2 - x1, y2 - y1) * -1])


def add_fractions(rng: random.Random) -> Item:
    b, d = rng.randint(2, 12), rng.randint(2, 12)
    a, c = rng.randint(1, b - 1 if b > 2 else 1), rng.randint(1, 11)
    op = rng.choice(["+", "-"])
    gold = Fraction(a, b) + Fraction(c, d) if op == "+" else Fraction(a, b) - Fraction(c, d)
    naive = Fraction(a + c, b + d) if op == "+" else Fraction(a - c, abs(b - d) or 1)
    statement = fill(rng, (
        "Compute $\\frac{{{a}}}{{{b}}} {op} \\frac{{{c}}}{{{d}}}$.",
        "Simplify $\\frac{{{a}}}{{{b}}} {op} \\frac{{{c}}}{{{d}}}$.",
        "What is {a}/{b} {op} {c}/{d}, as a fraction in lowest terms?",
    ), a=a, b=b, c=c, d=d, op=op)
    return numeric_item("prealgebra", statement, gold, [naive, -gold, Fraction(a * c, b * d)])


def percent_change(rng: random.Random) -> Item:
    old = rng.choice([20, 25, 40, 50, 60, 80, 120, 150, 200, 250, 400])
    pct = rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 75])
    up = rng.random() < 0.5
    new = Fraction(old * (100 + pct if up else 100 - pct), 100)
    item = rng.choice(["jacket", "bicycle", "concert ticket", "textbook", "pair of shoes", "lamp"])
    statement = fill(rng, (
        "A {item} costs ${old}. Its price is {dir} by {pct}%. What is the new price in dollars?",
        "What is {old} {dir2} by {pct}%?",
        "After a {pct}% {noun}, a {item} that was priced at ${old} costs how many dollars?",
    ), item=item, old=old, pct=pct, dir="raised" if up else "cut", dir2="increased" if up else "decreased",
        noun="price increase" if up else "discount")
    wrong_dir = Fraction(old * (100 - pct if up else 100 + pct), 100)
    return numeric_item("prealgebra", statement, new, [wrong_dir, Fraction(old * pct, 100), old + (pct if up else -pct)])


def gcd_lcm(rng: random.Random) -> Item:
    g = rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 12])
    a, b = g * rng.randint(2, 15), g * rng.randint(2, 15)
    while a == b:
        b = g * rng.randint(2, 15)
    want = rng.choice(["gcd", "lcm"])
    gold = math.gcd(a, b) if want == "gcd" else math.lcm(a, b)
    other = math.lcm(a, b) if want == "gcd" else math.gcd(a, b)
    statement = fill(rng, {
        "gcd": ("What is the greatest common divisor of {a} and {b}?", "Find $\\gcd({a}, {b})$.",
                "Compute the largest integer that divides both {a} and {b}.",
                "Tiles of equal size must exactly cover strips of length {a} and {b}. What is the longest tile length possible?"),
        "lcm": ("What is the least common multiple of {a} and {b}?", "Find $\\operatorname{{lcm}}({a}, {b})$.",
                "What is the smallest positive integer divisible by both {a} and {b}?",
                "One bell rings every {a} minutes and another every {b} minutes. They ring together now; after how many minutes do they next ring together?"),
    }[want], a=a, b=b)
    return numeric_item("number theory", statement, gold, [other, a * b, gold * 2])


def power_mod(rng: random.Random) -> Item:
    base, exp, mod = rng.randint(2, 12), rng.randint(3, 40), rng.choice([5, 7, 9, 10, 11, 13])
    gold = pow(base, exp, mod)
    statement = fill(rng, (
        "What is the remainder when ${base}^{{{exp}}}$ is divided by {mod}?",
        "Compute ${base}^{{{exp}}} \\bmod {mod}$.",
        "Find the remainder of ${base}^{{{exp}}}$ upon division by {mod}.",
    ), base=base, exp=exp, mod=mod)
    return numeric_item("number theory", statement, gold,
                        [pow(base, exp - 1, mod), (gold + 1) % mod, pow(base, exp + 1, mod), base * exp % mod])


def divisor_count(rng: random.Random) -> Item:
    n = rng.randint(12, 400)
    divs = [d for d in range(1, n + 1) if n % d == 0]
    want = rng.choice(["count", "sum"])
    gold = len(divs) if want == "count" else sum(divs)
    statement = fill(rng, {
        "count": ("How many positive divisors does {n} have?", "Find the number of positive factors of {n}.",
                  "Count the positive integers that divide {n} evenly."),
        "sum": ("What is the sum of all positive divisors of {n}?", "Find the sum of the positive factors of {n}.",
                "Add up every positive integer that divides {n}. What total do you get?"),
    }[want], n=n)
    proper = gold - (1 if want == "count" else n)
    return numeric_item("number theory", statement, gold, [proper, gold - 2 if want == "count" else gold - 1 - n, gold + 1])


def multiples_in_range(rng: random.Random) -> Item:
    k, hi = rng.randint(3, 13), rng.randint(50, 999)
    gold = hi // k
    statement = fill(rng, (
        "How many positive multiples of {k} are less than or equal to {hi}?",
        "How many integers from 1 to {hi} inclusive are divisible by {k}?",
        "Count the multiples of {k} between 1 and {hi}, inclusive.",
    ), k=k, hi=hi)
    return numeric_item("number theory", statement, gold, [gold + 1, gold - 1, (hi - 1) // k + 2])


def choose(rng: random.Random) -> Item:
    n = rng.randint(5, 14)
    k = rng.randint(2, min(5, n - 2))
    gold = math.comb(n, k)
    people = rng.choice(["students", "players", "volunteers", "candidates", "friends"])
    statement = fill(rng, (
        "Compute $\\dbinom{{{n}}}{{{k}}}$.",
        "In how many ways can a committee of {k} be chosen from {n} {people}?",
        "A coach must pick {k} of {n} {people} for a team; order does not matter. How many choices are there?",
        "How many {k}-element subsets does a set with {n} elements have?",
    ), n=n, k=k, people=people)
    return numeric_item("counting", statement, gold, [math.perm(n, k), math.comb(n, k - 1), math.comb(n + 1, k)])


def arrangements(rng: random.Random) -> Item:
    word = rng.choice(["LEVEL", "BANANA", "COOKIE", "PEPPER", "LETTER", "SUCCESS", "BALLOON", "COFFEE", "ADDED",
                       "RADAR", "TOMATO", "PAPAYA", "MISSISSIPPI", "CHEESE", "GOOGLE", "ALPACA"])
    counts = [word.count(c) for c in sorted(set(word))]
    gold = math.factorial(len(word))
    for c in counts:
        gold //= math.factorial(c)
    statement = fill(rng, (
        "How many distinct arrangements of the letters of {w} are there?",
        "Find the number of different ways to arrange the letters in the word {w}.",
        "How many distinguishable strings can be formed by rearranging all the letters of {w}?",
    ), w=word)
    return numeric_item("counting", statement, gold, [math.factorial(len(word)), gold * 2, math.factorial(len(set(word)))])


def dice_sum(rng: random.Random) -> Item:
    s = rng.randint(2, 12)
    count = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b == s)
    statement = fill(rng, (
        "Two fair six-sided dice are rolled. What is the probability that the sum is {s}?",
        "If you roll a pair of standard dice, what is the probability of a total of {s}?",
        "Alice throws two ordinary dice. Find the probability that the numbers shown add to {s}.",
    ), s=s)
    return numeric_item("probability", statement, Fraction(count, 36),
                        [Fraction(count + 1, 36), Fraction(1, 11), Fraction(count, 12)])


def draw_without_replacement(rng: random.Random) -> Item:
    red, blue = rng.randint(2, 9), rng.randint(2, 9)
    total = red + blue
    gold = Fraction(red, total) * Fraction(red - 1, total - 1)
    container = rng.choice(["bag", "box", "urn", "jar"])
    thing = rng.choice(["marbles", "balls", "chips"])
    statement = fill(rng, (
        "A {c} holds {r} red and {b} blue {t}. Two are drawn without replacement. What is the probability both are red?",
        "There are {r} red {t} and {b} blue {t} in a {c}. You take out two at random, one after another, without putting the first back. Find the probability that both are red.",
        "From a {c} with {r} red and {b} blue {t}, two {t} are selected at random without replacement. Compute P(both red).",
    ), c=container, r=red, b=blue, t=thing)
    return numeric_item("probability", statement, gold,
                        [Fraction(red, total) ** 2, Fraction(red, total), Fraction(red * (red - 1), total * total)])


def coin_flips(rng: random.Random) -> Item:
    n = rng.randint(3, 8)
    k = rng.randint(1, n - 1)
    gold = Fraction(math.comb(n, k), 2 ** n)
    statement = fill(rng, (
        "A fair coin is flipped {n} times. What is the probability of exactly {k} heads?",
        "If you toss a fair coin {n} times, what is the chance of getting exactly {k} heads?",
        "Find the probability that {n} flips of a fair coin produce exactly {k} heads.",
    ), n=n, k=k)
    return numeric_item("probability", statement, gold, [Fraction(1, 2 ** n), Fraction(k, n), Fraction(math.comb(n, k), 2 ** (n - 1))])


def triangle_area(rng: random.Random) -> Item:
    b, h = rng.randint(3, 30), rng.randint(3, 30)
    statement = fill(rng, (
        "A triangle has base {b} and height {h}. What is its area?",
        "Find the area of a triangle whose base measures {b} units and whose height is {h} units.",
        "A triangular sail is {b} m along the bottom and {h} m tall. What is its area in square meters?",
    ), b=b, h=h)
    return numeric_item("geometry", statement, Fraction(b * h, 2), [b * h, b + h, Fraction(b * h, 3)])


def hypotenuse(rng: random.Random) -> Item:
    a0, b0, c0 = rng.choice([(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41)])
    m = rng.randint(1, 4)
    a, b, c = a0 * m, b0 * m, c0 * m
    statement = fill(rng, (
        "A right triangle has legs {a} and {b}. How long is its hypotenuse?",
        "The legs of a right triangle measure {a} and {b}. Find the length of the hypotenuse.",
        "A ladder reaches {b} feet up a wall with its foot {a} feet from the wall. How long is the ladder?",
    ), a=a, b=b)
    return numeric_item("geometry", statement, c, [a + b, c + 1, b - a + c])


def circle(rng: random.Random) -> Item:
    r = rng.randint(2, 15)
    want = rng.choice(["area", "circumference"])
    use_d = rng.random() < 0.4
    size = f"diameter {2 * r}" if use_d else f"radius {r}"
    statement = fill(rng, (
        "What is the {want} of a circle with {size}? Express your answer in terms of $\\pi$.",
        "A circle has {size}. Find its {want}, in terms of $\\pi$.",
        "A round table top has {size} (in feet). What is its {want}? Leave $\\pi$ in the answer.",
    ), want=want, size=size)
    gold, wrong = (r * r, [2 * r, 4 * r * r, r]) if want == "area" else (2 * r, [r * r, r, 4 * r])
    return numeric_item("geometry", statement, gold, wrong, suffix="\\pi")


def polygon_angles(rng: random.Random) -> Item:
    n = rng.randint(5, 20)
    statement = fill(rng, (
        "What is the sum of the interior angles of a convex polygon with {n} sides, in degrees?",
        "Find the sum, in degrees, of the interior angles of a {n}-gon.",
        "A convex polygon has {n} vertices. What do its interior angles add up to, in degrees?",
    ), n=n)
    return numeric_item("geometry", statement, 180 * (n - 2), [180 * n, 180 * (n - 1), 360 * (n - 2)])


def arithmetic_sequence(rng: random.Random) -> Item:
    a, d, n = rng.randint(-10, 20), rng.choice([i for i in range(-6, 10) if i]), rng.randint(8, 60)
    terms = ", ".join(str(a + i * d) for i in range(4))
    want = rng.choice(["term", "sum"])
    if want == "term":
        gold, wrong = a + (n - 1) * d, [a + n * d, a + (n - 2) * d, n * d]
        templates = ("What is the {nth} term of the arithmetic sequence {terms}, ...?",
                     "The sequence {terms}, ... continues with a constant difference. Find term number {n}.",
                     "In the arithmetic progression {terms}, \\ldots, which number is in position {n}?")
    else:
        gold = n * (2 * a + (n - 1) * d) // 2
        wrong = [n * (2 * a + n * d) // 2, (n - 1) * (2 * a + (n - 2) * d) // 2, n * (a + (n - 1) * d)]
        templates = ("Find the sum of the first {n} terms of the arithmetic sequence {terms}, ....",
                     "What do the first {n} terms of {terms}, ... add up to?",
                     "Compute the total of the first {n} terms of the arithmetic progression {terms}, \\ldots.")
    return numeric_item("sequences", fill(rng, templates, n=n, nth=ordinal(n), terms=terms), gold, wrong)


def mean_median(rng: random.Random) -> Item:
    xs = [rng.randint(1, 60) for _ in range(rng.choice([5, 6, 7, 8]))]
    want = rng.choice(["mean", "median"])
    ordered = sorted(xs)
    mid = len(xs) // 2
    median = Fraction(ordered[mid]) if len(xs) % 2 else Fraction(ordered[mid - 1] + ordered[mid], 2)
    mean = Fraction(sum(xs), len(xs))
    listing = ", ".join(map(str, xs))
    statement = fill(rng, (
        "What is the {want} of the numbers {xs}?", "Find the {want} of this data set: {xs}.",
        "A student's quiz scores were {xs}. Compute the {want} score.",
    ), want=want, xs=listing)
    gold, other = (mean, median) if want == "mean" else (median, mean)
    return numeric_item("statistics", statement, gold, [other, Fraction(xs[mid]), Fraction(sum(xs), len(xs) - 1)])


MATH_GENERATORS: tuple[Callable[[random.Random], Item], ...] = (
    linear_equation, evaluate_quadratic, sum_of_roots, slope, add_fractions, percent_change, gcd_lcm,
    power_mod, divisor_count, multiples_in_range, choose, arrangements, dice_sum, draw_without_replacement,
    coin_flips, triangle_area, hypotenuse, circle, polygon_angles, arithmetic_sequence, mean_median,
)
