"""Second rounds in training (conductor/training/second_round.py): the warm start's recursion
examples are built from real first rounds run over the simulated pool, and a second-round row's
completion is scored after the first round it shows."""

from __future__ import annotations

import collections

import pytest

from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, PromptRow, training_pool
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.reward import WorkflowReward
from conductor.training.second_round import (
    prior_column,
    read_prior,
    recursion_sft_examples,
    run_first_rounds,
    second_round_action,
)
from conductor.training.strategies import RECURSION_PLANS, stated_plan
from conductor.workflow import ParseError, Workflow, parse
from tests.test_training_reward import PROBLEM, pool, wf  # noqa: F401  (pool is a fixture)

KEEP_TEXT = "Keep the earlier answer.\nmodel_id = []\nsubtasks = []\naccess_list = []"


def check_by(worker: int) -> str:
    return f'model_id = [{worker}]\nsubtasks = ["Check the answer above."]\naccess_list = [["prev"]]'


async def test_a_second_round_row_is_scored_after_the_first_round_it_shows(pool) -> None:  # noqa: F811
    row = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False)
    [first] = await run_first_rounds([wf(1)], [row], pool, examples=False)  # the always-wrong worker
    assert first.verdict is not None and not first.verdict.correct
    prior = prior_column(first)
    steps, first_reward = read_prior(prior)
    assert first_reward == 0.5 and steps[0].worker == "wrong" and steps[0].reads == ()
    sunk = []
    reward = WorkflowReward(pool, sink=lambda t, s: sunk.append(t))
    texts = [KEEP_TEXT, check_by(0), check_by(1), wf(0), wf(1)]
    out = await reward(prompts=[None] * 6, completions=[[{"role": "assistant", "content": t}] for t in [*texts, wf(0)]],
                       problem=[PROBLEM.model_dump_json()] * 6, pool_ids=[["right", "wrong"]] * 6,
                       prior=[prior] * 5 + [""])
    # keep: the first round's (wrong) answer; a check by the right worker reading the first round
    # fixes it; by the wrong one it does not; fresh attempts earn what they get; a plain row as ever
    assert out == [0.5, 1.0, 0.5, 1.0, 0.5, 1.0]
    checked = sunk[1]
    assert checked.depth == 1 and "# Earlier workflow\nStep 0: Model 1, attempt:" in checked.conductor_prompt[-1].content
    seen = checked.steps[0].call.messages[-1].content
    assert "(earlier round) Solve it" in seen and "## Step 0: response\n[wrong]" in seen
    assert sunk[5].depth == 0
    # keeping a right first answer earns the right answer's reward (its round ran no step)
    [right] = await run_first_rounds([wf(0)], [row], pool, examples=False)
    kept = await reward(prompts=[None], completions=[[{"role": "assistant", "content": KEEP_TEXT}]],
                        problem=[PROBLEM.model_dump_json()], pool_ids=[["right", "wrong"]], prior=[prior_column(right)])
    assert kept == [1.0]


async def test_a_second_round_may_run_no_more_steps_than_the_first(pool) -> None:  # noqa: F811
    """One step read, so one step allowed: a check passes; one more attempt + a comparison (two
    steps) is refused as the parser refuses a sixth step, and earns what an unparsed workflow
    earns; the prompt states the limit."""
    row = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False)
    [first] = await run_first_rounds([wf(1)], [row], pool, examples=False)
    sunk = []
    reward = WorkflowReward(pool, sink=lambda t, s: sunk.append(t))
    two = 'model_id = [0, 0]\nsubtasks = ["Solve it.", "Compare."]\naccess_list = [[], ["prev", 0]]'
    out = await reward(prompts=[None] * 2, completions=[[{"role": "assistant", "content": t}] for t in (check_by(0), two)],
                       problem=[PROBLEM.model_dump_json()] * 2, pool_ids=[["right", "wrong"]] * 2,
                       prior=[prior_column(first)] * 2)
    assert out == [1.0, 0.0]
    assert sunk[1].parse_status == "too_many_steps" and not sunk[1].steps
    assert "At most 1 steps." in sunk[0].conductor_prompt[0].content


@pytest.fixture(scope="module")
def examples():
    train = take_per_domain(bank_splits().train, 120)
    pool = training_pool(local_profile("/tmp/unused").pool_file, train, latency_scale=0)
    return recursion_sft_examples(train, pool, PoolSampling(), copies=2, seed=0), pool


def test_warm_start_second_rounds_show_real_first_rounds_and_every_recursion_plan(examples) -> None:
    rows, pool = examples
    plans = collections.Counter()
    by_limit: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    for ex in rows:
        prompt, text = ex["prompt"][-1]["content"], ex["completion"][0]["content"]
        shown = prompt.split("# Earlier workflow\n", 1)[1].split("\n\n", 1)[0].splitlines()
        # the first round ran: one line per step with its final answer, then the agreement line
        assert shown[0].startswith("Step 0: Model ") and shown[-1].startswith("Agreement: ")
        first_steps = len(shown) - 1
        # a second round runs at most as many steps as the first, and its prompt says so
        limit = min(5, first_steps)
        assert f"At most {limit} steps." in ex["prompt"][0]["content"]
        workflow = parse(text, len(pool.specs) - 1, max_steps=limit, allow_empty=True, earlier_round=True)
        assert isinstance(workflow, Workflow), text
        plan = stated_plan(text)
        assert plan in RECURSION_PLANS, text
        plans[plan.name] += 1
        by_limit[limit][plan.name] += 1
        if plan.name == "recheck":  # by another worker than the one that gave the answer
            last_worker = shown[-2].split(",", 1)[0].split(": ", 1)[1]
            assert f"Model {workflow.model_id[0]}" != last_worker, (shown, text)
    assert set(plans) == {p.name for p in RECURSION_PLANS}
    # uniform among the plans that fit: after a 2-step first round, keep / check / one more + compare
    two = by_limit[2]
    assert set(two) == {"keep", "recheck", "more_1"}, by_limit
    assert all(abs(c / two.total() - 1 / 3) < 0.1 for c in two.values()), by_limit


def test_second_round_actions() -> None:
    def act(text: str) -> str:
        got = parse(text, 2, allow_empty=True, earlier_round=True)
        return second_round_action(None if isinstance(got, ParseError) else got)

    assert act(KEEP_TEXT) == "stop" and act(check_by(0)) == "check" and act(wf(0)) == "replace"
    assert act('model_id = [0, 1]\nsubtasks = ["a", "b"]\naccess_list = [[], ["prev", 0]]') == "add attempts"
    assert act("nothing") == "unparsed"


async def test_a_second_round_rows_own_calls_cost_second_round_cost_weight(pool) -> None:  # noqa: F811
    """Keeping a right first answer costs nothing; a check that also gets it right pays for its
    call at `second_round_cost_weight` (the first rounds' `cost_weight` stays 0)."""
    row = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False)
    [right] = await run_first_rounds([wf(0)], [row], pool, examples=False)
    sunk = []
    reward = WorkflowReward(pool, second_round_cost_weight=100.0, sink=lambda t, s: sunk.append(t))
    out = await reward(prompts=[None] * 3,
                       completions=[[{"role": "assistant", "content": t}] for t in (KEEP_TEXT, check_by(0), wf(0))],
                       problem=[PROBLEM.model_dump_json()] * 3, pool_ids=[["right", "wrong"]] * 3,
                       prior=[prior_column(right)] * 2 + [""])
    usd = sunk[1].usage.cost_usd
    assert usd is not None and usd > 0 and sunk[1].verdict.correct
    assert out == [1.0, pytest.approx(1.0 - 100.0 * usd), 1.0]


async def test_an_effort_level_prices_the_first_round_not_a_second_rounds_calls(pool) -> None:  # noqa: F811
    """A row at low effort: its first round's calls pay low's rate, and its first round is written
    within low's budget (one step); a second-round row at the same level pays no rate for its check
    (the caller asked for the second round; `second_round_cost_weight` prices it)."""
    from conductor.effort import DEFAULT_CALL_RATES, Effort

    row = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False, effort=Effort.LOW)
    [first] = await run_first_rounds([wf(1)], [row], pool, examples=False)
    assert "At most 1 steps." in first.conductor_prompt[0].content
    [over] = await run_first_rounds([wf(0, 2)], [row], pool, examples=False)
    assert over.parse_status == "too_many_steps" and not over.steps
    reward = WorkflowReward(pool, effort_rates=DEFAULT_CALL_RATES)
    out = await reward(prompts=[None] * 2,
                       completions=[[{"role": "assistant", "content": t}] for t in (check_by(0), wf(0))],
                       problem=[PROBLEM.model_dump_json()] * 2, pool_ids=[["right", "wrong"]] * 2,
                       prior=[prior_column(first), ""], effort=["low", "low"])
    assert out == [1.0, pytest.approx(1.0 - DEFAULT_CALL_RATES[Effort.LOW])]


async def test_a_second_round_is_run_second_round_executions_times_and_earns_the_mean() -> None:
    """An attempt by a worker right half the time, after a wrong first round: each completion runs
    `second_round_executions` times with its own dice, every run is kept (sunk, paid, counted), and
    the completion earns the mean of its runs' rewards. Keeping the answer and an unparsed
    completion run once."""
    from conductor.training.dataset import CONDUCTOR_SPEC
    from conductor.workers.pool import Pool
    from conductor.workers.registry import BuildContext
    from tests.test_training_reward import _sim

    coin = Pool.from_specs([_sim("wrong", 0.0), _sim("coin", 0.5), CONDUCTOR_SPEC], BuildContext(problems=[PROBLEM]))
    row = PromptRow(problem=PROBLEM, pool_ids=("wrong", "coin"), recursion=False)
    [first] = await run_first_rounds([wf(0)], [row], coin, examples=False)
    sunk, calls = [], []
    reward = WorkflowReward(coin, second_round_executions=8, sink=lambda t, s: sunk.append(t))
    texts = [wf(1)] * 4 + [KEEP_TEXT, "nothing"]
    out = await reward(prompts=[None] * 6, completions=[[{"role": "assistant", "content": t}] for t in texts],
                       problem=[PROBLEM.model_dump_json()] * 6, pool_ids=[["wrong", "coin"]] * 6,
                       prior=[prior_column(first)] * 6, log_extra=lambda k, v: calls.extend(v) if k == "calls" else None)
    attempts, (kept, unparsed) = [sunk[i * 8:(i + 1) * 8] for i in range(4)], sunk[32:]
    assert len(sunk) == 34 and kept.workflow.is_empty and unparsed.parse_status != "ok"
    assert calls == [8] * 4 + [0, 0]
    for runs, got in zip(attempts, out[:4]):
        right = sum(t.verdict.correct for t in runs)
        assert got == pytest.approx(0.5 + 0.5 * right / 8)
    # the runs' dice differ: 32 coin flips are not all alike
    assert 0 < sum(t.verdict.correct for a in attempts for t in a) < 32
    assert out[4:] == [0.5, 0.0]
    with pytest.raises(ValueError, match="at least 1"):
        WorkflowReward(coin, second_round_executions=0)


async def test_the_batch_logs_what_round_2_does_and_earns_after_each_level(pool) -> None:  # noqa: F811
    """After a wrong low first round: keep, a check by the right worker (+0.5 over keeping), a
    check by the wrong one (+0), an unparsed completion; after a right high first round: keep
    twice. Shares per level and action, the gain over the acting completions only, and no gain
    where nothing acted."""
    low = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False)
    [wrong] = await run_first_rounds([wf(1)], [low], pool, examples=False)
    [right] = await run_first_rounds([wf(0)], [low], pool, examples=False)
    metrics: dict[str, list[float]] = {}
    texts = [KEEP_TEXT, check_by(0), check_by(1), "nothing", KEEP_TEXT, KEEP_TEXT, wf(0)]
    await WorkflowReward(pool)(
        prompts=[None] * 7, completions=[[{"role": "assistant", "content": t}] for t in texts],
        problem=[PROBLEM.model_dump_json()] * 7, pool_ids=[["right", "wrong"]] * 7,
        prior=[prior_column(wrong)] * 4 + [prior_column(right)] * 2 + [""],
        effort=["low"] * 4 + ["high"] * 2 + ["low"], log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
    assert metrics["second_round/low/stop"] == [0.25] and metrics["second_round/low/check"] == [0.5]
    assert metrics["second_round/low/unparsed"] == [0.25] and metrics["second_round/low/add_attempts"] == [0.0]
    assert metrics["second_round/low/gain"] == [pytest.approx(0.25)]
    assert metrics["second_round/high/stop"] == [1.0] and metrics["second_round/high/check"] == [0.0]
    assert "second_round/high/gain" not in metrics
    assert not any(k.startswith("second_round/medium/") or k.startswith("second_round/any/") for k in metrics)


async def test_the_gain_is_measured_against_each_rows_own_first_round(pool) -> None:  # noqa: F811
    """After a right first round, a fresh attempt by the always-wrong worker loses 0.5 against
    keeping; after a wrong one, the same attempt gains nothing."""
    row = PromptRow(problem=PROBLEM, pool_ids=("right", "wrong"), recursion=False)
    [wrong] = await run_first_rounds([wf(1)], [row], pool, examples=False)
    [right] = await run_first_rounds([wf(0)], [row], pool, examples=False)
    metrics: dict[str, list[float]] = {}
    await WorkflowReward(pool)(
        prompts=[None] * 3, completions=[[{"role": "assistant", "content": t}] for t in (wf(1), KEEP_TEXT, wf(1))],
        problem=[PROBLEM.model_dump_json()] * 3, pool_ids=[["right", "wrong"]] * 3,
        prior=[prior_column(right)] * 2 + [prior_column(wrong)], effort=["medium"] * 2 + ["low"],
        log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
    assert metrics["second_round/medium/replace"] == [0.5] and metrics["second_round/medium/stop"] == [0.5]
    assert metrics["second_round/medium/gain"] == [pytest.approx(-0.5)]
    assert metrics["second_round/low/gain"] == [pytest.approx(0.0)]
