"""Free-form answers (RLPR): math-verify first, then a normalised text match, then (optionally)
an LLM judge: one worker of the pool asked whether the answer matches the reference."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Awaitable, Callable

from conductor.data.schema import Problem
from conductor.answers import final_answer
from conductor.verify.math_answers import equivalent, parse_gold, too_big
from conductor.verify.verdict import Verdict

# (problem, reference answer, candidate answer) -> True/False, or None when the judge could not decide
Judge = Callable[[Problem, str, str], Awaitable[bool | None]]


def normalise_text(text: str) -> str:
    """Lowercase, NFKC, no punctuation, no articles, single spaces (SQuAD-style)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("\\text{", "").replace("$", "")
    text = "".join(" " if ch in string.punctuation else ch for ch in text)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _mathy(text: str) -> bool:
    return bool(re.search(r"[0-9\\^=+*/<>]", text)) or bool(re.fullmatch(r"\s*[A-Za-z]\s*", text))


def verify_freeform_rules(reference: str, answer_text: str) -> Verdict:
    candidate, how = final_answer(answer_text)
    if candidate is None:
        return Verdict(correct=False, extracted=None, reason="no final answer found", method="freeform")
    # math-verify reads "carbon dioxide" as a product of symbols (so any anagram would "match"):
    # use it only for references that look like mathematics
    if _mathy(reference) and not too_big(candidate) and equivalent(parse_gold(reference), parse_gold(candidate)):
        return Verdict(correct=True, extracted=candidate, reason=f"{how} answer equivalent by math-verify",
                       method="math-verify")
    if normalise_text(candidate) == normalise_text(reference) and normalise_text(reference):
        return Verdict(correct=True, extracted=candidate, reason=f"{how} answer matches as text",
                       method="text-match")
    return Verdict(correct=False, extracted=candidate, reason=f"{how} answer differs from {reference!r}",
                   method="freeform")


async def consult_judge(problem: Problem, verdict: Verdict, judge: Judge | None,
                        judge_name: str | None = None) -> Verdict:
    """Give a rules verdict that found no match to the judge, when there is one."""
    if verdict.correct or judge is None or verdict.extracted is None:
        return verdict
    decided = await judge(problem, problem.answer or "", verdict.extracted)
    if decided is None:
        return verdict.model_copy(update={"reason": verdict.reason + "; judge undecided", "judge": judge_name})
    return Verdict(correct=decided, extracted=verdict.extracted, method="llm-judge", judge=judge_name,
                   reason=f"rules: no match; judge says {'same' if decided else 'different'}")
