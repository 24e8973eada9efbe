"""Generated workflows for the SFT warm start, and the corpus the tiny tokenizer learns from.

The subtask wording depends on the task (its domain, its subject, the answer format the domain
asks for) and never on the workers: the workers are drawn at random. A prototype whose subtasks
were the same for every question ("Solve the task.") taught the model to ignore the question at
the decision position, and GRPO then collapsed to "always the best single worker"; with wording
that depends on the task type, GRPO learned per-domain routing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from conductor.data.schema import Problem
from conductor.prompts import SYSTEM, pool_section
from conductor.training.dataset import PoolSampling, PromptRow, build_rows, row_messages
from conductor.workers.pool import Pool
from conductor.workflow import ALL, Workflow, render

# {subject} is the problem's subject (or its domain's noun when it has none).
SOLVE: dict[str, tuple[str, ...]] = {
    "math": (
        "Solve this {subject} problem step by step and put the final answer in \\boxed{{}}.",
        "Work out the {subject} problem carefully; give the exact result in \\boxed{{}}.",
        "Derive the answer to this {subject} question and write it as \\boxed{{answer}}.",
    ),
    "choice": (
        "Answer this multiple-choice question on {subject}; end with the letter of the correct option.",
        "Pick the correct option for this {subject} question and reply with its letter.",
        "Reason about each option of this {subject} question, then give the single correct letter.",
    ),
    "freeform": (
        "Answer this {subject} question with a short, exact answer after 'Answer:'.",
        "Give a concise answer to the {subject} question; end with 'Answer:' and the answer.",
        "Recall the facts this {subject} question needs and state the short answer after 'Answer:'.",
    ),
    "code": (
        "Write a complete Python program for this {subject} task in one fenced python block.",
        "Implement the {subject} task in Python; return the full program in a ```python block.",
        "Write correct, efficient Python code that solves this {subject} task, in a fenced python block.",
    ),
}
CHECK: dict[str, str] = {
    "math": "Check the solution above to this {subject} problem; fix any error and give the final answer in \\boxed{{}}.",
    "choice": "Check the answer above to this {subject} question; give the correct option's letter.",
    "freeform": "Check the answer above to this {subject} question; give the corrected short answer after 'Answer:'.",
    "code": "Review the program above for this {subject} task; fix any bug and return the full program in a ```python block.",
}
_DOMAIN_NOUN = {"math": "math", "choice": "knowledge", "freeform": "reasoning", "code": "programming"}


def subject_of(problem: Problem) -> str:
    """A short label of what the problem is about (the bank's `meta["subject"]` when it has one)."""
    for key in ("subject", "ability", "domain", "type"):
        value = problem.meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.replace("_", " ").strip().lower()
    return _DOMAIN_NOUN[problem.domain]


def task_workflow(problem: Problem, workers: Sequence[int], rng: random.Random, *, p_check: float = 0.3) -> Workflow:
    """One step by a random worker, or (with p_check) a solve-then-check pair, worded for the task."""
    subject = subject_of(problem)
    solve = rng.choice(SOLVE[problem.domain]).format(subject=subject)
    first = rng.choice(list(workers))
    if rng.random() >= p_check:
        return Workflow(model_id=(first,), subtasks=(solve,), access_list=((),))
    second = rng.choice(list(workers))
    check = CHECK[problem.domain].format(subject=subject)
    return Workflow(model_id=(first, second), subtasks=(solve, check), access_list=((), ALL))


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
        "completion": [{"role": "assistant", "content": render(workflow)}],
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
    templates = [t.split("{subject}")[0] for d in SOLVE for t in (*SOLVE[d], CHECK[d])]
    templates += [t.split("{subject}")[-1].replace("{{}}", "{}") for d in SOLVE for t in (*SOLVE[d], CHECK[d])]
    corpus = prompt_text * (4 * repeats) + templates * repeats
    corpus += ["model_id = [", 'subtasks = ["', "access_list = [", '[], "all"]', "[[]]"] * repeats
    corpus += [p.question for p in problems]
    return corpus
