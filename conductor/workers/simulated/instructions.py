"""How much a step's instruction helps: a stated function of its words, the problem's domain,
subject and answer format (docs/simulated.md gives the same lists and formula).

Words are lowercase runs of letters. A word *matches* a stem when it starts with it.

- own topic words: those matching the problem's domain topic stems or its subject stems;
- other topic words: those matching another domain's topic stems (and not the own ones);
- neutral words: anything not in a list and not a generic instruction word (GENERIC, REVIEW);
- format: 1 when a word matches the domain's format stems and none matches another domain's.

    precision = own / (own + other + 0.15 * neutral)      (0 when nothing counts)
    coverage  = min(own, 2) / 2
    off_task  = 0.3 when own = 0 and some other or neutral word is present, else 0
    Q = 0.7 * precision * coverage + 0.3 * format - off_task   (in [-0.3, 1])

So an instruction naming the task type (two topic words) and asking for its answer format
scores 1; an empty or generic one scores 0; one asking for something else (a haiku, another
domain's task) scores -0.3 or so; one stuffed with every domain's words is diluted by the
others' (a kitchen sink cannot win). Roles are separate (`asks_for_review`): they
depend on what a step sees, and words only choose between reviewing and anchoring.
"""

from __future__ import annotations

import re
from functools import lru_cache

from conductor.data.schema import DOMAINS, Problem

TOPIC_STEMS: dict[str, tuple[str, ...]] = {
    "math": ("math", "algebra", "arithmetic", "geometr", "calculus", "equation", "comput", "calculat",
             "simplif", "integer", "fraction", "polynomial", "probabilit", "combinator", "number",
             "trigonometr", "deriv"),
    "choice": ("knowledge", "recall", "fact", "concept", "definition", "principle", "eliminat", "distractor"),
    "freeform": ("science", "scientific", "physic", "chemi", "biolog", "econom", "estimat", "quantit",
                 "unit"),
    "code": ("program", "code", "coding", "algorithm", "implement", "input", "output", "stdin", "stdout",
             "edge", "complexit"),
}
FORMAT_STEMS: dict[str, tuple[str, ...]] = {
    "math": ("boxed", "latex", "exact"),
    "choice": ("letter", "option", "choice", "multiple"),
    "freeform": ("short", "concise", "phrase"),
    "code": ("python", "fenced", "block"),
}
# Words that ask a step to review earlier answers. They matter only when the step sees answers.
REVIEW_STEMS: tuple[str, ...] = (
    "verif", "check", "review", "critiq", "fix", "audit", "validat", "confirm", "compar", "combin",
    "aggregat", "reconcil", "vote", "majority", "consensus", "synthes", "merg", "refin", "improv",
    "error", "mistak", "debug",
)
# Ordinary instruction words: neither on- nor off-topic, and no dilution.
GENERIC: frozenset[str] = frozenset(
    """a an the and or but of to in on for with by from into at as is are be been it its this that these
    those your you yours each every any all some if then than so such via per not no do does done it's
    solve solving answer answers answered task tasks question questions problem problems final finally
    step steps reasoning reason briefly brief show write give provide produce return make use using end
    result results correct correctly right wrong work working above below earlier previous independently
    carefully careful requested format form one two three first second third best most likely choose
    select pick think explain clearly clear complete put only own state stated relevant needed where
    when how what which why who way reply respond efficient reads read prints print covering cases
    case full following given valid each other approach method here there them they their
    sure overall keep kept new value handles handle settle find found""".split()
)

TOPIC_WEIGHT, FORMAT_WEIGHT, NEUTRAL_WEIGHT, COVERAGE_WORDS, OFF_TASK_PENALTY = 0.7, 0.3, 0.15, 2, 0.3
_WORD = re.compile(r"[a-z]+")
# Words of subject names that say nothing about the topic.
_SUBJECT_STOP = frozenset("high school college elementary professional miscellaneous global general".split())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _matches(word: str, stems: tuple[str, ...] | frozenset[str]) -> bool:
    return any(word.startswith(s) for s in stems)


def subject_of(problem: Problem) -> str:
    """The problem's subject as words: `meta["subject"]` (MATH, MMLU), else GPQA's `meta["domain"]`."""
    for key in ("subject", "domain"):
        value = problem.meta.get(key)
        if isinstance(value, str) and value.strip():
            return _subject_words(value)
    return ""


@lru_cache(maxsize=65536)
def _subject_words(value: str) -> str:
    return " ".join(words(value.replace("_", " ")))


@lru_cache(maxsize=65536)
def subject_stems(subject: str) -> tuple[str, ...]:
    """A subject's content words, cut to six letters so that "geography" also matches "geographic"."""
    return tuple(sorted({w[:6] for w in words(subject) if len(w) >= 4 and w not in _SUBJECT_STOP}))


@lru_cache(maxsize=65536)
def _quality(domain: str, subject: str, instruction: str) -> float:
    own_stems = TOPIC_STEMS[domain] + subject_stems(subject)
    other_stems = tuple(s for d in DOMAINS if d != domain for s in TOPIC_STEMS[d])
    own = other = neutral = 0
    own_format = other_format = False
    for w in set(words(instruction)):
        if _matches(w, FORMAT_STEMS[domain]):
            own_format = True
        elif any(_matches(w, FORMAT_STEMS[d]) for d in DOMAINS if d != domain):
            other_format = True
        elif _matches(w, own_stems):
            own += 1
        elif _matches(w, other_stems):
            other += 1
        elif w not in GENERIC and not _matches(w, REVIEW_STEMS):
            neutral += 1
    denominator = own + other + NEUTRAL_WEIGHT * neutral
    precision = own / denominator if denominator else 0.0
    coverage = min(own, COVERAGE_WORDS) / COVERAGE_WORDS
    fmt = 1.0 if own_format and not other_format else 0.0
    # asking for something else entirely (no own topic word, some other or neutral ones) misleads
    off_task = OFF_TASK_PENALTY if own == 0 and (other or neutral) else 0.0
    return TOPIC_WEIGHT * precision * coverage + FORMAT_WEIGHT * fmt - off_task


def instruction_quality(problem: Problem, instruction: str) -> float:
    """Q in [-0.3, 1]: how well the instruction fits the problem's domain, subject and answer format."""
    return _quality(problem.domain, subject_of(problem), instruction)


@lru_cache(maxsize=65536)
def asks_for_review(instruction: str) -> bool:
    """Does the instruction ask to check, fix, compare or combine earlier work? ("final", "correct",
    "choose" and "select" do not: a plain solve instruction uses them too.)"""
    return any(_matches(w, REVIEW_STEMS) for w in words(instruction))


_CORE = {
    "math": "{subject}math problem: compute and simplify step by step, then give the exact final answer "
            "in \\boxed{{}}.",
    "choice": "{subject}multiple-choice question from knowledge: recall the relevant facts and concepts, "
              "eliminate wrong options, and reply with the letter of the correct option.",
    "freeform": "{subject}science question with careful scientific reasoning and an estimate where needed; "
                "give a short, concise final answer phrase.",
    "code": "{subject}coding problem: implement a correct algorithm that handles the input, output and edge "
            "cases; put the complete program in one fenced python block.",
}
_ROLE = {
    "solve": {"math": "Solve this ", "choice": "Answer this ", "freeform": "Answer this ",
              "code": "Write a Python program for this "},
    "verify": "Check the answer above to this ",
    "combine": "Compare the answers above, then settle this ",
}


def on_topic_instruction(problem: Problem, role: str = "solve") -> str:
    """An instruction of quality 1 for the problem (for SFT data, benchmarks and tests).
    role: "solve", "verify" (a step reading one earlier answer) or "combine" (reading several)."""
    if role not in _ROLE:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(_ROLE)}")
    subject = subject_of(problem)
    prefix = _ROLE[role]
    lead = prefix[problem.domain] if isinstance(prefix, dict) else prefix
    text = lead + _CORE[problem.domain].format(subject=f"{subject} " if subject else "")
    if role != "solve":
        text += " Fix any error you find."
    return text
