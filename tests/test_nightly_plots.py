"""An evaluation in which no worker was called (two Conductors that wrote no parseable workflow,
as a nightly with tiny training and no baselines can produce) still writes its plots."""

from __future__ import annotations

from conductor.evaluation.report import PLOT_FILES, write_plots


def test_plots_without_any_worker_call(tmp_path) -> None:  # noqa: ANN001
    scores = [{"method": m, "repeat": 0, "benchmark": "synthetic_math", "questions": 4, "correct": 0, "cost_usd": 0.0,
               "simulated": True} for m in ("model:conductor-v1@sim", "model:conductor-v2@sim")]
    figures = {"scores": scores, "usage": [], "mix": [{"n_steps": 0, "shape": "unparsed", "questions": 8}]}
    written = write_plots(figures, tmp_path, simulated=True)
    assert {p.name for p in written} == set(PLOT_FILES) - {PLOT_FILES[2]}
    assert all(p.is_file() for p in written)
