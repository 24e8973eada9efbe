"""The format cue line: read from the task's text only, stated in the Conductor's prompt."""

from __future__ import annotations

import collections

import pytest

from conductor.kind_reader import kind_line
from conductor.prompts import conductor_messages
from conductor.task_cues import CUE_LINES, FormatCue, cue_line, format_cue
from conductor.training.problems import heldout_problems
from conductor.types import WorkerSpec

SPECS = [WorkerSpec(id="a", provider="simulated"), WorkerSpec(id="b", provider="simulated")]

# Questions as users type them (lowercase, openers, no answer-format request), each with its cue.
TYPED = [
    ("which one is it? which planet is called the red planet? thx!\n\nA) Mercury\nB) Jupiter\nC) Mars",
     FormatCue.CHOICE),
    ("math hw: a train goes 60 km in 1.5 h, how fast is it going. Put your final answer in \\boxed{}",
     FormatCue.BOXED),
    ("need a python solution for this:\n\nComplete the method `Solution.fib`, which takes n: int and returns "
     "an integer.\n\nReturn the N-th Fibonacci number.", FormatCue.PROGRAM),
    ("hey,\n\nRead one line: the string S.\n\nCount the vowels of S.\n\nPrint the answer.", FormatCue.PROGRAM),
    ("can someone write this in python?\n\ndef add(a, b):\n    # return a + b\n", FormatCue.PROGRAM),
    ("help pls: what's the currency of brazil?", None),
    ("can't get this to come out right: solve for x: 8x + 11 = -5", None),
    # an option list that does not start at A is not a lettered choice
    ("what comes after these?\n\nC) one\nD) two", None),
]


@pytest.mark.parametrize(("text", "cue"), TYPED)
def test_typed_question_gets_its_cue_line_in_the_prompt(text, cue):
    assert format_cue(text) == cue
    _, user = conductor_messages(text, SPECS, examples=False)
    if cue is None:
        assert "Format:" not in user.content
    else:
        # then the kind reader's line (tests/test_kind_reader.py)
        assert user.content.endswith(f"Task:\n{text}\n\n{CUE_LINES[cue]}\n\n{kind_line(text)}")


def test_cue_line_comes_after_the_task_and_the_effort_line():
    from conductor.effort import Effort, effort_line

    text = "quick one:\n\nA) yes\nB) no"
    _, user = conductor_messages(text, SPECS, examples=False, effort=Effort.LOW)
    assert user.content.endswith(f"{effort_line(Effort.LOW)}\n\n{cue_line(text)}\n\n{kind_line(text)}")


def test_cues_on_the_held_out_split_never_name_another_domain():
    """On the held-out problems in the bank's words and in the typed style, a cue, when given, is
    the problem's own format: options only on choice problems, a program only on code, \\boxed{}
    only on math; and every choice and code problem gets its cue."""
    own = {FormatCue.CHOICE: "choice", FormatCue.PROGRAM: "code", FormatCue.BOXED: "math"}
    for phrasings in ("bank", "heldout"):
        got: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for p in heldout_problems(phrasings):
            got[p.domain][format_cue(p.task_text)] += 1
        for domain, counts in got.items():
            assert all(own[c] == domain for c in counts if c is not None), (phrasings, domain, counts)
        assert set(got["choice"]) == {FormatCue.CHOICE} and set(got["code"]) == {FormatCue.PROGRAM}, phrasings
