"""`--estimate` and `--dry-run` change nothing: the home (every file and its size) is the same
after `conductor train --estimate` in each profile and after `conductor nightly --dry-run`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conductor.cli import app

PROFILES = ("local", "small-real", "production")


def snapshot(home: Path) -> dict[str, int]:
    return {str(p.relative_to(home)): p.stat().st_size if p.is_file() else -1 for p in home.rglob("*")}


# `--set` makes the nightly build its training config to check it: read-only, so small-real's real
# model is named, not unpacked into the home
SET = ["--set", "lora_r=8"]


@pytest.mark.parametrize("argv", [*(["train", "--profile", p, "--estimate"] for p in PROFILES),
                                  *(["nightly", "--profile", p, "--dry-run", "--allow-simulated"] for p in PROFILES),
                                  ["nightly", "--profile", "small-real", "--dry-run", "--allow-simulated", *SET]],
                         ids=[*(f"train-{p}" for p in PROFILES), *(f"nightly-{p}" for p in PROFILES),
                              "nightly-small-real-set"])
def test_an_estimate_or_dry_run_leaves_the_home_unchanged(argv: list[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "warehouse.duckdb").write_bytes(b"")  # a home in use: what is there stays as it is
    before = snapshot(home)
    monkeypatch.delenv("PREFECT_HOME", raising=False)  # as a user's shell: the command sets it under the home
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, (result.output[-3000:], result.exception)
    assert snapshot(home) == before
