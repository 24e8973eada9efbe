"""Reviews in the simulated pool: a worker's judgement of a problem is its own and stable across
calls (docs/simulated.md, "review"), so asking one worker to review itself again and again finds
little it did not find the first time, while a different worker's review is an independent check.
Measured over >= 1,000 seeded problems; the draws are seeded, so a run is reproducible."""

from __future__ import annotations

from statistics import mean

import pytest

from conductor.data.schema import Problem
from conductor.workers.simulated import ProblemBank, SimulatedWorker, on_topic_instruction, render_answer
from tests.sim_helpers import accuracy, decide, sim
from tests.sim_problems import make_problems

N = 1000  # problems per domain
PROBLEMS = make_problems(N, seed=3)
BANK = ProblemBank(PROBLEMS)
MATH = [p for p in PROBLEMS if p.domain == "math"]
CHOICE = [p for p in PROBLEMS if p.domain == "choice"]


def reviewed(solver: SimulatedWorker, reviewers: list[SimulatedWorker], p: Problem) -> bool:
    """`solver` answers, then each reviewer in turn checks and revises the answer of the step
    before (reflect: each round reads the last one)."""
    d = decide(solver, p, on_topic_instruction(p))
    for r in reviewers:
        shown = [(on_topic_instruction(p), render_answer(p, d.value or ""))]
        d = decide(r, p, on_topic_instruction(p, "verify"), shown)
    return d.right


def acc(solver: SimulatedWorker, reviewers: list[SimulatedWorker], ps: list[Problem]) -> float:
    return mean(reviewed(solver, reviewers, p) for p in ps)


@pytest.mark.parametrize("ps", [MATH, CHOICE], ids=["math", "choice"])
def test_five_self_reviews_gain_little_over_one(ps):
    domain = ps[0].domain
    w = sim("w", bank=BANK, skills={domain: 0.6})
    one = acc(w, [w], ps)
    five = acc(w, [w] * 5, ps)
    assert five < one + 0.03
    # and one self-review is still worth something over the bare attempt (it does check)
    assert one > accuracy(w, ps) + 0.02


def test_independent_reviews_restore_the_old_gain():
    """review_fresh = 1 (every judgement a fresh draw) is the old model: repeated self-review keeps
    fixing what it missed, the reward hack the fixed judgement removes."""
    w = sim("w", bank=BANK, skills={"math": 0.6}, review_fresh=1.0)
    assert acc(w, [w] * 5, MATH) > acc(w, [w], MATH) + 0.05


def test_a_different_reviewer_beats_reviewing_yourself():
    w = sim("w", bank=BANK, skills={"math": 0.6})
    twin = sim("twin", bank=BANK, skills={"math": 0.6})
    strong = sim("strong", bank=BANK, skills={"math": 0.85})
    self_two = acc(w, [w, w], MATH)
    # a second review by a different worker of the same skill finds what the first one missed
    assert acc(w, [w, twin], MATH) > self_two + 0.02
    # a stronger different reviewer beats any number of self-reviews
    assert acc(w, [strong], MATH) > acc(w, [w], MATH) + 0.04
    assert acc(w, [strong], MATH) > acc(w, [w] * 5, MATH) + 0.03


def test_one_review_still_fixes_with_refine_times_p():
    """The fixed judgement is uniform over problems: one review's fix rate is unchanged."""
    w = sim("w", bank=BANK, skills={"math": 0.7}, refine=0.6)
    ds = [decide(w, p, on_topic_instruction(p, "verify"), [("Solve.", render_answer(p, "123456"))]) for p in MATH]
    assert mean(d.right for d in ds) == pytest.approx(mean(0.6 * d.p_solve for d in ds), abs=0.04)


def test_a_worker_that_missed_a_fix_misses_it_again():
    w = sim("w", bank=BANK, skills={"math": 0.7}, review_fresh=0.0)
    shown = lambda p: [("Solve.", render_answer(p, "123456"))]  # noqa: E731
    first = [decide(w, p, on_topic_instruction(p, "verify"), shown(p)).right for p in MATH]
    again = [decide(w, p, on_topic_instruction(p, "verify"), shown(p)).right for p in MATH]
    assert first == again  # with no fresh share, the same judgement every time
    other = sim("w", bank=BANK, skills={"math": 0.7}, review_fresh=0.0, seed=1)
    theirs = [decide(other, p, on_topic_instruction(p, "verify"), shown(p)).right for p in MATH]
    assert first != theirs  # another seed (or worker) judges independently
