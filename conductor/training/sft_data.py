"""Generated workflows for the SFT warm start, and the tokens the tiny tokenizer gives them.

Each completion is what the paper's Conductor writes: a line of free-form reasoning that states
the plan and the kind of task, then the three lists:

    Three attempts, then compare them. This is a math problem.
    model_id = [2, 2, 2, 2]
    subtasks = ["Work through ...", "Crunch the numbers.", "Solve the task.", "Compare the attempts ..."]
    access_list = [[], [], [], "all"]

- The plan is drawn about uniformly from a library of topologies (`strategies.PLANS`: single,
  self-check, check by another worker, 2/3/4 attempts + an aggregator, planner then executor,
  a chain), so the warm start can write every shape and GRPO keeps the ones that pay.
- Each step's wording is drawn uniformly from a phrasing library written independently of the
  simulated pool's scoring (`strategies.phrases`): precise, generic and loose wordings per kind
  of task and role; most of the time one wording per role, repeated by its steps (the attempts
  of an ensemble share their instruction). Which wording pays is for GRPO to find.
- Workers: one worker for every step most of the time (`p_tied`), else each step's own; the
  worker is drawn uniformly among those offered, so SFT teaches no routing.

Every decision the Conductor makes is one token of its own (`decision_tokens`), none spanning
two decisions: the plan sentence; the words that say the kind of task; the kind's last word with
the list opener and the first worker (one token per kind and worker, so routing for one kind does
not move another); each further worker; each step's wording; the access lists. The lists' syntax
lives inside those tokens, so a sampled workflow parses whatever its shape (docs/training.md).
The grammar also holds a second round's plans (`strategies.RECURSION_PLANS`: keep the earlier
answer, a check of the earlier round, more attempts and an aggregator reading both rounds).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import replace

from conductor.data.schema import Problem
from conductor.effort import EFFORT_STEPS, Effort
from conductor.models.automaton import DecisionAutomaton, Worker, contains
from conductor.prompts import EARLIER_WORKFLOW_HEADER, SYSTEM, worker_description, worker_line
from conductor.training.dataset import PoolSampling, PromptRow, build_rows, row_messages
from conductor.training.strategies import PLANS, RECURSION_PLANS, Plan, all_phrases, draw_workflow, phrases
from conductor.workers.pool import Pool
from conductor.workflow import DEFAULT_MAX_STEPS, Workflow, render

TASK_LINES = {
    "math": "This is a math problem.",
    "choice": "This is a multiple-choice knowledge question.",
    "freeform": "This is a science question with a short answer.",
    "code": "This is a coding task.",
}
# Each kind's line ends in a word of its own, so "<last word>.\nmodel_id = [<worker>" is one
# token per (kind of task, first worker).
assert len({line.rsplit(" ", 1)[1] for line in TASK_LINES.values()}) == len(TASK_LINES)

SUBTASKS_OPEN = "]\nsubtasks = ["
ACCESS_OPEN = "]\naccess_list = "
# Every plan the grammar knows: a first round's, and a second round's (which may also write any
# first-round plan). A plan with no steps (keep the earlier answer) is its sentence and the three
# empty lists, one token.
GRAMMAR_PLANS: tuple[Plan, ...] = PLANS + RECURSION_PLANS
EMPTY_LISTS = render(Workflow(model_id=(), subtasks=(), access_list=()))


def _access_json(plan: Plan) -> str:
    return json.dumps([a if a == "all" else list(a) for a in plan.access])


def _keep_token(plan: Plan) -> str:
    return f"{plan.sentence}\n{EMPTY_LISTS}"


def _plan_token(plan: Plan) -> str:
    """The decision token that opens a plan's output: its sentence (a plan with no steps, keeping
    the earlier answer, is its sentence and the empty lists in one token)."""
    return f"{plan.sentence} " if plan.steps else _keep_token(plan)


def task_line(problem: Problem) -> str:
    """The kind-of-task sentence of the reasoning line; nothing about workers."""
    return TASK_LINES.get(problem.domain, "This is a question.")


def completion_text(problem: Problem, workflow: Workflow, plan: Plan, names: Sequence[str] | None = None) -> str:
    """The SFT target: the reasoning line (plan, then kind of task), then the lists (each step's
    worker by its number, or with the offered workers' `names` by name); a plan with no steps (a
    second round keeping the earlier answer) is its sentence and the empty lists."""
    if not plan.steps:
        return _keep_token(plan)
    return f"{plan.sentence} {task_line(problem)}\n{render(workflow, names)}"


def worker_refs(workers: int | Sequence[str]) -> list[tuple[Worker, str]]:
    """Each worker the grammar can write, and how it is written: the numbers 0..n-1 (a grammar
    over a pool's positions), or the workers' ids, quoted (one that names them: `names_workers`)."""
    if isinstance(workers, int):
        return [(w, str(w)) for w in range(workers)]
    return [(name, json.dumps(name)) for name in workers]


def names_workers(sampling: PoolSampling) -> bool:
    """Whether a model trained on these pools writes workers by name. On randomized pools a
    number is a different worker on each row, and a tiny model did not learn to look it up: it
    chose positions, whatever worker sat there (issue 35). A name is the same worker on every
    row, so routing is a choice among name tokens; the decoder keeps it to the offered ones."""
    return sampling.randomized


def draw_example(problem: Problem, workers: Sequence[int], rng: random.Random, *,
                 plans: Sequence[Plan] = PLANS) -> tuple[Plan, Workflow]:
    """A plan drawn uniformly from `plans`, and a workflow for it over `workers`."""
    plan = rng.choice(list(plans))
    return plan, draw_workflow(plan, problem.domain, workers, rng)


def sft_examples(
    problems: Sequence[Problem],
    pool: Pool,
    sampling: PoolSampling,
    *,
    copies: int = 4,
    seed: int = 0,
    examples: bool = False,
    plans: Sequence[Plan] = PLANS,
) -> list[dict]:
    """Prompt/completion pairs (TRL's conversational format): `copies` rows per problem, each
    with its own offered pool, plan (among `plans`), workers and wording (fresh draws, not repeats)."""
    rng = random.Random(seed)
    out = []
    for c in range(copies):
        # No recursion rows here (no Conductor offered); second rounds are
        # `second_round.recursion_sft_examples` (config.sft_recursion_copies).
        # bad workers and effort levels as the run offers them
        plain = replace(sampling, recursion_fraction=0.0)
        for row in build_rows(problems, pool, plain, seed=seed * 1000 + c):
            out.append(example_for(row, pool, rng, examples=examples, plans=plans, by_name=names_workers(sampling)))
    return out


def plans_at(effort: Effort | None, plans: Sequence[Plan]) -> Sequence[Plan]:
    """The plans a row's warm start draws from: at an effort level, those whose step count is in
    the level's range (`conductor.effort.EFFORT_STEPS`); all of them with no level (or none in range)."""
    if effort is None:
        return plans
    low, high = EFFORT_STEPS[effort]
    return [p for p in plans if low <= p.steps <= high] or plans


def example_for(row: PromptRow, pool: Pool, rng: random.Random, *, examples: bool,
                plans: Sequence[Plan] = PLANS, by_name: bool = False) -> dict:
    workers = [i for i, s in enumerate(row.offered(pool).specs) if s.provider != "conductor"]
    plan, workflow = draw_example(row.problem, workers, rng, plans=plans_at(row.effort, plans))
    messages = row_messages(row, pool, examples=examples)
    names = list(row.pool_ids) if by_name else None
    return {
        "prompt": [m.model_dump() for m in messages],
        "completion": [{"role": "assistant", "content": completion_text(row.problem, workflow, plan, names)}],
    }


def decision_tokens(workers: int | Sequence[str]) -> list[str]:
    """The Conductor's output vocabulary: one token per decision (see the module doc). With the
    syntax inside them, a 5-step workflow is 21 tokens. `workers`: the pool's size (steps number
    their workers) or its worker ids (steps name them: `worker_refs`)."""
    refs = [text for _, text in worker_refs(workers)]
    tokens = [_plan_token(plan) for plan in GRAMMAR_PLANS]
    for line in TASK_LINES.values():
        words, last = line.rsplit(" ", 1)
        tokens.append(f"{words} ")
        tokens += [f"{last}\nmodel_id = [{w}" for w in refs]
    tokens += [f", {w}" for w in refs]
    tokens.append(SUBTASKS_OPEN)
    for phrase in all_phrases():
        quoted = json.dumps(phrase, ensure_ascii=False)
        tokens += [quoted, f", {quoted}"]
    access = {_access_json(plan) for plan in GRAMMAR_PLANS if plan.steps}
    tokens += [f"{ACCESS_OPEN}{a}" for a in sorted(access)]
    return list(dict.fromkeys(tokens))


def decision_automaton(vocab: dict[str, int], workers: int | Sequence[str], eos_id: int,
                       limit_marks: dict[int, Sequence[int]] | None = None,
                       worker_marks: dict[int, Worker] | None = None,
                       later_round_mark: Sequence[int] = ()) -> DecisionAutomaton:
    """The grammar of `decision_tokens` as an automaton over token ids (`vocab`: token -> id):
    a plan; the words of a kind of task; that kind's first-worker token; one more worker per
    further step of the plan; the subtasks' opener and one wording per step, among the library's
    wordings of that step's role for that kind of task (`strategies.phrases`); the plan's own
    access lists; the end (a second round's plans too: `GRAMMAR_PLANS`; keeping the earlier answer
    is one token). The choices (plan, kind, workers, which wording) are free; the step
    counts agree, the access lists are the plan's (so the plan sentence is always true to the
    lists), and a step's wording is one of its role's (a combine step is not worded as a plan).
    Each plan token's step count goes with it, and `limit_marks` (`step_limit_marks`), so that a
    prompt's step limit keeps longer plans from being sampled; the worker each worker token writes
    goes with it too (`workers`: numbered or named, as in `decision_tokens`), and `worker_marks`
    (`worker_marks`), so that no step goes to a worker the prompt does not offer; and the later
    round's plans (`RECURSION_PLANS`) with `later_round_mark` (`later_round_mark`), so that a
    first round never writes one."""
    def tid(token: str) -> int:
        if token not in vocab:
            raise ValueError(f"decision token {token!r} is not in the tokenizer (built without decision_tokens?)")
        return vocab[token]

    edges: list[tuple[int, int, int]] = []
    plan_steps: dict[int, int] = {}
    refs = worker_refs(workers)
    worker_tokens: dict[int, Worker] = {tid(f", {text}"): w for w, text in refs}
    states = iter(range(1, 1 << 30))
    end = next(states)
    for plan in GRAMMAR_PLANS:
        done = next(states)
        edges.append((done, eos_id, end))
        plan_steps[tid(_plan_token(plan))] = plan.steps
        if not plan.steps:  # keep the earlier answer: the sentence and the empty lists, then the end
            edges.append((0, tid(_plan_token(plan)), done))
            continue
        after_plan = next(states)
        edges.append((0, tid(_plan_token(plan)), after_plan))
        access = _access_json(plan)
        for kind, line in TASK_LINES.items():
            words, last = line.rsplit(" ", 1)
            after_kind, state = next(states), next(states)
            edges.append((after_plan, tid(f"{words} "), after_kind))
            edges += [(after_kind, tid(f"{last}\nmodel_id = [{text}"), state) for _, text in refs]
            worker_tokens.update({tid(f"{last}\nmodel_id = [{text}"): w for w, text in refs})
            for _ in range(plan.steps - 1):
                nxt = next(states)
                edges += [(state, tid(f", {text}"), nxt) for _, text in refs]
                state = nxt
            nxt = next(states)
            edges.append((state, tid(SUBTASKS_OPEN), nxt))
            state = nxt
            for step, role in enumerate(plan.roles):
                nxt = next(states)
                quoted = [json.dumps(p, ensure_ascii=False) for p in phrases(kind, role)]
                edges += [(state, tid(q if step == 0 else f", {q}"), nxt) for q in quoted]
                state = nxt
            edges.append((state, tid(f"{ACCESS_OPEN}{access}"), done))
    later = [tid(_plan_token(p)) for p in RECURSION_PLANS]
    return DecisionAutomaton.from_triples(0, edges, plan_steps=plan_steps, limit_marks=limit_marks,
                                          worker_tokens=worker_tokens, worker_marks=worker_marks,
                                          later_round_plans=later, later_round_mark=later_round_mark)


def step_limit_marks(prompt_ids: Callable[[int], Sequence[int]],
                     limits: Sequence[int] = tuple(range(1, DEFAULT_MAX_STEPS + 1))) -> dict[int, tuple[int, ...]]:
    """For each step limit, the token ids by which the Conductor's prompt states it: where that
    prompt's ids (`prompt_ids(limit)`) differ from another limit's, with a token of context on
    each side. Each mark stands in its own limit's prompt and in no other's, or this refuses."""
    prompts = {n: list(prompt_ids(n)) for n in limits}
    marks: dict[int, tuple[int, ...]] = {}
    for n, ids in prompts.items():
        other = prompts[next(m for m in limits if m != n)]
        head = next((i for i, (a, b) in enumerate(zip(ids, other)) if a != b), min(len(ids), len(other)))
        tail = next((i for i, (a, b) in enumerate(zip(reversed(ids), reversed(other))) if a != b),
                    min(len(ids), len(other)))
        tail = min(tail, len(ids) - head)  # the shared tail may not overlap the shared head
        marks[n] = tuple(ids[max(head - 1, 0): len(ids) - tail + 1])
    for n, mark in marks.items():
        for m, ids in prompts.items():
            if contains(ids, mark) != (m == n):
                raise ValueError(f"the step-limit mark of {n} {'is missing from' if m == n else 'stands in'}"
                                 f" the prompt of {m}")
    return marks


def later_round_mark(header_ids: Sequence[int], first_ids: Sequence[int], later_ids: Sequence[int]) -> tuple[int, ...]:
    """The token ids by which a later round's prompt shows the earlier round: the header line's
    (`header_ids`, with its line break before it), which stand in a later round's prompt
    (`later_ids`) and not in a first round's (`first_ids`), or this refuses."""
    mark = tuple(header_ids)
    if not contains(later_ids, mark) or contains(first_ids, mark):
        raise ValueError(f"the later-round mark {mark} does not tell a later round's prompt from a first round's")
    return mark


def worker_marks(line_ids: Callable[[str], Sequence[int]], descriptions: Sequence[str],
                 names: Sequence[str] | None = None) -> dict[int, Worker]:
    """The prompt tokens that offer each worker: the first token of each "Model i: <description>"
    line (tokenized alone by `line_ids`: the tiny tokenizer's pieces end at each line break, so a
    line's tokens are the same in a prompt), for every position and description a pool may put
    there. Each offers worker i (numbered), or with `names` (the descriptions' workers) the worker
    it describes. {} (no worker is masked) when one token would stand for two workers (a first
    token "Model " alone, or "Model 1" opening "Model 10: ...")."""
    marks: dict[int, Worker] = {}
    for i in range(len(descriptions)):
        for j, desc in enumerate(descriptions):
            ids = list(line_ids(worker_line(i, desc) + "\n"))
            worker = i if names is None else names[j]
            if not ids or marks.get(ids[0], worker) != worker:
                return {}
            marks[ids[0]] = worker
    return marks


def tokenizer_corpus(problems: Sequence[Problem], pool: Pool, *, seed: int = 0, repeats: int = 50) -> list[str]:
    """Texts the tiny tokenizer's BPE trains on: the system prompt, pool descriptions, questions
    and rendered workflows of every plan. The fixed texts are repeated so that, with merges across
    words, each of their lines becomes a few tokens (prompts ~4x shorter, steps ~4x faster). The
    completions themselves are `decision_tokens`, added to the vocabulary whole."""
    from conductor.kind_reader import KIND_LINES
    from conductor.prompts import RECURSION_INSTRUCTION

    # The system prompt comes first in merge priority (4x the repeats): it is most of every
    # prompt. Questions stay sub-word.
    prompt_text = [SYSTEM.format(max_steps=5, examples="(none)"), RECURSION_INSTRUCTION, *KIND_LINES.values()]
    # Pool lines, in every position a randomized pool may put them, weigh most: merges then
    # make each a token or two instead of ~8 fragments (~30 fewer prompt tokens).
    descriptions = [worker_description(spec) for spec in pool.specs]
    pool_lines = [worker_line(i, d) + "\n" for i in range(len(pool.specs)) for d in descriptions]
    # The recursion prompt's lines about the earlier round (conductor.prompts.compact_round): each
    # step's number, worker and role, and the agreement line, so each is a few tokens too.
    n_workers = len(pool.specs)
    roles = ("attempt", "check", "comparison", "check of the round before")
    round_lines = [f"{EARLIER_WORKFLOW_HEADER}\n"] + [f"Step {i}: Model {w}, {r}: " for i in range(5)
                                                        for w in range(n_workers) for r in roles]
    round_lines += [f"Agreement: {k} of {n} steps give the final answer: {word}.\n" for n in range(1, 11)
                    for k in range(1, n + 1) for word in ("all agree", "most agree", "they disagree")]
    corpus = prompt_text * (4 * repeats) + pool_lines * (20 * repeats) + round_lines * (2 * repeats)
    rng = random.Random(seed)
    workers = list(range(len(pool.specs)))
    for p in problems[: 4 * repeats]:
        plan, workflow = draw_example(p, workers, rng)
        corpus.append(completion_text(p, workflow, plan))
    corpus += [p.task_text for p in problems]
    return corpus
