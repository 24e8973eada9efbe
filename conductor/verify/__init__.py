"""Verifiers: is an answer right? `verify(problem, answer_text) -> Verdict`, dispatched on
`problem.domain`; `averify` is the same from asyncio, with code runs kept off the event loop.

Both remember verdicts (conductor.verify.memo: a bounded LRU keyed by the problem's id and grading
data, the answer text, and for code the limits and isolation); `averify` also grades identical
answers that arrive together once, and answers a remembered verdict without leaving the event loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from conductor.data.schema import Problem
from conductor.sandbox import Limits, default_workers
from conductor.verify import code_tests
from conductor.verify.choice import verify_choice
from conductor.verify.code_tests import extract_code, verify_code
from conductor.verify.freeform import Judge, consult_judge, verify_freeform_rules
from conductor.verify.math_answers import TIMEOUT_S, verify_math, verify_math_quick
from conductor.verify.memo import VERDICTS, answer_key, memoizable
from conductor.verify.verdict import Verdict

__all__ = ["VERDICTS", "Judge", "Verdict", "averify", "extract_code", "verify"]

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


def _key(problem: Problem, answer_text: str, code_limits: Limits | None) -> str:
    # code: the isolation the tests would run under, found as verify_code finds it (so a change of
    # isolation is a change of key; raises SandboxUnavailable as verify_code would)
    level = code_tests.isolation().level if problem.domain == "code" else None
    return answer_key(problem, answer_text, code_limits, level)


def verify(problem: Problem, answer_text: str | None, *, code_limits: Limits | None = None) -> Verdict:
    """Grade one answer (blocking: code problems run their tests here). No LLM judge on this path.
    A verdict already reached for the same problem, answer and limits is answered from memory."""
    if (early := _missing(problem, answer_text)) is not None:
        return early
    assert answer_text is not None
    key = _key(problem, answer_text, code_limits)
    if (hit := VERDICTS.get(key)) is not None:
        return hit
    on_main = threading.current_thread() is threading.main_thread()
    t0 = time.monotonic()
    verdict = _grade(problem, answer_text, code_limits)
    if memoizable(problem, verdict, elapsed_s=time.monotonic() - t0, timeout_s=TIMEOUT_S if on_main else None):
        VERDICTS.put(key, verdict)
    return verdict


def _grade(problem: Problem, answer_text: str, code_limits: Limits | None) -> Verdict:
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
    rules reject go to `judge` when one is given (see `conductor.workers.judge.worker_judge`; the
    judge is asked every time, only the rules' verdict is remembered). Identical answers graded at
    the same time (a GRPO group) share one grading; an error reaches each of them.
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
    key = _key(problem, answer_text, code_limits)
    verdict = VERDICTS.get(key)
    if verdict is None:
        verdict = await _shared(key, lambda: verify(problem, answer_text, code_limits=code_limits))
    if problem.domain == "freeform":
        return await consult_judge(problem, verdict, judge, judge_name)
    return verdict


# Gradings in flight, per event loop: a second identical request awaits the first one's future.
_in_flight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future[Verdict]]] = (
    weakref.WeakKeyDictionary()
)


async def _shared(key: str, grade: Callable[[], Verdict]) -> Verdict:
    loop = asyncio.get_running_loop()
    running = _in_flight.setdefault(loop, {})
    future = running.get(key)
    if future is None:
        future = loop.run_in_executor(_pool(), grade)
        running[key] = future
        future.add_done_callback(lambda _: running.pop(key, None))
    # shielded: one caller's cancellation does not cancel the grading the others await
    return await asyncio.shield(future)
