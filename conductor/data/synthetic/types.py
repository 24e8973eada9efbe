"""What a generator hands back before it is dressed and turned into a Problem."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    """A math, choice or free-form question: the bare statement, the gold answer (for choice: the
    right option's text) and wrong answers (for choice: the other options' texts)."""

    subject: str
    statement: str
    answer: str
    distractors: list[str] = field(default_factory=list)
    kind: str = ""  # which generator or fact table made it (empty: the generator function's name)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
