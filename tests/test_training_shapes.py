"""Strategies over training (the paper's Figure 3): the warehouse's `v_training_shapes` over
rollouts the training sink stored, against a hand count."""

from __future__ import annotations

import pytest

from conductor.trace import Trace
from conductor.workflow import parse
from tasks.training import WarehouseSink
from warehouse.store import TraceStore

DOMAIN_SOURCE = {"math": "MATH", "choice": "MMLU"}
SINGLE = 'model_id = [0]\nsubtasks = ["Solve it."]\naccess_list = [[]]'
VERIFY = 'model_id = [0, 0]\nsubtasks = ["Solve it.", "Check the answer above."]\naccess_list = [[], [0]]'
FAN = ('model_id = [0, 1, 2, 0]\nsubtasks = ["Solve.", "Solve.", "Solve.", "Compare the answers above."]\n'
       'access_list = [[], [], [], [0, 1, 2]]')


def rollout(domain: str, text: str | None, **kw: object) -> Trace:
    about = {"problem_id": f"p-{domain}", "source": DOMAIN_SOURCE[domain], "domain": domain}
    if text is None:
        return Trace(**about, parse_status="missing_list", **kw)
    return Trace(**about, workflow=parse(text, 3), **kw)


def test_shares_per_domain_and_step_match_a_hand_count(tmp_path) -> None:
    sink = WarehouseSink(tmp_path / "wh.duckdb", tmp_path / "staging", run_id="train-x", simulated=True)
    step0 = [rollout("math", SINGLE), rollout("math", SINGLE), rollout("math", FAN), rollout("choice", None)]
    first = rollout("math", FAN)
    step1 = [first, rollout("math", FAN), rollout("math", VERIFY), rollout("choice", SINGLE), rollout("choice", FAN),
             # a recursion round belongs to its first round's rollout: not counted again
             rollout("math", SINGLE, parent_trace_id=first.trace_id, depth=1)]
    for step, traces in ((0, step0), (1, step1)):
        for t in traces:
            sink(t, step)
    sink.close()
    with TraceStore(tmp_path / "wh.duckdb", read_only=True) as store:
        rows = store.query("SELECT step, domain, shape, rollouts, share, mean_steps FROM v_training_shapes"
                           " WHERE run_id = 'train-x' ORDER BY step, domain, shape").to_pylist()
    got = {(r["step"], r["domain"], r["shape"]): (r["rollouts"], r["share"], r["mean_steps"]) for r in rows}
    # Counted by hand: step 0 math = single, single, fan (steps 1 + 1 + 4); choice = unparsed (0 steps).
    # Step 1 math = fan, fan, verify (4 + 4 + 2); choice = single, fan (1 + 4).
    assert got == {
        (0, "choice", "unparsed"): (1, 1.0, 0.0),
        (0, "math", "fan_out_aggregate"): (1, pytest.approx(1 / 3), 2.0),
        (0, "math", "single"): (2, pytest.approx(2 / 3), 2.0),
        (1, "choice", "fan_out_aggregate"): (1, 0.5, 2.5),
        (1, "choice", "single"): (1, 0.5, 2.5),
        (1, "math", "fan_out_aggregate"): (2, pytest.approx(2 / 3), pytest.approx(10 / 3)),
        (1, "math", "verify_refine"): (1, pytest.approx(1 / 3), pytest.approx(10 / 3)),
    }
