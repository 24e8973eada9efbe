"""A bounded memo of verdicts: grading is a pure function of (problem, answer text, limits), and
GRPO grades the same few answers over and over (a group's rollouts of one question agree, and the
simulated pool writes few distinct answers per problem).

What a memo key holds (`answer_key`): the problem's id AND a digest of everything its verdict is
graded against (domain, reference answer, choices, tests, the test module and function name), a
digest of the answer text, and for code the limits and the sandbox isolation the tests run under.
Two problems that share an id but not their reference data never share a verdict.

What is never memoized (`memoizable`): a code verdict in which a test timed out, the sandbox
failed, or a program was killed by SIGKILL (each may be the machine's load or an infrastructure
fault, not the program), a math or free-form verdict computed under math-verify's SIGALRM timeout
that took long enough for that timeout to have fired, and any exception (nothing is stored; every
caller sees it). The memo is an LRU of `maxsize` entries, shared by the verifier's threads.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections import OrderedDict

from conductor.data.schema import Problem
from conductor.sandbox import Limits
from conductor.verify.verdict import Verdict

MEMO_SIZE = 8192  # verdicts kept (a few hundred bytes each)

# Reasons that may come from the machine rather than the program (conductor.sandbox RunResult.describe).
UNSTABLE_CODE_REASONS = ("timed out", "sandbox error", "killed by signal SIGKILL")


class VerdictCache:
    """A bounded LRU of verdicts, shared by the verifier's threads."""

    def __init__(self, maxsize: int = MEMO_SIZE) -> None:
        if maxsize < 1:
            raise ValueError(f"a verdict cache needs room for at least one verdict, got maxsize={maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[str, Verdict] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            verdict = self._data.get(key)
            if verdict is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return verdict

    def put(self, key: str, verdict: Verdict) -> None:
        with self._lock:
            self._data[key] = verdict
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)


VERDICTS = VerdictCache()
"""The process's verdicts: `verify`/`averify` answers (keyed by `answer_key`) and code runs
(keyed by conductor.verify.code_tests.cache_key). Clear it to force re-grading."""


# Digest of a problem's grading data, remembered per Problem object (a frozen model): a coding
# problem's tests can be megabytes, and a GRPO group grades one Problem object many times.
_digests: OrderedDict[int, tuple[weakref.ref[Problem], str]] = OrderedDict()
_digests_lock = threading.Lock()
_DIGESTS_KEPT = 1024


def grading_digest(problem: Problem) -> str:
    """A hash of what a verdict on `problem` is graded against (not its id or wording)."""
    with _digests_lock:
        entry = _digests.get(id(problem))
        if entry is not None and entry[0]() is problem:
            return entry[1]
    material = json.dumps(
        [problem.domain, problem.answer, problem.choices,
         [[t.input, t.output, t.testtype] for t in problem.tests] if problem.tests is not None else None,
         problem.meta.get("test"), problem.meta.get("func_name")],
        sort_keys=True, default=str)
    digest = hashlib.blake2b(material.encode(), digest_size=16).hexdigest()
    with _digests_lock:
        _digests[id(problem)] = (weakref.ref(problem), digest)
        while len(_digests) > _DIGESTS_KEPT:
            _digests.popitem(last=False)
    return digest


def answer_key(problem: Problem, answer_text: str, code_limits: Limits | None, isolation_level: str | None) -> str:
    """The memo key of grading `answer_text` against `problem` (limits and isolation count for code only)."""
    text = hashlib.blake2b(answer_text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    if problem.domain == "code":
        limits = code_limits.model_dump_json() if code_limits is not None else "default"
        return f"answer\x1f{problem.id}\x1f{grading_digest(problem)}\x1f{text}\x1f{limits}\x1f{isolation_level}"
    return f"answer\x1f{problem.id}\x1f{grading_digest(problem)}\x1f{text}"


def stable_code_verdict(verdict: Verdict) -> bool:
    """A code verdict that is the program's own doing (right, or wrong by its output or exit)."""
    return verdict.correct or not any(w in verdict.reason for w in UNSTABLE_CODE_REASONS)


def memoizable(problem: Problem, verdict: Verdict, *, elapsed_s: float, timeout_s: float | None) -> bool:
    """Whether `verdict` is the pure function of its inputs that the memo may keep.

    `timeout_s` is math-verify's SIGALRM timeout the verdict was computed under (None: none, as
    off the main thread); a computation that ran that long may have been cut short by it."""
    if verdict.method == "error":
        return False
    if problem.domain == "code":
        return stable_code_verdict(verdict)
    if problem.domain in ("math", "freeform") and timeout_s is not None and elapsed_s >= timeout_s:
        return False
    return True
