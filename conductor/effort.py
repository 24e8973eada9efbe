"""How much work the user asks the Conductor to spend on a question: `low`, `medium` or `high`.

The level is stated in the Conductor's prompt (`conductor.prompts.conductor_messages(effort=...)`),
carried in `RunOptions.effort`, drawn per row in training (where the reward charges for calls at
the level's rate), and exposed wherever a user meets the Conductor (`conductor ask --effort`,
`conductor serve`'s `reasoning_effort`, the `conductor:` evaluation method, the nightly's rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from conductor.types import Message


class Effort(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# What each level asks for, as the prompt states it (one line; the tiny model reads it as text).
EFFORT_LINES: dict[Effort, str] = {
    Effort.LOW: "Effort: low. Spend as few worker calls as you can; one good step is often enough.",
    Effort.MEDIUM: "Effort: medium. Balance accuracy against the number of worker calls.",
    Effort.HIGH: "Effort: high. Accuracy matters most; use as many steps as help.",
}


# What each level charges per worker call in the GRPO reward (conductor/training/reward.py: a
# parsed rollout earns r - rate x its worker calls, r being 0.5 wrong / 1 right). In expectation
# r = 0.5 + 0.5 x accuracy, so one more call pays at rate c only if it buys 2c points of accuracy.
# On the simulated local pool's held-out problems (docs/benchmarks.md, test-time scaling; SIMULATED)
# the oracle worker's one attempt scores 0.724, a self-check 0.773 (+4.9 for one more call), 3 or
# 4 attempts + an aggregator 0.804 / 0.809 (+1.6 a call over the check). So: low (0.04: 8 points
# a call) pays for nothing past one call; medium (0.005: 1 point a call) for the check and not the
# ensembles (which its budget, `EFFORT_MAX_STEPS`, leaves out too); high (0) for any gain. Medium
# was 0.01: a check's +3.8 points (in the phrase library's own wording) then netted 0.009 of
# reward, and one of three seeds' GRPO let medium fall back to one call, as low
# (docs/training.md, "Tied wordings"); at 0.005 it nets 0.014. Every
# rate stays under 0.5 / (the most calls a rollout makes), so a parsed workflow always earns more
# than an unparsed one (0), whatever it spends
# (conductor/training/config.py `effort_rates` checks).
DEFAULT_CALL_RATES: dict[Effort, float] = {Effort.LOW: 0.04, Effort.MEDIUM: 0.005, Effort.HIGH: 0.0}


# The steps a first round may run at each level: a budget in worker calls the prompt states ("At
# most 1 steps."), the decoder keeps within (the automaton's step-limit marks, as for a later
# round) and the executor's parser holds every planner to (`step_budget`). Why a budget and not
# the rate alone: charged at its rate but free to write any plan, a model trained with effort rows
# wrote one step at medium as at low (seed 2) and five at high for less than its medium's accuracy
# (seed 1) (docs/benchmarks.md, test-time scaling). None: the run's own limit (max_steps).
EFFORT_MAX_STEPS: dict[Effort, int | None] = {Effort.LOW: 1, Effort.MEDIUM: 2, Effort.HIGH: None}


def step_budget(effort: Effort | None, max_steps: int) -> int:
    """The most steps a first round may run at `effort` under a run limit of `max_steps`."""
    cap = None if effort is None else EFFORT_MAX_STEPS[Effort(effort)]
    return max_steps if cap is None else min(max_steps, cap)


# How many steps the warm start's plans have at each level (the SFT prior, conductor/training/
# sft_data.py): one call at low, a two-step plan (a check, or a plan then a solve) at medium, the
# large ensembles at high. A structural prior on what each level spends, taken from the levels'
# words and budgets, not from any outcome: it gives the tiny model a plan that depends on the
# level's line to start from, which GRPO (charging each level's rate) then refines. Without it the
# warm start's plans are the same at every level, and a model trained with effort rows wrote one
# step whatever the level (docs/training.md, "Effort rows").
EFFORT_STEPS: dict[Effort, tuple[int, int]] = {Effort.LOW: (1, 1), Effort.MEDIUM: (2, 2), Effort.HIGH: (4, 5)}


def default_level(levels: Sequence[Effort]) -> Effort | None:
    """The level a model trained on `levels` is told when its caller states none: medium when it
    was trained on it, else the middle one; None for a model trained without levels."""
    if not levels:
        return None
    return Effort.MEDIUM if Effort.MEDIUM in levels else list(levels)[len(levels) // 2]


def effort_line(effort: Effort | None) -> str | None:
    """The prompt's effort sentence, or None when no level was asked for (the prompt is unchanged)."""
    return None if effort is None else EFFORT_LINES[Effort(effort)]


def stated_effort(messages: Sequence[Message]) -> Effort | None:
    """The level a Conductor prompt states (the effort line of its last user message), or None
    when it states none: what a planner that obeys the knob without a model (the template
    stand-in) reads, and what a served reply reports."""
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return next((level for level, line in EFFORT_LINES.items() if line in user), None)


# The openai client's `reasoning_effort` words (openai.types.shared.ReasoningEffort; the
# Responses API's `reasoning.effort` takes the same), each served at a level or refused (None).
# Rule: a word that names an end of the client's scale ("minimal": the least the model does,
# "max": the most) is served at our end of it; a word that asks for something outside our levels
# is refused rather than quietly served as another level: "none" asks for no work at all, but a
# Conductor always plans and calls at least one worker; "xhigh" asks for more than high, and
# high is the most we have.
CLIENT_EFFORTS: dict[str, Effort | None] = {
    "none": None,
    "minimal": Effort.LOW,
    "low": Effort.LOW,
    "medium": Effort.MEDIUM,
    "high": Effort.HIGH,
    "xhigh": None,
    "max": Effort.HIGH,
}
SERVED_CLIENT_EFFORTS: tuple[str, ...] = tuple(word for word, level in CLIENT_EFFORTS.items() if level is not None)


class UnservedEffort(ValueError):
    """A client's effort word that is not served (its message names the ones that are)."""


def client_effort(word: str | None) -> Effort | None:
    """The level a client's `reasoning_effort` word is served at; None when the client sent none
    (nothing is stated in the prompt). Raises UnservedEffort for a word refused or unknown."""
    if word is None:
        return None
    level = CLIENT_EFFORTS.get(word)
    if level is None:
        served = ", ".join(f"{w!r}" + (f" (served as {CLIENT_EFFORTS[w]})" if CLIENT_EFFORTS[w] != w else "")
                           for w in SERVED_CLIENT_EFFORTS)
        raise UnservedEffort(f"unsupported value: reasoning effort {word!r} is not served; supported values are {served}")
    return level


def parse_effort(text: str) -> Effort:
    """A level named by a user (a CLI option, a method spec); ValueError naming the levels."""
    try:
        return Effort(text.strip().lower())
    except ValueError:
        raise ValueError(f"effort must be one of {', '.join(Effort)}, not {text!r}") from None
