"""`conductor pool check`: is each worker of a pool usable before a run starts?

For each worker: is its key set, can it be built (options valid), does it answer a one-token
request, and how long did that take. Workers are checked concurrently, each under a timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conductor.types import Message, WorkerSpec

from conductor.workers.base import Worker, WorkerError
from conductor.workers.registry import BuildContext, factory_for
from conductor.workers.secrets import MissingKeyError, Scrubber

PING = [Message(role="user", content="Reply with the single word OK.")]


@dataclass
class CheckResult:
    worker_id: str
    provider: str
    model: str
    key: str  # "set (VAR)", "missing (VAR)", "not needed"
    ok: bool
    latency_s: float | None = None
    detail: str = ""


def _key_status(worker: Worker | None, error: Exception | None) -> str:
    if isinstance(error, MissingKeyError):
        return "missing"
    envs = getattr(worker, "key_envs", None)
    if not envs:
        return "not needed"
    return f"set ({envs[0]})" if getattr(worker, "_key", None) else f"not set ({envs[0]})"


def _build(spec: WorkerSpec, context: BuildContext) -> tuple[CheckResult, Worker | None]:
    result = CheckResult(spec.id, spec.provider, spec.model, key="not needed", ok=False)
    if spec.is_conductor:
        result.ok, result.detail = True, "the Conductor itself (re-plans; nothing to call)"
        return result, None
    try:
        worker = factory_for(spec.provider)(spec, context)
    except Exception as exc:  # a diagnostic: every failure is a row, never a crash
        result.key = _key_status(None, exc)
        result.detail = Scrubber().clean(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return result, None
    result.key = _key_status(worker, None)
    return result, worker


async def _ping(result: CheckResult, worker: Worker, timeout_s: float) -> None:
    start = time.perf_counter()
    try:
        completion = await asyncio.wait_for(
            worker.complete(PING, max_tokens=getattr(worker, "check_max_tokens", 1), temperature=0.0), timeout_s
        )
    except TimeoutError:
        result.detail = f"no answer within {timeout_s:g}s"
    except WorkerError as exc:
        result.detail = str(exc)
    except Exception as exc:
        result.detail = Scrubber().clean(f"{type(exc).__name__}: {exc}")
    else:
        result.ok = True
        result.detail = f"answered {completion.text.strip()[:30]!r}" if completion.text.strip() else "answered"
    finally:
        result.latency_s = time.perf_counter() - start
        await worker.aclose()


async def check_pool(
    specs: Sequence[WorkerSpec], context: BuildContext | None = None, timeout_s: float = 30.0
) -> list[CheckResult]:
    """Build every worker first (imports SDKs, validates options and keys), then ping them all
    concurrently, so one slow import never counts against another worker's latency."""
    context = context or BuildContext()
    built = [_build(spec, context) for spec in specs]
    await asyncio.gather(*(_ping(result, worker, timeout_s) for result, worker in built if worker is not None))
    return [result for result, _ in built]


def missing_keys(pool_file: str | Path) -> list[str]:
    """The workers of a pool whose API key is not set, as `worker-id (VAR or VAR)`; built only
    (no request is sent)."""
    from conductor.workers.pool import read_pool_file

    missing = []
    for spec in read_pool_file(pool_file).workers:
        if spec.is_conductor:
            continue
        try:
            factory_for(spec.provider)(spec, BuildContext())
        except MissingKeyError as exc:
            names = str(exc).removeprefix("no API key: set ").split(" in the environment")[0]
            missing.append(f"{spec.id} ({names})")
        except Exception:  # noqa: BLE001 - other build errors are the run's to report, not a key check's
            continue
    return missing
