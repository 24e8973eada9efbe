"""The bank as data sources: the loader (generated, or a bank file), curation with and without the
bank, and `conductor data bank`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conductor.cli import app
from conductor.data.curate import CurationConfig, run_curation
from conductor.data.loaders import load_source
from conductor.data.schema import Problem
from conductor.data.sources import BANK_SOURCES, SOURCES, TRAIN_SOURCES
from conductor.data.synthetic import generate_bank, split_of

runner = CliRunner()


def test_bank_sources_are_registered_beside_the_hub_sources() -> None:
    assert {name: s.domain for name, s in BANK_SOURCES.items()} == {
        "synthetic_math": "math", "synthetic_choice": "choice", "synthetic_freeform": "freeform",
        "synthetic_code": "code"}
    assert all(s.role == "train" and s.generated for s in BANK_SOURCES.values())
    assert not set(BANK_SOURCES) & set(SOURCES)  # the hub sources and their quota are unchanged
    assert {s.name for s in TRAIN_SOURCES} == {"math", "mmlu", "rlpr", "lcb_v1"}


def test_generated_source_loads_the_train_split_of_its_domain() -> None:
    report = load_source("synthetic_choice")
    assert report.rows == 600 and report.errors == []
    assert 400 < len(report.problems) < 560
    assert all(p.domain == "choice" and split_of(p.id) == "train" for p in report.problems)


def test_cli_bank_writes_the_bank_and_the_loader_reads_it_back(tmp_path: Path) -> None:
    out = tmp_path / "bank.jsonl"
    result = runner.invoke(app, ["data", "bank", "--out", str(out), "--n", "120", "--seed", "5"])
    assert result.exit_code == 0, result.output
    written = [Problem.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [p.model_dump() for p in written] == [p.model_dump() for p in generate_bank(120, seed=5)]
    report = load_source("synthetic_code", out)
    expected = [p for p in written if p.domain == "code" and split_of(p.id) == "train"]
    assert [p.model_dump() for p in report.problems] == [p.model_dump() for p in expected]
    assert report.input_sha256 and report.rows == 30  # every code row read; held-out ones dropped

    heldout = tmp_path / "heldout.jsonl"
    assert runner.invoke(app, ["data", "bank", "--out", str(heldout), "--n", "120", "--seed", "5",
                               "--split", "heldout"]).exit_code == 0
    assert all(json.loads(line)["meta"]["split"] == "heldout" for line in heldout.read_text().splitlines())
    bad = runner.invoke(app, ["data", "bank", "--out", str(heldout), "--split", "test"])
    assert bad.exit_code == 2 and "error:" in bad.output


@pytest.fixture(scope="module")
def curated_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    plain, with_bank = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("bank")
    run_curation(CurationConfig(), plain)
    run_curation(CurationConfig(bank=True), with_bank)
    return plain, with_bank


def _train(out: Path) -> list[Problem]:
    return [Problem.model_validate_json(line) for line in (out / "train.jsonl").read_text().splitlines()]


def test_curation_adds_the_banks_train_split_only_when_asked(curated_pair: tuple[Path, Path]) -> None:
    plain, with_bank = curated_pair
    before, after = _train(plain), _train(with_bank)
    assert not any(p.source.startswith("synthetic_") for p in before)
    real_after = [p for p in after if not p.source.startswith("synthetic_")]
    assert [p.id for p in real_after] == [p.id for p in before]  # the real sources are untouched
    synthetic = [p for p in after if p.source.startswith("synthetic_")]
    assert {p.domain for p in synthetic} == {"math", "choice", "freeform", "code"}
    assert len(synthetic) > 1500
    assert all(split_of(p.id) == "train" for p in synthetic)
    manifest = json.loads((with_bank / "manifest.json").read_text())
    assert manifest["config"]["bank"] is True
    assert manifest["sources"]["synthetic_code"]["selected"] == sum(p.domain == "code" for p in synthetic)
    # code problems keep what the simulated pool and the verifier need through the JSONL round trip
    code = next(p for p in synthetic if p.domain == "code")
    assert code.reference_solution and code.meta["wrong_solutions"] and code.tests
