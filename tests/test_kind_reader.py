"""The kind reader: a character n-gram guess at the kind of task, fitted on the bank's training
split in its own wording, stated on a line of the Conductor's prompt. The bar it carries is issue
33's: the typed held-out phrasings (a style nothing trains on) read rightly in every domain."""

from __future__ import annotations

import collections

import pytest

import conductor.kind_reader as kind_reader

from conductor.kind_reader import KIND_LINES, kind_line, read_kind, read_kinds
from conductor.prompts import conductor_messages, prompt_task
from conductor.training.problems import heldout_problems
from conductor.types import WorkerSpec

SPECS = [WorkerSpec(id="a", provider="simulated"), WorkerSpec(id="b", provider="simulated")]


def _right_by_domain(phrasings: str) -> dict[str, float]:
    right: dict[str, list[bool]] = collections.defaultdict(list)
    problems = heldout_problems(phrasings)
    for p, kind in zip(problems, read_kinds(p.task_text for p in problems), strict=True):  # one batch, as training reads
        right[p.domain].append(kind == p.domain)
    return {d: sum(v) / len(v) for d, v in right.items()}


def test_typed_held_out_questions_read_as_their_kind_in_every_domain() -> None:
    typed = _right_by_domain("heldout")
    assert set(typed) == set(KIND_LINES)
    assert all(share >= 0.98 for share in typed.values()), typed
    assert all(share >= 0.98 for share in _right_by_domain("bank").values())


def test_casual_math_reads_as_math_and_the_line_follows_the_task() -> None:
    for text, kind in [("if 3x + 1 = 5, what's x?", "math"), ("ok so find lcm(30, 24)", "math"),
                       ("help pls: what's the currency of brazil?", "freeform")]:
        assert read_kind(text) == kind
        _, user = conductor_messages(text, SPECS, examples=False)
        assert user.content.endswith(f"Task:\n{text}\n\n{KIND_LINES[kind]}")
        assert prompt_task(user.content) == text  # the line is not part of the task
    assert kind_line("   ") is None


CASUAL = {"if 3x + 1 = 5, what's x?": "math", "help pls: what's the currency of brazil?": "freeform",
          "ok so find lcm(30, 24)": "math", "Which of these is a prime? (A) 4 (B) 9 (C) 7 (D) 15": "choice"}


def test_a_batch_reads_each_text_in_its_place_whether_read_before_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training reads a dataset's texts in one batch and each prompt then finds its kind already
    read: a batch mixing texts read before, new texts and repeats answers each in its place, and
    the memo, bounded for a long-lived server, starts over when full without losing an answer."""
    monkeypatch.setattr(kind_reader, "_KNOWN", {})
    math, freeform, lcm, choice = CASUAL
    assert read_kinds([math, choice]) == ["math", "choice"]
    assert read_kinds([freeform, choice, math, freeform, lcm]) == ["freeform", "choice", "math", "freeform", "math"]
    assert read_kinds([]) == []
    monkeypatch.setattr(kind_reader, "_KNOWN_MAX", 3)  # 4 texts read: the next new one overflows it
    assert read_kinds([choice, "What is 2 + 2?", lcm]) == ["choice", "math", "math"]
    assert [read_kind(t) for t in CASUAL] == list(CASUAL.values())
