"""The warm start's library of workflow topologies (plans) and of step wordings (phrases).

A *plan* is a topology the Conductor can write: which roles its steps play and what each step
reads. Its sentence opens the Conductor's reasoning line ("Three attempts, then compare them."),
so the output stays natural language and says what the lists do. The warm start draws plans about
uniformly; GRPO then keeps the ones the environment pays for (the paper's claim: strategies emerge).

A *phrase* is one step's instruction. The library was written as a person would instruct a
colleague, for each kind of task and role (solve, check, combine, plan), mixing precise wordings
(name the kind of work and the answer format), generic ones ("Solve the task.") and loose ones
("Have a go at this."). It is written independently of the simulated pool's scoring, and the
warm start draws phrases uniformly: which wording pays is left to GRPO to find (prompt
engineering that emerges), instead of handing the model the simulator's own optimum.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from conductor.workflow import ALL, PREV, Access, Workflow

Role = str  # "solve" | "check" | "combine" | "plan"


@dataclass(frozen=True)
class Plan:
    """A topology: its name, the sentence that states it, and each step's role and access."""

    name: str
    sentence: str
    roles: tuple[Role, ...]
    access: tuple[Access, ...]

    @property
    def steps(self) -> int:
        return len(self.roles)


PLANS: tuple[Plan, ...] = (
    Plan("single", "One attempt.", ("solve",), ((),)),
    # Checked by the solver itself or by another worker: the workers say which, so the sentence
    # (true of both) cannot contradict them.
    Plan("check", "Solve, then check it.", ("solve", "check"), ((), ALL)),
    Plan("attempts_2", "Two attempts, then compare them.", ("solve", "solve", "combine"), ((), (), ALL)),
    Plan("attempts_3", "Three attempts, then compare them.", ("solve",) * 3 + ("combine",), ((),) * 3 + (ALL,)),
    Plan("attempts_4", "Four attempts, then compare them.", ("solve",) * 4 + ("combine",), ((),) * 4 + (ALL,)),
    Plan("plan_execute", "Plan first, then solve.", ("plan", "solve"), ((), (0,))),
    Plan("chain", "Draft, then improve it twice.", ("solve", "check", "check"), ((), (0,), (1,))),
)
# What a second round (a recursion round, written after reading the first) can do: keep the
# earlier answer (no steps), have another worker check the earlier round, or add attempts and an
# aggregator that reads both rounds ("prev": every step of the earlier round). A second round may
# also write any of PLANS (a fresh workflow that replaces the first round's answer).
KEEP = Plan("keep", "Keep the earlier answer.", (), ())
RECURSION_PLANS: tuple[Plan, ...] = (
    KEEP,
    Plan("recheck", "Check the earlier answers.", ("check",), ((PREV,),)),
    Plan("more_1", "One more attempt, then compare all.", ("solve", "combine"), ((), (PREV, 0))),
    Plan("more_2", "Two more attempts, then compare all.", ("solve", "solve", "combine"), ((), (), (PREV, 0, 1))),
    Plan("more_3", "Three more attempts, then compare all.", ("solve",) * 3 + ("combine",), ((),) * 3 + ((PREV, 0, 1, 2),)),
    Plan("more_4", "Four more attempts, then compare all.", ("solve",) * 4 + ("combine",),
         ((),) * 4 + ((PREV, 0, 1, 2, 3),)),
)
PLAN_BY_NAME = {p.name: p for p in PLANS + RECURSION_PLANS}

# Kind-specific wordings per role. Precise ones name the kind of work and the answer's form; the
# loose ones are what a hurried person types.
_KIND_PHRASES: dict[str, dict[Role, tuple[str, ...]]] = {
    "math": {
        "solve": ("Work through this math problem step by step and give the exact answer in \\boxed{}.",
                  "Compute it carefully, simplify, and put the final number in \\boxed{}.",
                  "Crunch the numbers."),
        "check": ("Check the calculation above line by line and give the exact answer in \\boxed{}.",
                  "Recompute the result above and fix any arithmetic slip."),
        "combine": ("Compare the math answers above, redo the calculation where they differ, and give the exact "
                    "answer in \\boxed{}.",
                    "Go with the number most of the attempts above reached."),
        "plan": ("Outline which formulas and steps this math problem needs, without solving it.",
                 "Sketch an approach."),
    },
    "choice": {
        "solve": ("Use your knowledge to pick the right option and reply with its letter.",
                  "Recall the relevant facts, rule out the wrong choices, and answer with one letter.",
                  "Go with your gut."),
        "check": ("Check the option chosen above against the facts and concepts you know, and reply with its letter.",
                  "Double-check the pick above."),
        "combine": ("Compare the options chosen above, recall the facts where they differ, and reply with one letter.",
                    "Take the letter most answers above agree on."),
        "plan": ("List the facts needed to choose between the options, without answering.",
                 "Think about what matters here."),
    },
    "freeform": {
        "solve": ("Reason through the science here and give a short final answer.",
                  "Estimate carefully with the right units and reply in a concise phrase.",
                  "Tell me what you think."),
        "check": ("Check the scientific reasoning above and give a short corrected answer.",
                  "Look over the reply above once more."),
        "combine": ("Compare the answers above, redo the physics or chemistry where they differ, and give a short answer.",
                    "Go with whatever most replies above said."),
        "plan": ("Name the scientific principles and quantities this question needs, without answering.",
                 "Think it over first."),
    },
    "code": {
        "solve": ("Write a Python program that reads the input and prints the output, in one code block.",
                  "Implement an efficient algorithm in Python, handle edge cases, and return the full program.",
                  "Hack something together."),
        "check": ("Test the program above on the edge cases, fix any bug, and return the full Python program.",
                  "Review the code above."),
        "combine": ("Compare the programs above, keep the one that handles every input and output case, "
                    "and return it in one Python block.",
                    "Pick the most popular program above."),
        "plan": ("Describe the algorithm and data structures for this program, without writing code.",
                 "Plan the code."),
    },
}
# Wordings that fit any kind of task (so they name none).
_GENERIC_PHRASES: dict[Role, tuple[str, ...]] = {
    "solve": ("Solve the task.", "Have a go at this."),
    "check": ("Check the answer above.",),
    "combine": ("Pick the best answer above.",),
    "plan": ("Make a plan.",),
}


def phrases(kind: str, role: Role) -> tuple[str, ...]:
    """Every wording of `role` for a kind of task (a domain), kind-specific first."""
    return _KIND_PHRASES.get(kind, {}).get(role, ()) + _GENERIC_PHRASES[role]


def all_phrases() -> list[str]:
    """Every wording in the library, each once."""
    out = {p for by_role in _KIND_PHRASES.values() for ps in by_role.values() for p in ps}
    out |= {p for ps in _GENERIC_PHRASES.values() for p in ps}
    return sorted(out)


def draw_workflow(plan: Plan, kind: str, workers: Sequence[int], rng: random.Random, *, p_tied: float = 0.7,
                  p_tied_wording: float = 0.7) -> Workflow:
    """`plan` for a task of `kind`: with probability `p_tied` every step on one worker, else each
    step's worker drawn at random; each step's wording drawn uniformly from the library, and
    with probability `p_tied_wording` one wording per role, repeated by every step of that role.

    Why words are tied as workers are: attempts are usually one instruction pasted k times. With
    each attempt's wording drawn on its own, GRPO had to find the best wording once per step,
    each a quarter of an ensemble's reward signal, and the effort models' high plans kept
    "Solve the task." for half their attempts where their one-call plans had learned a precise
    wording (docs/training.md, "Tied wordings"). Tied, a trained policy can copy the wording it
    learned for the first attempt; which wording pays is still GRPO's to find."""
    workers = list(workers)
    if rng.random() < p_tied:
        chosen = [rng.choice(workers)] * plan.steps
    else:
        chosen = [rng.choice(workers) for _ in range(plan.steps)]
    if plan.name == "check" and len(workers) > 1:  # half self-checks, half checks by another worker
        chosen[1] = chosen[0] if rng.random() < 0.5 else rng.choice([w for w in workers if w != chosen[0]])
    if rng.random() < p_tied_wording:
        by_role = {role: rng.choice(phrases(kind, role)) for role in dict.fromkeys(plan.roles)}
        subtasks = tuple(by_role[role] for role in plan.roles)
    else:
        subtasks = tuple(rng.choice(phrases(kind, role)) for role in plan.roles)
    return Workflow(model_id=tuple(chosen), subtasks=subtasks, access_list=plan.access)


def plan_of(workflow: Workflow) -> Plan | None:
    """The library plan whose topology (steps and access) a workflow has; None
    when it has none. Used to check that the stated plan is true to the lists that follow."""
    for plan in PLANS + RECURSION_PLANS:
        if len(workflow) == plan.steps and tuple(workflow.access_list) == plan.access:
            return plan
    return None


def stated_plan(text: str) -> Plan | None:
    """The plan a Conductor output's reasoning line states (its first sentence), if any."""
    for plan in PLANS + RECURSION_PLANS:
        if text.lstrip().startswith(plan.sentence):
            return plan
    return None
