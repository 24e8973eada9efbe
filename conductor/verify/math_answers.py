"""Math answers (MATH, MATH-500, AIME): extract the final answer, compare with math-verify."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from fractions import Fraction
from typing import Any

from math_verify import parse, verify

from conductor.answers import final_answer, strip_think
from conductor.verify.verdict import Verdict

# math-verify's own timeouts use SIGALRM, which works only on the main thread; off it we run
# without them (callers off the main thread are bounded by their executor) and silence the warning.
logging.getLogger("math_verify").setLevel(logging.ERROR)
TIMEOUT_S = 5


# Expressions sympy would spend minutes (and gigabytes) evaluating: exponent towers, huge exponents
# or factorials. Off the main thread there is no timeout to stop them, so they are refused up front.
_TOO_BIG = re.compile(r"\^\s*\{[^{}]*\^|\^\s*\{?\s*\d{4,}|\*\*\s*\(?\s*\d{4,}|\d{4,}\s*!|\*\*[^*]*\*\*")
MAX_CANDIDATE_CHARS = 2000


def too_big(text: str) -> bool:
    return len(text) > MAX_CANDIDATE_CHARS or _TOO_BIG.search(text) is not None


def _timeout() -> int | None:
    return TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


# Parses, remembered by text: a problem's reference answer is parsed for every answer graded
# against it, and a right answer is usually the reference's own text. math-verify's parse is a pure
# function of the text (sympy expressions are immutable); a parse that raised, or that ran long
# enough for the SIGALRM timeout to have fired, is not kept, nor is a very long text.
PARSES_KEPT = 4096
MAX_KEPT_TEXT = 1000
_parses: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
_parses_lock = threading.Lock()


def _parse(text: str) -> list[Any]:
    with _parses_lock:
        kept = _parses.get(text)
        if kept is not None:
            _parses.move_to_end(text)
            return list(kept)
    timeout = _timeout()
    t0 = time.monotonic()
    try:
        found = parse(text, parsing_timeout=timeout)  # type: ignore[arg-type]
    except Exception:  # math-verify raises assorted sympy/antlr errors on odd input (not kept)
        return []
    if len(text) <= MAX_KEPT_TEXT and (timeout is None or time.monotonic() - t0 < timeout):
        with _parses_lock:
            _parses[text] = tuple(found)
            while len(_parses) > PARSES_KEPT:
                _parses.popitem(last=False)
    return list(found)


def clear_parses() -> None:
    with _parses_lock:
        _parses.clear()


def parse_gold(answer: str) -> list[Any]:
    # A gold answer is parsed once per problem, not once per answer graded against it: `_parse`
    # keeps the parse (and never a failed or timed-out one, which an lru_cache here would keep:
    # one slow parse under load would have made the gold unparseable for the process's life).
    text = answer.strip()
    if "$" not in text and "\\boxed" not in text:
        text = f"${text}$"
    return _parse(text)


# Exact rationals written plainly: an integer or \frac{p}{q} (\dfrac, \tfrac), with a sign.
_RATIONAL = re.compile(r"^(-?)\s*(?:(\d{1,15})|\\[dt]?frac\s*\{\s*(\d{1,15})\s*\}\s*\{\s*(\d{1,15})\s*\})$")
# Values closer than this (relative) are left to math-verify, which compares with a tolerance.
_CLEARLY_APART = 1e-3


def _rational(text: str) -> Fraction | None:
    m = _RATIONAL.match(text.strip())
    if m is None:
        return None
    sign, whole, num, den = m.groups()
    if whole is not None:
        value = Fraction(int(whole))
    elif int(den) == 0:
        return None
    else:
        value = Fraction(int(num), int(den))
    return -value if sign else value


def quick_compare(gold_answer: str, candidate: str) -> bool | None:
    """Math-verify's verdict without sympy when both sides are plain exact rationals (an integer
    or \\frac{p}{q}): equal values are right; values clearly apart are wrong; anything else
    (decimals, expressions, near values) is None, for math-verify. Agrees with math-verify on
    every gold x distractor of the synthetic bank (tests/test_verify_math.py); sympy costs
    1-3 ms an answer, this a few microseconds."""
    gold, pred = _rational(gold_answer), _rational(candidate)
    if gold is None or pred is None:
        return None
    if gold == pred:
        return True
    if abs(gold - pred) > _CLEARLY_APART * max(abs(gold), abs(pred)):
        return False
    return None


def equivalent(gold: list[Any], pred: list[Any]) -> bool:
    if not gold or not pred:
        return False
    try:
        return bool(verify(gold, pred, timeout_seconds=_timeout()))  # type: ignore[arg-type]
    except Exception:
        return False


def verify_math_quick(gold_answer: str, answer_text: str) -> Verdict | None:
    """The verdict when it needs no sympy (no final answer, one too large to compare, or two plain
    rationals: `quick_compare`), else None. Microseconds: safe to call on an event loop."""
    candidate, how = final_answer(answer_text)
    if candidate is None:
        return Verdict(correct=False, extracted=None, reason="no final answer found", method="math-verify")
    if too_big(candidate):
        return Verdict(correct=False, extracted=candidate[:200], reason="expression too large to compare",
                       method="math-verify")
    if (quick := quick_compare(gold_answer, candidate)) is not None:
        return Verdict(correct=quick, extracted=candidate,
                       reason=f"{how} answer {'matches' if quick else 'differs from'} {gold_answer!r}",
                       method="math-verify")
    return None


def verify_math(gold_answer: str, answer_text: str) -> Verdict:
    if (quick := verify_math_quick(gold_answer, answer_text)) is not None:
        return quick
    candidate, how = final_answer(answer_text)
    assert candidate is not None
    gold = parse_gold(gold_answer)
    if not gold:
        return Verdict(correct=False, extracted=candidate, reason=f"gold answer unparseable: {gold_answer!r}",
                       method="math-verify")
    pred = parse_gold(candidate)
    if not pred and not too_big(strip_think(answer_text)[-MAX_CANDIDATE_CHARS:]):
        # let math-verify find an expression in the (tail of the) text itself
        pred = _parse(strip_think(answer_text)[-MAX_CANDIDATE_CHARS:])
    ok = equivalent(gold, pred)
    reason = f"{how} answer {'matches' if ok else 'differs from'} {gold_answer!r}"
    return Verdict(correct=ok, extracted=candidate, reason=reason, method="math-verify")
