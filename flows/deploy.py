"""Apply deployments/prefect.yaml to a running Prefect server: its work pools, then its
deployments (`conductor deploy`, `make deploy`). Both steps are idempotent.

The work pools are listed under the file's own `work_pools` key (Prefect's `prefect deploy`
ignores it and does not create pools when run without prompts); each is created, or overwritten
in place, with the worker type's default base job template whose variable defaults are the
pool's `job_variables`. The deployments are applied by Prefect's own CLI, `prefect --no-prompt
deploy`, run from the repository root (entrypoints are relative to it) so the build step
records the checkout's path for the pull step."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from conductor.config import REPO_ROOT

PREFECT_FILE = REPO_ROOT / "deployments" / "prefect.yaml"


class DeployError(RuntimeError):
    """Something a user fixes (no server, a bad file, a failed `prefect deploy`): one line."""


@dataclass(frozen=True)
class PoolSpec:
    name: str
    type: str = "process"
    description: str = ""
    job_variables: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DeploymentSpec:
    name: str
    entrypoint: str
    work_pool: str
    crons: tuple[tuple[str, str], ...]  # (cron, timezone)
    paused: bool = False


@dataclass(frozen=True)
class DeploySpec:
    pools: list[PoolSpec]
    deployments: list[DeploymentSpec]


def load_spec(path: Path = PREFECT_FILE) -> DeploySpec:
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DeployError(f"{path}: {exc}") from None
    pools = [PoolSpec(name=p["name"], type=p.get("type", "process"), description=(p.get("description") or "").strip(),
                      job_variables=p.get("job_variables") or {}) for p in raw.get("work_pools") or []]
    deployments = [
        DeploymentSpec(name=d["name"], entrypoint=d["entrypoint"], work_pool=(d.get("work_pool") or {}).get("name", ""),
                       crons=tuple((s["cron"], s.get("timezone", "UTC")) for s in d.get("schedules") or [] if "cron" in s),
                       paused=bool(d.get("paused", False)))
        for d in raw.get("deployments") or []]
    unknown = {d.work_pool for d in deployments} - {p.name for p in pools}
    if unknown:
        raise DeployError(f"{path}: deployments use work pool(s) {', '.join(sorted(unknown))} not under work_pools")
    return DeploySpec(pools, deployments)


def api_url() -> str:
    """The server to deploy to: PREFECT_API_URL, which must answer. Without it `prefect deploy`
    would start a temporary server and the deployments would vanish with it."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        raise DeployError("PREFECT_API_URL is not set: start a server (`make ui` or `conductor ui`) and set"
                          " PREFECT_API_URL=http://127.0.0.1:4200/api")
    try:
        ok = httpx.get(f"{url.rstrip('/')}/health", timeout=10).status_code == 200
    except httpx.HTTPError:
        ok = False
    if not ok:
        raise DeployError(f"no Prefect server answers at PREFECT_API_URL={url} (start one with `make ui`)")
    return url


def base_job_template(pool: PoolSpec) -> dict[str, Any]:
    """The worker type's default base job template with the pool's job variables as defaults."""
    from prefect.workers.base import BaseWorker

    worker = BaseWorker.get_worker_class_from_type(pool.type)
    if worker is None:
        raise DeployError(f"work pool {pool.name}: no worker type {pool.type!r} is installed")
    template = copy.deepcopy(worker.get_default_base_job_template())
    properties = template["variables"]["properties"]
    for key, value in pool.job_variables.items():
        if key not in properties:
            raise DeployError(f"work pool {pool.name}: {pool.type} workers have no job variable {key!r}"
                              f" (they have {', '.join(sorted(properties))})")
        properties[key]["default"] = value
    return template


async def _ensure_pools(pools: list[PoolSpec]) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate

    async with get_client() as client:
        for pool in pools:
            await client.create_work_pool(
                WorkPoolCreate(name=pool.name, type=pool.type, description=pool.description or None,
                               base_job_template=base_job_template(pool)),
                overwrite=True)


def ensure_work_pools(pools: list[PoolSpec]) -> None:
    asyncio.run(_ensure_pools(pools))


def apply_deployments(prefect_file: Path = PREFECT_FILE, names: list[str] | None = None) -> str:
    """`prefect --no-prompt deploy` from the repository root; returns its output."""
    prefect = Path(sys.executable).with_name("prefect")
    argv = [str(prefect) if prefect.exists() else "prefect", "--no-prompt", "deploy",
            "--prefect-file", str(Path(prefect_file).resolve())]
    argv += [a for n in names for a in ("--name", n)] if names else ["--all"]
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": os.environ.get("PREFECT_SERVER_ANALYTICS_ENABLED", "false")}
    result = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    if result.returncode != 0 or "Deployment '" not in out:
        tail = "\n".join(out.strip().splitlines()[-15:])
        raise DeployError(f"`prefect deploy` failed (exit {result.returncode}):\n{tail}")
    return out


async def _read_back(spec: DeploySpec) -> list[dict[str, Any]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

    rows = []
    async with get_client() as client:
        found = await client.read_deployments(
            deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[d.name for d in spec.deployments])))
        flows = {f.id: f.name for f in await client.read_flows()}
        for d in sorted(found, key=lambda d: (flows.get(d.flow_id, ""), d.name)):
            crons = [f"{s.schedule.cron} {s.schedule.timezone}" for s in d.schedules
                     if getattr(s.schedule, "cron", None)]
            rows.append({"deployment": f"{flows.get(d.flow_id, '?')}/{d.name}", "work_pool": d.work_pool_name,
                         "schedule": ", ".join(crons), "paused": d.paused})
    return rows


def deploy(prefect_file: Path = PREFECT_FILE, names: list[str] | None = None) -> list[dict[str, Any]]:
    """Create the work pools and apply the deployments (all, or those named) to the server at
    PREFECT_API_URL; returns what the server now holds for them."""
    spec = load_spec(prefect_file)
    if names:
        missing = set(names) - {d.name for d in spec.deployments}
        if missing:
            raise DeployError(f"no deployment named {', '.join(sorted(missing))} in {prefect_file}"
                              f" (there: {', '.join(d.name for d in spec.deployments)})")
        spec = DeploySpec(spec.pools, [d for d in spec.deployments if d.name in names])
    api_url()
    ensure_work_pools(spec.pools)
    apply_deployments(prefect_file, names)
    return asyncio.run(_read_back(spec))
