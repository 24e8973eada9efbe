"""The GRPO reward on hand-written completions over a simulated pool whose workers are always
right or always wrong (so each expected reward is certain)."""

from __future__ import annotations

import random

import pytest

from conductor.data.schema import Problem
from conductor.reward import blend
from conductor.training.dataset import CONDUCTOR_SPEC, PoolSampling, build_rows, to_dataset
from conductor.training.reward import WorkflowReward
from conductor.types import Message, Prices, WorkerSpec
from conductor.workers.pool import Pool
from conductor.workers.registry import BuildContext

PROBLEM = Problem(id="t-1", source="test", domain="math", question="What is 6 * 7?", answer="42")
CHOICE = Problem(id="t-2", source="test", domain="choice", question="Pick B.", answer="B", choices=["x", "y", "z", "w"])


def _sim(id_: str, skill: float, price: float = 1.0) -> WorkerSpec:
    return WorkerSpec(
        id=id_, provider="simulated", description=f"{id_} worker",
        prices=Prices(input=price, output=price),
        options={"skills": {d: skill for d in ("math", "choice", "freeform", "code")}, "refine": skill,
                 "latency_ms": {"median": 1}, "output_tokens": {"median": 100}},
    )


@pytest.fixture
def pool() -> Pool:
    specs = [_sim("right", 1.0), _sim("wrong", 0.0), CONDUCTOR_SPEC]
    return Pool.from_specs(specs, BuildContext(problems=[PROBLEM, CHOICE]))


def wf(worker: int, n: int = 1) -> str:
    subtasks = ", ".join(['"Solve it and put the answer in \\\\boxed{}."'] * n)
    access = ", ".join(["[]"] * n)
    return f"model_id = {[worker] * n}\nsubtasks = [{subtasks}]\naccess_list = [{access}]"


async def _call(reward: WorkflowReward, texts: list[str], ids: list[str], recursion: bool = False, problem: Problem = PROBLEM):
    metrics: dict[str, list[float]] = {}
    extra: dict[str, list] = {}
    out = await reward(
        prompts=[None] * len(texts),
        completions=[[{"role": "assistant", "content": t}] for t in texts],
        problem=[problem.model_dump_json()] * len(texts),
        pool_ids=[ids] * len(texts),
        recursion=[recursion] * len(texts),
        log_metric=lambda k, v: metrics.setdefault(k, []).append(v),
        log_extra=lambda k, v: extra.setdefault(k, []).extend(v),
    )
    return out, metrics, extra


async def test_unparseable_wrong_right(pool: Pool) -> None:
    sunk = []
    reward = WorkflowReward(pool, sink=lambda t, step: sunk.append((t, step)))
    out, metrics, extra = await _call(reward, ["I think Model 0.", wf(1), wf(0)], ["right", "wrong"])
    assert out == [0.0, 0.5, 1.0]
    assert extra["parse"][0] != "ok" and extra["parse"][1:] == ["ok", "ok"]
    assert extra["calls"] == [0, 1, 1]
    assert metrics["format_rate"] == [pytest.approx(2 / 3)]
    assert metrics["accuracy"] == [pytest.approx(1 / 3)]
    assert [t.problem_id for t, _ in sunk] == ["t-1"] * 3
    assert reward.stats.rollouts == 3 and reward.stats.calls == 2


async def test_logs_the_share_of_each_shape_per_domain(pool: Pool) -> None:
    # 4 math rollouts: unparsed, single, single, 3 independent attempts + an aggregator.
    fan = ('model_id = [0, 0, 0, 0]\nsubtasks = ["Solve.", "Solve.", "Solve.", "Compare the answers."]\n'
           'access_list = [[], [], [], [0, 1, 2]]')
    _, metrics, _ = await _call(WorkflowReward(pool), ["Model 0, I think.", wf(0), wf(1), fan], ["right", "wrong"])
    assert metrics["shape_share/math/single"] == [0.5]
    assert metrics["shape_share/math/unparsed"] == [0.25]
    assert metrics["shape_share/math/fan_out_aggregate"] == [0.25]
    assert metrics["shape_share/math/chain"] == [0.0]  # logged as 0, so an average over batches is a share
    assert not any(k.startswith("shape_share/choice/") for k in metrics)  # no choice rollout: unknown, not 0


async def test_ids_follow_the_offered_order(pool: Pool) -> None:
    # Offered reversed, "Model 0" is the always-wrong worker.
    out, _, _ = await _call(WorkflowReward(pool), [wf(0), wf(1)], ["wrong", "right"], problem=CHOICE)
    assert out == [0.5, 1.0]


async def test_cost_weight_subtracts_dollars(pool: Pool) -> None:
    plain, _, extra = await _call(WorkflowReward(pool), [wf(0, 2)], ["right", "wrong"])
    usd = extra["usd"][0]
    assert usd > 0
    shaped, _, _ = await _call(WorkflowReward(pool, cost_weight=100.0), [wf(0, 2)], ["right", "wrong"])
    assert shaped[0] == pytest.approx(plain[0] - 100.0 * usd)


class ScriptedPolicy:
    """The policy's second-round text, fixed (the real one is the trainer's model)."""

    def __init__(self, text: str) -> None:
        self.text, self.seen = text, []

    async def generate(self, messages: list[Message]) -> str:
        self.seen.append(messages)
        return self.text


@pytest.mark.parametrize(
    ("first", "second", "r0", "r1"),
    [(wf(1), wf(0), 0.5, 1.0), (wf(0), wf(1), 1.0, 0.5), (wf(0), "model_id = []\nsubtasks = []\naccess_list = []", 1.0, 1.0)],
)
async def test_recursion_blends_the_second_round(pool: Pool, first: str, second: str, r0: float, r1: float) -> None:
    sunk = []
    policy = ScriptedPolicy(second)
    reward = WorkflowReward(pool, policy=policy, recursion_discount=0.25, sink=lambda t, s: sunk.append(t))
    out, _, _ = await _call(reward, [first], ["right", "wrong", "conductor"], recursion=True)
    assert out == [pytest.approx(blend(r0, r1, 0.25))]
    # The policy saw the first round's responses; the second round is the first's child.
    assert "# Earlier workflow\nStep 0: Model " in policy.seen[0][-1].content
    first_trace, second_trace = sunk
    assert second_trace.parent_trace_id == first_trace.trace_id and second_trace.depth == 1


async def test_no_second_round_without_recursion(pool: Pool) -> None:
    policy = ScriptedPolicy(wf(0))
    out, _, _ = await _call(WorkflowReward(pool, policy=policy), [wf(1)], ["right", "wrong"], recursion=False)
    assert out == [0.5] and policy.seen == []


def test_randomized_pool_rows(pool: Pool) -> None:
    problems = [Problem(id=f"p{i}", source="t", domain="math", question=f"q{i}", answer="1") for i in range(200)]
    big = Pool.from_specs([_sim(f"w{i}", 0.5) for i in range(6)] + [CONDUCTOR_SPEC], BuildContext(problems=problems))
    sampling = PoolSampling(randomized=True, k_min=2, k_max=4, recursion_fraction=0.5)
    rows = build_rows(problems, big, sampling, seed=3)
    sizes = {len([i for i in r.pool_ids if i != "conductor"]) for r in rows}
    assert sizes == {2, 3, 4}
    orders = {tuple(i for i in r.pool_ids if i != "conductor") for r in rows}
    assert any(list(o) != sorted(o, key=lambda x: int(x[1:])) for o in orders)  # shuffled, not file order
    recursing = [r for r in rows if r.recursion]
    assert 60 < len(recursing) < 140
    assert all((r.pool_ids[-1] == "conductor") == r.recursion for r in rows)
    assert build_rows(problems, big, sampling, seed=3) == rows  # seeded
    assert build_rows(problems, big, sampling, seed=4) != rows
    full = build_rows(problems, big, PoolSampling(), seed=3)
    assert all(r.pool_ids == tuple(f"w{i}" for i in range(6)) for r in full)
    ds = to_dataset(rows[:3], big, examples=False)
    prompt = ds[0]["prompt"][-1]["content"]
    assert prompt.count("Model ") == len(rows[0].pool_ids) and rows[0].problem.question in prompt


async def test_a_group_grades_each_distinct_answer_once_with_the_uncached_verdicts(
        pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    import conductor.verify as verify_mod
    from conductor.verify import VERDICTS

    VERDICTS.clear()
    graded: list[str] = []
    real = verify_mod._grade

    def counted(problem: Problem, text: str, limits: object) -> object:
        graded.append(text)
        return real(problem, text, limits)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_mod, "_grade", counted)
    # answers a plain-rational comparison settles never reach _grade; this is about the ones that
    # need sympy, so that shortcut is off here
    monkeypatch.setattr(verify_mod, "verify_math_quick", lambda gold, text: None)
    sunk: list = []
    reward = WorkflowReward(pool, sink=lambda t, step: sunk.append(t))
    out, _, _ = await _call(reward, [wf(0)] * 8 + [wf(1)] * 8, ["right", "wrong"])
    assert out == [1.0] * 8 + [0.5] * 8
    answers = {t.answer for t in sunk}
    assert sorted(graded) == sorted(answers)  # one grading per distinct answer, not per rollout
    assert 2 <= len(answers) < 16
    for t in sunk:  # every rollout's verdict is the one an uncached grading gives
        assert t.verdict == real(PROBLEM, t.answer, None)
