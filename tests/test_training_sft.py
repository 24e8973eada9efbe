"""The warm start's data: a library of plans and wordings, drawn about uniformly, written
independently of the simulated pool's scoring, and one token per decision in the tiny tokenizer.
(The SFT run itself, a real TRL SFTTrainer, is tested in test_training_grpo.py, whose GRPO tests
start from its model.)"""

from __future__ import annotations

import collections
import json
import random

import pytest

from conductor.shapes import classify
from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, training_pool
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.sft_data import TASK_LINES, completion_text, decision_tokens, draw_example, sft_examples
from conductor.training.strategies import PLAN_BY_NAME, PLANS, all_phrases, draw_workflow, phrases, plan_of, stated_plan
from conductor.workers.simulated.instructions import instruction_quality, on_topic_instruction
from conductor.workflow import parse, render, resolve_access

# What the project's shape classifier (conductor/shapes.py, the warehouse's traces.shape) must
# call each plan: written out here, not derived from the plan library.
EXPECTED_SHAPE = {
    "single": "single", "check": "verify_refine",
    "attempts_2": "fan_out_aggregate", "attempts_3": "fan_out_aggregate", "attempts_4": "fan_out_aggregate",
    "plan_execute": "chain", "chain": "verify_refine",
}
PLAIN_WORDING = {"solve": "Solve the task.", "check": "Check the answer above.", "combine": "Pick the best answer above.",
                 "plan": "Make a plan."}
EXPECTED_STEPS = {"single": 1, "check": 2, "attempts_2": 3, "attempts_3": 4, "attempts_4": 5,
                  "plan_execute": 2, "chain": 3}


@pytest.fixture(scope="module")
def train():
    return take_per_domain(bank_splits().train, 400)


def test_every_plan_renders_parses_and_classifies_as_its_topology(train) -> None:
    assert {p.name for p in PLANS} == set(EXPECTED_SHAPE)
    rng = random.Random(0)
    for problem in train[:40]:
        for plan in PLANS:
            wf = draw_workflow(plan, problem.domain, [0, 1, 2, 3], rng)
            text = completion_text(problem, wf, plan)
            parsed = parse(text, 4)
            assert parsed == wf, (plan.name, text)
            assert len(parsed) == EXPECTED_STEPS[plan.name]
            # The classifier also reads the wording (a check step says so); judge the topology
            # with one plain wording per role.
            plain = tuple(PLAIN_WORDING[role] for role in plan.roles)
            reads = [resolve_access(a, i) for i, a in enumerate(parsed.access_list)]
            assert classify(reads, plain) == EXPECTED_SHAPE[plan.name], plan.name
            # The reasoning line states the plan first, then the kind of task.
            assert text.split("\n", 1)[0] == f"{plan.sentence} {TASK_LINES[problem.domain]}"
            assert stated_plan(text) is plan and plan_of(parsed) is plan


def test_worker_ties_follow_the_plan() -> None:
    rng = random.Random(1)
    # A check is by the solver itself half the time, by another worker the other half.
    same = sum(len(set(draw_workflow(PLAN_BY_NAME["check"], "math", [0, 1, 2, 3], rng).model_id)) == 1
               for _ in range(2000))
    assert 0.46 < same / 2000 < 0.54
    tied = sum(len(set(draw_workflow(PLAN_BY_NAME["attempts_4"], "code", [0, 1, 2, 3], rng).model_id)) == 1
               for _ in range(2000))
    # p_tied 0.7, plus the 1/4^4 of untied draws that land on one worker by chance
    assert 0.66 < tied / 2000 < 0.74


def test_wording_ties_follow_the_roles() -> None:
    """Most ensembles paste one instruction into every attempt; the aggregator keeps its own role's."""
    rng = random.Random(2)
    draws = [draw_workflow(PLAN_BY_NAME["attempts_4"], "math", [0, 1, 2, 3], rng) for _ in range(2000)]
    same = sum(len(set(wf.subtasks[:4])) == 1 for wf in draws)
    # p_tied_wording 0.7, plus the 1/5^3 of untied draws that repeat one of the 5 solve wordings
    assert 0.66 < same / 2000 < 0.74
    assert all(wf.subtasks[4] in phrases("math", "combine") for wf in draws)
    # still every solve wording, about uniformly, in the attempts
    counts = collections.Counter(wf.subtasks[0] for wf in draws)
    assert set(counts) == set(phrases("math", "solve")) and min(counts.values()) > 2000 / 5 * 0.8


def test_sft_draws_plans_workers_and_wordings_uniformly_and_never_the_simulators_wording(train) -> None:
    pool = training_pool(local_profile("/tmp/unused").pool_file, train)
    examples = sft_examples(train, pool, PoolSampling(), copies=4, seed=0)
    problems = [p for _ in range(4) for p in train]
    plans: collections.Counter = collections.Counter()
    first: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    used: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for ex, problem in zip(examples, problems):
        text = ex["completion"][0]["content"]
        plan = stated_plan(text)
        wf = parse(text, 4)
        assert plan is not None and plan_of(wf) is plan
        plans[plan.name] += 1
        first[problem.domain][wf.model_id[0]] += 1
        for k, (role, subtask) in enumerate(zip(plan.roles, wf.subtasks)):
            assert subtask in phrases(problem.domain, role)
            # The simulator's own optimum is never handed to the model.
            assert subtask not in {on_topic_instruction(problem, r) for r in ("solve", "verify", "combine")}
            if role not in plan.roles[:k]:  # a role's first step: its later ones mostly repeat it (tied)
                used[(problem.domain, role)][subtask] += 1
    n = len(examples)
    assert all(abs(c / n - 1 / len(PLANS)) < 0.03 for c in plans.values()) and len(plans) == len(PLANS), plans
    for counts in first.values():  # no routing taught: each worker ~1/4 in every domain
        total = sum(counts.values())
        assert len(counts) == 4 and all(abs(c / total - 0.25) < 0.06 for c in counts.values()), counts
    for (domain, role), counts in used.items():  # every wording of the role is drawn, about evenly
        assert set(counts) == set(phrases(domain, role)), (domain, role)
        total, p = sum(counts.values()), 1 / len(counts)
        spread = 4 * (total * p * (1 - p)) ** 0.5  # four binomial standard deviations
        assert all(abs(c - total * p) < spread for c in counts.values()), (domain, role, counts)


def test_the_wording_library_mixes_precise_and_loose_instructions(train) -> None:
    """Judged by the simulated pool's instruction quality (the environment's stated formula, not
    the library's code): each kind's solve wordings range from precise to useless, so there is a
    choice for GRPO to learn, and the library as a whole is far from the simulator's optimum (1)."""
    by_domain: dict[str, list] = collections.defaultdict(list)
    for p in train:
        by_domain[p.domain].append(p)
    qualities = []
    for domain, problems in by_domain.items():
        solve = [sum(instruction_quality(p, s) for p in problems[:30]) / 30 for s in phrases(domain, "solve")]
        assert max(solve) >= 0.6 and min(solve) <= 0.0, (domain, solve)
        for role in ("solve", "check", "combine", "plan"):
            qualities += [instruction_quality(p, s) for p in problems[:30] for s in phrases(domain, role)]
    mean = sum(qualities) / len(qualities)
    assert 0.0 < mean < 0.5, mean


def test_every_decision_is_one_token_of_its_own(tmp_path, train) -> None:
    """The tiny tokenizer encodes a sampled workflow as decision tokens only (none split, none
    merged with the next), decodes it exactly, and a 5-step workflow is 21 tokens."""
    from conductor.models.tiny import load_tokenizer
    from conductor.training.base_model import init_tiny_conductor

    pool = training_pool(local_profile(tmp_path).pool_file, train)
    tokenizer = load_tokenizer(init_tiny_conductor(tmp_path / "base", train, pool, seed=0))
    vocabulary = set(decision_tokens(len(pool.specs)))
    rng = random.Random(3)
    for problem in train[:60]:
        for plan in PLANS:
            wf = draw_workflow(plan, problem.domain, range(len(pool.specs) - 1), rng)
            text = completion_text(problem, wf, plan)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert tokenizer.decode(ids) == text
            pieces = tokenizer.convert_ids_to_tokens(ids)
            assert all(p in vocabulary for p in pieces), [p for p in pieces if p not in vocabulary]
            # plan, kind, kind+first worker, further workers, opener, wordings, access
            assert len(ids) == 3 + (plan.steps - 1) + 1 + plan.steps + 1, pieces
    # Every wording is a single token, with and without the separator before it.
    for phrase in all_phrases():
        quoted = json.dumps(phrase, ensure_ascii=False)
        assert len(tokenizer(quoted, add_special_tokens=False)["input_ids"]) == 1
        assert len(tokenizer(f", {quoted}", add_special_tokens=False)["input_ids"]) == 1


def test_the_tiny_tokenizer_reads_a_question_whatever_its_case(tmp_path, train) -> None:
    """A question typed in lower case is the same tokens as the bank's capitalised wording (users
    type "find lcm(30, 24)", the bank says "Find lcm(30, 24)."), while what the Conductor writes
    keeps its case: its decisions are matched on the raw text."""
    from conductor.models.tiny import load_tokenizer
    from conductor.training.base_model import init_tiny_conductor

    pool = training_pool(local_profile(tmp_path).pool_file, train)
    tokenizer = load_tokenizer(init_tiny_conductor(tmp_path / "base", train, pool, seed=0))
    for problem in train[:40]:
        question = problem.task_text
        assert question != question.lower()
        assert tokenizer(question)["input_ids"] == tokenizer(question.lower())["input_ids"]
    text = f"One attempt. {TASK_LINES['math']}\nmodel_id = [0]\n"
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == text


def test_the_first_worker_is_a_token_per_kind_of_task(tmp_path, train) -> None:
    """The words that say the kind of task are one token per kind whatever the worker, and the
    kind's last word with the list opener and the first worker is one token per (kind, worker):
    with a worker digit shared by every kind, GRPO learnt one worker for all kinds
    (docs/training.md, "Third round")."""
    from conductor.models.tiny import load_tokenizer
    from conductor.training.base_model import init_tiny_conductor

    pool = training_pool(local_profile(tmp_path).pool_file, train)
    tokenizer = load_tokenizer(init_tiny_conductor(tmp_path / "base", train, pool, seed=0))
    kinds, decisions = {}, {}
    for domain, line in TASK_LINES.items():
        for worker in range(len(pool.specs)):
            text = f"One attempt. {line}\nmodel_id = [{worker}]\n"
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert tokenizer.decode(ids) == text
            kinds.setdefault(domain, set()).add(ids[1])
            decisions[(domain, worker)] = ids[2]
    assert all(len(k) == 1 for k in kinds.values()) and len({min(k) for k in kinds.values()}) == 4
    assert len(set(decisions.values())) == len(decisions) == 4 * len(pool.specs)


def test_a_problem_of_an_unknown_kind_still_gets_a_parseable_example() -> None:
    problem = take_per_domain(bank_splits().train, 4)[0].model_copy(update={"domain": "other"})
    plan, wf = draw_example(problem, [0, 1], random.Random(0))
    text = completion_text(problem, wf, plan)
    assert parse(text, 2) == wf and render(wf) in text
