"""Hostile programs: each must end in a failing verdict within its limits and leave the host unharmed.

All programs run once, in parallel, in a module fixture; the tests then check each verdict and
the host: sentinel files, a listener we own on 127.0.0.1, our own process, leftover processes.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conductor.config import REPO_ROOT
from conductor.data.schema import Problem, TestCase
from conductor.sandbox import Limits, isolation
from conductor.sandbox_zygote import POOL
from conductor.verify import Verdict, code_tests, verify

SECRET = "sk-sentinel-7f3a9c1e"
LIMITS = Limits(wall_s=2.0, memory_mb=256, nproc=16, file_mb=1, disk_mb=8, output_bytes=64 << 10)
ESCAPE = "conductor-escape-probe"
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

STDIN = Problem(id="h", source="lcb", domain="code", question="print 42",
                tests=[TestCase(input="", output="42")])
CALL = Problem(id="hc", source="lcb", domain="code", question="return 42", meta={"func_name": "f"},
               tests=[TestCase(input="1", output="42", testtype="functional")])
BCB = Problem(id="hb", source="bigcodebench", domain="code", question="return 42", meta={"test": (
    "import unittest\nclass TestCases(unittest.TestCase):\n"
    "    def test_it(self):\n        self.assertEqual(task_func(), 42)\n")})

# name -> (problem, code). Placeholders: {sentinel} file, {sentinel_dir}, {port}, {ppid}.
HOSTILE: dict[str, tuple[Problem, str]] = {
    # the bombs report how far they got when the process limit stopped them
    "fork_bomb": (STDIN, "import os, time\nn = 0\nwhile True:\n    try:\n        pid = os.fork()\n"
                         "    except OSError:\n        print(n)\n        break\n    if pid == 0:\n"
                         "        time.sleep(30)\n        os._exit(0)\n    n += 1"),
    "fork_bomb_setsid": (STDIN, "import os, time\nn = 0\nwhile True:\n    try:\n        pid = os.fork()\n"
                                "    except OSError:\n        print(n)\n        break\n    if pid == 0:\n"
                                "        os.setsid()\n        time.sleep(30)\n        os._exit(0)\n    n += 1"),
    "subprocess_bomb": (STDIN, "import subprocess, sys\nps = []\nwhile True:\n    try:\n"
                               "        ps.append(subprocess.Popen(\n"
                               "            [sys.executable, '-c', 'import time; time.sleep(60)']))\n"
                               "    except OSError:\n        print(len(ps))\n        break"),
    "infinite_loop": (STDIN, "while True:\n    pass"),
    "sleep_forever": (STDIN, "import time\ntime.sleep(10_000)"),
    "ignore_sigterm": (STDIN, "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass"),
    "memory_hog_once": (STDIN, "x = bytearray(8 * 1024 ** 3)\nprint(42)"),
    "memory_hog_grow": (STDIN, "xs = []\nwhile True:\n    xs.append(' ' * 10 ** 7)"),
    "stdout_flood": (STDIN, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)"),
    "stderr_flood": (STDIN, "import sys\nwhile True:\n    sys.stderr.write('y' * 65536)"),
    "one_giant_print": (STDIN, "print('z' * 10 ** 9)"),
    "big_file": (STDIN, "with open('big', 'w') as f:\n    while True:\n        f.write('x' * 10 ** 6)"),
    "fill_disk": (STDIN, "i = 0\nwhile True:\n    open(f'f{{i}}', 'w').write('x' * 900_000)\n    i += 1"),
    "write_shared_tmp": (STDIN, "for d in ('/tmp', '/var/tmp', '/dev/shm'):\n"
                                "    open(f'{{d}}/" + ESCAPE + "', 'w').write('x')\nprint(41)"),
    "many_files": (STDIN, "fs = [open(f'f{{i}}', 'w') for i in range(100_000)]"),
    "write_outside": (STDIN, "open('{sentinel_dir}/pwned', 'w').write('x')"),
    "overwrite_sentinel": (STDIN, "open('{sentinel}', 'w').write('pwned')"),
    "delete_sentinel": (STDIN, "import os\nos.remove('{sentinel}')"),
    "rmtree_sentinel_dir": (STDIN, "import shutil\nshutil.rmtree('{sentinel_dir}')"),
    "chmod_sentinel": (STDIN, "import os\nos.chmod('{sentinel}', 0o777)"),
    "shell_rm": (STDIN, "import os\nos.system('rm -rf {sentinel_dir}')\nprint(os.path.exists('{sentinel_dir}'))"),
    "read_samples": (STDIN, "print(open('{samples}/lcb_v6.jsonl').read()[:100])"),
    "symlink_for_cleanup": (STDIN, "import os\nos.symlink('{sentinel_dir}', 'link')\nprint(41)"),
    "signal_pid1": (STDIN, "import os, signal, time\nfor s in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):\n"
                           "    os.kill(1, s)\ntime.sleep(0.3)\nprint(41)"),
    "ptrace_pid1": (STDIN, "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                           "rc = libc.ptrace(16, 1, 0, 0)\nprint('attached' if rc == 0 else ctypes.get_errno())"),
    "read_env_key": (STDIN, "import os\nprint(os.environ.get('OPENAI_API_KEY', 'none'))"),
    "read_parent_environ": (STDIN, "import os\nprint(open(f'/proc/{{os.getppid()}}/environ').read())"),
    "scan_all_environ": (STDIN, "import os\nfor p in os.listdir('/proc'):\n    try:\n"
                                "        print(open(f'/proc/{{p}}/environ').read())\n"
                                "    except OSError:\n        pass"),
    "connect_listener": (STDIN, "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                                "s.sendall(b'pwned')\nprint(42)"),
    "udp_to_listener": (STDIN, "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                               "s.sendto(b'pwned', ('127.0.0.1', {port}))\nprint(41)"),
    "connect_internet": (STDIN, "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)"),
    "kill_parent": (STDIN, "import os, signal\nos.kill({ppid}, signal.SIGKILL)"),
    "kill_getppid": (STDIN, "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)"),
    "kill_everything": (STDIN, "import os, signal\nos.kill(-1, signal.SIGKILL)"),
    "setuid_root": (STDIN, "import os\nos.setuid(0)\nprint(42)"),
    "read_root_home": (STDIN, "import os\nprint(os.listdir('/root'))"),
    "sys_exit_zero": (STDIN, "import sys\nsys.exit(0)\nprint(42)"),
    "os_exit_zero": (STDIN, "import os\nos._exit(0)"),
    "segfault": (STDIN, "import ctypes\nctypes.string_at(0)"),
    "deep_recursion": (STDIN, "import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1)\nf(0)"),
    "outliving_thread": (STDIN, "import threading, time\n"
                                "threading.Thread(target=lambda: time.sleep(10_000)).start()\nprint(41)"),
    "daemon_child": (STDIN, "import os, time, socket\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(0.5)\n"
                            "    socket.create_connection(('127.0.0.1', {port}))\nelse:\n    print(41)"),
    "call_sys_exit_at_import": (CALL, "import sys\nsys.exit(0)"),
    "call_os_exit_in_method": (CALL, "import os\nclass Solution:\n    def f(self, x):\n        os._exit(0)"),
    "call_always_equal": (CALL, "class Eq:\n    def __eq__(self, other):\n        return True\n"
                                "class Solution:\n    def f(self, x):\n        return Eq()"),
    "call_patch_builtins": (CALL, "import builtins, json\nbuiltins.isinstance = lambda *a: True\n"
                                  "json.loads = lambda *a, **k: 42\n"
                                  "class Solution:\n    def f(self, x):\n        return 41"),
    "call_fake_stdout": (CALL, "import os\nclass Solution:\n    def f(self, x):\n        os.write(1, b'42\\n')\n"
                               "        os._exit(0)"),
    "call_kill_reporter": (CALL, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"),
    "call_open_reporter_stdout": (CALL, "import os\nfd = os.open(f'/proc/{{os.getppid()}}/fd/1', os.O_WRONLY)\n"
                                        "os.write(fd, b'42\\n')\nos._exit(0)"),
    "bcb_patch_assert": (BCB, "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
                              "def task_func():\n    return 41"),
    "bcb_patch_result": (BCB, "import unittest\nunittest.TestResult.addFailure = lambda *a, **k: None\n"
                              "def task_func():\n    return 41"),
    "bcb_exit_at_import": (BCB, "import sys\nsys.exit(0)"),
    "bcb_fake_report": (BCB, "import json, os\nos.write(1, json.dumps({{'run': 1, 'failed': 0}}).encode() + b'\\n')\n"
                             "os._exit(0)"),
    "bcb_skip_tests": (BCB, "import unittest\nunittest.TestLoader.loadTestsFromTestCase = "
                            "lambda *a: unittest.TestSuite()\ndef task_func():\n    return 41"),
}


# name -> what the verdict's reason must show: the specific thing that stopped the program (any one).
# Host-side effects (sentinel files, our listener, leftover processes) are checked in test_host_unharmed.
EXPECT: dict[str, tuple[str, ...]] = {
    "fork_bomb": ("wrong output: got '",), "fork_bomb_setsid": ("wrong output: got '",),
    "subprocess_bomb": ("wrong output: got '",),
    "infinite_loop": ("timed out",), "sleep_forever": ("timed out",), "ignore_sigterm": ("timed out",),
    "memory_hog_once": ("MemoryError",), "memory_hog_grow": ("MemoryError", "timed out"),
    "stdout_flood": ("output limit exceeded",), "stderr_flood": ("output limit exceeded",),
    "one_giant_print": ("MemoryError",), "big_file": ("File too large",), "fill_disk": ("No space left",),
    "write_shared_tmp": ("No such file or directory: '/var/tmp",), "many_files": ("Too many open files",),
    "write_outside": ("FileNotFoundError",), "overwrite_sentinel": ("FileNotFoundError",),
    "delete_sentinel": ("FileNotFoundError",), "rmtree_sentinel_dir": ("FileNotFoundError",),
    "chmod_sentinel": ("FileNotFoundError",), "shell_rm": ("got 'False'",), "symlink_for_cleanup": ("got '41'",),
    "read_samples": ("FileNotFoundError",),
    "signal_pid1": ("got '41'",),  # pid 1 (bwrap's or the zygote) ignores them; checked alive below
    # the zygote: EPERM (not dumpable). bwrap's own reaper (per-run) can be attached, which only stalls
    # this program's sandbox until the deadline: it holds nothing
    "ptrace_pid1": ("got '1'", "timed out"),
    "read_env_key": ("got 'none'",), "read_parent_environ": ("got ''", "Permission denied: '/proc/1/environ'"),  # bwrap's pid 1: empty; the zygote: not dumpable
    "scan_all_environ": ("HOME=/tmp/w",),  # only the sandbox's own environment is there to read
    "connect_listener": ("ConnectionRefusedError",), "udp_to_listener": ("got '41'",),  # its own loopback
    "connect_internet": ("Network is unreachable",), "kill_parent": ("ProcessLookupError",),
    "kill_getppid": ("got ''",), "kill_everything": ("ProcessLookupError",),
    "setuid_root": ("[Errno 22]", "PermissionError"), "read_root_home": ("No such file or directory: '/root'",),
    "sys_exit_zero": ("got ''",), "os_exit_zero": ("got ''",), "segfault": ("exit code 139", "SIGSEGV"),
    "deep_recursion": ("timed out", "exit code 139", "RecursionError", "MemoryError"),
    "outliving_thread": ("timed out",), "daemon_child": ("got '41'",),
    "call_sys_exit_at_import": ("exit code 1",), "call_os_exit_in_method": ("exit code 1",),
    "call_always_equal": ("__unserializable__",), "call_patch_builtins": ("exit code 1", "wrong result", "exit code 70"),  # 70: it broke the runner
    "call_fake_stdout": ("exit code 1: 42",), "call_kill_reporter": ("exit code 137", "SIGKILL"),
    "call_open_reporter_stdout": ("Permission denied: '/proc/",),
    "bcb_patch_assert": ("patched the test machinery: unittest.case.TestCase.assertEqual",),
    "bcb_patch_result": ("patched the test machinery: unittest.result.TestResult.addFailure",),
    "bcb_exit_at_import": ("exit code 1",), "bcb_fake_report": ('exit code 1: {"run"',),
    "bcb_skip_tests": ("patched the test machinery: unittest.loader.TestLoader.loadTestsFromTestCase",),
}

@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sentinel_dir = tmp_path_factory.mktemp("sentinel")
    sentinel = sentinel_dir / "keep.txt"
    sentinel.write_text("original")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", server.getsockname()[1]))
    udp.settimeout(0.1)
    received: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                received.append("tcp")
                conn.close()
            except TimeoutError:
                pass
            try:
                udp.recv(64)
                received.append("udp")
            except TimeoutError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield {"sentinel": sentinel, "sentinel_dir": sentinel_dir, "port": server.getsockname()[1],
           "received": received}
    stop.set()
    thread.join()
    server.close()
    udp.close()


@pytest.fixture(scope="module", params=["pooled", "per-run"])
def results(host: dict[str, Any], request: pytest.FixtureRequest) -> dict[str, Verdict]:
    """Every program once, through one launcher (both give full isolation)."""
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET  # the parent has a key; no program may see it
    os.environ["CONDUCTOR_SANDBOX_LAUNCHER"] = request.param
    code_tests.CACHE.clear()  # the other launcher's verdicts must not answer for this one
    fill = {"sentinel": host["sentinel"], "sentinel_dir": host["sentinel_dir"], "port": host["port"],
            "ppid": os.getpid(), "samples": REPO_ROOT / "conductor" / "data" / "samples"}

    def one(item: tuple[str, tuple[Problem, str]]) -> tuple[str, Verdict]:
        name, (problem, code) = item
        return name, verify(problem, f"```python\n{code.format(**fill)}\n```", code_limits=LIMITS)

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            out = dict(pool.map(one, HOSTILE.items()))
    finally:
        del os.environ["CONDUCTOR_SANDBOX_LAUNCHER"]
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before
    time.sleep(1.0)  # give any survivor (daemon_child) time to try the listener
    return out


def test_suite_size() -> None:
    assert len(HOSTILE) >= 30 and set(EXPECT) == set(HOSTILE)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_fails_within_limits(name: str, results: dict[str, Verdict]) -> None:
    # No elapsed-time bound: a program the wall limit failed to stop would hang the fixture
    # (sleep_forever sleeps for hours) until pytest-timeout ends it; the reason says which limit
    # stopped each program.
    verdict = results[name]
    assert not verdict.correct, verdict
    assert SECRET not in verdict.reason
    assert verdict.isolation == "full"
    assert any(why in verdict.reason for why in EXPECT[name]), (name, verdict.reason)


@pytest.mark.parametrize("name", ["fork_bomb", "fork_bomb_setsid", "subprocess_bomb"])
def test_bombs_stop_at_the_process_limit(name: str, results: dict[str, Verdict]) -> None:
    got = results[name].reason.split("got '")[1].split("'")[0]
    assert 0 < int(got) < LIMITS.nproc  # the program itself and bwrap's pid 1 count too


def test_host_unharmed(host: dict[str, Any], results: dict[str, Verdict]) -> None:
    sentinel: Path = host["sentinel"]
    assert sentinel.read_text() == "original"
    assert sorted(p.name for p in host["sentinel_dir"].iterdir()) == ["keep.txt"]
    assert oct(sentinel.stat().st_mode & 0o777) != oct(0o777)
    assert host["received"] == []  # nothing reached our listener, over TCP or UDP
    for d in SHARED_DIRS:  # world-writable host directories: the sandbox has its own /tmp and /dev/shm
        assert not os.path.exists(os.path.join(d, ESCAPE)), d
    os.kill(os.getpid(), 0)  # we are alive (kill_parent, kill_getppid, kill_everything)
    # nothing a program started outlives its run: the only sandboxes below us are the idle zygotes,
    # each bwrap with its server alone inside; none once they are closed. (Other fixtures of the
    # session may have their own children: only bwrap trees count.)
    zygotes = sorted(z.proc.pid for zs in POOL._idle.values() for z in zs)
    assert _bwraps() == zygotes
    assert all(len(_descendants(pid)) == 1 for pid in zygotes)
    POOL.close()
    deadline = time.monotonic() + 60  # a hang guard for the closed zygotes' exit, not a speed bound
    while _bwraps() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _bwraps() == []


def _bwraps() -> list[int]:
    """Our descendants that are bwrap (started directly or through setpriv, which execs it)."""
    found = []
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv0 = fh.read().split(b"\0")[0]
        except OSError:
            continue
        if argv0.endswith(b"/bwrap") or argv0 == b"bwrap":
            found.append(pid)
    return sorted(found)


def _descendants(root: int) -> list[int]:
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    parent[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier}
        found += sorted(frontier)
    return found


def test_isolation_here() -> None:
    iso = isolation()
    assert iso.level == "full" and iso.bwrap is not None
    assert iso.launch_uid == (65534 if os.geteuid() == 0 else None)  # root hands bwrap to nobody
