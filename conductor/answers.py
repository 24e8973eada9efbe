"""Pull the final answer out of a model's text (`\\boxed{}`, an "Answer:" line, the last expression), and
compare program output with LiveCodeBench's rules: text rules shared by data/ and verify/."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_ANSWER_LINE = re.compile(
    r"(?:final answer|answer)\s*(?:is|:|=)\s*:?\s*(.+)$", re.IGNORECASE | re.MULTILINE
)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """The visible text: every <think>...</think> block removed, in any case. A reasoning block
    whose opening tag was cut off leaves a lone </think>: the visible text is what follows it.
    The one rule for answers (verify/) and workflows (workflow.py)."""
    text = _THINK.sub("", text)
    end = text.lower().rfind("</think>")
    return text[end + len("</think>"):] if end >= 0 else text


def last_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...} / \\fbox{...}, with nested braces balanced."""
    starts = [m.end() for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text)]
    for start in reversed(starts):
        depth, i = 1, start
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            return text[start : i - 1].strip()
    return None


def answer_line(text: str) -> str | None:
    matches = _ANSWER_LINE.findall(text)
    if not matches:
        return None
    value = matches[-1].strip().strip("*").strip()
    return value.rstrip(".").strip() or None


def last_line(text: str) -> str | None:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else None


def final_answer(text: str) -> tuple[str | None, str]:
    """(candidate, how it was found). The candidate is what a grader compares."""
    text = strip_think(text)
    for how, fn in (("boxed", last_boxed), ("answer-line", answer_line), ("last-line", last_line)):
        value = fn(text)
        if value:
            return value, how
    return None, "none"


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except InvalidOperation:
        return None


def stdout_matches(got: str, expected: str) -> bool:
    """LiveCodeBench's stdout rule: same number of lines, each equal after stripping or as decimals."""
    got_lines, exp_lines = got.strip().split("\n"), expected.strip().split("\n")
    if len(got_lines) != len(exp_lines):
        return False
    for g, e in zip(got_lines, exp_lines, strict=True):
        g, e = g.strip(), e.strip()
        if g == e:
            continue
        gd, ed = _decimals(g), _decimals(e)
        if gd is None or ed is None or gd != ed:
            return False
    return True
