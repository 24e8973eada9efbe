"""`conductor nightly`: bad input is one line (exit 2) before any server, training or call."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conductor.cli import app

runner = CliRunner()


@pytest.mark.parametrize(("args", "message"), [
    (["--steps", "0"], "steps must be at least 1"),
    (["--heldout", "0"], "heldout_problems must be at least 1"),
    (["--run-key", "../etc"], "run_key '../etc'"),
    (["--confidence", "1.5"], "confidence must be in [0.5, 1)"),
    (["--gate-method", "vibes"], "--gate-method 'vibes'"),
    (["--pool", "/nonexistent/pool.yaml"], "no such file"),
    (["--baseline", "single:nobody"], "no worker 'nobody'"),
])
def test_bad_input_is_one_line_and_starts_nothing(args: list[str], message: str, monkeypatch) -> None:  # noqa: ANN001
    import flows.prefect_server

    def no_server() -> None:
        raise AssertionError("a Prefect server was started for bad input")

    monkeypatch.setattr(flows.prefect_server, "tied_prefect_server", no_server)
    result = runner.invoke(app, ["nightly", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in result.output
