"""Programs that run inside the sandbox around a candidate solution.

The expected outputs never enter the sandbox: the child only reports what the solution returned
(call-based) or printed (stdin), and the parent compares. So a solution that patches comparisons
in its own process changes nothing. BigCodeBench is the exception: its tests are unittest code that
must run beside the solution, as BigCodeBench itself runs them (see docs/sandbox.md).
"""

from __future__ import annotations

# LiveCodeBench prepends these imports to every program (its `import_string`), so solutions
# may use `defaultdict`, `List`, `heappush`, ... without importing them.
LCB_IMPORTS = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom typing import *\n"
    "import string, re, datetime, collections, heapq, bisect, copy, math, random, statistics, "
    "itertools, functools, operator, io, sys, json\nsys.setrecursionlimit(50000)\n"
)

# Shared by both harnesses: split into a trusted reporter (this process, which never runs solution
# code and alone holds the real stdout) and a child that runs the solution and sends its result
# through a pipe. The reporter makes itself non-dumpable, so a same-uid child cannot ptrace it or
# open /proc/<reporter>/fd/1 to forge a report. Whatever the child sends is only "the solution's
# result", which the solution could have returned anyway; the comparison happens outside.
_REPORTER = """\
import json, os, sys
try:
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
except Exception:
    pass
_STDIN = sys.stdin.read()
_r, _w = os.pipe()
_pid = os.fork()
if _pid:
    os.close(_w)
    _data = b""
    while len(_data) < 1 << 20:
        _chunk = os.read(_r, 65536)
        if not _chunk:
            break
        _data += _chunk
    _status = os.waitstatus_to_exitcode(os.waitpid(_pid, 0)[1])
    if _status == 0 and _data.strip():
        os.write(1, _data.strip() + b"\\n")
        os._exit(0)
    os._exit(_status if _status > 0 else 1)
os.close(_r)
os.dup2(2, 1)  # the solution's prints go to stderr
sys.stdout = sys.stderr
def _send(obj):
    try:
        text = json.dumps(obj)
    except (TypeError, ValueError):
        text = json.dumps({"__unserializable__": type(obj).__name__})
    os.write(_w, text.encode())
    os._exit(0)
"""

# Call-based test: stdin carries the JSON args, one per line.
CALL_HARNESS = _REPORTER + """\
_args = [json.loads(line) for line in _STDIN.split("\\n") if line.strip()]
_ns = {"__name__": "solution"}
exec(compile(open("solution.py").read(), "solution.py", "exec"), _ns)
_send(getattr(_ns["Solution"](), FUNC_NAME)(*_args))
"""

# BigCodeBench: its unittest module runs beside the solution, as BigCodeBench runs it. Its tests
# can only be trusted if the solution leaves the test machinery alone, so (docs/sandbox.md, "Grader
# tricks"): the machinery (builtins, the unittest modules, their classes' dicts, their sys.modules
# entries) is snapshotted before the solution runs; what the solution changed is reported, then
# undone before the test module runs, and what changed while the tests ran is reported too; the
# harness holds its own references to the loader and the result; TestCase's methods are pinned onto
# the test class, so a patch that undoes itself cannot neuter an assertion; each failure and each
# skip leaves the process as soon as it happens (clearing the result object later changes
# nothing); a skip the test module did not declare counts against the solution. The grader
# (code_tests.run_bcb_test) reads the lines: {"bad": ...}, {"skip": ...}, then the summary.
BCB_HARNESS = _REPORTER + """\
import builtins, unittest, unittest.mock
_Loader, _Result, _TestCase, _MISSING = unittest.TestLoader, unittest.TestResult, unittest.TestCase, object()
_IGNORED = {"__dict__", "__weakref__", "__doc__", "_"}
_MODS = {n: m for n, m in sys.modules.items() if n in ("builtins", "unittest") or n.startswith("unittest.")}
_CLASSES = {}
for _m in _MODS.values():
    for _k, _v in vars(_m).items():
        if isinstance(_v, type) and str(getattr(_v, "__module__", "")).startswith("unittest"):
            _CLASSES.setdefault(f"{_v.__module__}.{_v.__qualname__}", _v)
def _snapshot():
    return (dict(_MODS), {n: dict(vars(m)) for n, m in _MODS.items()},
            {n: dict(vars(c)) for n, c in _CLASSES.items()})
def _changes(snap):
    entries, mods, classes = snap
    out = [f"sys.modules[{n!r}]" for n, m in entries.items() if sys.modules.get(n) is not m]
    for n, before in mods.items():
        now = vars(_MODS[n])
        out += [f"{n}.{k}" for k, v in before.items() if k not in _IGNORED and now.get(k, _MISSING) is not v]
    for n, before in classes.items():
        now = vars(_CLASSES[n])
        out += [f"{n}.{k}" for k in sorted(set(before) | set(now))
                if k not in _IGNORED and now.get(k, _MISSING) is not before.get(k, _MISSING)]
    return out
def _restore(snap):
    entries, mods, classes = snap
    sys.modules.update(entries)
    for n, before in mods.items():
        vars(_MODS[n]).update(before)
    for n, before in classes.items():
        cls = _CLASSES[n]
        for k in [k for k in vars(cls) if k not in before and k not in _IGNORED]:
            delattr(cls, k)
        for k, v in before.items():
            if k not in _IGNORED and vars(cls).get(k, _MISSING) is not v:
                setattr(cls, k, v)
def _emit(obj):
    os.write(_w, (json.dumps(obj) + "\\n").encode())
class _Streamed(_Result):
    def addError(self, test, err):
        _emit({"bad": str(test) + ": " + self._exc_info_to_string(err, test)[-300:]})
        super().addError(test, err)
    def addFailure(self, test, err):
        _emit({"bad": str(test) + ": " + self._exc_info_to_string(err, test)[-300:]})
        super().addFailure(test, err)
    def addSubTest(self, test, subtest, err):
        if err is not None:
            _emit({"bad": str(subtest) + ": " + self._exc_info_to_string(err, test)[-300:]})
        super().addSubTest(test, subtest, err)
    def addUnexpectedSuccess(self, test):
        _emit({"bad": str(test) + ": unexpected success"})
        super().addUnexpectedSuccess(test)
    def addSkip(self, test, reason):
        _emit({"skip": test.id(), "declared": test.id() in _DECLARED_SKIPS})
        super().addSkip(test, reason)
_snap = _snapshot()
_ns = {"__name__": "__bigcodebench__"}
exec(compile(open("solution.py").read(), "solution.py", "exec"), _ns)
_patched = _changes(_snap)
_restore(_snap)
_ns["__builtins__"] = builtins.__dict__
exec(compile(open("bcb_test.py").read(), "bcb_test.py", "exec"), _ns)
_snap = _snapshot()  # what the test module itself set (a global maxDiff, ...) is not the solution's doing
_cls = _ns["TestCases"]
for _k, _v in vars(_TestCase).items():  # pin: a later patch of TestCase cannot reach the tests
    if _k not in _IGNORED and next(c for c in _cls.__mro__ if _k in vars(c)) is _TestCase:
        setattr(_cls, _k, _v)
_suite = _Loader().loadTestsFromTestCase(_cls)
_DECLARED_SKIPS = {t.id() for t in _suite if getattr(_cls, "__unittest_skip__", False)
                   or getattr(getattr(_cls, t._testMethodName, None), "__unittest_skip__", False)}
_res = _Streamed()
_suite.run(_res)
_send({"run": _res.testsRun, "patched": sorted(set(_patched + _changes(_snap)))})
"""
