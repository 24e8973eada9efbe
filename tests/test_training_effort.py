"""Effort levels in training: each GRPO row draws a level its prompt states, and the reward
charges the rollout's worker calls at that level's rate (unparsed rollouts stay at 0). Over a
simulated pool whose workers are always right or always wrong, so each reward is certain."""

from __future__ import annotations

import pytest

from conductor.kind_reader import kind_line
from conductor.data.schema import Problem
from conductor.effort import DEFAULT_CALL_RATES, EFFORT_LINES, Effort
from conductor.training.config import effort_rates, local_profile
from conductor.training.dataset import CONDUCTOR_SPEC, PoolSampling, build_rows, to_dataset
from conductor.training.reward import WorkflowReward
from conductor.types import Prices, WorkerSpec
from conductor.workers.pool import Pool
from conductor.workers.registry import BuildContext

PROBLEMS = [Problem(id=f"t-{i}", source="test", domain="math", question=f"What is {i} * 7?", answer=str(7 * i))
            for i in range(1, 41)]


def _sim(id_: str, skill: float) -> WorkerSpec:
    return WorkerSpec(id=id_, provider="simulated", description=f"{id_} worker", prices=Prices(input=1.0, output=1.0),
                      options={"skills": {d: skill for d in ("math", "choice", "freeform", "code")}, "refine": skill,
                               "latency_ms": {"median": 1}, "output_tokens": {"median": 100}})


@pytest.fixture
def pool() -> Pool:
    return Pool.from_specs([_sim("right", 1.0), _sim("wrong", 0.0), CONDUCTOR_SPEC], BuildContext(problems=PROBLEMS))


def test_rows_draw_a_level_their_prompt_states_over_the_same_pools(pool):
    sampling = PoolSampling(randomized=True, k_min=1)
    plain = build_rows(PROBLEMS, pool, sampling, seed=3)
    rows = build_rows(PROBLEMS, pool, PoolSampling(randomized=True, k_min=1, efforts=tuple(Effort)), seed=3)
    assert [r.pool_ids for r in rows] == [r.pool_ids for r in plain]  # the draw of levels leaves the pools alone
    assert {r.effort for r in rows} == set(Effort) and {r.effort for r in plain} == {None}
    data = to_dataset(rows, pool, examples=False)
    for row, prompt, level in zip(rows, data["prompt"], data["effort"]):
        assert level == row.effort
        assert prompt[-1]["content"].endswith(f"{EFFORT_LINES[row.effort]}\n\n{kind_line(row.problem.task_text)}")
    assert not any(line in p[-1]["content"] for p in to_dataset(plain, pool, examples=False)["prompt"]
                   for line in EFFORT_LINES.values())


def wf(worker: int, n: int) -> str:
    subtasks = ", ".join(['"Solve it and put the answer in \\\\boxed{}."'] * n)
    return f"model_id = {[worker] * n}\nsubtasks = [{subtasks}]\naccess_list = [{', '.join(['[]'] * n)}]"


async def test_the_reward_charges_calls_at_the_rows_level(pool):
    sunk = []
    reward = WorkflowReward(pool, effort_rates=DEFAULT_CALL_RATES, sink=lambda t, step: sunk.append(t))
    texts = [wf(0, 1), wf(0, 2), wf(0, 3), wf(0, 3), wf(1, 1), "garbage"]
    levels = ["low", "medium", "high", None, "low", "low"]
    out = await reward(prompts=[None] * 6, completions=texts, problem=[PROBLEMS[0].model_dump_json()] * 6,
                       pool_ids=[["right", "wrong"]] * 6, effort=levels)
    assert out == pytest.approx([1 - 0.04, 1 - 2 * 0.005, 1.0, 1.0, 0.5 - 0.04, 0.0])
    # the trace records the prompt the row stated, and its reward unshaped
    assert EFFORT_LINES[Effort.LOW] in sunk[0].conductor_prompt[-1].content and sunk[0].reward == 1.0
    assert not any(line in sunk[3].conductor_prompt[-1].content for line in EFFORT_LINES.values())


@pytest.mark.parametrize("level,budget", [("low", 1), ("medium", 2), ("high", 5), (None, 5)])
async def test_a_levels_budget_is_the_step_limit_its_prompt_states_and_its_parse_holds(pool, level, budget):
    """Low allows one call and medium two (conductor/effort.py EFFORT_MAX_STEPS): the prompt states
    the limit, and a workflow over it is refused like any over the limit (reward 0, no call)."""
    sunk = []
    reward = WorkflowReward(pool, effort_rates=DEFAULT_CALL_RATES, sink=lambda t, step: sunk.append(t))
    texts = [wf(0, budget), wf(0, budget + 1)]
    out = await reward(prompts=[None] * 2, completions=texts, problem=[PROBLEMS[0].model_dump_json()] * 2,
                       pool_ids=[["right", "wrong"]] * 2, effort=[level] * 2)
    (ok,), (over,) = ([t for t in sunk if (t.parse_status == "ok") == want] for want in (True, False))
    assert f"At most {budget} steps." in ok.conductor_prompt[0].content
    assert out[0] == pytest.approx(1 - budget * DEFAULT_CALL_RATES.get(level, 0.0)) and ok.calls == budget
    assert out[1] == 0.0 and over.calls == 0 and f"{budget + 1} steps > limit {budget}" in (over.parse_error or "")


def test_effort_settings_are_checked(tmp_path):
    assert effort_rates(local_profile(tmp_path)) == {}
    assert effort_rates(local_profile(tmp_path, effort_levels=["low", "high"])) == {Effort.LOW: 0.04, Effort.HIGH: 0.0}
    assert effort_rates(local_profile(tmp_path, effort_levels=["low"], effort_call_rates=[0.02])) == {Effort.LOW: 0.02}
    for bad, needle in [({"effort_levels": ["low", "low"]}, "repeats"), ({"effort_levels": ["extreme"]}, "one of"),
                        ({"effort_levels": ["low"], "effort_call_rates": [0.01, 0.02]}, "one each"),
                        ({"effort_levels": ["low"], "effort_call_rates": [0.05]}, "must be >= 0 and < 0.05"),
                        ({"effort_levels": ["low"], "effort_call_rates": [-0.01]}, "must be >= 0")]:
        with pytest.raises(ValueError, match=None) as caught:
            effort_rates(local_profile(tmp_path, **bad))
        assert needle in str(caught.value)
