"""Multiple choice (MMLU, GPQA-Diamond): the letter the answer commits to."""

from __future__ import annotations

import re

from conductor.answers import last_boxed, strip_think
from conductor.verify.verdict import Verdict

# Markup around a letter: bold/italic, parentheses, brackets, \text{}, quotes.
_WRAP = r"[\s*_`'\"(\[{]*(?:\\text\{)?[\s*_`'\"(\[{]*"
_END = r"(?![A-Za-z0-9])"
_COMMIT = re.compile(
    r"(?:final\s+answer|correct\s+(?:answer|option|choice)|answer|option|choice)"
    r"(?:\s+(?:is|would\s+be|should\s+be|must\s+be))?\s*(?:[:=]|is)?\s*" + _WRAP + r"([A-J])" + _END,
    re.IGNORECASE,
)
_LONE = re.compile(r"^\s*" + _WRAP + r"([A-J])" + r"[\s*_`'\")\]}.:]*(?:$|[)\].:]\s)", re.MULTILINE)


def committed_letter(text: str, letters: list[str]) -> tuple[str | None, str]:
    """(letter, how). Later commitments win: models revise ("..., so the answer is B").
    A lowercase letter counts only after an explicit "answer is"/"Answer:" cue."""
    text = strip_think(text)
    boxed = last_boxed(text)
    if boxed:
        m = re.fullmatch(_WRAP + r"([A-Ja-j])" + r"[\s*_`'\")\]}.]*", boxed.replace("\\text{", ""))
        if m and m.group(1).upper() in letters:
            return m.group(1).upper(), "boxed"
    for m in reversed(list(_COMMIT.finditer(text))):
        letter = m.group(1)
        cue = m.group(0)
        explicit = re.search(r"[:=]|\b(?:is|be)\b", cue) is not None
        if "answer" not in cue.lower() and not explicit:
            continue  # "option A and option B" is a discussion, not a commitment
        if letter.upper() in letters and (letter.isupper() or re.search(r"[:=(]", cue)):
            return letter.upper(), "answer-cue"
    for m in reversed(list(_LONE.finditer(text))):
        if m.group(1) in letters:
            return m.group(1), "lone-letter"
    return None, "none"


def verify_choice(gold_letter: str, answer_text: str, choices: list[str]) -> Verdict:
    letters = [chr(ord("A") + i) for i in range(len(choices))]
    letter, how = committed_letter(answer_text, letters)
    if letter is None:
        # an answer that restates exactly one option's text commits to it
        norm = answer_text.strip().strip(".").casefold()
        hits = [letters[i] for i, c in enumerate(choices) if c.strip().casefold() == norm]
        if len(hits) == 1:
            letter, how = hits[0], "option-text"
    if letter is None:
        return Verdict(correct=False, extracted=None, reason="no choice letter found", method="choice-letter")
    ok = letter == gold_letter.strip().upper()
    return Verdict(correct=ok, extracted=letter, reason=f"{how}: {letter} vs gold {gold_letter}",
                   method="choice-letter")
