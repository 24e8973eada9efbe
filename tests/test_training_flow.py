"""The Prefect training flow for real: GRPO in chunks (each a task that resumes from the last
checkpoint), then one MLflow run registered as conductor@challenger."""

from __future__ import annotations

import logging
from pathlib import Path

import mlflow

from conductor.training.config import local_profile
from conductor.training.problems import bank_splits, take_per_domain
from conductor.training.warm import warm_started_tiny
from warehouse.store import TraceStore


def test_training_flow_runs_chunks_and_registers(tmp_path, prefect_harness, monkeypatch, recwarn) -> None:
    from flows.training import TrainingRequest, training_flow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    train = take_per_domain(bank_splits().train, 16)
    model = warm_started_tiny(local_profile(tmp_path / "warm", sft_epochs=2.0, sft_problems=16), train, copies=2,
                              hidden_size=32, num_hidden_layers=1)
    overrides = {"model_name_or_path": str(model), "max_steps": 3, "per_device_train_batch_size": 4,
                 "num_generations": 2, "max_completion_length": 32, "eval_every": 0, "early_stopping_patience": 0}
    out = tmp_path / "run"
    trainer_lines: list[str] = []  # what transformers' Trainer logs (its logger's filters apply first)
    listener = logging.Handler()
    listener.emit = lambda record: trainer_lines.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("transformers.trainer").addHandler(listener)
    try:
        state = training_flow(TrainingRequest(output_dir=str(out), chunk_steps=1, overrides=overrides), return_state=True)
    finally:
        logging.getLogger("transformers.trainer").removeHandler(listener)
    registered = state.result()
    # TRL's deprecated-property warning (on every GRPO generation) is silenced during training
    assert [str(w.message) for w in recwarn if "is_gradient_checkpointing" in str(w.message)] == []
    # The second chunk resumed from the first's checkpoint: the tied head is not reported missing.
    assert [line for line in trainer_lines if "missing keys" in line] == []
    # No bytecode in the flow's log (the warm-start test below says why); the per-step figures are
    # not in it either (quiet by default: they are MLflow's and the warehouse's), one line a chunk is.
    logged = _messages(state.state_details.flow_run_id)
    assert _bytecode(logged) == [], _bytecode(logged)[:5]
    assert [m for m in logged if m.startswith("grpo step=")] == [], logged
    client = mlflow.MlflowClient(uri)
    # The chunks follow the run's one learning-rate schedule, cosine over its 3 steps: step 2 trains
    # at 3/4 of the profile's rate, (1 + cos(pi/3)) / 2. A chunk trained as a run of its own (to
    # step 2) used (1 + cos(pi/2)) / 2 = 1/2, and annealed to 0 at every chunk's end.
    rate = {m.step: m.value for m in client.get_metric_history(registered.run_id, "learning_rate")}
    assert abs(rate[2] - local_profile(tmp_path).learning_rate * 0.75) < 1e-9, rate
    # Three chunks, each ending in a checkpoint the next one resumed from.
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2", "checkpoint-3"]
    assert len(client.get_metric_history(registered.run_id, "reward")) == 3
    # eval_every=0: never evaluated on held-out problems, so no best held-out accuracy is logged
    # (it was logged as 0.0, which reads as "evaluated, nothing right").
    summary = client.get_run(registered.run_id).data.metrics
    assert "steps_done" in summary and "best_eval_accuracy" not in summary
    assert str(client.get_model_version_by_alias("conductor", "challenger").version) == registered.version
    # Both chunks' rollouts are in the warehouse under one finished `train` run with the MLflow id.
    with TraceStore(prefect_harness / "warehouse.duckdb", read_only=True) as store:
        rows = store.query("SELECT run_id, status, simulated FROM runs WHERE kind = 'train' AND mlflow_run_id = ?",
                           [registered.run_id]).to_pylist()
        assert len(rows) == 1 and rows[0]["status"] == "finished" and rows[0]["simulated"] is True
        n = store.query("SELECT count(*) AS n FROM traces WHERE run_id = ?", [rows[0]["run_id"]]).to_pylist()
        assert n == [{"n": 3 * 4}]
        # Each chunk's steps are on the run's curve (one row per step, 0 = before the first update).
        curve = store.query("SELECT step FROM v_training_curves WHERE run_id = ? ORDER BY step",
                            [rows[0]["run_id"]]).to_pylist()
        assert [r["step"] for r in curve] == [0, 1, 2]


def test_the_warm_start_task_logs_sfts_figures_and_no_bytecode(tmp_path, prefect_harness) -> None:
    """`datasets` fingerprints TRL's dataset transforms with dill, which reads `dis.dis` back
    through a redirected stdout. Under a flow's log_prints, Prefect took those prints for log
    lines: dill read nothing and the run's log got the bytecode. The task keeps prints as prints
    and logs SFT's figures itself."""
    from prefect import flow

    from tasks.training import warm_start_task

    train = take_per_domain(bank_splits().train, 8)
    tiny_sft = {"sft_problems": 8, "sft_copies": 1, "sft_epochs": 1.0}

    @flow(log_prints=True)
    def warm_start_flow() -> str:
        print("a print in the flow is a log line")
        return warm_start_task(profile="local", output_dir=str(tmp_path / "run"), overrides=tiny_sft, train=train)

    state = warm_start_flow(return_state=True)
    assert (Path(state.result()) / "config.json").is_file()
    logged = _messages(state.state_details.flow_run_id)
    assert "a print in the flow is a log line" in logged  # the flow's log_prints is on
    assert _bytecode(logged) == [], _bytecode(logged)[:5]
    sft = [m for m in logged if m.startswith("sft ")]
    assert sft and "train_loss=" in sft[-1] and "step=" in sft[-1], logged


def _figure(message: str, name: str) -> float:
    """A figure of a `grpo step=1 loss=... learning_rate=...` log line."""
    return float(next(part.split("=", 1)[1] for part in message.split() if part.startswith(f"{name}=")))


def _messages(flow_run_id) -> list[str]:  # noqa: ANN001
    """The flow run's log messages (its tasks' included), read back from the Prefect server."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.client.schemas.sorting import LogSort
    from prefect.logging.handlers import APILogHandler

    async def read() -> list[str]:
        await APILogHandler.aflush()  # records reach the server in batches
        out: list[str] = []
        async with get_client() as client:
            flt = LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
            while page := await client.read_logs(log_filter=flt, limit=200, offset=len(out), sort=LogSort.TIMESTAMP_ASC):
                out += [r.message for r in page]
        return out

    return asyncio.run(read())


def _bytecode(messages: list[str]) -> list[str]:
    return [m for m in messages if any(op in m for op in ("LOAD_FAST", "LOAD_GLOBAL", "RETURN_VALUE", "RESUME "))]
