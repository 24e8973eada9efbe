"""A pooled launcher: long-lived bwrap sandboxes ("zygotes") that fork one child per program.

Starting bwrap and a fresh interpreter costs tens of milliseconds per program; a training loop
grades thousands. A zygote is one fully isolated bwrap sandbox (the same flags as a per-run launch)
whose pid 1 is a small warmed-up Python server. Per program it:

1. receives the program's stdin, stdout, stderr and files as file descriptors over a unix socket
   (`socket.send_fds`), writes the files into a fresh /tmp/w;
2. forks a child that sets the rlimits, takes the fds as 0/1/2 and runs main.py in the forked
   interpreter (no exec, no interpreter start, the LiveCodeBench imports already loaded);
3. when the child exits or we say "kill": `kill(-1, SIGKILL)` until no other process is left in
   the pid namespace (as pid 1 it is itself out of reach of the program's signals), reaps them,
   empties /tmp and /dev/shm, and reports the exit status.

So programs that share a zygote never meet: the next one starts only when nothing of the last one
is left, in an empty /tmp. A zygote that does not answer is killed (with it its pid namespace) and
replaced. See docs/sandbox.md.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import subprocess
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from conductor.sandbox_launch import Isolation, Limits, bwrap_argv

log = logging.getLogger(__name__)

# Runs as pid 1 inside the sandbox; argv[1] is the control socket's fd. Only plain modules before the fork.
_SERVER = r'''
import atexit, io, json, os, resource, runpy, select, shutil, signal, socket, sys, threading, traceback
import importlib
for _m in ("string re datetime collections heapq bisect copy math random statistics itertools functools "
           "operator typing json unittest ctypes").split():
    try:
        importlib.import_module(_m)
    except Exception:
        pass
ctl = socket.socket(fileno=int(sys.argv[1]))
import ctypes
_prctl = ctypes.CDLL(None).prctl
_prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: programs (same uid) cannot ptrace us or open /proc/1/*
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as pid 1 only handled signals reach us: handle none

def wipe():
    for top in ("/tmp", "/dev/shm"):
        for name in os.listdir(top):
            path = os.path.join(top, name)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)  # the program may have locked its own dirs
                for root, dirs, _ in os.walk(path):
                    for d in dirs:
                        if not os.path.islink(os.path.join(root, d)):
                            os.chmod(os.path.join(root, d), 0o700)
                shutil.rmtree(path)
            else:
                os.unlink(path)

def kill_all():
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return

def child(spec, fds):
    _prctl(4, 1, 0, 0, 0)  # the program may inspect itself (/proc/self/fd), as in a fresh process
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.setsid()
    for i, fd in enumerate(fds[:3]):
        os.dup2(fd, i)
    os.chdir("/tmp/w")
    os.closerange(3, 1 << 16)
    for k, v in spec["limits"]:
        resource.setrlimit(k, (v, v))
    os.environ.clear()
    os.environ.update(spec["env"])
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=False)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True,
                                  errors="backslashreplace")
    sys.argv = ["main.py", *spec["args"]]
    sys.path[0] = "/tmp/w"
    sys.path[1:1] = spec["packages"]
    importlib.invalidate_caches()
    code = 0
    try:
        runpy.run_path("main.py", run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else (print(e.code, file=sys.stderr), 1)[1])
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code & 0xFF)

wipe()  # bwrap made /tmp/w
while True:
    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 64)
    if not msg:
        os._exit(0)
    if msg == b"kill" and not fds:  # a kill that crossed the program's own exit: already done
        continue
    spec = json.loads(msg)
    os.makedirs("/tmp/w")
    for name, fd in zip(spec["files"], fds[3:]):
        with open(os.path.join("/tmp/w", name), "wb") as fh:
            while chunk := os.read(fd, 1 << 16):
                fh.write(chunk)
    pid = os.fork()
    if pid == 0:
        try:
            child(spec, fds)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([ctl, pidfd], [], [])
    status = None
    if pidfd in ready:
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    os.close(pidfd)
    kill_all()
    if status is None:
        ctl.recv(16)  # the "kill" message
        status = -9
    try:
        wipe()
        retire = False
    except Exception:
        retire = True  # what it left cannot be removed: this sandbox serves no other program
    ctl.sendall(json.dumps({"exit": status, "retire": retire}).encode() + b"\n")
    if retire:
        os._exit(0)
'''


@dataclass
class Outcome:
    returncode: int | None  # None: the zygote did not answer (killed and discarded)
    retired: bool = False  # the zygote could not clean up after the program and exits


class Zygote:
    """One long-lived sandbox; runs one program at a time."""

    def __init__(self, iso: Isolation, disk_mb: int, packages: tuple[str, ...] = ()) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl = parent
        self.key = (disk_mb, packages)  # its /tmp size and mounts, fixed when bwrap starts
        self.served = 0
        try:
            argv = bwrap_argv(iso, Limits(disk_mb=disk_mb), {}, (), packages)
            argv.insert(argv.index("--unshare-all") + 1, "--as-pid-1")  # the server is pid 1: out of reach
            py = argv.index(iso.python, argv.index("--clearenv"))
            argv = [*argv[:py], iso.python, "-E", "-s", "-B", "-c", _SERVER, str(child.fileno())]
            self.proc = _spawn(argv, child.fileno())
        finally:
            child.close()

    def start(self, spec: dict[str, object], fds: list[int]) -> None:
        socket.send_fds(self.ctl, [json.dumps(spec).encode()], fds)

    def finish(self, kill: bool, timeout: float = 3.0) -> Outcome:
        try:
            if kill:
                self.ctl.sendall(b"kill")
            self.ctl.settimeout(timeout)
            reply = json.loads(self.ctl.recv(256))
            if reply["retire"]:
                self.close()
            return Outcome(int(reply["exit"]), retired=bool(reply["retire"]))
        except (OSError, ValueError, KeyError):
            self.close()
            return Outcome(None)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.ctl.close()


_requests: queue.Queue[tuple[list[str], int, Future[subprocess.Popen[bytes]]]] = queue.Queue()


def _spawner() -> None:
    while True:
        argv, fd, done = _requests.get()
        try:
            done.set_result(subprocess.Popen(argv, env={}, cwd="/", start_new_session=True, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(fd,)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            done.set_exception(exc)


_spawner_lock = threading.Lock()
_spawner_thread: threading.Thread | None = None


def _spawn(argv: list[str], fd: int) -> subprocess.Popen[bytes]:
    """Start a zygote from one long-lived thread: bwrap's --die-with-parent is PR_SET_PDEATHSIG, which
    fires when the *thread* that forked it ends, and callers' threads (thread pools) come and go."""
    global _spawner_thread
    with _spawner_lock:
        if _spawner_thread is None:
            _spawner_thread = threading.Thread(target=_spawner, name="sandbox-zygote-spawner", daemon=True)
            _spawner_thread.start()
    done: Future[subprocess.Popen[bytes]] = Future()
    _requests.put((argv, fd, done))
    return done.result(timeout=60)


class ZygotePool:
    """Idle zygotes (by /tmp size and mounted packages), handed out one per running program; grown on demand (one per
    concurrent program at most), never shared by two programs at once."""

    def __init__(self) -> None:
        self._idle: dict[tuple[int, tuple[str, ...]], list[Zygote]] = {}
        self._lock = threading.Lock()
        self.broken = ""  # why zygotes cannot be used here: then every program gets its own bwrap

    def fail(self, why: str) -> None:
        """Zygotes do not work on this machine: fall back to one bwrap per program, said once."""
        with self._lock:
            if self.broken:
                return
            self.broken = why
        log.warning("sandbox: pooled launcher unavailable (%s); one bwrap per program from now on", why)

    def take(self, iso: Isolation, disk_mb: int, packages: tuple[str, ...] = ()) -> Zygote:
        with self._lock:
            idle = self._idle.setdefault((disk_mb, packages), [])
            while idle:
                z = idle.pop()
                if z.alive():
                    return z
                z.close()
        return Zygote(iso, disk_mb, packages)

    def give(self, z: Zygote) -> None:
        if z.alive():
            with self._lock:
                self._idle.setdefault(z.key, []).append(z)

    def close(self) -> None:
        with self._lock:
            idle = [z for zs in self._idle.values() for z in zs]
            self._idle = {}
        for z in idle:
            z.close()


POOL = ZygotePool()
