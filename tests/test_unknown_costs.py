"""Unknown stays unknown: a held-out evaluation whose worker has no known price reports its $ per
question as unknown (None, not logged, printed "unknown"), never as $0. Real executor, scripted
workers (tests/scripted.py), no model."""

from __future__ import annotations

import asyncio

from conductor.data.schema import Problem
from conductor.training.dataset import PromptRow
from conductor.training.evaluate import score_texts
from conductor.workflow import Workflow, render
from tests.scripted import ScriptedWorker, pool_of, spec

ONE_STEP = render(Workflow(model_id=(0,), subtasks=("Solve it.",), access_list=((),)))
PROBLEMS = [Problem(id=f"p{i}", source="test", domain="freeform", question=f"What is {i} plus 1?", answer=str(i + 1))
            for i in range(2)]


def _score(*workers: ScriptedWorker):  # noqa: ANN202
    pool = pool_of(*workers)
    rows = [PromptRow(problem=p, pool_ids=(w.spec.id,), recursion=False) for p, w in zip(PROBLEMS, workers)]
    return asyncio.run(score_texts([ONE_STEP] * len(rows), rows, pool, examples=False))


def test_priced_calls_give_dollars_per_question() -> None:
    result = _score(ScriptedWorker(spec("a"), cost=0.002), ScriptedWorker(spec("b"), cost=0.004))
    assert result.usd_per_question == 0.003
    assert result.metrics()["eval_usd_per_question"] == 0.003 and result.usd_text == "$0.0030"


def test_a_question_of_unknown_cost_makes_the_dollars_unknown_not_zero() -> None:
    result = _score(ScriptedWorker(spec("a"), cost=0.002), ScriptedWorker(spec("b", prices=None), cost=None))
    assert [t.usage.cost_usd for t in result.traces] == [0.002, None]
    assert result.usd_per_question is None  # was (0.002 + 0) / 2: the unpriced call counted as $0
    assert "eval_usd_per_question" not in result.metrics() and result.usd_text == "unknown"
    assert result.metrics()["eval_format_rate"] == 1.0  # the known figures are still reported


def test_an_evaluation_with_an_unpriced_worker_reports_its_dollars_as_unknown(tmp_path) -> None:  # noqa: ANN001
    """Through the real warehouse (v_repeat_scores, costs_by_benchmark): the results table, the
    cost table, the MLflow metrics and the cost plot's points of a method with a call of unknown
    price say "unknown" or leave it out, never a partial sum shown as its cost."""
    from conductor.evaluation.report import costs_markdown, method_points, scores_of, table_markdown
    from conductor.executor import RunOptions, run_plan
    from conductor.types import Task
    from conductor.verify import Verdict
    from registry.evaluation import evaluation_metrics
    from warehouse import evaluation as wh
    from warehouse.records import Run
    from warehouse.store import TraceStore

    workers = {"priced": ScriptedWorker(spec("a"), cost=0.002), "unpriced": ScriptedWorker(spec("b", prices=None), cost=None)}
    with TraceStore(tmp_path / "w.duckdb") as store:
        store.write_runs([Run(run_id="ev", kind="evaluation", status="finished")])
        for method, worker in workers.items():
            traces = [asyncio.run(run_plan(ONE_STEP, Task.of(p), pool_of(worker), options=RunOptions(run_id=method))).model_copy(
                update={"verdict": Verdict(correct=False, reason="graded wrong", method="test")}) for p in PROBLEMS]
            store.write_runs([Run(run_id=method, kind="eval", method=method, status="finished",
                                  params={"evaluation_id": "ev", "repeat": 0, "spec": method})])
            store.write_traces(traces)
        scores, by_benchmark = wh.repeat_scores(store, "ev"), wh.costs_by_benchmark(store, "ev")
    assert {r["method"]: r["cost_known"] for r in scores} == {"priced": True, "unpriced": False}
    table = table_markdown({"scores": scores}, simulated=False)
    assert [line.split("|")[-2].strip() for line in table.splitlines() if line.startswith("| p") or line.startswith("| u")] \
        == ["0.0020", "unknown"]
    costs = {line.split("|")[1].strip(): line.split("|")[5:8] for line in costs_markdown(by_benchmark, [], simulated=False)
             .splitlines() if line.startswith("| p") or line.startswith("| u")}
    assert [c.strip() for c in costs["priced"]] == ["0.0040", "0.00200", "–"]  # nothing right: no $/correct
    assert [c.strip() for c in costs["unpriced"]] == ["≥ 0.0000 (some prices unknown)", "unknown", "unknown"]
    metrics = evaluation_metrics(scores)
    assert metrics["usd_per_question/priced"] == 0.002 and "usd_per_question/unpriced" not in metrics
    assert [p.method for p in method_points(scores_of(scores))] == ["priced"]
