"""Generated workflows for the SFT warm start, and the corpus the tiny tokenizer learns from.

Each completion is what the paper's Conductor writes: a line of free-form reasoning, then the
three lists. Both depend on the task type (the problem's domain) and never on the workers:
- the reasoning line says what kind of task it is ("This is a coding task."); the tiny
  tokenizer makes its last word and the first worker one token per (kind of task, worker)
  (`tokenizer_corpus`, `conductor.models.tiny.DECISION_PIECE`);
- the subtasks are the simulated pool's on-topic wording for the domain (`on_topic_instruction`
  without the subject: quality 1 under its instruction-quality function, like with it);
- the workers are drawn uniformly at random among those offered, so SFT teaches no routing and
  the SFT policy starts with high entropy over workers.

Why (measured, docs/training.md): the earlier SFT data put the problem's subject inside each
subtask. The subject is in the question text for ~4 % of the bank's problems, so those tokens
were noise the tiny model could not predict, and after 6 epochs it had not learnt the task type
at all: decision-position hidden-state cosine 0.9976 within a domain vs 0.9958 across domains,
the same worker distribution in every domain, subtask quality 0.10-0.82 by domain. A prototype
whose subtasks were the same for every question ("Solve the task.") showed the same symptom
(cosine 0.9998) and GRPO collapsed to "always the best single worker".
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from conductor.data.schema import Problem
from conductor.prompts import SYSTEM, pool_section
from conductor.training.dataset import PoolSampling, PromptRow, build_rows, row_messages
from conductor.workers.pool import Pool
from conductor.workers.simulated.instructions import on_topic_instruction
from conductor.workflow import ALL, Workflow, render

TASK_LINES = {
    "math": "This is a math problem.",
    "choice": "This is a multiple-choice knowledge question.",
    "freeform": "This is a science question with a short answer.",
    "code": "This is a coding task.",
}


def _untitled(problem: Problem) -> Problem:
    # The subject is rarely in the question text (~4 % of the bank): a model cannot learn to write it.
    return problem.model_copy(update={"meta": {}})


def task_line(problem: Problem) -> str:
    """The reasoning line before the lists: the kind of task, nothing about workers."""
    return TASK_LINES.get(problem.domain, "This is a question.")


def solve_instruction(problem: Problem) -> str:
    """The solve step's subtask: the simulated pool's on-topic wording for the problem's domain
    (quality 1 under its instruction-quality function): the domain's topic words and answer
    format. It depends on the task type only, never on a worker."""
    return on_topic_instruction(_untitled(problem), "solve")


def check_instruction(problem: Problem) -> str:
    """The second step of a solve-then-check pair: review the answer above, same topic words."""
    return on_topic_instruction(_untitled(problem), "verify")


def completion_text(problem: Problem, workflow: Workflow) -> str:
    """The SFT target: the reasoning line, then the lists."""
    return f"{task_line(problem)}\n{render(workflow)}"


def task_workflow(problem: Problem, workers: Sequence[int], rng: random.Random, *, p_check: float = 0.3) -> Workflow:
    """One step by a random worker, or (with p_check) a solve-then-check pair, worded for the task."""
    solve = solve_instruction(problem)
    first = rng.choice(list(workers))
    if rng.random() >= p_check:
        return Workflow(model_id=(first,), subtasks=(solve,), access_list=((),))
    second = rng.choice(list(workers))
    return Workflow(model_id=(first, second), subtasks=(solve, check_instruction(problem)), access_list=((), ALL))


def sft_examples(
    problems: Sequence[Problem],
    pool: Pool,
    sampling: PoolSampling,
    *,
    copies: int = 4,
    seed: int = 0,
    examples: bool = False,
) -> list[dict]:
    """Prompt/completion pairs (TRL's conversational format): `copies` rows per problem, each
    with its own offered pool and random workers."""
    rng = random.Random(seed)
    out = []
    for c in range(copies):
        # No recursion rows: SFT teaches the format; re-planning is left to GRPO.
        plain = PoolSampling(sampling.randomized, sampling.k_min, sampling.k_max, 0.0)
        for row in build_rows(problems, pool, plain, seed=seed * 1000 + c):
            out.append(example_for(row, pool, rng, examples=examples))
    return out


def example_for(row: PromptRow, pool: Pool, rng: random.Random, *, examples: bool) -> dict:
    workers = [i for i, s in enumerate(row.offered(pool).specs) if s.provider != "conductor"]
    workflow = task_workflow(row.problem, workers, rng)
    messages = row_messages(row, pool, examples=examples)
    return {
        "prompt": [m.model_dump() for m in messages],
        "completion": [{"role": "assistant", "content": completion_text(row.problem, workflow)}],
    }


def tokenizer_corpus(problems: Sequence[Problem], pool: Pool, *, seed: int = 0, repeats: int = 50) -> list[str]:
    """Texts the tiny tokenizer trains on: the system prompt, pool descriptions, questions and
    workflows in the output format. The fixed texts are repeated so that, with merges across
    words, each of their lines becomes a few tokens (prompts ~4x shorter, steps ~4x faster)."""
    from conductor.prompts import RECURSION_INSTRUCTION

    # The system prompt and pool lines come first in merge priority (4x the repeats): they are
    # most of every prompt. Instruction templates follow; subjects and questions stay sub-word.
    prompt_text = [SYSTEM.format(max_steps=5, examples="(none)"), RECURSION_INSTRUCTION]
    prompt_text += [f"Model {i}: {s.description}" for i, s in enumerate(pool.specs)]
    # The instructions and reasoning lines SFT writes (a few per domain) merge into a few tokens each.
    templates = sorted({t for p in problems for t in (solve_instruction(p), check_instruction(p), task_line(p))})
    corpus = prompt_text * (4 * repeats) + templates * repeats
    corpus += ["model_id = [", 'subtasks = ["', "access_list = [", '[], "all"]', "[[]]"] * repeats
    # Each reasoning line with the list opener and each first worker after it: its last word
    # through the worker becomes one token per (kind of task, worker) (see DECISION_PIECE).
    lines = sorted({task_line(p) for p in problems})
    openers = [f"{line}\nmodel_id = [{i}{end}" for line in lines for i in range(len(pool.specs)) for end in ("", ", ")]
    corpus += openers * (4 * repeats)
    corpus += [p.task_text for p in problems]
    return corpus
