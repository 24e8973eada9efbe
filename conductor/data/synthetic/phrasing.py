"""How a generated question is dressed: an optional context sentence, the statement itself, an
optional answer-format request, in varying order and with varying labels.

Why: a policy trained on the bank must learn what kind of task it faces from the task's content,
not from words a template happens to repeat. So every fixed part of a question is optional or one
of many, and no wording is shared by all the problems of a domain (a test checks this).
"""

from __future__ import annotations

import random

# Sentences that set a scene without changing the task. Each domain draws from its own list and
# from the shared one, and about half the questions have none.
CONTEXT: dict[str, tuple[str, ...]] = {
    "shared": (
        "This comes from a practice set.",
        "Here is one from a review sheet.",
        "A student asked this during office hours.",
        "Try this one.",
        "Quick question.",
        "The following appeared on a quiz.",
        "Consider the following.",
        "From a study group:",
        "I'm stuck on this.",
        "One more for the warm-up round.",
    ),
    "math": (
        "From a contest warm-up:",
        "An exercise from chapter three.",
        "Homework problem:",
        "Work it out carefully.",
    ),
    "choice": (
        "Exam question.",
        "Pick carefully: only one option is right.",
        "From a certification practice test:",
        "Trivia night, round two.",
    ),
    "freeform": (
        "Short-answer question.",
        "Flash card:",
        "Pub quiz:",
        "A reader wrote in asking this.",
    ),
    "code": (
        "Programming exercise.",
        "From an online judge:",
        "Interview warm-up:",
        "Coding kata:",
    ),
}

# What the answer should look like. Empty strings mean "no request at all".
ANSWER_FORMAT: dict[str, tuple[str, ...]] = {
    "math": (
        "", "", "",
        "Put your final answer in \\boxed{}.",
        "Give the exact value.",
        "Simplify your answer completely.",
        "Show your reasoning, then state the result.",
        "Only the final number is needed.",
        "Express the result in simplest form.",
        "Report just the value.",
    ),
    "choice": (
        "", "", "",
        "Answer with the letter of the correct option.",
        "Choose one.",
        "Select the best answer.",
        "Reply with A, B, C or D.",
        "Which option is correct?",
        "Pick the single best option.",
        "Give the letter only.",
    ),
    "freeform": (
        "", "", "",
        "Answer in a word or short phrase.",
        "Give only the final answer.",
        "Respond briefly.",
        "Just the answer, please.",
        "Keep it short.",
        "State your answer plainly.",
    ),
    "code": (
        "", "",
        "Return your program in a ```python fenced block.",
        "Write the solution in Python 3.",
        "Your code should be efficient for the given limits.",
        "Provide a complete, runnable Python solution.",
        "Explain briefly, then give the code.",
        "Solve it in Python.",
    ),
}

# Labels some sources put before the statement.
LEAD_IN: tuple[str, ...] = ("", "", "", "", "Question: ", "Problem: ", "Q: ", "Task: ", "Exercise: ")


def fill(rng: random.Random, templates: tuple[str, ...] | list[str], **values: object) -> str:
    """One template, filled. Templates name their slots `{like_this}`."""
    return rng.choice(templates).format(**values)


def dress(rng: random.Random, domain: str, statement: str, *, context_p: float = 0.45) -> str:
    """Wrap a statement with an optional context sentence, lead-in and answer-format request."""
    parts: list[str] = []
    if rng.random() < context_p:
        parts.append(rng.choice(CONTEXT["shared"] + CONTEXT.get(domain, ())))
    lead = rng.choice(LEAD_IN) if not parts else ""
    parts.append(lead + statement)
    request = rng.choice(ANSWER_FORMAT.get(domain, ("",)))
    if request:
        # the request goes first now and then, as people sometimes write it
        if rng.random() < 0.2:
            parts.insert(0, request)
        else:
            parts.append(request)
    separator = "\n\n" if domain == "code" or rng.random() < 0.3 else " "
    return separator.join(parts)
