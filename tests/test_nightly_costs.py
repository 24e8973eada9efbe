"""The night's spend: unknown stays unknown. A call of unknown price (a worker with no price in
the pool file) makes the $ it is part of unknown (None, printed "unknown", NULL in v_nightly),
never a sum that counts it as $0. Real executor and scripted workers (tests/scripted.py), a real
DuckDB warehouse, the real `conductor-costs` flow."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conductor.data.schema import Problem
from conductor.workflow import Workflow, render
from tests.scripted import ScriptedWorker, pool_of, spec

ONE_STEP = render(Workflow(model_id=(0,), subtasks=("Solve it.",), access_list=((),)))
PROBLEMS = [Problem(id=f"p{i}", source="test", domain="freeform", question=f"What is {i} plus 1?", answer=str(i + 1))
            for i in range(2)]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """Evaluation `ev`: method `priced` (2 calls at $0.002) and `unpriced` (2 calls of unknown
    price); evaluation `ev-priced`: the priced method alone."""
    from conductor.executor import RunOptions, run_plan
    from conductor.types import Task
    from conductor.verify import Verdict
    from warehouse.records import Run
    from warehouse.store import TraceStore

    workers = {"priced": ScriptedWorker(spec("a"), cost=0.002), "unpriced": ScriptedWorker(spec("b", prices=None), cost=None)}
    db = tmp_path / "w.duckdb"
    with TraceStore(db) as store:
        store.write_runs([Run(run_id="ev", kind="evaluation", status="finished"),
                          Run(run_id="ev-priced", kind="evaluation", status="finished")])
        for method, worker in workers.items():
            for evaluation in ("ev", "ev-priced") if method == "priced" else ("ev",):
                run_id = f"{evaluation}/{method}"
                traces = [asyncio.run(run_plan(ONE_STEP, Task.of(p), pool_of(worker), RunOptions(run_id=run_id))).model_copy(
                    update={"verdict": Verdict(correct=True, reason="graded", method="test")}) for p in PROBLEMS]
                store.write_runs([Run(run_id=run_id, kind="eval", method=method, status="finished",
                                      params={"evaluation_id": evaluation, "repeat": 0, "spec": method})])
                store.write_traces(traces)
    return db


def test_a_call_of_unknown_price_makes_the_spend_unknown_not_zero(warehouse: Path) -> None:
    from warehouse import nightly as wh
    from warehouse.store import TraceStore

    with TraceStore(warehouse, read_only=True) as store:
        assert wh.spend(store, ["ev-priced"]) == pytest.approx(0.004)
        assert wh.spend(store, ["ev/unpriced"]) is None
        assert wh.spend(store, ["ev"]) is None  # was $0.004: the unpriced calls counted as $0
        assert wh.spend(store, ["no-such-run"]) == 0.0  # no calls: nothing was spent


def test_the_gates_paired_outcomes_keep_an_unknown_cost_unknown(warehouse: Path) -> None:
    from warehouse import nightly as wh
    from warehouse.store import TraceStore

    with TraceStore(warehouse, read_only=True) as store:
        outcomes = wh.question_outcomes(store, "ev")
    assert outcomes["priced"]["cost_usd"] == {"p0": pytest.approx(0.002), "p1": pytest.approx(0.002)}
    assert outcomes["unpriced"]["cost_usd"] == {"p0": None, "p1": None}  # was 0.0 each
    assert outcomes["unpriced"]["correct"] == {"p0": True, "p1": True}


def test_the_costs_flow_and_the_nightly_row_say_unknown(warehouse: Path, prefect_harness: Path) -> None:
    from flows.nightly import Costs, nightly_costs_flow
    from tasks.nightly import nightly_run
    from warehouse.lifecycle import ended
    from tests.test_training_flow import _messages
    from warehouse.store import TraceStore

    known = nightly_costs_flow("ev-priced", db_path=str(warehouse))
    assert known.usd_evaluation == pytest.approx(0.004) and known.usd_spent == pytest.approx(0.004)
    state = nightly_costs_flow("ev", db_path=str(warehouse), return_state=True)
    costs = state.result()
    assert costs.usd_evaluation is None and costs.usd_spent is None
    assert "costs: evaluation unknown, training $0.0000" in _messages(state.state_details.flow_run_id)
    by_method = {r["method"]: r for r in costs.rows}
    assert by_method["unpriced"]["cost_usd"] is None and by_method["unpriced"]["usd_per_question"] is None
    assert by_method["priced"]["cost_usd"] == pytest.approx(0.004)
    assert Costs(rows=[], usd_evaluation=0.5, usd_training=None).usd_spent is None

    with TraceStore(warehouse) as store:
        store.write_runs([ended(nightly_run("night", {"usd_spent": costs.usd_spent}), "finished"),
                          ended(nightly_run("night-known", {"usd_spent": known.usd_spent}), "finished")])
        rows = store.query("SELECT run_id, usd_spent FROM v_nightly ORDER BY run_id").to_pylist()
    assert rows == [{"run_id": "night", "usd_spent": None}, {"run_id": "night-known", "usd_spent": pytest.approx(0.004)}]
