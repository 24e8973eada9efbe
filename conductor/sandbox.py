"""Run untrusted Python programs (worker-written code) in a contained subprocess.

Full isolation (the default, `strict`): bubblewrap with new user, pid, network, mount, ipc and uts
namespaces. The program runs as uid 65534 in a root of its own: a size-limited tmpfs working dir
(`/tmp/w`) holding only its files, read-only /usr and its interpreter, a fresh /proc and /dev.
No project file, no $HOME, no $CONDUCTOR_HOME, no network (only a loopback of its own), no other
process. Its files come in through memfds, so no host directory holds them; bwrap runs with
`--die-with-parent`, so a SIGKILLed caller takes every sandboxed process with it (the pid namespace
dies with its pid 1). rlimits (CPU, memory, file size, processes, open files) are set inside.

Weak (`CONDUCTOR_SANDBOX_ISOLATION=weak`, only where full isolation is impossible): rlimits, a
scrubbed environment, its own session and temp dir. It can read the host's files and reach
127.0.0.1; every result says which isolation it ran under. See docs/sandbox.md.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from conductor.sandbox_launch import (
    Isolation,
    Limits,
    SandboxSettings,
    SandboxUnavailable,
    bwrap_argv,
    env_for_program,
    isolation,
    package_dirs,
    rlimit_pairs,
    weak_preexec,
)
from conductor.sandbox_zygote import POOL

__all__ = ["Isolation", "Job", "Limits", "RunResult", "SandboxUnavailable", "default_workers", "isolation",
           "run", "run_many"]


class RunResult(BaseModel):
    """What happened to one program. `stdout`/`stderr` are decoded with replacement."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    output_capped: bool = False
    wall_s: float = 0.0
    error: str | None = None  # the sandbox itself could not run the program
    isolation: str = "full"  # "full" or "weak": what the program ran under

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.output_capped and not self.error

    def describe(self) -> str:
        if self.error:
            return f"sandbox error: {self.error}"
        if self.timed_out:
            return f"timed out after {self.wall_s:.1f}s"
        if self.output_capped:
            return "output limit exceeded"
        if self.returncode and self.returncode < 0:
            return f"killed by signal {signal.Signals(-self.returncode).name}"
        if self.returncode:
            last = self.stderr.strip().splitlines()[-1:] or [""]
            return f"exit code {self.returncode}: {last[0][:200]}"
        return "exit code 0"


@dataclass(frozen=True)
class Job:
    """One program to run: `code` becomes main.py; `files` are written beside it; `packages` are
    site-packages directories mounted read-only onto its path (BigCodeBench, see `site_packages`)."""

    code: str
    stdin: str = ""
    args: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    packages: tuple[str, ...] = ()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pump(streams: tuple[Any, Any], exited: Callable[[], bool], limits: Limits,
          deadline: float) -> tuple[bytes, bytes, bool, bool]:
    """Read both pipes as data arrives; stop at the deadline or at the output cap."""
    bufs = {streams[0]: bytearray(), streams[1]: bytearray()}
    timed_out = capped = False
    with selectors.DefaultSelector() as sel:
        for stream in bufs:
            os.set_blocking(stream.fileno(), False)
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            done = exited()
            # once the program has exited, drain what is buffered and stop: a child it left
            # holding the pipes open must not keep us waiting until the deadline
            for key, _ in sel.select(timeout=0 if done else min(left, 0.05)):
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = bufs[key.fileobj]  # type: ignore[index]
                buf += chunk
                if len(buf) > limits.output_bytes:
                    del buf[limits.output_bytes:]
                    capped = True
            if capped or (done and not _readable(sel)):
                break
    return bytes(bufs[streams[0]]), bytes(bufs[streams[1]]), timed_out, capped


def _readable(sel: selectors.BaseSelector) -> bool:
    return bool(sel.get_map()) and bool(sel.select(timeout=0))


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(f"sbx-{name}", os.MFD_CLOEXEC)  # pass_fds makes it inheritable for bwrap only
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _check_names(job: Job) -> None:
    for name in job.files:
        if os.path.basename(name) != name or name in ("", ".", "..", "main.py"):
            raise ValueError(f"sandbox file name must be plain: {name!r}")


def _wait(proc: subprocess.Popen[bytes], job: Job, start: float, iso: Isolation) -> RunResult:
    try:
        assert proc.stdout is not None and proc.stderr is not None
        out, err, timed_out, capped = _pump((proc.stdout, proc.stderr), lambda: proc.poll() is not None,
                                            job.limits, start + job.limits.wall_s)
    finally:
        _kill_group(proc)  # bwrap (or the weak program's group); bwrap's death ends its pid namespace
        returncode = proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    return RunResult(
        returncode=None if timed_out else returncode,
        stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out, output_capped=capped, wall_s=time.monotonic() - start, isolation=iso.level,
    )


def _run_full(job: Job, iso: Isolation, start: float) -> RunResult:
    fds: dict[str, int] = {}
    stdin = -1
    try:
        for name, text in {**job.files, "main.py": job.code}.items():
            fds[name] = _memfd(name, text.encode("utf-8"))
        stdin = _memfd("stdin", job.stdin.encode("utf-8"))
        argv = bwrap_argv(iso, job.limits, fds, job.args, job.packages)
        # bwrap gets an empty environment: its pid 1 inside would otherwise show ours in /proc/1/environ
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={},
                                cwd="/", start_new_session=True, pass_fds=tuple(fds.values()))
    finally:
        for fd in [*fds.values(), stdin]:
            if fd >= 0:
                os.close(fd)
    return _wait(proc, job, start, iso)


def _run_pooled(job: Job, iso: Isolation, start: float) -> RunResult:
    """Through a zygote (conductor.sandbox_zygote): same isolation, no bwrap or interpreter start."""
    zygote = POOL.take(iso, job.limits.disk_mb, job.packages)
    mine: list[int] = []
    theirs: list[int] = []
    try:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        mine += [out_r, err_r]
        theirs += [_memfd("stdin", job.stdin.encode("utf-8")), out_w, err_w]
        theirs += [_memfd(name, text.encode("utf-8")) for name, text in {**job.files, "main.py": job.code}.items()]
        spec = {"files": [*job.files, "main.py"], "args": list(job.args), "env": env_for_program(),
                "packages": package_dirs(job.packages),
                "limits": rlimit_pairs(job.limits, job.limits.nproc + 1)}  # + 1: the zygote counts too
        zygote.start(spec, theirs)
    except OSError as exc:  # the zygote could not start (or died before taking the program)
        zygote.close()
        POOL.fail(f"{type(exc).__name__}: {exc}")
        for fd in mine:
            os.close(fd)
        return _run_full(job, iso, start)
    except BaseException:
        zygote.close()
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    with open(out_r, "rb", buffering=0) as out_f, open(err_r, "rb", buffering=0) as err_f:
        out, err, timed_out, capped = _pump((out_f, err_f), lambda: False, job.limits, start + job.limits.wall_s)
    outcome = zygote.finish(kill=timed_out or capped)
    if outcome.returncode is None and not (timed_out or capped):
        # the zygote died under the program (programs cannot signal or trace it; the OOM killer can):
        # run it again on its own. A zygote that dies before serving anything means zygotes do not
        # work on this machine.
        if zygote.served == 0:
            POOL.fail("a new zygote stopped answering")
        return _run_full(job, iso, time.monotonic())
    zygote.served += 1
    if outcome.returncode is not None and not outcome.retired:
        POOL.give(zygote)
    return RunResult(
        returncode=None if timed_out else outcome.returncode,
        stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out, output_capped=capped, wall_s=time.monotonic() - start, isolation=iso.level,
    )


def _run_weak(job: Job, iso: Isolation, start: float) -> RunResult:
    workdir = tempfile.mkdtemp(prefix="conductor-sbx-")  # 0700, ours
    try:
        for name, text in {**job.files, "main.py": job.code}.items():
            with open(os.path.join(workdir, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        env = {**env_for_program(), "HOME": workdir, "TMPDIR": workdir}
        with tempfile.TemporaryFile() as stdin:
            stdin.write(job.stdin.encode("utf-8"))
            stdin.seek(0)
            proc = subprocess.Popen([iso.python, "-E", "-s", "-B", "main.py", *job.args], stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=workdir, env=env,
                                    start_new_session=True, preexec_fn=weak_preexec(job.limits))
        return _wait(proc, job, start, iso)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def pooled() -> bool:
    return SandboxSettings().launcher == "pooled" and not POOL.broken


def run(job: Job, iso: Isolation | None = None) -> RunResult:
    """Run one program to completion, timeout or output cap; never raises for what the program does.
    Raises `SandboxUnavailable` (one line) under strict isolation where full isolation is impossible."""
    iso = iso or isolation()
    start = time.monotonic()
    try:
        _check_names(job)
        if iso.level == "weak":
            return _run_weak(job, iso, start)
        return _run_pooled(job, iso, start) if pooled() else _run_full(job, iso, start)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return RunResult(returncode=None, error=f"{type(exc).__name__}: {exc}", wall_s=time.monotonic() - start,
                         isolation=iso.level)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def run_many(jobs: Sequence[Job], workers: int | None = None) -> list[RunResult]:
    """Run a batch in parallel (threads that wait on subprocesses), sized to the cores; results keep order."""
    n = min(workers or default_workers(), max(1, len(jobs)))
    if n == 1:
        return [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="sandbox") as pool:
        return list(pool.map(run, jobs))
