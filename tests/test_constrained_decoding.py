"""The tiny Conductor samples through its decision automaton: whatever its weights, every
workflow it writes parses and states its plan truly (conductor/models/constrained.py)."""

from __future__ import annotations

import collections
import random

import pytest

from conductor.models.automaton import DecisionAutomaton
from conductor.training.config import local_profile
from conductor.training.dataset import PoolSampling, build_rows, row_messages, training_pool
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.sft_data import GRAMMAR_PLANS, TASK_LINES, completion_text, draw_example
from conductor.training.strategies import PLANS, phrases, plan_of, stated_plan
from conductor.workflow import ParseError, parse


@pytest.fixture(scope="module")
def train():
    return take_per_domain(bank_splits().train, 200)


@pytest.fixture(scope="module")
def untrained(tmp_path_factory, train):
    """A freshly initialised tiny Conductor (random weights, no warm start) and its pool."""
    from conductor.training.base_model import init_tiny_conductor

    tmp = tmp_path_factory.mktemp("constrained")
    pool = training_pool(local_profile(tmp).pool_file, train)
    return init_tiny_conductor(tmp / "base", train, pool, seed=0), pool


def _sample(model, tokenizer, prompts, n):  # noqa: ANN001, ANN202
    import torch

    tokenizer.padding_side = "left"
    enc = tokenizer.apply_chat_template(prompts, add_generation_prompt=True, return_tensors="pt", padding=True,
                                        return_dict=True)
    torch.manual_seed(0)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=64, do_sample=True, temperature=1.0, num_return_sequences=n,
                             pad_token_id=tokenizer.pad_token_id)
    return tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)


def test_an_untrained_conductor_writes_only_workflows_that_parse(untrained, train) -> None:
    """Random weights, temperature 1: 256 samples, every one parses, states a plan that its
    lists follow, words each step as its role for the kind of task it states, and the plans
    vary (the automaton fixes syntax, not choices)."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    model, tokenizer = load_causal_lm(path), load_tokenizer(path)
    rows = build_rows(train[:32], pool, PoolSampling(), seed=0)
    prompts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    texts = _sample(model, tokenizer, prompts, 8)
    assert len(texts) == 256
    plans = collections.Counter()
    for text in texts:
        # The grammar holds second rounds' plans too (keep the answer: no steps; steps reading
        # "prev"), but a first round's prompt never samples one: every sample parses as a first round.
        workflow = parse(text, len(pool.specs))
        assert not hasattr(workflow, "reason"), (text, workflow)
        plan = stated_plan(text)
        assert plan is plan_of(workflow) is not None, text
        if plan.steps:
            kind = next(k for k, line in TASK_LINES.items() if line in text.split("\n", 1)[0])
        for subtask, role in zip(workflow.subtasks, plan.roles, strict=True):
            assert subtask in phrases(kind, role), (kind, role, subtask)
        plans[plan.name] += 1
    assert set(plans) == {p.name for p in PLANS}, plans


def test_the_automaton_travels_with_the_saved_model(untrained, tmp_path) -> None:
    """save_pretrained / from_pretrained keep the model type and its automaton (config.json)."""
    from conductor.models.constrained import ConductorQwen2ForCausalLM, load_causal_lm

    path, _ = untrained
    model = load_causal_lm(path)
    model.save_pretrained(tmp_path / "copy")
    again = load_causal_lm(tmp_path / "copy")
    assert isinstance(again, ConductorQwen2ForCausalLM)
    assert again.config.decision_automaton == model.config.decision_automaton
    assert DecisionAutomaton.from_config(again.config.decision_automaton).edges


def test_every_warm_start_completion_is_accepted_and_nothing_else(untrained, train) -> None:
    """The warm start's completions (every plan, worker and wording drawn) are sentences of the
    automaton; a workflow whose lists disagree with its plan, or one cut short, is not."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    tokenizer = load_tokenizer(path)
    automaton = DecisionAutomaton.from_config(load_causal_lm(path).config.decision_automaton)
    workers = range(len(pool.specs))
    rng = random.Random(1)

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    for problem in train[:50]:
        plan, workflow = draw_example(problem, workers, rng, plans=GRAMMAR_PLANS)
        if not plan.steps:
            assert automaton.accepts(ids(completion_text(problem, workflow, plan)))
            continue
        assert automaton.accepts(ids(completion_text(problem, workflow, plan))), plan.name
        cut = ids(completion_text(problem, workflow, plan))[:-2] + [tokenizer.eos_token_id]
        assert not automaton.accepts(cut)
    # Three attempts' sentence over a single attempt's lists.
    problem = train[0]
    single = next(p for p in PLANS if p.name == "single")
    three = next(p for p in PLANS if p.name == "attempts_3")
    _, one_step = draw_example(problem, workers, rng, plans=[single])
    wrong = completion_text(problem, one_step, single).replace(single.sentence, three.sentence, 1)
    assert stated_plan(wrong) is three
    assert not automaton.accepts(ids(wrong))


def test_a_later_rounds_plans_only_where_the_prompt_shows_an_earlier_round() -> None:
    """Tokens 5 and 6 open a first round's plans, 7 a later round's; 90 91 is the mark an
    earlier round's header leaves in a prompt. A model saved before the mark is not limited."""
    automaton = DecisionAutomaton.from_triples(0, [(0, 5, 1), (0, 6, 1), (0, 7, 1)], later_round_plans=[7],
                                               later_round_mark=[90, 91])
    first, later = [1, 2, 90, 3], [1, 90, 91, 3]
    assert automaton.later_round(first) is False and automaton.later_round(later) is True
    assert automaton.allowed(0, later_round=automaton.later_round(first)) == [5, 6]
    assert automaton.allowed(0, later_round=automaton.later_round(later)) == [5, 6, 7]
    assert DecisionAutomaton.from_config(automaton.to_config()) == automaton
    old = {k: v for k, v in automaton.to_config().items() if not k.startswith("later_round")}
    assert DecisionAutomaton.from_config(old).later_round(first) is None
    assert DecisionAutomaton.from_config(old).allowed(0, later_round=None) == [5, 6, 7]


def test_the_later_round_mark_is_in_later_prompts_only_or_refused() -> None:
    from conductor.training.sft_data import later_round_mark

    assert later_round_mark([90, 91], [1, 2, 3], [1, 90, 91, 3]) == (90, 91)
    with pytest.raises(ValueError, match="does not tell"):
        later_round_mark([90, 91], [1, 90, 91], [1, 90, 91, 3])  # in a first round's prompt too


def test_later_round_prompts_still_sample_later_round_plans(untrained, train) -> None:
    """Random weights, temperature 1, after a round of 4 steps: keeping the answer, a check and
    attempts that read the earlier round are all drawn (the mark is found in the real prompts)."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.strategies import RECURSION_PLANS

    path, pool = untrained
    model, tokenizer = load_causal_lm(path), load_tokenizer(path)
    rows = build_rows(train[:16], pool, PoolSampling(), seed=0)
    texts = _sample(model, tokenizer, _later_round_prompts(rows, pool, 4), 8)
    written = collections.Counter(getattr(stated_plan(t), "name", "?") for t in texts)
    assert {p.name for p in RECURSION_PLANS if p.steps <= 4} <= set(written), written


def test_an_automaton_refuses_a_token_that_leads_two_ways() -> None:
    with pytest.raises(ValueError, match="leads to both"):
        DecisionAutomaton.from_triples(0, [(0, 5, 1), (0, 5, 2)])


def _later_round_prompts(rows, pool, steps: int) -> list[list[dict]]:  # noqa: ANN001
    """Recursion prompts over an earlier round of `steps` steps: their stated limit is `steps`."""
    from conductor.prompts import PriorStep, recursion_messages

    prior = [PriorStep(index=i, worker=f"Model {i}", subtask="Solve it.", response="42") for i in range(steps)]
    return [[m.model_dump() for m in recursion_messages(r.problem.question, r.offered(pool), prior)] for r in rows]


def test_the_automaton_reads_each_prompts_step_limit(untrained, train) -> None:
    """The limit a prompt states (5 in a first round; a later round's, as many steps as the
    round it reads) is read from the prompt's own token ids, as generation sees them."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    tokenizer = load_tokenizer(path)
    automaton = DecisionAutomaton.from_config(load_causal_lm(path).config.decision_automaton)
    rows = build_rows(train[:12], pool, PoolSampling(), seed=0)

    def ids(prompt: list[dict]) -> list[int]:
        return tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True,
                                             return_dict=True)["input_ids"]

    firsts = [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]
    assert {automaton.stated_limit(ids(p)) for p in firsts} == {5}
    for steps in (1, 2, 3, 4):
        assert {automaton.stated_limit(ids(p)) for p in _later_round_prompts(rows, pool, steps)} == {steps}


@pytest.mark.parametrize("limit", [1, 2])
def test_no_plan_over_a_later_rounds_step_limit_is_sampled(untrained, train, limit: int) -> None:
    """Random weights, temperature 1: after a round of `limit` steps, every sample keeps to
    `limit` steps, while first rounds of the same model still write longer plans."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    model, tokenizer = load_causal_lm(path), load_tokenizer(path)
    rows = build_rows(train[:16], pool, PoolSampling(), seed=0)
    later = _sample(model, tokenizer, _later_round_prompts(rows, pool, limit), 8)
    steps = [len(parse(t, len(pool.specs), allow_empty=True, earlier_round=True).subtasks) for t in later]
    assert max(steps) <= limit, collections.Counter(steps)
    assert min(steps) == 0 and limit in steps  # keeping the answer, and plans up to the limit, still drawn
    firsts = _sample(model, tokenizer, [[m.model_dump() for m in row_messages(r, pool, examples=False)]
                                        for r in rows], 8)
    assert max(len(parse(t, len(pool.specs), allow_empty=True, earlier_round=True).subtasks)
               for t in firsts) > limit


def test_step_limit_marks_are_where_the_prompts_differ_or_refused() -> None:
    from conductor.training.sft_data import step_limit_marks

    marks = step_limit_marks(lambda n: [7, 8, 100 + n, 9, 10], limits=(1, 2, 3))
    assert marks == {1: (8, 101, 9), 2: (8, 102, 9), 3: (8, 103, 9)}
    with pytest.raises(ValueError, match="stands in the prompt of"):
        step_limit_marks(lambda n: [7, 8, 9], limits=(1, 2))  # a prompt that does not state its limit


def _first_round_prompts(rows, pool) -> list[list[dict]]:  # noqa: ANN001
    return [[m.model_dump() for m in row_messages(r, pool, examples=False)] for r in rows]


def test_the_automaton_reads_how_many_workers_each_prompt_offers(untrained, train) -> None:
    """Randomized pools offer 2 to all workers in any order; the count is read from the prompt's
    own token ids (each "Model i: ..." line), and the full pool offers every worker."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    tokenizer = load_tokenizer(path)
    automaton = DecisionAutomaton.from_config(load_causal_lm(path).config.decision_automaton)

    def offered(rows) -> list[frozenset | None]:  # noqa: ANN001
        return [automaton.offered_workers(tokenizer.apply_chat_template(
            p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
            for p in _first_round_prompts(rows, pool)]

    randomized = build_rows(train[:40], pool, PoolSampling(randomized=True), seed=0)
    assert offered(randomized) == [frozenset(range(len(r.pool_ids))) for r in randomized]
    assert len({len(r.pool_ids) for r in randomized}) > 2  # the rows do offer pools of several sizes
    full = build_rows(train[:4], pool, PoolSampling(), seed=0)
    assert offered(full) == [frozenset(range(len(r.pool_ids))) for r in full] and len(full[0].pool_ids) >= 4


def test_no_step_goes_to_a_worker_the_prompt_does_not_offer(untrained, train) -> None:
    """Random weights, temperature 1, pools of two workers: every sample parses over the two
    offered (a step on "Model 3" would not), and both of them are drawn."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = untrained
    model, tokenizer = load_causal_lm(path), load_tokenizer(path)
    rows = build_rows(train[:16], pool, PoolSampling(randomized=True, k_min=2, k_max=2), seed=0)
    texts = _sample(model, tokenizer, _first_round_prompts(rows, pool), 8)
    workflows = [parse(t, 2, allow_empty=True, earlier_round=True) for t in texts]  # as in the first test
    assert not [w for w in workflows if isinstance(w, ParseError)], collections.Counter(
        str(w).split(":")[0] for w in workflows if isinstance(w, ParseError))
    assert {i for w in workflows for i in w.model_id} == {0, 1}


def test_worker_marks_are_each_lines_first_token_or_none() -> None:
    from conductor.training.sft_data import worker_marks

    def whole_lines(line: str) -> list[int]:  # one token per line, as the tiny tokenizer merges them
        return [hash(line) % 10**6, 1]

    marks = worker_marks(whole_lines, ["a", "b", "c"])
    assert sorted(marks.values()) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert marks[whole_lines("Model 2: b\n")[0]] == 2
    named = worker_marks(whole_lines, ["a", "b", "c"], ["w-a", "w-b", "w-c"])  # the worker described, anywhere
    assert named[whole_lines("Model 2: b\n")[0]] == named[whole_lines("Model 0: b\n")[0]] == "w-b"
    # a tokenizer whose lines all start with the same "Model " token marks nothing: masking
    # workers by it would hide offered ones
    assert worker_marks(lambda line: [5, hash(line) % 10**6], ["a", "b", "c"]) == {}


@pytest.fixture(scope="module")
def by_name(tmp_path_factory, train):
    """An untrained tiny Conductor whose steps name their workers (as randomized-pool runs train)."""
    from conductor.training.base_model import init_tiny_conductor

    tmp = tmp_path_factory.mktemp("by-name")
    pool = training_pool(local_profile(tmp).pool_file, train)
    return init_tiny_conductor(tmp / "base", train, pool, seed=0, by_name=True), pool


def test_a_model_that_names_workers_names_only_offered_ones(by_name, train) -> None:
    """Random weights, temperature 1, random pools of two workers: every step names one of the
    row's two offered workers (wherever the listing puts them), both are drawn, and the
    executor's parser reads each workflow over the offered pool."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer

    path, pool = by_name
    model, tokenizer = load_causal_lm(path), load_tokenizer(path)
    rows = build_rows(train[:16], pool, PoolSampling(randomized=True, k_min=2, k_max=2), seed=0)
    texts = _sample(model, tokenizer, _first_round_prompts(rows, pool), 8)
    named = collections.Counter()
    for text, row in zip(texts, [r for r in rows for _ in range(8)]):
        workflow = parse(text, list(row.pool_ids), allow_empty=True, earlier_round=True)
        assert not isinstance(workflow, ParseError), (text, row.pool_ids)
        assert all(f'"{row.pool_ids[i]}"' in text.split("subtasks")[0] for i in workflow.model_id)
        named.update(row.pool_ids[i] for i in workflow.model_id)
    assert len(named) == len({w for r in rows for w in r.pool_ids})  # every worker offered somewhere is named


def test_warm_start_completions_name_the_offered_workers_on_random_pools(by_name, train) -> None:
    """On randomized pools the warm start's targets name each step's worker, and the named
    grammar accepts them; on the full pool they number it, as before."""
    from conductor.models.constrained import load_causal_lm
    from conductor.models.tiny import load_tokenizer
    from conductor.training.sft_data import sft_examples

    path, pool = by_name
    tokenizer = load_tokenizer(path)
    automaton = DecisionAutomaton.from_config(load_causal_lm(path).config.decision_automaton)
    rows = sft_examples(train[:40], pool, PoolSampling(randomized=True), copies=1)
    for ex in rows:
        text = ex["completion"][0]["content"]
        assert "model_id = [\"sim-" in text or "model_id = []" in text, text
        assert automaton.accepts(tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id])
    numbered = sft_examples(train[:4], pool, PoolSampling(), copies=1)
    assert all("model_id = [\"" not in ex["completion"][0]["content"] for ex in numbered)
