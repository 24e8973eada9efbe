"""The paper's baselines as planners: each writes a fixed workflow that the one executor runs,
so every baseline's calls, tokens and dollars are recorded exactly like the Conductor's.

- `single:W`   one step by W.
- `reflect:W`  W answers, then critiques and revises its own answer, REFLECT_ROUNDS times (one
               call per round: critique + revised answer), each round reading the previous one.
- `budget:W`   W answers BUDGET_SAMPLES times independently, then W reports the majority answer
               (the vote is a call that sees all samples, not code: the final step's text is
               the answer the executor grades).
- `moa`        every offered worker proposes, one aggregates (one proposer layer + aggregator:
               8 calls on the paper's 7-worker pool).
- `random`     a random valid workflow, seeded by the question (same question, same workflow).
- `oracle`     the single worker with the highest configured skill for the question's domain:
               simulation only, an upper bound for routers.

Workflows longer than the paper's 5 steps (reflect: 6, budget: 6, moa: pool + 1) run with the
Method's `max_steps` raised to fit (see `conductor.evaluation.methods`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence

from conductor.prompts import prompt_task
from conductor.planners import worker_indices
from conductor.simulation import is_simulated_worker
from conductor.types import Message, Usage, WorkerSpec
from conductor.workers.base import Completion
from conductor.workflow import ALL, Access, Workflow, render

REFLECT_ROUNDS = 5
BUDGET_SAMPLES = 5
SOLVE = "Solve the task. Show your reasoning briefly and end with the final answer in the requested format."
# The benchmark's own prompt per domain, as an evaluation harness gives a worker (MATH: boxed
# answer; MMLU/GPQA: the letter; code: one program). A question not among the problems being
# evaluated gets the generic SOLVE. (In the simulated pool these score as on-topic instructions.)
DOMAIN_PROMPTS: dict[str, str] = {
    "math": "Solve this math problem: compute and simplify step by step, then give the exact final answer"
            " in \\boxed{}.",
    "choice": "Answer this multiple-choice question from knowledge: recall the relevant facts and concepts,"
              " eliminate wrong options, and reply with the letter of the correct option.",
    "freeform": "Answer this science question with careful scientific reasoning and an estimate where needed;"
                " give a short, concise final answer phrase.",
    "code": "Write a Python program for this coding problem: implement a correct algorithm that handles the"
            " input, output and edge cases; put the complete program in one fenced python block.",
}
REFLECT = ("Critique the answer above: check each step for errors. Then write a revised solution that fixes"
           " what is wrong (keep what is right). {task}")
VOTE = ("Several independent answers are above. Report the answer that most of them give (majority vote;"
        " break a tie by checking). {task}")
AGGREGATE = ("Synthesize the responses above into one answer: weigh them critically and check them. {task}")
RANDOM_SUBTASKS = (
    SOLVE,
    "Work out the key intermediate results for the task.",
    "Verify the answer above step by step; fix it if it is wrong and give the final answer.",
    "Compare the answers above and choose the correct one; give the final answer.",
)


class BaselineError(ValueError):
    """A baseline that cannot plan over the pool it was offered (a clear one-line reason)."""


def completion_of(workflow: Workflow, name: str) -> Completion:
    """A baseline planner's completion: the workflow as text, written in-process (the plan itself
    costs nothing)."""
    return Completion(text="Plan:\n" + render(workflow), usage=Usage(cost_usd=0.0), model=name)


def index_of(offered: Sequence[WorkerSpec], worker_id: str) -> int:
    for i, spec in enumerate(offered):
        if spec.id == worker_id:
            return i
    raise BaselineError(f"worker {worker_id!r} is not in the offered pool ({', '.join(s.id for s in offered)})")


def question_of(messages: Sequence[Message]) -> str:
    """The task text of a Conductor prompt (after its `Task:` line, less the lines after it)."""
    return prompt_task(messages[-1].content if messages else "")


Lookup = Callable[[str], "tuple[str, str] | None"]  # question -> (domain, source)


def prompt_for(domain: str | None) -> str:
    return DOMAIN_PROMPTS.get(domain or "", SOLVE)


def domain_of(lookup: Lookup | None, messages: Sequence[Message]) -> str | None:
    """The domain of the question in the planner's messages, when the lookup knows it."""
    found = lookup(question_of(messages).strip()) if lookup else None
    return found[0] if found else None


def single_workflow(w: int, solve: str = SOLVE) -> Workflow:
    return Workflow(model_id=(w,), subtasks=(solve,), access_list=((),))


def reflect_workflow(w: int, solve: str = SOLVE, rounds: int = REFLECT_ROUNDS) -> Workflow:
    access: list[Access] = [()] + [(i,) for i in range(rounds)]
    return Workflow(model_id=(w,) * (rounds + 1), subtasks=(solve,) + (REFLECT.format(task=solve),) * rounds,
                    access_list=tuple(access))


def budget_workflow(w: int, solve: str = SOLVE, samples: int = BUDGET_SAMPLES) -> Workflow:
    access: list[Access] = [()] * samples + [ALL]
    return Workflow(model_id=(w,) * (samples + 1), subtasks=(solve,) * samples + (VOTE.format(task=solve),),
                    access_list=tuple(access))


def moa_workflow(proposers: Sequence[int], aggregator: int, solve: str = SOLVE) -> Workflow:
    access: list[Access] = [()] * len(proposers) + [ALL]
    return Workflow(model_id=(*proposers, aggregator),
                    subtasks=(solve,) * len(proposers) + (AGGREGATE.format(task=solve),), access_list=tuple(access))


def random_workflow(workers: Sequence[int], rng: random.Random, max_steps: int = 5) -> Workflow:
    """A valid workflow: 1..max_steps steps, random workers, subtasks and access to earlier steps."""
    if not workers:
        raise BaselineError("no workers to plan over")
    n = rng.randint(1, max_steps)
    access: list[Access] = []
    for i in range(n):
        roll = rng.random()
        access.append(() if i == 0 or roll < 0.3 else ALL if roll < 0.6 else tuple(sorted(rng.sample(range(i), rng.randint(1, i)))))
    subtasks = [SOLVE] + [rng.choice(RANDOM_SUBTASKS) for _ in range(n - 1)]
    return Workflow(model_id=tuple(rng.choice(list(workers)) for _ in range(n)), subtasks=tuple(subtasks),
                    access_list=tuple(access))


class WorkerPlanner:
    """single / reflect / budget over one named worker."""

    KINDS = {"single": single_workflow, "reflect": reflect_workflow, "budget": budget_workflow}

    def __init__(self, kind: str, worker_id: str, lookup: Lookup | None = None) -> None:
        if kind not in self.KINDS:
            raise BaselineError(f"unknown baseline {kind!r}; one of {', '.join(self.KINDS)}")
        self.kind, self.worker_id, self.name, self.lookup = kind, worker_id, f"{kind}-{worker_id}", lookup

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        solve = prompt_for(domain_of(self.lookup, messages))
        return completion_of(self.KINDS[self.kind](index_of(offered, self.worker_id), solve), self.name)


class MoAPlanner:
    """Every offered worker proposes; `aggregator` (default: the first offered) aggregates."""

    def __init__(self, aggregator: str | None = None, lookup: Lookup | None = None) -> None:
        self.aggregator, self.name = aggregator, "moa" + (f"-{aggregator}" if aggregator else "")
        self.lookup = lookup

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        workers = worker_indices(offered)
        if not workers:
            raise BaselineError("no workers to plan over")
        agg = index_of(offered, self.aggregator) if self.aggregator else workers[0]
        return completion_of(moa_workflow(workers, agg, prompt_for(domain_of(self.lookup, messages))), self.name)


class RandomPlanner:
    """A random valid workflow, drawn from a generator seeded by (seed, question)."""

    def __init__(self, seed: int = 0, max_steps: int = 5) -> None:
        self.seed, self.max_steps, self.name = seed, max_steps, "random"

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        digest = hashlib.sha256(f"{self.seed}\x1f{question_of(messages)}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        return completion_of(random_workflow(worker_indices(offered), rng, self.max_steps), self.name)


class OraclePlanner:
    """The offered worker with the highest configured skill for the question's domain. It reads
    skills from the simulated pool's options, so it refuses any other pool; `domain_of` maps a
    question text to its domain (the problems being evaluated know it)."""

    name = "oracle"

    def __init__(self, domain_of: Lookup) -> None:
        self.domain_of = domain_of

    @staticmethod
    def check_pool(offered: Sequence[WorkerSpec]) -> None:
        real = [s.id for s in offered if not s.is_conductor and not is_simulated_worker(s)]
        if real:
            raise BaselineError(f"oracle exists only in simulation; {', '.join(real)} is not a simulated worker")

    def best(self, offered: Sequence[WorkerSpec], domain: str, source: str = "") -> int:
        from conductor.workers.simulated.options import SimulatedOptions

        self.check_pool(offered)
        skills = {i: SimulatedOptions(**offered[i].options).skill_for(domain, source) for i in worker_indices(offered)}
        if not skills:
            raise BaselineError("no workers to plan over")
        return max(skills, key=lambda i: (skills[i], -i))

    async def plan(self, messages: list[Message], offered: Sequence[WorkerSpec]) -> Completion:
        question = question_of(messages)
        found = self.domain_of(question.strip())
        if found is None:
            raise BaselineError("oracle: the question is not one of the problems being evaluated")
        return completion_of(single_workflow(self.best(offered, *found), prompt_for(found[0])), self.name)
