"""The texts models see: the Conductor's planning prompt, its recursion prompt, and the one
message each worker step gets.

The few-shot examples are out-of-domain on purpose (medical reasoning, a proof, Countdown,
data cleaning): the paper found them better than in-domain ones, and they keep benchmark
questions out of the prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from conductor.answers import final_answer
from conductor.effort import EFFORT_LINES, Effort, effort_line, step_budget
from conductor.kind_reader import KIND_LINES, kind_line
from conductor.task_cues import CUE_LINES, cue_line
from conductor.types import Message, WorkerSpec
from conductor.workflow import DEFAULT_MAX_STEPS, Workflow, later_round_max_steps, render

SYSTEM = """\
You are the Conductor. You do not answer questions yourself: you write a workflow that a pool of
worker models carries out, and the last step's response is the final answer.

Think first if you like. Then write exactly three Python lists of equal length, one entry per step:

model_id = [...]     # the number of the worker for each step ("Model 2" is 2)
subtasks = [...]     # one instruction per step, written for that worker
access_list = [...]  # per step: [] (sees only the task), "all" (sees every earlier step),
                     # or a list of earlier step numbers, counting from 0, whose work it sees

Rules:
- At most {max_steps} steps. Steps may only see earlier steps.
- Every worker sees the original task. Write instructions that say what to produce, and which
  strengths of the worker you are relying on.
- The final step must produce the complete answer in the format the task asks for.
- Fewer, better-chosen steps cost less: use one step when one strong worker suffices.

Examples of good workflows (the pools in them are not yours):
{examples}"""

EXAMPLES: tuple[tuple[str, str, Workflow], ...] = (
    (
        "A 64-year-old with sudden pleuritic chest pain after a long flight: what is the most "
        "likely diagnosis and the first test to order?",
        "Model 0: clinical reasoning specialist. Model 1: careful generalist.",
        Workflow(
            model_id=(0, 1),
            subtasks=(
                "List the differential diagnosis ranked by likelihood, citing the risk factors in the case.",
                "Check the ranking above against the case; name the single most likely diagnosis and the "
                "first test to order, with one sentence of justification.",
            ),
            access_list=((), "all"),
        ),
    ),
    (
        "Prove that for every integer n > 1, n^5 - n is divisible by 30.",
        "Model 0: strong at proofs. Model 1: fast, good at arithmetic. Model 2: meticulous checker.",
        Workflow(
            model_id=(0, 1, 2),
            subtasks=(
                "Write a complete proof, factoring n^5 - n and treating divisibility by 2, 3 and 5 separately.",
                "Verify the claim numerically for n = 2..12 and report any counterexample.",
                "Review the proof in step 0 using the checks in step 1; fix any gap and output the final proof.",
            ),
            access_list=((), (), (0, 1)),
        ),
    ),
    (
        "Countdown: reach 952 using 25, 50, 75, 100, 3 and 6, each at most once, with + - * /.",
        "Model 0: good at search. Model 1: good at search. Model 2: careful generalist.",
        Workflow(
            model_id=(0, 1, 2),
            subtasks=(
                "Search for an expression reaching 952; show the expression and evaluate it step by step.",
                "Independently search for an expression reaching 952, starting from the large numbers.",
                "Check both expressions above for arithmetic and rule errors; output one valid expression.",
            ),
            access_list=((), (), "all"),
        ),
    ),
    (
        "A CSV of customer records has duplicate people with differently formatted phone numbers and "
        "names. Describe a robust deduplication procedure.",
        "Model 0: strong programmer.",
        Workflow(
            model_id=(0,),
            subtasks=(
                "Describe the normalisation rules for names and phone numbers, the matching key and how to "
                "merge conflicting fields; include a short pandas implementation.",
            ),
            access_list=((),),
        ),
    ),
)

CONDUCTOR_SELF_DESCRIPTION = (
    "the Conductor itself: sees the work of the steps it can access, then either keeps the last "
    "answer (empty lists) or writes a new workflow"
)


def worker_description(spec: WorkerSpec) -> str:
    """How the prompt describes a worker: its description, else its model or id."""
    if spec.is_conductor and not spec.description:
        return CONDUCTOR_SELF_DESCRIPTION
    return spec.description or spec.model or spec.id


def worker_line(index: int, description: str) -> str:
    """A worker's line in the prompt's listing (its number is what `model_id` names)."""
    return f"Model {index}: {description}"


def pool_section(specs: Sequence[WorkerSpec]) -> str:
    return "\n".join(worker_line(i, worker_description(spec)) for i, spec in enumerate(specs))


@functools.cache  # EXAMPLES is a constant: render its text once (it was ~0.7 ms per question)
def _examples_text() -> str:
    parts = []
    for n, (question, pool, wf) in enumerate(EXAMPLES, 1):
        parts.append(f"Example {n}\nTask: {question}\nWorkers: {pool}\n{render(wf)}")
    return "\n\n".join(parts)


def conductor_messages(
    question: str,
    specs: Sequence[WorkerSpec],
    *,
    examples: bool = True,
    max_steps: int = DEFAULT_MAX_STEPS,
    effort: Effort | None = None,
) -> list[Message]:
    system = SYSTEM.format(
        max_steps=step_budget(effort, max_steps),  # an effort level's budget, stated as the step limit
        examples=_examples_text() if examples else "(none)",
    )
    user = f"Available models:\n{pool_section(specs)}{TASK_LINE}{question}"
    if (line := effort_line(effort)) is not None:
        user += f"\n\n{line}"
    # The task's own format cue (options, a program, \boxed{}), read from its text only: the kind
    # of task is the Conductor's first decision, and the format survives how a user words it.
    if (line := cue_line(question)) is not None:
        user += f"\n\n{line}"
    # What kind of task its characters read as (conductor/kind_reader.py): a guess the Conductor
    # may follow or not, sturdier against a user's wording than the tiny model's own reading.
    if (line := kind_line(question)) is not None:
        user += f"\n\n{line}"
    return [Message(role="system", content=system), Message(role="user", content=user)]


TASK_LINE = "\n\nTask:\n"
# The lines `conductor_messages` may add after the task: not part of it
_AFTER_TASK = frozenset(EFFORT_LINES.values()) | frozenset(CUE_LINES.values()) | frozenset(KIND_LINES.values())


def prompt_task(content: str) -> str:
    """The task text of a Conductor prompt's user message (inverse of `conductor_messages`): what
    follows its `Task:` line, less the effort, format and kind lines written after it. A text that is
    not such a message is returned whole."""
    _, sep, task = content.partition(TASK_LINE)
    if not sep:
        return content
    while True:
        head, sep, last = task.rpartition("\n\n")
        if not sep or last not in _AFTER_TASK:
            return task
        task = head


@dataclass(frozen=True)
class PriorStep:
    """A step of an earlier round (or an earlier step of this one), as a prompt shows it: `reads`
    are the steps it read in its own round (None: not known), `reads_prior` whether it read the
    round before that."""

    index: int
    worker: str
    subtask: str
    response: str
    reads: tuple[int, ...] | None = None
    reads_prior: bool = False


# How a step that reads the earlier round ("prev") sees that round's steps: their numbers are
# that round's, so each instruction says whose they are.
EARLIER_ROUND_MARK = "(earlier round)"

RECURSION_INSTRUCTION = """\
You are seeing your own earlier workflow: each step's worker, role and final answer, and how far
the answers agree. Decide:
- If the last answer is right and complete, keep it: write three empty lists
  (model_id = [], subtasks = [], access_list = []).
- Otherwise write a new workflow in the same format, of at most as many steps as the earlier
  one. A step whose access list holds "prev"
  (["prev"], or ["prev", 0, 1] with this workflow's steps 0 and 1) also sees every step of the
  earlier workflow with its full response."""

_FENCE = "```"


def short_answer(response: str) -> str:
    """A step's final answer in a few words: the last code block as "a program of N lines" plus
    its first line, else what `conductor.answers.final_answer` finds (cut at 60 characters)."""
    if response.count(_FENCE) >= 2:
        code = response.rsplit(_FENCE, 2)[-2].split("\n", 1)[-1].strip()
        lines = [ln for ln in code.splitlines() if ln.strip()]
        return f"a program of {len(lines)} lines"
    value, _ = final_answer(response)
    if value is None:
        return "no answer"
    return value if len(value) <= 60 else value[:57] + "..."


def _agreement_key(response: str) -> str:
    """What two answers must share to agree: a program's code, or the final answer's text."""
    if response.count(_FENCE) >= 2:
        return " ".join(response.rsplit(_FENCE, 2)[-2].split())
    value, _ = final_answer(response)
    return " ".join((value or "").lower().split())


def step_role(p: PriorStep) -> str:
    """What a step did, from what it read: an attempt (nothing), a check (one step) or a
    comparison (several)."""
    if p.reads is None:
        return "step"
    if p.reads_prior:
        return "comparison" if p.reads else "check of the round before"
    return "attempt" if not p.reads else "check" if len(p.reads) == 1 else "comparison"


def agreement(prior: Sequence[PriorStep]) -> int:
    """How many of the steps give the last one's answer (0 when the last gave none)."""
    keys = [_agreement_key(p.response) for p in prior]
    if not keys or not keys[-1]:
        return 0
    return sum(k == keys[-1] for k in keys)


def agreement_line(prior: Sequence[PriorStep]) -> str:
    """How far the steps agree with the last one's answer, in numbers and in one word."""
    keys = [_agreement_key(p.response) for p in prior]
    if not keys or not keys[-1]:
        return "Agreement: the final step gave no answer."
    same = agreement(prior)
    word = "all agree" if same == len(keys) else "most agree" if 2 * same > len(keys) else "they disagree"
    return f"Agreement: {same} of {len(keys)} steps give the final answer: {word}."


def compact_round(prior: Sequence[PriorStep], specs: Sequence[WorkerSpec]) -> str:
    """The earlier round in a few lines (the tiny Conductor's context is short): each step's
    number, worker ("Model i" when offered), role and final answer, then how far they agree."""
    ids = [s.id for s in specs]
    lines = []
    for p in prior:
        worker = f"Model {ids.index(p.worker)}" if p.worker in ids else p.worker
        lines.append(f"Step {p.index}: {worker}, {step_role(p)}: {short_answer(p.response)}")
    return "\n".join(lines + [agreement_line(prior)]) if lines else "(none)"


# The line that opens the earlier round in a later round's prompt: the decoder reads a prompt as a
# later round's by it (`DecisionAutomaton.later_round_mark`).
EARLIER_WORKFLOW_HEADER = "# Earlier workflow"


def recursion_messages(
    question: str,
    specs: Sequence[WorkerSpec],
    prior: Sequence[PriorStep],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    full_responses: bool = False,
) -> list[Message]:
    """The Conductor's prompt for a next round: the task, then the earlier round compactly
    (`compact_round`), then `RECURSION_INSTRUCTION`. `full_responses` also quotes each step's
    instruction and whole response (for a Conductor with a long context)."""
    # a later round may run no more steps than the round it reads: the prompt states that limit
    messages = conductor_messages(question, specs, examples=False, max_steps=later_round_max_steps(max_steps, len(prior)))
    shown = compact_round(prior, specs)
    if full_responses and prior:
        shown += "\n\n" + "\n\n".join(
            f"## Step {p.index} ({p.worker})\nInstruction: {p.subtask}\nResponse:\n{p.response}" for p in prior
        )
    messages[-1] = Message(
        role="user",
        content=f"{messages[-1].content}\n\n{EARLIER_WORKFLOW_HEADER}\n{shown}\n\n{RECURSION_INSTRUCTION}",
    )
    return messages


TASK_HEADER = "# Task\n"
CONTEXT_HEADER = "\n\n# Earlier steps\n"
INSTRUCTION_HEADER = "\n\n# Your instruction\n"


def step_message(task: str, context: Sequence[PriorStep], subtask: str) -> list[Message]:
    """The one message a worker gets: the overall task, the instruction and response of each
    step it may read, then its own instruction."""
    body = TASK_HEADER + task
    if context:
        body += CONTEXT_HEADER + "\n\n".join(
            f"## Step {c.index}: instruction\n{c.subtask}\n## Step {c.index}: response\n{c.response}"
            for c in context
        )
    body += INSTRUCTION_HEADER + subtask
    return [Message(role="user", content=body)]


@dataclass(frozen=True)
class StepMessageParts:
    task: str
    context: str
    instruction: str


def split_step_message(content: str) -> StepMessageParts | None:
    """Inverse of `step_message` for our own format (used by the simulated pool)."""
    if not content.startswith(TASK_HEADER) or INSTRUCTION_HEADER not in content:
        return None
    head, instruction = content.rsplit(INSTRUCTION_HEADER, 1)
    head = head[len(TASK_HEADER) :]
    task, _, context = head.partition(CONTEXT_HEADER)
    return StepMessageParts(task=task, context=context, instruction=instruction)
