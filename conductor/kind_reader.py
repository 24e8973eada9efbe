"""The kind of a task, read from its characters: a character n-gram classifier whose guess the
Conductor's prompt states on a line ("Reads as: math."), after the task.

Why: the Conductor's first decision is the kind of task (its reasoning line's "This is a math
problem.", whose token also picks the first worker). The tiny Conductor reads it through a BPE
whose merges span words, so a question typed another way ("if 3x + 1 = 5, what's x?" for the
bank's "If $3x + 1 = 5$, what is $x$?") becomes other tokens, and it read typed math as science
for 17-56 % of questions (docs/benchmarks.md, "The kind line"). Character n-grams are the same
pieces however a question is cased, ordered or introduced: fitted on the bank's own wording of its
training split alone, this reader names the kind of every typed held-out question rightly.

What it is fitted on: the synthetic bank's training split (`cached_bank_split()[0]`, its own
wording), never its held-out split and never the typed style; the labels are the problems' domains,
the same labels the warm start's reasoning lines are written from. Never the simulator's scoring.
It is fitted once a process (under a second) and is deterministic. Its guess is a line in the
prompt, not a decision: the Conductor writes the kind line itself and may disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

# One line per kind the bank has; the reader guesses one of these domains.
KIND_LINES: dict[str, str] = {
    "math": "Reads as: math.",
    "choice": "Reads as: multiple choice.",
    "freeform": "Reads as: short answer.",
    "code": "Reads as: code.",
}


@functools.cache
def _reader() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from conductor.data.synthetic import cached_bank_split

    train, _ = cached_bank_split()  # the training split (the held-out one never), shared with training's
    # char_wb: n-grams within words (padded by spaces), so a word reads the same whatever stands
    # around it; lowercase, so case says nothing. Word n-grams read typed freeform at 71 %.
    reader = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True, sublinear_tf=True),
                           LogisticRegression(C=10.0, max_iter=2000))
    reader.fit([p.task_text for p in train], [p.domain for p in train])
    return reader


# Texts already read, and their kinds. One `predict` call costs 2-4 ms whatever its size (sklearn's
# input checks), so reading a training set's 1,900 prompts one at a time took 8 s in every GRPO chunk
# (a third of a tiny nightly); read in one batch 2,400 take ~0.4 s, and each prompt then finds its
# kind here. Bounded for a long-lived server: when full it starts over.
_KNOWN: dict[str, str] = {}
_KNOWN_MAX = 1 << 16


def read_kinds(task_texts: Iterable[str]) -> list[str]:
    """The kind (a bank domain) each text reads as, in order: one batch for the texts not read yet."""
    texts = list(task_texts)
    todo = [t for t in dict.fromkeys(texts) if t not in _KNOWN]
    new = dict(zip(todo, (str(k) for k in _reader().predict(todo)), strict=True)) if todo else {}
    kinds = [new[t] if t in new else _KNOWN[t] for t in texts]
    if len(_KNOWN) + len(new) > _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN.update(new)
    return kinds


def read_kind(task_text: str) -> str:
    """The kind of task (a bank domain) `task_text` reads as."""
    return read_kinds([task_text])[0]


def kind_line(task_text: str) -> str | None:
    """The prompt's line for the kind `task_text` reads as; None for an empty text."""
    return KIND_LINES[read_kind(task_text)] if task_text.strip() else None
