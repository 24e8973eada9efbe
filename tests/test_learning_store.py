"""benchmarks/learning.py's Store: a measured row is saved and printed (its print line once raised
TypeError, a missing `+` calling a string, so no row of any run could be stored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.learning import Store


def test_store_saves_and_prints_a_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "local" / "results.json")
    store.put({"method": "per-domain oracle router", "n": 4, "accuracy": 0.5, "format_rate": 1.0,
               "usd_per_question": None, "calls_per_question": 1.0, "cpu_min": 0.25})
    saved = json.loads((tmp_path / "local" / "results.json").read_text())
    assert saved["per-domain oracle router"]["accuracy"] == 0.5
    assert "per-domain oracle router: accuracy 0.500, format 1.00, $ unknown/q, 1.00 calls/q, 0.2 CPU-min" in capsys.readouterr().out
