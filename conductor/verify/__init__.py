"""Verifiers: is an answer right? `verify(problem, answer_text) -> Verdict`, dispatched on
`problem.domain`; `averify` is the same from asyncio, with code runs kept off the event loop."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from conductor.data.schema import Problem
from conductor.sandbox import Limits, default_workers
from conductor.verify.choice import verify_choice
from conductor.verify.code_tests import extract_code, verify_code
from conductor.verify.freeform import Judge, consult_judge, verify_freeform_rules
from conductor.verify.math_answers import verify_math, verify_math_quick
from conductor.verify.verdict import Verdict

__all__ = ["Judge", "Verdict", "averify", "extract_code", "verify"]

_code_pool: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    # sized to the cores: each thread waits on one sandboxed program at a time
    global _code_pool
    if _code_pool is None:
        _code_pool = ThreadPoolExecutor(max_workers=default_workers(), thread_name_prefix="verify-code")
    return _code_pool


def _missing(problem: Problem, answer_text: str | None) -> Verdict | None:
    if not answer_text or not answer_text.strip():
        return Verdict(correct=False, reason="empty answer", method=problem.domain)
    if problem.domain in ("math", "choice", "freeform") and not problem.answer:
        return Verdict(correct=False, reason=f"problem {problem.id} has no reference answer", method=problem.domain)
    if problem.domain == "choice" and not problem.choices:
        return Verdict(correct=False, reason=f"problem {problem.id} has no choices", method="choice-letter")
    return None


def verify(problem: Problem, answer_text: str | None, *, code_limits: Limits | None = None) -> Verdict:
    """Grade one answer (blocking: code problems run their tests here). No LLM judge on this path."""
    if (early := _missing(problem, answer_text)) is not None:
        return early
    assert answer_text is not None
    match problem.domain:
        case "math":
            return verify_math(problem.answer or "", answer_text)
        case "choice":
            return verify_choice(problem.answer or "", answer_text, problem.choices or [])
        case "freeform":
            return verify_freeform_rules(problem.answer or "", answer_text)
        case "code":
            return verify_code(problem, answer_text, code_limits)
    raise ValueError(f"unknown domain {problem.domain!r}")


async def averify(
    problem: Problem,
    answer_text: str | None,
    *,
    judge: Judge | None = None,
    judge_name: str | None = None,
    code_limits: Limits | None = None,
) -> Verdict:
    """Grade from asyncio: code and math run in a thread pool (they block); free-form answers the
    rules reject go to `judge` when one is given (see `conductor.workers.judge.worker_judge`).
    What takes microseconds is graded on the loop itself: a choice letter, and a math answer that
    needs no sympy (`verify_math_quick`); a thread hop costs more than that work, and the grading
    thread's sympy holds the GIL against the event loop."""
    if (early := _missing(problem, answer_text)) is not None:
        return early
    assert answer_text is not None
    if problem.domain == "choice":
        return verify(problem, answer_text)
    if problem.domain == "math" and (quick := verify_math_quick(problem.answer or "", answer_text)) is not None:
        return quick
    loop = asyncio.get_running_loop()
    if problem.domain == "freeform":
        rules = await loop.run_in_executor(_pool(), verify_freeform_rules, problem.answer or "", answer_text)
        return await consult_judge(problem, rules, judge, judge_name)
    return await loop.run_in_executor(_pool(), lambda: verify(problem, answer_text, code_limits=code_limits))
