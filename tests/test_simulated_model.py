"""The simulated worker model (docs/simulated.md), each property measured over >= 1,000 seeded
problems of tests/sim_problems.py. Bounds are several standard errors wide; the draws are seeded,
so a run is reproducible."""

from __future__ import annotations

from statistics import mean

import pytest

from conductor.data.schema import DOMAINS
from conductor.workers.simulated import (
    ProblemBank,
    difficulty_quantile,
    instruction_quality,
    on_topic_instruction,
    render_answer,
)
from conductor.workers.simulated.instructions import FORMAT_STEMS, TOPIC_STEMS
from tests.sim_helpers import accuracy, attempt_then_verify, attempts_then_combine, decide, sim
from tests.sim_problems import make_problems

N = 1000  # problems per domain
PROBLEMS = make_problems(N, seed=1)
BANK = ProblemBank(PROBLEMS)
BY_DOMAIN = {d: [p for p in PROBLEMS if p.domain == d] for d in DOMAINS}

OLD_TEMPLATE = "Solve the task. Show your reasoning briefly and end with the final answer in the requested format."
KITCHEN_SINK = "Solve it: " + " ".join(
    f"{' '.join(TOPIC_STEMS[d])} {' '.join(FORMAT_STEMS[d])}" for d in DOMAINS
) + " \\boxed{} letter option python fenced block short answer"
FIXED_STRINGS = [
    "",
    "Solve it.",
    OLD_TEMPLATE,
    "Write a haiku about cats.",
    KITCHEN_SINK,
    "Give the final, correct answer: choose and select carefully, combine everything you know.",
    *(on_topic_instruction(BY_DOMAIN[d][1]) for d in DOMAINS),  # each domain's best string, used everywhere
]


@pytest.mark.parametrize("skill", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("domain", DOMAINS)
def test_a_worker_alone_averages_its_skill(domain, skill):
    w = sim(bank=BANK, skills={domain: skill})
    assert accuracy(w, BY_DOMAIN[domain]) == pytest.approx(skill, abs=0.04)


def test_source_skills_override_the_domain():
    w = sim(bank=BANK, skills={"math": 0.9}, source_skills={"factory_math": 0.2})
    assert accuracy(w, BY_DOMAIN["math"]) == pytest.approx(0.2, abs=0.04)


def test_difficulty_is_shared_so_errors_correlate():
    a, b = sim("a", bank=BANK, skills={"math": 0.6}), sim("b", bank=BANK, skills={"math": 0.6})
    ps = BY_DOMAIN["math"]
    wrong_a = [not decide(a, p, on_topic_instruction(p)).right for p in ps]
    wrong_b = [not decide(b, p, on_topic_instruction(p)).right for p in ps]
    p_b = mean(wrong_b)
    p_b_given_a = mean(wb for wa, wb in zip(wrong_a, wrong_b) if wa)
    assert p_b_given_a > p_b + 0.15
    # and the hard half of the problems beats everyone more often
    hard = [difficulty_quantile(p) > 0.5 for p in ps]
    assert mean(w for w, h in zip(wrong_a, hard) if h) > mean(w for w, h in zip(wrong_a, hard) if not h) + 0.3


def test_a_difficulty_given_in_meta_is_used():
    easy = [p.model_copy(update={"id": p.id + "e", "meta": {**p.meta, "difficulty": 0.05}}) for p in BY_DOMAIN["math"]]
    hard = [p.model_copy(update={"id": p.id + "h", "meta": {**p.meta, "difficulty": 0.95}}) for p in BY_DOMAIN["math"]]
    # the same questions: one bank each
    on_easy = sim(problems=easy, skills={"math": 0.6}, difficulty_share=1.0)
    on_hard = sim(problems=hard, skills={"math": 0.6}, difficulty_share=1.0)
    assert accuracy(on_easy, easy) > 0.9 and accuracy(on_hard, hard) < 0.3


def test_instruction_quality_is_the_stated_function():
    p = BY_DOMAIN["math"][1]  # subject from the factory
    assert instruction_quality(p, on_topic_instruction(p)) == pytest.approx(1.0)
    assert instruction_quality(p, "") == 0.0
    assert instruction_quality(p, OLD_TEMPLATE) == 0.0  # generic words only
    assert instruction_quality(p, "Write a haiku about cats.") == pytest.approx(-0.3)  # asks for something else
    assert instruction_quality(p, "Write a Python program; implement the algorithm.") == pytest.approx(-0.3)
    # one topic word, no format: 0.7 * 1 * 1/2
    assert instruction_quality(p, "Compute it.") == pytest.approx(0.35)
    # two topic words and the format: full marks; a code word dilutes the precision to 2/3
    assert instruction_quality(p, "Compute and simplify; answer in \\boxed{}.") == pytest.approx(1.0)
    assert instruction_quality(p, "Compute and simplify the algorithm; answer in \\boxed{}.") == pytest.approx(
        0.7 * 2 / 3 + 0.3)
    # asking for another domain's format loses the format credit
    assert instruction_quality(p, "Compute and simplify; reply with a letter.") == pytest.approx(0.7)


def test_on_topic_instructions_beat_every_fixed_string_across_domains():
    w = sim(bank=BANK, skills={d: 0.6 for d in DOMAINS})
    on_topic = mean(accuracy(w, BY_DOMAIN[d]) for d in DOMAINS)
    for text in FIXED_STRINGS:
        fixed = mean(accuracy(w, BY_DOMAIN[d], lambda _p, t=text: t) for d in DOMAINS)
        assert fixed < on_topic - 0.05, text


@pytest.mark.parametrize("domain", DOMAINS)
def test_off_topic_and_empty_instructions_do_worse_in_each_domain(domain):
    w = sim(bank=BANK, skills={d: 0.6 for d in DOMAINS})
    best = accuracy(w, BY_DOMAIN[domain])
    other = next(d for d in DOMAINS if d != domain)
    for text in ("", "Write a haiku about cats.", KITCHEN_SINK, on_topic_instruction(BY_DOMAIN[other][1])):
        assert accuracy(w, BY_DOMAIN[domain], lambda _p, t=text: t) < best - 0.08, text


def test_common_words_do_not_flip_a_solve_step_into_review():
    w = sim(bank=BANK, skills={"math": 0.6})
    plain = "Solve this algebra problem; compute and give the answer in \\boxed{}."
    wordy = plain + " Give the final, correct answer: choose, select, combine, verify, check."
    for p in BY_DOMAIN["math"][:200]:
        d = decide(w, p, wordy)
        assert d.role == "solve" and d.p_solve == pytest.approx(w.p_solve(p, plain))


def test_common_words_do_not_make_a_step_that_sees_answers_review_them():
    w = sim(bank=BANK, skills={"math": 0.6})
    p = BY_DOMAIN["math"][3]
    seen = [("Solve.", render_answer(p, "123456"))]
    text = "Using the work above, choose and select the final, correct algebra answer; compute it in \\boxed{}."
    assert all(decide(w, p, text, seen).role == "anchored" for _ in range(20))
    assert decide(w, p, "Check the algebra work above; compute it in \\boxed{}.", seen).role == "review"


def test_review_keeps_right_answers_and_fixes_wrong_ones_by_skill():
    ps = BY_DOMAIN["math"]
    for skill in (0.3, 0.8):
        w = sim(bank=BANK, skills={"math": skill}, refine=0.6, slip=0.1)
        kept = [decide(w, p, on_topic_instruction(p, "verify"), [("Solve.", render_answer(p, p.answer))])
                for p in ps]
        # P(keep) = 1 - slip (1 - p)(1 - refine p) >= 1 - slip
        assert mean(d.right for d in kept) > 0.9
        assert mean(d.right for d in kept) == pytest.approx(
            mean(1 - 0.1 * (1 - d.p_solve) * (1 - 0.6 * d.p_solve) for d in kept), abs=0.02)
        decisions = [decide(w, p, on_topic_instruction(p, "verify"), [("Solve.", render_answer(p, "123456"))])
                     for p in ps]
        fixed = mean(d.right for d in decisions)
        expected = mean(0.6 * d.p_solve for d in decisions)  # refine x P(solve), per problem
        assert fixed == pytest.approx(expected, abs=0.04)
        assert all(d.value == "123456" for d in decisions if not d.right)  # it keeps what it saw
    weak = sim("weak", bank=BANK, skills={"math": 0.3}, refine=0.6)
    strong = sim("strong", bank=BANK, skills={"math": 0.8}, refine=0.6)
    shown = lambda p: [("Solve.", render_answer(p, "123456"))]  # noqa: E731
    assert mean(decide(strong, p, on_topic_instruction(p, "verify"), shown(p)).right for p in ps) > \
        mean(decide(weak, p, on_topic_instruction(p, "verify"), shown(p)).right for p in ps) + 0.2


def test_seeing_answers_without_being_asked_to_review_anchors_on_them():
    w = sim(bank=BANK, skills={"math": 0.0}, anchor=0.5)
    ps = BY_DOMAIN["math"]
    decisions = [decide(w, p, "Using the work above, solve the algebra problem in \\boxed{}.",
                        [("Solve.", render_answer(p, p.answer))]) for p in ps]
    assert all(d.role == "anchored" for d in decisions)
    assert mean(d.right for d in decisions) == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("domain", DOMAINS)
def test_three_attempts_and_an_aggregator_beat_one_attempt(domain):
    w = sim(bank=BANK, skills={domain: 0.6})
    ps = BY_DOMAIN[domain]
    one = accuracy(w, ps)
    ensemble = mean(attempts_then_combine([w, w, w], w, p) for p in ps)
    verified = mean(attempt_then_verify(w, w, p) for p in ps)
    assert ensemble > one + 0.04
    assert verified > one + 0.02


def test_majority_votes_can_fail():
    """Wrong answers agree more often than chance (an attractive distractor), so a wrong majority
    sometimes outvotes a right minority."""
    w = sim(bank=BANK, skills={"choice": 0.35})
    ps = BY_DOMAIN["choice"]
    outvoted = 0
    for p in ps:
        values = [decide(w, p, on_topic_instruction(p)).value for _ in range(3)]
        wrong = [v for v in values if v != p.answer]
        outvoted += len(wrong) == 2 and len(set(wrong)) == 1
    assert outvoted > 0.05 * len(ps)
    # two wrong letters agree more often than the 1/3 of a uniform pick among three
    pairs = agree = 0
    for p in ps:
        values = [decide(w, p, on_topic_instruction(p)).value for _ in range(4)]
        wrong = [v for v in values if v != p.answer]
        for i in range(len(wrong)):
            for j in range(i + 1, len(wrong)):
                pairs += 1
                agree += wrong[i] == wrong[j]
    assert agree / pairs > 0.37
    assert mean(attempts_then_combine([w, w, w], w, p) for p in ps) < 0.9


def test_attempts_at_chance_gain_little_from_an_aggregator():
    # a guesser: P(right) = 1/4 on every problem (no difficulty slope), no judgement of its own
    w = sim(bank=BANK, skills={"choice": 0.25}, refine=0.0, discrimination=0.001)
    ps = BY_DOMAIN["choice"]
    assert mean(attempts_then_combine([w, w, w], w, p) for p in ps) < accuracy(w, ps) + 0.05


def test_docs_state_every_word_list_of_the_quality_function():
    from pathlib import Path

    from conductor.workers.simulated.instructions import GENERIC, REVIEW_STEMS

    doc = Path("docs/simulated.md").read_text()
    for d in DOMAINS:
        for stem in TOPIC_STEMS[d] + FORMAT_STEMS[d]:
            assert f"`{stem}`" in doc, stem
    for stem in REVIEW_STEMS:
        assert f"`{stem}`" in doc, stem
    generic = doc.split("Generic words (count for nothing):", 1)[1].split("Review stems", 1)[0]
    assert set(GENERIC) == set(generic.replace("\n", " ").rstrip(". ").split()), set(GENERIC) ^ set(generic.split())
