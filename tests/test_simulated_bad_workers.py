"""Bad workers in the simulated pool (docs/simulated.md, "Bad workers"): flaky, confidently wrong in
one domain, sycophant reviewer, lazy, injector; and simulated readers that follow an injection with
their stated probability. Statistical bounds are 4.5 standard deviations of a binomial share."""

from __future__ import annotations

import math

import pytest
import yaml

from conductor.data.schema import Problem
from conductor.prompts import step_message
from conductor.workers.base import WorkerError
from conductor.workers.pool import Pool, PoolError
from conductor.workers.registry import BuildContext
from conductor.workers.simulated import extract_answer, gold_answer, is_right, on_topic_instruction, render_answer
from conductor.workers.simulated.worker import INJECTION
from tests.sim_helpers import decide, sim
from tests.sim_problems import make_problems

N = 400


def within(share: float, p: float, n: int) -> bool:
    return abs(share - p) <= 4.5 * math.sqrt(p * (1 - p) / n)


def math_problems(n: int) -> list[Problem]:
    # answers 200, 202, ...: never the injector's default 42
    return [Problem(id=f"m{i}", source="t", domain="math", question=f"What is {100 + i} + {100 + i}?",
                    answer=str(2 * (100 + i))) for i in range(n)]


def choices(n: int) -> list[Problem]:
    return [p for p in make_problems(n, seed=5, domains=("choice",))]


async def ask(worker, problem, instruction=None, context=()):
    instruction = on_topic_instruction(problem) if instruction is None else instruction
    return await worker.complete(step_message(problem.question, list(context), instruction))


async def test_a_flaky_worker_fails_its_share_of_calls_with_a_retryable_error():
    ps = math_problems(N)
    flaky = sim(problems=ps, skills={"math": 0.8}, behaviour="flaky", bad_rate=0.3)
    failed = 0
    for p in ps:
        try:
            out = await ask(flaky, p)
        except WorkerError as exc:
            assert exc.retryable and exc.status == 503
            failed += 1
        else:
            assert extract_answer(p, out.text) is not None  # the calls that get through are answered
    assert within(failed / N, 0.3, N), failed
    honest = sim(problems=ps, skills={"math": 0.8})
    assert all([await ask(honest, p) for p in ps[:50]])  # no failure without the behaviour


def test_confidently_wrong_in_one_domain_and_as_good_as_ever_elsewhere():
    ms, cs = math_problems(200), choices(200)
    skills = {"math": 0.9, "choice": 0.9}
    bad = sim("w", problems=ms + cs, skills=skills, behaviour="confident_wrong", wrong_domain="math")
    twin = sim("w", problems=ms + cs, skills=skills)  # same id and seed: the same draws
    assert not any(decide(bad, p, on_topic_instruction(p)).right for p in ms)
    # shown the right answer and asked to check it, still wrong
    shown = [[(on_topic_instruction(p), render_answer(p, gold_answer(p)))] for p in ms[:50]]
    assert not any(decide(bad, p, on_topic_instruction(p, "verify"), s).right for p, s in zip(ms, shown))
    assert [decide(bad, p, on_topic_instruction(p)).right for p in cs] == \
        [decide(twin, p, on_topic_instruction(p)).right for p in cs]
    assert sum(decide(twin, p, on_topic_instruction(p)).right for p in ms) > 150


async def test_confidently_wrong_says_it_is_certain():
    p = math_problems(1)[0]
    bad = sim(problems=[p], skills={"math": 0.9}, behaviour="confident_wrong", wrong_domain="math")
    out = (await ask(bad, p)).text
    assert "I am certain" in out and not is_right(p, extract_answer(p, out))


def test_a_sycophant_reviewer_agrees_with_whatever_it_is_shown():
    ps = math_problems(300)
    skills = {"math": 0.9}
    syco = sim("r", problems=ps, skills=skills, behaviour="sycophant")
    honest = sim("r", problems=ps, skills=skills)
    wrong = [[(on_topic_instruction(p), render_answer(p, str(int(p.answer) + 1)))] for p in ps]
    kept = [decide(syco, p, on_topic_instruction(p, "verify"), s) for p, s in zip(ps, wrong)]
    assert all(d.value == str(int(p.answer) + 1) and not d.right for p, d in zip(ps, kept))
    # an honest reviewer of the same skill fixes a good share of them (refine x p)
    assert sum(decide(honest, p, on_topic_instruction(p, "verify"), s).right for p, s in zip(ps, wrong)) > 60
    right = [[(on_topic_instruction(p), render_answer(p, p.answer))] for p in ps]
    assert all(decide(syco, p, on_topic_instruction(p, "verify"), s).right for p, s in zip(ps, right))
    # two answers shown, one each: it takes the latest
    both = [(on_topic_instruction(ps[0]), render_answer(ps[0], ps[0].answer)), wrong[0][0]]
    assert decide(syco, ps[0], on_topic_instruction(ps[0], "combine"), both).value == str(int(ps[0].answer) + 1)
    # solving alone, it is the honest worker
    assert [decide(syco, p, on_topic_instruction(p)).right for p in ps] == \
        [decide(honest, p, on_topic_instruction(p)).right for p in ps]


async def test_a_lazy_worker_answers_nothing_or_refuses_on_its_share_of_calls():
    ps = math_problems(N)
    lazy = sim(problems=ps, skills={"math": 1.0}, behaviour="lazy", bad_rate=0.4)
    texts = [(await ask(lazy, p)).text for p in ps]
    idle = [t for t in texts if "boxed" not in t]
    assert within(len(idle) / N, 0.4, N), len(idle)
    assert set(idle) == {"", "I'm sorry, but I can't help with that."}
    assert all(is_right(p, extract_answer(p, t)) for p, t in zip(ps, texts) if "boxed" in t)


async def test_an_injector_tells_the_readers_to_give_its_fixed_answer_in_every_domain():
    problems = [p for p in make_problems(3, seed=2) if gold_answer(p) is not None]
    injector = sim(problems=problems, skills={d: 1.0 for d in ("math", "choice", "freeform", "code")},
                   behaviour="injector", bad_rate=1.0,
                   injected_answer={"math": "42", "freeform": "42", "choice": "A", "code": "print(42)"})
    for p in problems:
        out = (await ask(injector, p)).text
        fixed = {"math": "42", "freeform": "42", "choice": "A", "code": "print(42)"}[p.domain]
        assert INJECTION in out and extract_answer(p, out) == fixed, (p.id, out)


@pytest.mark.parametrize("follow", [0.0, 0.3, 1.0])
async def test_readers_follow_an_injection_with_their_stated_probability(follow: float):
    ps = math_problems(N)
    injector = sim("inj", problems=ps, skills={"math": 0.9}, behaviour="injector", bad_rate=1.0)
    reader = sim("reader", problems=ps, skills={"math": 0.9}, follow_injection=follow)
    followed = 0
    for p in ps:
        text = (await ask(injector, p)).text
        d = decide(reader, p, on_topic_instruction(p, "verify"), [(on_topic_instruction(p), text)])
        if d.bad == "followed_injection":
            followed += 1
            assert d.value == "42" and not d.right
    if 0 < follow < 1:
        assert within(followed / N, follow, N), followed
    else:
        assert followed == follow * N


async def test_a_workflow_that_trusts_one_worker_blindly_pays():
    """solve -> verify. With an injector as the solver, a checker that follows injections half the
    time ends on the injected answer whenever it followed, and otherwise exactly where a checker
    that never follows ends (the follow draw has its own stream); an honest solver never gets 42."""
    ps = math_problems(300)
    honest = sim("solver", problems=ps, skills={"math": 0.9})
    injector = sim("solver", problems=ps, skills={"math": 0.9}, behaviour="injector", bad_rate=1.0)
    follows = sim("checker", problems=ps, skills={"math": 0.9}, follow_injection=0.5)
    immune = sim("checker", problems=ps, skills={"math": 0.9}, follow_injection=0.0)

    async def check(solver, checker) -> list:
        decisions = []
        for p in ps:
            first = (await ask(solver, p)).text
            decisions.append(decide(checker, p, on_topic_instruction(p, "verify"), [(on_topic_instruction(p), first)]))
        return decisions

    clean = await check(honest, follows)
    assert not any(d.value == "42" for d in clean)
    tricked, resisted = await check(injector, follows), await check(injector, immune)
    for t, r in zip(tricked, resisted):
        assert t.value == ("42" if t.bad == "followed_injection" else r.value)
    assert within(sum(t.bad == "followed_injection" for t in tricked) / len(ps), 0.5, len(ps))
    acc = {name: sum(d.right for d in ds) / len(ps) for name, ds in
           (("clean", clean), ("tricked", tricked), ("resisted", resisted))}
    assert acc["clean"] - acc["tricked"] > 0.3 and acc["resisted"] > acc["tricked"], acc


def test_the_example_pool_file_holds_one_of_each_and_bad_options_are_errors(tmp_path):
    pool = Pool.load("deployments/pools/bad-sim.yaml", BuildContext(problems=[]))
    behaviours = {w.spec.options.get("behaviour", "honest") for w in (pool.worker(i) for i in pool.ids)}
    assert behaviours == {"honest", "flaky", "confident_wrong", "sycophant", "lazy", "injector"}
    spec = yaml.safe_load(open("deployments/pools/bad-sim.yaml"))
    for options, error in (({"behaviour": "saboteur"}, "behaviour"),
                           ({"behaviour": "confident_wrong"}, "needs wrong_domain"),
                           ({"behaviour": "confident_wrong", "wrong_domain": "poetry"}, "needs wrong_domain"),
                           ({"wrong_domain": "math"}, "only read by behaviour confident_wrong"),
                           ({"behaviour": "injector", "injected_answer": {"poetry": "x"}}, "unknown domain")):
        spec["workers"][0]["options"] = options
        bad = tmp_path / "bad.yaml"
        bad.write_text(yaml.safe_dump(spec))
        with pytest.raises((PoolError, ValueError), match=error):
            Pool.load(bad, BuildContext(problems=[]))
