"""Phrasing styles: several generators that turn one bare statement into a question, each with
wording of its own, so that a model can be measured on a style it never trained on.

- `bank`: `phrasing.dress`, the bank's own (the default; the bank is generated with it).
- `plain`: a second training-side generator: formal, other context sentences, labels and
  answer-format requests than `bank`, statements unchanged.
- `bare`: a third training-side generator: the math written out rather than typeset (no `$`, no
  LaTeX commands), its own labels, often no answer-format request.
- `typed`: the held-out generator, questions as a user types them: conversational openers and
  closers, mostly lowercase, no `$` around math, no answer-format request, the question sentence
  sometimes first, a few of the templates' verbs swapped for everyday ones. Nothing trains on it.

Why: users type their questions; they do not pick them from our bank. A style is an extra, never
the default draw: the bank (every figure, test and the held-out split depend on it) is the same
byte for byte, and a re-dressed problem keeps its original's id, answer and meta (see
`generate.generate_bank(phrasing=...)`). No fixed sentence of one style is a fixed sentence of
another (tests/test_phrasing_styles.py checks it).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from conductor.data.synthetic.phrasing import dress

Style = Callable[[random.Random, str, str], str]

# ---- plain: formal, a training-side alternative to the bank's dress ----

PLAIN_CONTEXT: dict[str, tuple[str, ...]] = {
    "shared": ("Below is a problem.", "Solve the following.", "Here is an item from a worksheet.",
               "Read carefully before answering.", "This is taken from a textbook."),
    "math": ("Arithmetic and algebra drill.", "From a problem set on mathematics:"),
    "choice": ("One option below is correct.", "From a multiple-choice test:"),
    "freeform": ("Open-ended question.", "From a general knowledge test:"),
    "code": ("Implementation task.", "From a programming contest:"),
}
PLAIN_REQUEST: dict[str, tuple[str, ...]] = {
    "math": ("", "State the final result.", "Provide the answer as an exact number.", "Write the answer only."),
    "choice": ("", "Indicate the correct choice.", "Respond with one letter.", "Name the right option."),
    "freeform": ("", "Answer concisely.", "A few words will do.", "Provide the answer alone."),
    "code": ("", "Submit a Python 3 program.", "The program must read and write as described.",
             "Include the full source code."),
}
PLAIN_LABEL: tuple[str, ...] = ("", "", "Item: ", "Prompt: ", "Query: ", "Assignment: ")


def plain(rng: random.Random, domain: str, statement: str) -> str:
    """Label or context, the statement, then (or first) a request; one newline between parts."""
    parts = [rng.choice(PLAIN_CONTEXT["shared"] + PLAIN_CONTEXT.get(domain, ()))] if rng.random() < 0.5 else []
    parts.append(("" if parts else rng.choice(PLAIN_LABEL)) + statement)
    request = rng.choice(PLAIN_REQUEST.get(domain, ("",)))
    if request:
        parts.insert(0 if rng.random() < 0.3 else len(parts), request)
    return ("\n\n" if domain == "code" else "\n").join(parts)


# ---- bare: a training-side style with the math written out, not typeset ----
# Why: the bank and plain keep `$...$` around math, and a model trained on them read `$` as "math"
# (typed math, which has none, was read as freeform for 56 % of questions: docs/benchmarks.md,
# kind line). Here the statement keeps its wording and case but loses `$` and the LaTeX commands
# (`\frac{a}{b}` -> `(a)/(b)`), and half the time any answer-format request, so the kind of task
# must be read from the words and the numbers. Its own labels; nothing of the held-out style.

BARE_LABEL: dict[str, tuple[str, ...]] = {
    "shared": ("", "", "", "Problem -", "Drill:", "From my notes:"),
    "math": ("Worksheet problem:", "Numbers question:"),
    "choice": ("Pick one:", "Quiz item:"),
    "freeform": ("Short answer:", "Trivia:"),
    "code": ("Coding exercise:", "Write a program:"),
}
BARE_REQUEST: dict[str, tuple[str, ...]] = {
    "math": ("", "", "Reply with the number.", "Exact value please."),
    "choice": ("", "", "Which letter?", "One letter is enough."),
    "freeform": ("", "", "Brief reply.", "Just the answer."),
    "code": ("", "Python please.", "Reads stdin, writes stdout."),
}
_LATEX_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_LATEX_CMD = re.compile(r"\\(?:left|right|cdot|times|,|;|!)|\\([A-Za-z]+)")


def _untypeset(math: str) -> str:
    r"""`\frac{a}{b}` as `(a)/(b)`, `\cdot`/`\times` as `*`, other commands by their names
    (`\sqrt` -> `sqrt`, `\pi` -> `pi`), braces dropped."""
    math = _LATEX_FRAC.sub(r"(\1)/(\2)", math)
    math = re.sub(r"\\(?:cdot|times)", "*", math)
    math = re.sub(r"\\[lc]?dots", "...", math)
    math = _LATEX_CMD.sub(lambda m: m.group(1) or "", math)
    return math.replace("{", "").replace("}", "")


def bare(rng: random.Random, domain: str, statement: str) -> str:
    """A label (or none), the statement with its math written out, a request (or none). Code
    statements keep their text (a program's spec is pasted as is)."""
    label = rng.choice(BARE_LABEL["shared"] + BARE_LABEL.get(domain, ()))
    body = statement if domain == "code" else _untypeset(_MATH.sub(lambda m: m.group(1), statement))
    request = rng.choice(BARE_REQUEST.get(domain, ("",)))
    sep = "\n\n" if domain == "code" else " "
    return sep.join(p for p in (label, body, request) if p)


# ---- typed: the held-out generator ----

TYPED_OPENER: dict[str, tuple[str, ...]] = {
    "shared": ("hey,", "ok so", "hi! need some help.", "quick one:", "can you help me with this?",
               "so i've been stuck on this for a while.", "random question but", "help pls:"),
    "math": ("how do i do this one:", "my homework says", "can't get this to come out right:",
             "doing practice problems and", "math hw:"),
    "choice": ("which one is it?", "got this on a practice exam:", "multiple choice, not sure about this one.",
               "which answer would you go with here?"),
    "freeform": ("does anyone know", "trying to remember this:", "settle a bet for me:", "i forget,"),
    "code": ("can someone write this in python?", "need a python solution for this:",
             "stuck on this coding challenge, ideas?", "how would you code this up?"),
}
TYPED_CLOSER: tuple[str, ...] = ("", "", "", "thanks", "thx!", "any help appreciated", "pls", "ty in advance")
# A few of the templates' verbs as people type them (whole words; the task stays the same).
TYPED_SWAPS: tuple[tuple[str, str], ...] = (
    (r"\b[Ww]hat is\b", "what's"), (r"\bCompute\b", "work out"), (r"\bDetermine\b", "figure out"),
    (r"\bCalculate\b", "figure out"), (r"\bGive\b", "tell me"),
)
_MATH = re.compile(r"\$([^$]*)\$")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z$])")
_CAPITALISED = re.compile(r"\b([A-Z])([a-z]+)\b")
_ARTICLE = re.compile(r"(^|[.?!:-]\s+)A\b(?= [a-z0-9])")  # "A line passes" (not a point named A)


def _casual(text: str) -> str:
    """Prose as typed: capitalised words lowercased (acronyms, units and one-letter names kept),
    the template verbs swapped; math kept as written but without `$`."""
    pieces: list[str] = []
    last = 0
    for m in _MATH.finditer(text):
        pieces.append(_prose(text[last:m.start()]))
        pieces.append(m.group(1))
        last = m.end()
    pieces.append(_prose(text[last:]))
    return "".join(pieces)


def _prose(text: str) -> str:
    for pattern, repl in TYPED_SWAPS:
        text = re.sub(pattern, repl, text)
    text = _ARTICLE.sub(lambda m: m.group(1) + "a", text)
    return _CAPITALISED.sub(lambda m: m.group(1).lower() + m.group(2), text)


def _question_first(rng: random.Random, statement: str) -> str:
    """A two-part statement ("A circle has diameter 14. Find its area.") sometimes asked the other
    way round ("find its area - a circle has diameter 14"), as people type it."""
    sentences = _SENTENCE.split(statement.strip())
    if len(sentences) < 2 or rng.random() >= 0.35:
        return statement
    *setup, ask = sentences
    return f"{ask.rstrip('.')} - {' '.join(setup).rstrip('.')}"


def typed(rng: random.Random, domain: str, statement: str) -> str:
    """An opener (or none), the statement as typed, a closer (or none); never an answer-format
    request. Code statements keep their text (samples and signatures are pasted, not retyped)."""
    # code is pasted, so something typed always comes with it
    opener = rng.choice(TYPED_OPENER["shared"] + TYPED_OPENER.get(domain, ())) if domain == "code" or rng.random() < 0.7 else ""
    closer = rng.choice(TYPED_CLOSER)
    if domain == "code":
        body = statement
        parts = [opener, body, closer] if rng.random() < 0.7 else [body, opener, closer]
        return "\n\n".join(p for p in parts if p)
    body = _casual(_question_first(rng, statement))
    if rng.random() < 0.5:
        body = body.rstrip(".")
    if body.endswith("?") and rng.random() < 0.3:
        body += "?"
    return " ".join(p for p in (opener, body, closer) if p)


def bank(rng: random.Random, domain: str, statement: str) -> str:
    return dress(rng, domain, statement)


STYLES: dict[str, Style] = {"bank": bank, "plain": plain, "bare": bare, "typed": typed}
DEFAULT_STYLE = "bank"
TRAINING_STYLES: tuple[str, ...] = ("bank", "plain", "bare")  # what training may see
HELDOUT_STYLE = "typed"  # never trained on: the held-out phrasings


def style(name: str) -> Style:
    if name not in STYLES:
        raise ValueError(f"unknown phrasing style {name!r}; styles: {', '.join(STYLES)}")
    return STYLES[name]


def fixed_sentences(name: str) -> set[str]:
    """Every fixed sentence a style adds (contexts, requests, labels, openers, closers), casefolded
    and stripped: what two styles must not share."""
    from conductor.data.synthetic import phrasing

    if name == "bank":
        groups = [*phrasing.CONTEXT.values(), *phrasing.ANSWER_FORMAT.values(), phrasing.LEAD_IN]
    elif name == "plain":
        groups = [*PLAIN_CONTEXT.values(), *PLAIN_REQUEST.values(), PLAIN_LABEL]
    elif name == "bare":
        groups = [*BARE_LABEL.values(), *BARE_REQUEST.values()]
    elif name == "typed":
        groups = [*TYPED_OPENER.values(), TYPED_CLOSER]
    else:
        raise ValueError(f"unknown phrasing style {name!r}")
    return {s.strip().casefold() for g in groups for s in g if s.strip()}
