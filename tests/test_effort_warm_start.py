"""The warm start of a run with effort rows states each row's level and draws its plan among the
level's step counts (conductor/effort.py EFFORT_STEPS: low 1, medium 2, high 4-5), so that the
model starts from plans that depend on the level's line; a run without effort rows is unchanged
(every plan, no level line)."""

from __future__ import annotations

from collections import Counter

from conductor.effort import EFFORT_LINES, Effort
from conductor.training.config import local_profile
from conductor.training.dataset import training_pool
from conductor.training.sft_data import sft_examples
from conductor.training.strategies import PLANS, stated_plan
from conductor.training.warm import warm_sampling
from tests.sim_problems import make_problems

POOL = "deployments/pools/local.yaml"


def _level(example: dict) -> Effort | None:
    text = "\n".join(m["content"] for m in example["prompt"])
    return next((level for level, line in EFFORT_LINES.items() if line in text), None)


def _steps(example: dict) -> int:
    return stated_plan(example["completion"][0]["content"]).steps


def test_each_level_draws_its_plans_and_no_level_draws_them_all(tmp_path) -> None:
    problems = make_problems(300, seed=5, domains=("math", "choice", "code"))
    pool = training_pool(POOL, problems)
    cfg = local_profile(tmp_path, effort_levels=["low", "medium", "high"])
    examples = sft_examples(problems, pool, warm_sampling(cfg), copies=1, seed=2)
    steps: dict[Effort | None, Counter] = {}
    for e in examples:
        steps.setdefault(_level(e), Counter())[_steps(e)] += 1
    assert set(steps) == {Effort.LOW, Effort.MEDIUM, Effort.HIGH}  # every row states a level
    assert set(steps[Effort.LOW]) == {1}
    assert set(steps[Effort.MEDIUM]) == {2}
    assert set(steps[Effort.HIGH]) == {4, 5}
    plain = sft_examples(problems, pool, warm_sampling(local_profile(tmp_path)), copies=1, seed=2)
    assert {_level(e) for e in plain} == {None}
    assert {_steps(e) for e in plain} == {p.steps for p in PLANS}
