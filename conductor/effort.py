"""How much work the user asks the Conductor to spend on a question: `low`, `medium` or `high`.

The level is stated in the Conductor's prompt (`conductor.prompts.conductor_messages(effort=...)`),
carried in `RunOptions.effort`, drawn per row in training (where the reward charges for calls at
the level's rate), and exposed wherever a user meets the Conductor (`conductor ask --effort`,
`conductor serve`'s `reasoning_effort`, the `conductor:` evaluation method, the nightly's rows).
"""

from __future__ import annotations

from enum import StrEnum


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


def effort_line(effort: Effort | None) -> str | None:
    """The prompt's effort sentence, or None when no level was asked for (the prompt is unchanged)."""
    return None if effort is None else EFFORT_LINES[Effort(effort)]
