"""Generated workflows for the SFT warm start, and the corpus the tiny tokenizer learns from.

The subtask wording depends on the task (its domain, its subject, the answer format the domain
asks for) and never on the workers: the workers are drawn at random. It is the simulated pool's
own on-topic wording (`on_topic_instruction`), which its instruction-quality function scores 1
(the earlier templates here scored ~0.65: one topic word, not two). A prototype whose subtasks
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
from conductor.workers.simulated.instructions import on_topic_instruction
from conductor.workers.simulated.instructions import subject_of as instruction_subject
from conductor.workflow import ALL, Workflow, render

def solve_instruction(problem: Problem) -> str:
    """The solve step's subtask: the simulated pool's on-topic wording (quality 1 under its
    instruction-quality function): it names the domain's topic, the problem's subject and the
    domain's answer format. It depends on the task only, never on a worker."""
    return on_topic_instruction(problem, "solve")


def check_instruction(problem: Problem) -> str:
    """The second step of a solve-then-check pair: review the answer above, same topic words."""
    return on_topic_instruction(problem, "verify")


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
    # The fixed parts of the instructions SFT writes, cut at the subject: they merge into a few
    # tokens each, while subjects stay sub-word (a whole instruction per subject as one token
    # would be a token the model must learn per subject, and cannot write for a new one).
    pieces: set[str] = set()
    for p in problems:
        subject = instruction_subject(p)
        for text in (solve_instruction(p), check_instruction(p)):
            pieces.update(part for part in (text.split(f"{subject} ") if subject else [text]) if part)
    templates = sorted(pieces)
    corpus = prompt_text * (4 * repeats) + templates * repeats
    corpus += ["model_id = [", 'subtasks = ["', "access_list = [", '[], "all"]', "[[]]"] * repeats
    corpus += [p.question for p in problems]
    return corpus
