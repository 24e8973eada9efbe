"""The sandbox's contract, under full isolation (bwrap) and under the weak opt-in launcher."""

from __future__ import annotations

import logging
import signal

import pytest

from conductor import sandbox, sandbox_launch
from conductor.sandbox import Job, Limits, SandboxUnavailable, isolation, run, run_many
from conductor.sandbox_launch import Isolation, weak_isolation

FAST = Limits(wall_s=2.0, memory_mb=256)


@pytest.fixture(params=["pooled", "per-run", "weak"])
def iso(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Isolation:
    """Full isolation through each launcher (zygotes, one bwrap per program), and the weak launcher."""
    if request.param == "weak":
        return weak_isolation()
    monkeypatch.setenv("CONDUCTOR_SANDBOX_LAUNCHER", request.param)
    return isolation("strict")


def test_this_machine_isolates_fully() -> None:
    # the project's machines (root here, root in CI, nobody in CI's second pass) all allow bwrap
    got = isolation("strict")
    assert got.level == "full" and got.bwrap and got.python


def test_cwd_is_private_and_bounded(iso: Isolation) -> None:
    r = run(Job(code="import os\nprint(os.getcwd(), os.environ['HOME'] == os.getcwd())\n"
                     "open('f', 'w').write('x' * 3_000_000)", limits=Limits(wall_s=2, disk_mb=2, file_mb=8)), iso)
    cwd, same = r.stdout.split()
    assert same == "True" and r.isolation == iso.level
    if iso.level == "full":
        assert cwd == "/tmp/w" and "No space left" in r.stderr  # 2 MiB tmpfs
    else:
        assert cwd.startswith("/") and r.ok


def test_runs_with_stdin_files_and_args(iso: Isolation) -> None:
    r = run(Job(code="import sys\nprint(open('data.txt').read() + sys.stdin.read().upper(), sys.argv[1:])",
                stdin="abc", files={"data.txt": "x-"}, args=("--n", "3"), limits=FAST), iso)
    assert r.ok and r.stdout == "x-ABC ['--n', '3']\n"


def test_limits_apply(iso: Isolation) -> None:
    r = run(Job(code="import resource as r\nprint(r.getrlimit(r.RLIMIT_AS)[0] >> 20, r.getrlimit(r.RLIMIT_NOFILE)[0],"
                     " r.getrlimit(r.RLIMIT_CPU)[0], r.getrlimit(r.RLIMIT_FSIZE)[0] >> 20, r.getrlimit(r.RLIMIT_CORE)[0],"
                     " r.getrlimit(r.RLIMIT_NPROC)[0])", limits=FAST), iso)
    mem, nofile, cpu, fsize, core, nproc = r.stdout.split()
    assert (mem, nofile, cpu, fsize, core) == ("256", str(FAST.nofile), str(FAST.cpu_seconds), str(FAST.file_mb), "0")
    if iso.level == "full":  # the pooled launcher adds one for its zygote, which counts in the same namespace
        assert nproc in (str(FAST.nproc), str(FAST.nproc + 1))


def test_a_file_past_file_mb_cannot_be_written(iso: Isolation) -> None:
    # 2 MiB into a 1 MiB RLIMIT_FSIZE on a 64 MiB disk: the file limit refuses it, not the disk.
    r = run(Job(code="open('big', 'wb').write(b'x' * (2 << 20))", limits=Limits(wall_s=5, file_mb=1)), iso)
    assert not r.ok and "File too large" in r.stderr, r.stderr


def test_a_busy_loop_is_stopped_by_its_cpu_limit_before_the_wall_clock(iso: Isolation) -> None:
    # 1 CPU-second allowed, 20 s of wall clock: the kernel ends it at its CPU limit, not the timeout
    # (without RLIMIT_CPU it would spin until the wall clock). bwrap's launchers set soft = hard, so
    # the kernel's SIGKILL comes (bwrap reports it as exit 137); the weak launcher's soft limit is
    # one second below its hard one, so SIGXCPU.
    r = run(Job(code="while True:\n    pass", limits=Limits(wall_s=20, cpu_s=1)), iso)
    assert not r.timed_out and r.returncode not in (0, None), r.describe()
    if iso.level == "weak":
        assert r.returncode == -signal.SIGXCPU, r.describe()


def test_network_blocked_under_full_isolation() -> None:
    r = run(Job(code="import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 9))", limits=FAST))
    # its own loopback: nothing listens there, whatever listens on ours
    assert not r.ok and "ConnectionRefusedError" in r.stderr


def test_environment_is_scrubbed(iso: Isolation, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    r = run(Job(code="import os\nprint(os.getuid(), sorted(os.environ))", limits=FAST), iso)
    assert "ANTHROPIC_API_KEY" not in r.stdout and "secret" not in r.stdout
    if iso.level == "full":
        assert r.stdout.split()[0] == "65534"


@pytest.mark.timeout(120)  # a hang guard, not a speed bound: a forked child left alive would hold the pipes for a day
def test_timeout_kills_everything() -> None:
    r = run(Job(code="import os, time\nos.fork()\ntime.sleep(86_400)", limits=Limits(wall_s=1.0)))
    assert r.timed_out and r.returncode is None and not r.ok


def test_output_capped() -> None:
    r = run(Job(code="while True:\n    print('x' * 1000)", limits=Limits(wall_s=5, output_bytes=10_000)))
    assert r.output_capped and len(r.stdout) == 10_000 and "output limit" in r.describe()


def test_bad_file_name_is_an_error_not_an_escape() -> None:
    r = run(Job(code="print(1)", files={"../evil.py": "x"}))
    assert r.error and "plain" in r.error and not r.ok


def test_run_many_keeps_order() -> None:
    jobs = [Job(code=f"print({i})", limits=FAST) for i in range(12)]
    assert [r.stdout.strip() for r in run_many(jobs)] == [str(i) for i in range(12)]
    assert run_many([]) == []


def test_strict_refuses_in_one_line_where_isolation_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_launch, "_probed", lambda: "bwrap: No permissions to create a new namespace")
    monkeypatch.delenv("CONDUCTOR_SANDBOX_ISOLATION", raising=False)
    with pytest.raises(SandboxUnavailable) as info:
        run(Job(code="print(1)"))
    msg = str(info.value)
    assert "\n" not in msg and "No permissions" in msg and "CONDUCTOR_SANDBOX_ISOLATION=weak" in msg


def test_weak_is_opt_in_and_warns_once(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sandbox_launch, "_probed", lambda: "no bwrap binary")
    monkeypatch.setattr(sandbox_launch, "_warned", sandbox_launch.threading.Event())
    monkeypatch.setenv("CONDUCTOR_SANDBOX_ISOLATION", "weak")
    with caplog.at_level(logging.WARNING, logger="conductor.sandbox_launch"):
        results = [run(Job(code="print(7)", limits=FAST)) for _ in range(2)]
    assert [r.stdout for r in results] == ["7\n", "7\n"] and {r.isolation for r in results} == {"weak"}
    assert [rec.message for rec in caplog.records].count(caplog.records[0].message) == 1
    assert "WEAK" in caplog.records[0].message and len(caplog.records) == 1


def test_bad_isolation_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUCTOR_SANDBOX_ISOLATION", "none")
    with pytest.raises(ValueError, match="strict"):
        isolation()


@pytest.mark.parametrize("launcher", ["pooled", "per-run"])
def test_programs_never_meet(launcher: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One program leaves files, a daemon and a grandchild; the next (the same zygote, when pooled:
    one at a time from one thread) sees none of them."""
    monkeypatch.setenv("CONDUCTOR_SANDBOX_LAUNCHER", launcher)
    litter = ("import os, time\nfor p in ('/tmp/w/leak', '/tmp/leak', '/dev/shm/leak'):\n    open(p, 'w').write('x')\n"
              "os.makedirs('/tmp/locked/deep')\nos.chmod('/tmp/locked', 0)\n"
              "if os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\nprint('left')")
    look = ("import os\nprocs = [p for p in os.listdir('/proc') if p.isdigit()]\n"
            "print(sorted(os.listdir('/tmp')), sorted(os.listdir('/tmp/w')), os.listdir('/dev/shm'), len(procs))")
    first = run(Job(code=litter, limits=FAST))
    assert first.stdout == "left\n", first
    second = run(Job(code=look, limits=FAST))
    # /tmp/w with main.py only; no litter; itself and pid 1 (bwrap's reaper or the zygote) only
    assert second.stdout == "['w'] ['main.py'] [] 2\n", second


def test_pooled_launcher_falls_back_to_per_run_when_zygotes_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    from conductor import sandbox_zygote

    pool = sandbox_zygote.ZygotePool()
    monkeypatch.setattr(sandbox, "POOL", pool)
    monkeypatch.setattr(sandbox_zygote, "_SERVER", "import sys; sys.exit(3)")  # a zygote that dies at once
    monkeypatch.setenv("CONDUCTOR_SANDBOX_LAUNCHER", "pooled")
    first = run(Job(code="print(5)", limits=FAST))
    assert first.ok and first.stdout == "5\n" and pool.broken  # ran through per-run bwrap instead
    assert not sandbox.pooled()
