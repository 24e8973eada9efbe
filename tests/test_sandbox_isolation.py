"""What a sandboxed program can reach, observed from inside it.

The probes run in a separate Python process started with a secret already in its real environment
and a $CONDUCTOR_HOME holding curated eval data, so a leak through /proc/<pid>/environ, a
world-readable project file or the home would show. Each probe prints what it saw; each test
asserts the specific thing the program was kept from.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conductor.config import REPO_ROOT
from conductor.data.loaders import load_source
from conductor.sandbox_launch import weak_isolation
from conductor.verify import code_tests, verify

SECRET = "sk-parent-secret-5d41402abc"
SAMPLES = REPO_ROOT / "conductor" / "data" / "samples"

# name -> program; each prints one JSON value: what it managed to see or do
PROBES: dict[str, str] = {
    "env_var": "import os, json\nprint(json.dumps(os.environ.get('OPENAI_API_KEY')))",
    "any_environ": textwrap.dedent("""\
        import os, json
        seen = []
        for p in os.listdir('/proc'):
            try:
                seen.append(open(f'/proc/{p}/environ').read())
            except OSError:
                pass
        print(json.dumps({'secret': any('SECRET_MARK' in s for s in seen), 'pids': len(seen)}))"""),
    "runner_pid": textwrap.dedent("""\
        import os, json
        try:
            os.kill(RUNNER_PID, 0); print(json.dumps('signalled'))
        except OSError as e:
            print(json.dumps(type(e).__name__))"""),
    "root_dir": "import os, json\nprint(json.dumps(sorted(os.listdir('/'))))",
    **{f"open_{key}": textwrap.dedent(f"""\
        import json
        try:
            print(json.dumps(open({key.upper()}).read()[:20]))
        except OSError as e:
            print(json.dumps(type(e).__name__))""") for key in ("sample", "curated", "repo_file", "home_file")},
    "tcp_listener": textwrap.dedent("""\
        import socket, json
        try:
            socket.create_connection(('127.0.0.1', PORT), timeout=1).sendall(b'x'); print(json.dumps('connected'))
        except OSError as e:
            print(json.dumps(type(e).__name__))"""),
    "ctypes_connect": textwrap.dedent("""\
        import ctypes, socket, struct, json
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.socket(2, 1, 0)
        addr = struct.pack('!HH4s8x', 2, PORT, socket.inet_aton('127.0.0.1'))
        addr = struct.pack('=H', 2) + addr[2:]
        rc = libc.connect(fd, ctypes.c_char_p(addr), 16)
        print(json.dumps('connected' if rc == 0 else 'errno %d' % ctypes.get_errno()))"""),
    "child_interpreter_connect": textwrap.dedent("""\
        import subprocess, sys, json
        code = "import socket; socket.create_connection(('127.0.0.1', PORT), timeout=1)"
        r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
        print(json.dumps('connected' if r.returncode == 0 else r.stderr.strip().splitlines()[-1]))"""),
    "write_host_tmp": "import json\nopen('/tmp/MARKER', 'w').write('x')\nprint(json.dumps('wrote'))",
}

RUNNER = textwrap.dedent("""\
    import json, sys
    from conductor.sandbox import Job, Limits, run
    probes = json.loads(sys.stdin.read())
    out = {}
    for name, code in probes.items():
        r = run(Job(code=code, limits=Limits(wall_s=5)))
        lines = r.stdout.strip().splitlines()
        out[name] = {"seen": json.loads(lines[-1]) if lines else None, "stderr": r.stderr[-300:],
                     "isolation": r.isolation}
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def listener() -> Any:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)
    accepted: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
                accepted.append(1)
            except TimeoutError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@pytest.fixture(scope="module", params=["pooled", "per-run"])
def seen(listener: Any, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Any]:
    port, _ = listener
    home = tmp_path_factory.mktemp("home")
    curated = home / "conductor" / "curated" / "eval"
    curated.mkdir(parents=True)
    (curated / "lcb.jsonl").write_text('{"answer": "curated-secret"}\n')
    (home / "notes.txt").write_text("home file")
    marker = f"conductor-escape-{os.getpid()}"
    fill = {"SAMPLE": repr(str(SAMPLES / "lcb_v6.jsonl")), "CURATED": repr(str(curated / "lcb.jsonl")),
            "REPO_FILE": repr(str(REPO_ROOT / "pyproject.toml")), "HOME_FILE": repr(str(home / "notes.txt")),
            "PORT": str(port), "SECRET_MARK": SECRET, "MARKER": marker}
    probes = {}
    for name, code in PROBES.items():
        for key, value in fill.items():
            code = code.replace(key, value)
        probes[name] = code
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "HOME": str(home),
           "CONDUCTOR_HOME": str(home / "conductor"), "CONDUCTOR_SANDBOX_ISOLATION": "strict",
           "CONDUCTOR_SANDBOX_LAUNCHER": request.param}
    # the runner pid is known once it starts; the probes arrive on its stdin after that
    runner = subprocess.Popen([sys.executable, "-c", RUNNER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO_ROOT, text=True)
    probes["runner_pid"] = probes["runner_pid"].replace("RUNNER_PID", str(runner.pid))
    out, err = runner.communicate(json.dumps(probes), timeout=300)
    assert runner.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    result["_marker"] = marker
    return result


def test_runs_under_full_isolation(seen: dict[str, Any]) -> None:
    assert {v["isolation"] for k, v in seen.items() if not k.startswith("_")} == {"full"}


def test_no_secret_from_the_parent_environment(seen: dict[str, Any]) -> None:
    assert seen["env_var"]["seen"] is None
    assert seen["any_environ"]["seen"]["secret"] is False
    assert seen["any_environ"]["seen"]["pids"] >= 1  # it did read /proc/*/environ: its own pid namespace


def test_no_host_process_visible(seen: dict[str, Any]) -> None:
    assert seen["runner_pid"]["seen"] == "ProcessLookupError"


def test_root_holds_only_the_runtime(seen: dict[str, Any]) -> None:
    assert set(seen["root_dir"]["seen"]) <= {"bin", "dev", "lib", "lib64", "proc", "sbin", "tmp", "usr"}


@pytest.mark.parametrize("what", ["sample", "curated", "repo_file", "home_file"])
def test_no_project_home_or_curated_file(seen: dict[str, Any], what: str) -> None:
    assert seen[f"open_{what}"]["seen"] == "FileNotFoundError", seen[f"open_{what}"]


@pytest.mark.parametrize("probe", ["tcp_listener", "ctypes_connect", "child_interpreter_connect"])
def test_no_connection_to_our_listener(seen: dict[str, Any], listener: Any, probe: str) -> None:
    assert seen[probe]["seen"] != "connected"
    assert "refused" in str(seen[probe]["seen"]).lower() or seen[probe]["seen"] in (
        "ConnectionRefusedError", "errno 111")
    assert listener[1] == []


def test_host_tmp_untouched(seen: dict[str, Any]) -> None:
    assert seen["write_host_tmp"]["seen"] == "wrote"  # it wrote: into its own /tmp
    assert not os.path.exists(f"/tmp/{seen['_marker']}")


# The reward hack of issue 8: look the test's stdin up in the shipped samples, print the stored output.
LOOKUP = textwrap.dedent("""\
    import base64, json, pickle, sys, zlib
    data = sys.stdin.read()
    for line in open(SAMPLE):
        row = json.loads(line)
        tests = json.loads(row['public_test_cases'])
        try:
            tests += json.loads(pickle.loads(zlib.decompress(base64.b64decode(row['private_test_cases']))))
        except Exception:
            pass
        for t in tests:
            if t['input'] == data:
                print(t['output'], end='')
                sys.exit(0)
""").replace("SAMPLE", repr(str(SAMPLES / "lcb_v6.jsonl")))


def test_looking_up_answers_in_the_samples_is_not_graded_correct(monkeypatch: pytest.MonkeyPatch) -> None:
    problems = [p for p in load_source("lcb_v6").problems if not p.meta.get("func_name")]
    answer = f"```python\n{LOOKUP}\n```"
    code_tests.CACHE.clear()
    full = [verify(p, answer) for p in problems]
    assert not any(v.correct for v in full) and all("FileNotFoundError" in v.reason for v in full), full
    # the same program without isolation: the hack works, so the check above is not vacuous
    monkeypatch.setattr(code_tests, "isolation", weak_isolation)
    weak = [verify(p, answer) for p in problems]
    assert sum(v.correct for v in weak) >= 3 and {v.isolation for v in weak} == {"weak"}


def _descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process below `root`."""
    parent: dict[int, int] = {}
    start: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parent[int(name)], start[int(name)] = int(fields[1]), fields[19]
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier}
        found |= {(p, start[p]) for p in frontier}
    return found


def _alive(procs: set[tuple[int, str]]) -> set[tuple[int, str]]:
    alive = set()
    for pid, started in procs:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == started and fields[0] != "Z":
            alive.add((pid, started))
    return alive


@pytest.mark.parametrize("launcher", ["pooled", "per-run"])
def test_sigkill_of_the_verifier_leaves_no_sandboxed_process(tmp_path: Path, launcher: str) -> None:
    program = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
               "        time.sleep(60)\n    os._exit(0)\ntime.sleep(60)\nprint(42)")
    runner_code = textwrap.dedent(f"""\
        from conductor.data.schema import Problem, TestCase
        from conductor.sandbox import Limits
        from conductor.verify import verify
        p = Problem(id='k', source='lcb', domain='code', question='q', tests=[TestCase(input='', output='42')])
        verify(p, '```python\\n' + {program!r} + '\\n```', code_limits=Limits(wall_s=120))
    """)
    env = {**os.environ, "TMPDIR": str(tmp_path), "CONDUCTOR_SANDBOX_LAUNCHER": launcher}
    runner = subprocess.Popen([sys.executable, "-c", runner_code], env=env, cwd=REPO_ROOT)
    try:
        deadline = time.monotonic() + 60
        procs: set[tuple[int, str]] = set()
        # bwrap, its pid 1 (bwrap's or the zygote), the program, its daemonised grandchild
        while len(procs) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
            procs = _descendants(runner.pid)
        assert len(procs) >= 4, procs
        time.sleep(0.3)
        procs = _descendants(runner.pid)
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 10
    while _alive(procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(procs) == set()
    assert list(tmp_path.iterdir()) == []  # the program's files lived in memfds and its tmpfs


@pytest.mark.parametrize("mode", ["strict", "weak"])
def test_where_namespaces_are_refused_strict_refuses_and_weak_says_so(mode: str) -> None:
    """A real machine without user namespaces: a user namespace of ours in which no further one may
    be made (user.max_user_namespaces = 0). strict must refuse in one line; weak runs, labelled."""
    script = ("from conductor.sandbox import Job, SandboxUnavailable, run\n"
              "try:\n    r = run(Job(code='print(6 * 7)'))\n    print('RAN', r.isolation, r.stdout.strip())\n"
              "except SandboxUnavailable as e:\n    print('REFUSED', str(e))\n")
    shell = f"echo 0 > /proc/sys/user/max_user_namespaces && exec {sys.executable} -c \"$0\""
    done = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", shell, script], cwd=REPO_ROOT,
                          env={**os.environ, "CONDUCTOR_SANDBOX_ISOLATION": mode}, capture_output=True, text=True,
                          timeout=120)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(lines) == 1, (done.stdout, done.stderr)
    if mode == "strict":
        assert lines[0].startswith("REFUSED sandbox: full isolation unavailable (")
        assert "CONDUCTOR_SANDBOX_ISOLATION=weak" in lines[0]
    else:
        assert lines[0] == "RAN weak 42"
        assert "WEAK isolation" in done.stderr  # the once-per-process warning
