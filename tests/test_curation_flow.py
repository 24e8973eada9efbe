"""The Prefect curation flow, offline under the session's test harness: a second run with the
same inputs hits the cache for every source and for the curation step."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from conductor.data.curate import CurationConfig
from flows.curation import curation_flow


async def _task_states(flow_run_id: object, loads: int = 10) -> dict[str, str]:
    """Task run name -> final state name. Prefect 3 reports task runs through its events, after the
    flow returns: wait (generously, the machine is loaded) until every load, the curation and the
    write are recorded in a final state."""
    deadline = time.monotonic() + 120
    async with get_client() as client:
        while True:
            runs = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
            states = {run.name: run.state for run in runs if run.state}
            names = list(states)
            done = all(s.is_final() for s in states.values())
            if done and sum(n.startswith("load-") for n in names) >= loads and any(
                    n.startswith("curate") for n in names) and any(n.startswith("write-curated") for n in names):
                break
            if time.monotonic() > deadline:
                break  # the assertions below say what is missing
            await asyncio.sleep(0.5)
        artifacts = await client.read_artifacts()
    assert any(a.key == "curation-manifest" and a.type == "table" for a in artifacts)
    return {name: state.name for name, state in states.items()}


def test_flow_runs_then_hits_cache(prefect_harness: Path, tmp_path: Path) -> None:
    first = curation_flow(out=str(tmp_path / "one"), config=CurationConfig(total=12), return_state=True)
    assert first.is_completed()
    second = curation_flow(out=str(tmp_path / "two"), config=CurationConfig(total=12), return_state=True)
    assert second.is_completed()
    states_1 = asyncio.run(_task_states(first.state_details.flow_run_id))
    states_2 = asyncio.run(_task_states(second.state_details.flow_run_id))
    loads = [n for n in states_2 if n.startswith("load-")]
    assert len(loads) == 10
    assert all(states_1[n] == "Completed" for n in loads)
    assert all(states_2[n] == "Cached" for n in loads), states_2
    assert [s for n, s in states_2.items() if n.startswith("curate")] == ["Cached"]
    one = (tmp_path / "one" / "train.jsonl").read_bytes()
    assert one == (tmp_path / "two" / "train.jsonl").read_bytes() and len(one.splitlines()) == 12
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert manifest["sources"]["math"]["contaminated"] == 1
    assert (prefect_harness / "prefect" / "results").is_dir()


def test_bank_option_is_passed_fingerprinted_and_cached(prefect_harness: Path, tmp_path: Path) -> None:
    """`bank=True` adds the generated sources (fingerprinted by generator parameters and code, not by
    a file, which they do not have); a rerun is Cached; the result differs from `bank=False`."""
    from conductor.data.sources import BANK_SOURCES
    from tasks.curate import generator_version, input_fingerprint

    config = CurationConfig(bank=True)
    prints = {name: input_fingerprint(name, config) for name in BANK_SOURCES}
    assert all(f"generator={generator_version()}" in p and "seed=0" in p for p in prints.values()), prints

    first = curation_flow(out=str(tmp_path / "bank1"), config=CurationConfig(total=12, bank=True), return_state=True)
    second = curation_flow(out=str(tmp_path / "bank2"), config=CurationConfig(total=12, bank=True), return_state=True)
    assert first.is_completed() and second.is_completed()
    states_1 = asyncio.run(_task_states(first.state_details.flow_run_id, 10 + len(BANK_SOURCES)))
    states_2 = asyncio.run(_task_states(second.state_details.flow_run_id, 10 + len(BANK_SOURCES)))
    assert {f"load-{name}" for name in BANK_SOURCES} <= set(states_2), states_2
    loads = [n for n in states_2 if n.startswith("load-")]
    assert len(loads) == 10 + len(BANK_SOURCES)
    assert all(states_2[n] == "Cached" for n in loads), states_2
    assert [s for n, s in states_2.items() if n.startswith("curate")] == ["Cached"]
    # the bank changes the curation's inputs: its first run computes (no entry of a plain run is reused)
    assert [s for n, s in states_1.items() if n.startswith("curate")] == ["Completed"]

    with_bank = (tmp_path / "bank2" / "train.jsonl").read_bytes()
    assert with_bank == (tmp_path / "bank1" / "train.jsonl").read_bytes()
    plain = curation_flow(out=str(tmp_path / "plain"), config=CurationConfig(total=12, bank=False))
    assert len(plain.files) and not any(s.startswith("synthetic_") for s in plain.sources)
    without = (tmp_path / "plain" / "train.jsonl").read_bytes()
    assert len(without.splitlines()) == 12 and len(with_bank.splitlines()) > 12
    rows = [json.loads(line) for line in with_bank.splitlines()]
    assert {r["source"] for r in rows} >= set(BANK_SOURCES)


def test_flow_and_cli_defaults_and_help_are_the_curation_configs() -> None:
    """One source of truth: `CurationConfig`'s field defaults and descriptions (nothing restated):
    the flow takes the config itself, the CLI's options take their defaults and help from it."""
    import inspect

    import typer.main

    from conductor.cli import app

    fields = CurationConfig.model_fields
    flow_params = inspect.signature(curation_flow.fn).parameters
    assert list(flow_params) == ["out", "config", "db_path"] and "CurationConfig" in str(flow_params["config"].annotation)
    command = typer.main.get_command(app).commands["data"].commands["curate"]  # type: ignore[attr-defined]
    cli = {p.name: p for p in command.params}
    for name in ("profile", "total", "seed", "on_error", "bank"):
        assert cli[name].default == fields[name].default, name
        assert cli[name].help == fields[name].description, name
