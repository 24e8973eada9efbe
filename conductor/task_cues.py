"""Format cues: what the task's own text says about the answer it wants, as one short prompt line.

Why: the Conductor's first decision is the kind of task (its reasoning line's "This is a math
problem." etc., whose token also picks the first worker). A tiny model reads that kind from the
question's wording, and users word questions their own way (the `typed` phrasing style: openers,
lowercase, no answer-format request). The *format* of a task is sturdier than its wording: lettered
options, a function signature or stdin/stdout samples, a `\\boxed{}` request. A plain function finds
them in the text and the prompt states them on a line the model can condition on.

The cue is computed from the task text only (the question and, for a choice problem, its lettered
options: `Problem.task_text`), never from a problem's stored domain or the simulator's scoring, so
a user's question at serving time gets exactly the line a training question would.
"""

from __future__ import annotations

import re
from enum import Enum


class FormatCue(str, Enum):
    CHOICE = "choice"
    PROGRAM = "program"
    BOXED = "boxed"


CUE_LINES: dict[FormatCue, str] = {
    FormatCue.CHOICE: "Format: lettered options; the answer is one letter.",
    FormatCue.PROGRAM: "Format: a program is asked for (function signature or input/output).",
    FormatCue.BOXED: "Format: a final answer in \\boxed{}.",
}

# Two or more option lines "A) ..." / "(B) ..." / "C. ..." in order from A: a choice question.
_OPTION = re.compile(r"^\s*\(?([A-H])[).:]\s+\S", re.MULTILINE)
# A function or method to write, a program reading stdin, or judge-style samples.
_PROGRAM = re.compile(
    r"`\w+\([^`]*\)`"              # `name(args)` in backticks, as judges print a signature
    r"|`\w+\.\w+`"                 # `Solution.method`
    r"|\b(?:method|function)\b.{0,80}\b(?:takes|returns)\b"
    r"|\bdef \w+\("                # a pasted Python signature
    r"|\bclass Solution\b"
    r"|\bstdin\b|\bstandard input\b"
    r"|^\s*(?:Sample\s+)?Input:"   # a judge's sample block
    r"|\bThe input (?:is|consists|contains|has)\b"
    r"|\b(?:first|second|next|single|one) line (?:contains|holds|has|gives)\b|\bRead (?:one|a|two|N) lines?\b"
    r"|^\s*(?:Print|Output)\b"       # a line that tells the program what to write
    r"|```",
    re.MULTILINE | re.IGNORECASE,
)
_BOXED = re.compile(r"\\boxed\b")


def format_cue(task_text: str) -> FormatCue | None:
    """The answer format the text asks for, or None when it does not say. Options outrank a
    program (a choice question may quote code), a program outranks `\\boxed{}`."""
    letters = [m.group(1) for m in _OPTION.finditer(task_text)]
    if len(letters) >= 2 and letters[:2] == ["A", "B"]:
        return FormatCue.CHOICE
    if _PROGRAM.search(task_text):
        return FormatCue.PROGRAM
    if _BOXED.search(task_text):
        return FormatCue.BOXED
    return None


def cue_line(task_text: str) -> str | None:
    """The prompt's format line for this task text, or None (no line) when it gives no cue."""
    cue = format_cue(task_text)
    return None if cue is None else CUE_LINES[cue]
