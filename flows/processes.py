"""Process helpers for the services the CLI starts and must stop (the Prefect server, a worker,
the MLflow UI, the temporary Prefect server of a run): tie a child to its parent's life, signal a
process group, find a process tree from /proc, check a port."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path

HOST = "127.0.0.1"
PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A `preexec_fn` that makes the kernel send `sig` to the child when this process dies
    (PR_SET_PDEATHSIG; it fires when the thread that started the child ends)."""
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def child() -> None:  # between fork and exec
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return child


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def running(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def alive_in(tree: set[int], pgid: int) -> bool:
    return any(running(p) for p in tree) or any(
        (st := _stat(int(d))) is not None and st[0] != "Z" and int(st[2]) == pgid
        for d in os.listdir("/proc") if d.isdigit())


def descendants(pid: int) -> set[int]:
    """Every running process below `pid` (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and (st := _stat(int(d))) is not None:
            children.setdefault(int(st[1]), []).append(int(d))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True
