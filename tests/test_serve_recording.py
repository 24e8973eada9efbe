"""The server's trace stager keeps what it could not stage and stages it at the next flush."""

from __future__ import annotations

from conductor.trace import Trace
from server.recording import TraceStager
from warehouse.staging import pending, read_batch


async def test_a_failed_flush_keeps_the_traces_for_the_next(tmp_path):
    blocker = tmp_path / "staging"
    blocker.write_text("a file where the staging directory should be")  # staging fails
    stager = TraceStager(blocker, interval_s=60)
    traces = [Trace(problem_id=f"p{i}", source="serve", domain="freeform") for i in range(3)]
    for t in traces:
        stager.add(t)
    await stager.flush()
    assert stager.staged == 0
    blocker.unlink()  # the disk is back
    await stager.flush()
    assert stager.staged == 3
    [batch] = pending(blocker)
    assert sorted(read_batch(batch).traces.column("trace_id").to_pylist()) == sorted(t.trace_id for t in traces)
