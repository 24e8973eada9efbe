"""The `conductor` command: output, JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from conductor.cli import app
from conductor.data.bank import sample_problems
from conductor.simulation import simulated_note

runner = CliRunner()
POOL = "deployments/pools/local.yaml"


def test_help_explains_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("ask", "solve", "pool"):
        assert cmd in result.output


def test_pool_show_lists_workers_in_prompt_order():
    result = runner.invoke(app, ["pool", "show", POOL])
    assert result.exit_code == 0, result.output
    assert result.output.index("sim-generalist") < result.output.index("sim-small")


def test_ask_with_a_plan_runs_it_and_prints_steps(tmp_path):
    question = sample_problems()[0].question
    plan = tmp_path / "plan.txt"
    plan.write_text('model_id = [2, 0]\nsubtasks = ["Solve it", "Check it"]\naccess_list = [[], "all"]\n')
    result = runner.invoke(app, ["ask", question, "--pool", POOL, "--plan", str(plan), "--json"])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    assert [s["worker_id"] for s in trace["steps"]] == ["sim-mathematician", "sim-generalist"]
    assert "boxed" in trace["answer"]


def test_ask_plan_from_stdin_and_default_plan():
    q = sample_problems()[5].question
    result = runner.invoke(app, ["ask", q, "--pool", POOL, "--plan", "-"], input="model_id=[1]\nsubtasks=['go']\naccess_list=[[]]")
    assert result.exit_code == 0 and "sim-coder" in result.output and "answer" in result.output
    result = runner.invoke(app, ["ask", q, "--pool", POOL, "--json"])
    assert [s["worker_id"] for s in json.loads(result.stdout)["steps"]] == ["sim-generalist", "sim-coder", "sim-mathematician", "sim-generalist"]


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    lines = [l for l in result.output.strip().splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    for n in needles:
        assert n in lines[0], lines[0]


def test_bad_inputs_are_one_line_errors(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("workers: [\n")
    one_line_error(runner.invoke(app, ["pool", "show", str(bad_yaml)]), "not valid YAML")
    missing_field = tmp_path / "m.yaml"
    missing_field.write_text("workers:\n  - id: a\n")
    one_line_error(runner.invoke(app, ["ask", "q", "--pool", str(missing_field)]), "workers.0.provider")
    unknown = tmp_path / "u.yaml"
    unknown.write_text("workers:\n  - {id: a, provider: telepathy}\n")
    one_line_error(runner.invoke(app, ["ask", "q", "--pool", str(unknown)]), "unknown provider 'telepathy'")
    plan = tmp_path / "p.txt"
    plan.write_text("model_id=[9]\nsubtasks=['x']\naccess_list=[[]]")
    one_line_error(runner.invoke(app, ["ask", "q", "--pool", POOL, "--plan", str(plan)]), "unknown_worker")
    one_line_error(runner.invoke(app, ["ask", "q", "--pool", POOL, "--plan", str(tmp_path / "nope")]), "cannot read")
    one_line_error(runner.invoke(app, ["pool", "show", str(tmp_path / "nope.yaml")]), "does not exist")


def test_solve_prints_a_summary_and_writes_traces(tmp_path):
    out = tmp_path / "traces.jsonl"
    result = runner.invoke(app, ["solve", "--pool", POOL, "--limit", "4", "--shape", "verify", "--out", str(out)])
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())  # the table's title wraps
    assert f"template-verify@local-simulated{simulated_note(True)}" in words and "all" in result.output
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(rows) == 4 and all(len(r["steps"]) == 2 for r in rows)


def test_a_checkout_keeps_its_data_in_its_own_dot_conductor(tmp_path, monkeypatch):
    """`make run` writes under the checkout's .conductor; `conductor sql` run there must look there."""
    from conductor.config import REPO_ROOT, Settings, default_home

    monkeypatch.delenv("CONDUCTOR_HOME", raising=False)
    monkeypatch.chdir(REPO_ROOT / "docs")
    assert default_home() == REPO_ROOT / ".conductor"
    assert Settings().warehouse_path == REPO_ROOT / ".conductor" / "warehouse.duckdb"
    monkeypatch.chdir(tmp_path)  # outside the checkout: the user's home
    assert default_home() == Path.home() / ".conductor"
    monkeypatch.setenv("CONDUCTOR_HOME", str(tmp_path / "mine"))
    assert Settings().home == tmp_path / "mine"


def test_ask_knows_the_generated_bank_the_local_profile_trains_on():
    """A trained Conductor is tried on bank questions: the simulated workers must answer them."""
    from conductor.training.problems import bank_splits

    problem = next(p for p in bank_splits().test if p.domain == "math")
    result = runner.invoke(app, ["ask", problem.question, "--pool", POOL, "--plan", "-", "--json"],
                           input="model_id=[2]\nsubtasks=['Solve it']\naccess_list=[[]]")
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    assert trace["domain"] == "math" and trace["problem_id"] == problem.id
    assert "could not find" not in trace["answer"] and "boxed" in trace["answer"]
