"""Quiet by default (issue 33): a night's terminal gets one line per stage and per GRPO chunk, not
Prefect's line per finished task nor the trainers' per-step log dicts."""

from __future__ import annotations

import logging

from conductor.simulation import simulated_note
from conductor.training.result import TrainResult
from flows.terminal import HideCompletedTaskRuns, HideCrashesBySignals
from flows.training import chunk_line


def _record(name: str, level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def test_only_a_task_runs_completed_line_is_hidden() -> None:
    hide = HideCompletedTaskRuns()
    assert not hide.filter(_record("prefect.task_runs", logging.INFO, "Finished in state Completed()"))
    for kept in (_record("prefect.task_runs", logging.INFO, "Finished in state Cached(type=COMPLETED)"),
                 _record("prefect.task_runs", logging.ERROR, "Finished in state Failed('boom')"),
                 _record("prefect.task_runs", logging.INFO, "grpo step 50/200: reward 0.6"),
                 _record("prefect.flow_runs", logging.INFO, "Finished in state Completed()")):
        assert hide.filter(kept), kept.getMessage()


def test_a_chunk_is_one_line_with_its_mean_reward_and_kl() -> None:
    chunk = TrainResult(model_dir="run/model", steps=50, stop_reason="chunk_end", usd=12.5, calls=400, rollouts=200,
                        wall_s=60.0, history=[{"step": 49.0, "reward": 0.5, "kl": 0.01},
                                              {"step": 50.0, "reward": 0.7, "kl": 0.03}], simulated=True)
    line = chunk_line(chunk, 200)
    assert "\n" not in line
    assert line.startswith("grpo step 50/200: reward 0.6, kl 0.02 (means over the chunk's 2 logged steps)")
    assert line.endswith(f"stop=chunk_end, spend $12.50{simulated_note(True)}")
    no_kl = chunk.model_copy(update={"history": [{"step": 1.0, "reward": 0.5}]})
    assert "kl n/a" in chunk_line(no_kl, 200)  # beta 0: no kl


def test_only_a_runs_lines_about_its_crash_by_a_signal_are_hidden() -> None:
    hide = HideCrashesBySignals()
    for hidden in (_record("prefect.task_runs", logging.ERROR, "Crash detected! Execution was aborted by an interrupt signal."),
                   _record("prefect.flow_runs", logging.INFO,
                           "Finished in state Crashed('Execution was aborted by a termination signal.')")):
        assert not hide.filter(hidden), hidden.getMessage()
    for kept in (_record("prefect.flow_runs", logging.ERROR, "Crash detected! Request failed while attempting to contact"
                         " the server"),
                 _record("prefect.flow_runs", logging.INFO, "Finished in state Cancelled('interrupted')"),
                 _record("prefect.task_runs", logging.ERROR, "Finished in state Failed('boom')")):
        assert hide.filter(kept), kept.getMessage()


def _raised_while_stopping() -> BaseException:
    """What Prefect's engine raises when a SIGTERM lands as a task run begins: an error raised
    while the stop was being handled (seen in a fresh-clone CI run of test_nightly_interrupt)."""
    from prefect.exceptions import TerminationSignal

    try:
        try:
            raise TerminationSignal(signal=15)
        except TerminationSignal:
            raise ValueError("Task run is not set")  # noqa: B904 - its context is the point
    except ValueError as exc:
        return exc


def test_an_error_raised_while_a_stop_was_handled_is_hidden_with_its_traceback() -> None:
    hide = HideCrashesBySignals()
    err = _raised_while_stopping()
    with_trace = _record("prefect.flow_runs", logging.ERROR, "Encountered exception during execution:")
    with_trace.exc_info = (type(err), err, err.__traceback__)
    assert not hide.filter(with_trace)
    assert not hide.filter(_record("prefect.flow_runs", logging.INFO, "Finished in state Failed('Flow run encountered"
                                   " an exception: ValueError: Task run is not set')"))
    # the same error with no stop behind it is a task's own failure, and stays
    plain = ValueError("bad input")
    failed = _record("prefect.task_runs", logging.ERROR, "Task run failed with exception: ValueError('bad input')")
    failed.exc_info = (ValueError, plain, None)
    assert hide.filter(failed)
    ours = _record("conductor.nightly", logging.ERROR, "stage failed")
    ours.exc_info = (type(err), err, err.__traceback__)
    assert hide.filter(ours)  # only Prefect's own lines
