"""The effort knob where a user meets the Conductor outside the server: `conductor ask --effort`
and the `?effort=LEVEL` suffix of the conductor: and template: evaluation methods (the level is
stated in the Conductor's prompt of every question and names the Method's row)."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from conductor.kind_reader import kind_line
from conductor.cli import app
from conductor.data.bank import sample_problems
from conductor.effort import EFFORT_LINES, Effort
from conductor.simulation import SIMULATED_BANNER
from conductor.evaluation.methods import MethodSpecError, method_from_spec
from tasks.solve import solve_all
from tasks.traces import TraceBatches

runner = CliRunner()
POOL = "deployments/pools/local.yaml"


@pytest.mark.parametrize("level,steps", [("low", 1), ("medium", 2), ("high", 4)])
def test_ask_effort_sets_the_default_workflows_calls(level, steps):
    question = sample_problems()[0].question
    result = runner.invoke(app, ["ask", question, "--pool", POOL, "--effort", level, "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["steps"]) == steps  # stdout is the JSON alone
    assert result.stderr.strip() == f"note: {SIMULATED_BANNER}"  # the simulated pool's banner, on stderr


@pytest.mark.parametrize("args,needle", [(["--effort", "extreme"], "effort must be one of low, medium, high"),
                                         (["--effort", "low", "--shape", "fanout"], "--plan and --shape fix"),
                                         (["--effort", "low", "--plan", "-"], "--plan and --shape fix")])
def test_ask_refuses_an_effort_it_cannot_obey_in_one_line(args, needle):
    result = runner.invoke(app, ["ask", "What is 2 + 2?", "--pool", POOL, *args])
    assert result.exit_code == 2 and needle in result.output
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from conductor.models.tiny import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "model", hidden_size=16, seed=0)


def test_ask_states_the_effort_in_a_trained_conductors_prompt(tiny_model):
    question = sample_problems()[0].question
    result = runner.invoke(app, ["ask", question, "--pool", POOL, "--conductor", str(tiny_model),
                                 "--effort", "high", "--json"])
    assert result.exit_code == 0, result.output
    user = json.loads(result.stdout)["conductor_prompt"][-1]["content"]
    assert user.endswith(f"{EFFORT_LINES[Effort.HIGH]}\n\n{kind_line(question)}")  # then the kind reader's line


def test_an_effort_method_is_its_own_row_and_states_the_level():
    method = method_from_spec("template:fanout?effort=low", POOL)
    assert method.name == "template-fanout+effort-low@local-simulated"
    assert method.run_options("run-1").effort == Effort.LOW
    assert method_from_spec("template:fanout", POOL).run_options().effort is None


@pytest.mark.parametrize("spec,needle", [("single:sim-coder?effort=low", "only the conductor and template methods"),
                                         ("template:fanout?effort=max", "effort must be one of"),
                                         ("template:fanout?level=low", "?effort=LEVEL")])
def test_a_bad_effort_suffix_is_a_method_spec_error(spec, needle):
    with pytest.raises(MethodSpecError, match=None) as caught:
        method_from_spec(spec, POOL)
    assert needle in str(caught.value)


@pytest.mark.parametrize("level,calls", [("low", 2), ("high", 5)])
def test_an_evaluation_solve_runs_each_question_at_the_methods_effort(tmp_path, level, calls):
    problems = [p for p in sample_problems() if p.domain != "code"][:3]
    method = method_from_spec(f"template:verify?effort={level}", POOL, problems=problems)
    sink = TraceBatches(str(tmp_path / "wh.duckdb"), 50)
    traces = asyncio.run(solve_all(problems, method, "run-effort", 0, sink))
    assert [t.calls for t in traces] == [calls] * len(problems)


def test_a_model_trained_with_effort_rows_is_told_its_default_level_when_none_is_asked(tiny_model, tmp_path):
    """A model trained with effort rows never saw a prompt without a level: its directory says
    which level to state (medium), and `conductor ask` without --effort states it."""
    import shutil

    from conductor.models.prompt_format import read_prompt_format, write_prompt_format
    from conductor.training.config import local_profile, prompt_format_of

    fmt = prompt_format_of(local_profile(tmp_path / "run", effort_levels=["low", "medium", "high"]))
    assert fmt.default_effort == "medium"
    assert prompt_format_of(local_profile(tmp_path / "run")).default_effort is None
    model = shutil.copytree(tiny_model, tmp_path / "effort-model")
    write_prompt_format(model, fmt)
    assert read_prompt_format(model) == fmt
    question = sample_problems()[0].question
    for args, level in (([], Effort.MEDIUM), (["--effort", "low"], Effort.LOW)):
        result = runner.invoke(app, ["ask", question, "--pool", POOL, "--conductor", str(model), *args, "--json"])
        assert result.exit_code == 0, result.output
        user = json.loads(result.stdout)["conductor_prompt"][-1]["content"]
        assert user.endswith(f"{EFFORT_LINES[level]}\n\n{kind_line(question)}")


def test_train_compares_an_effort_model_at_the_level_it_is_told_by_default(tiny_model, tmp_path):
    """`conductor train`'s closing comparison asks the model as a deployed Conductor is asked: at
    its default level (medium), whose budget holds it to two steps; a model without levels, with
    none stated."""
    import shutil

    from conductor.models.prompt_format import write_prompt_format
    from conductor.training.compare import baselines, evaluate_model_dir
    from conductor.training.config import local_profile, prompt_format_of

    base = baselines([p for p in sample_problems() if p.domain != "code"][:4], POOL, latency_scale=0.0)
    model = shutil.copytree(tiny_model, tmp_path / "effort-model")
    write_prompt_format(model, prompt_format_of(local_profile(tmp_path / "run", effort_levels=["low", "medium", "high"])))
    for directory, line in ((model, EFFORT_LINES[Effort.MEDIUM]), (tiny_model, None)):
        result = evaluate_model_dir(directory, base, max_new_tokens=16)
        users = [t.conductor_prompt[-1].content for t in result.traces]
        assert all((line in u) if line else not any(x in u for x in EFFORT_LINES.values()) for u in users)
        if line:
            assert all("At most 2 steps." in t.conductor_prompt[0].content for t in result.traces)
