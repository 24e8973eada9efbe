"""One source of settings, and never simulated by accident: the pool every stage uses comes from
one place (CONDUCTOR_POOL_FILE means the same to training and evaluation), the production profile
refuses a simulated pool in one line, a night never mixes simulated and real pools, and
`conductor nightly --dry-run` prints what would run. Nothing here starts a server or trains."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conductor.cli import app
from conductor.config import SimulatedPoolRefused, load_settings
from flows.nightly_config import NightConfig

REPO = Path(__file__).resolve().parent.parent
LOCAL = REPO / "deployments" / "pools" / "local.yaml"
PAPER = REPO / "deployments" / "pools" / "paper.yaml"
PAPER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
runner = CliRunner()


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import flows.prefect_server

    def refuse() -> None:
        raise AssertionError("a Prefect server was started")

    monkeypatch.setattr(flows.prefect_server, "tied_prefect_server", refuse)


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PAPER_KEYS, "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), output
    return lines[0]


def test_conductor_pool_file_is_the_training_pool_too(monkeypatch, tmp_path) -> None:
    from conductor.training.config import profile_config

    monkeypatch.setenv("CONDUCTOR_POOL_FILE", str(PAPER))
    assert Path(profile_config("production", tmp_path).pool_file) == PAPER == load_settings().pool_file
    assert Path(profile_config("local", tmp_path).pool_file) == PAPER
    assert Path(profile_config("local", tmp_path, pool_file=str(LOCAL)).pool_file) == LOCAL  # an override wins


def test_production_nightly_on_the_simulated_pool_refuses_in_one_line(no_server, monkeypatch) -> None:
    monkeypatch.delenv("CONDUCTOR_POOL_FILE", raising=False)
    result = runner.invoke(app, ["nightly", "--profile", "production"])
    assert result.exit_code == 2
    line = _one_error_line(result.output)
    assert "local.yaml" in line and "--allow-simulated" in line and "production" in line


def test_production_train_on_the_simulated_pool_refuses_but_estimates(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CONDUCTOR_HOME", str(tmp_path))
    result = runner.invoke(app, ["train", "--profile", "production", "--pool", str(LOCAL), "--max-steps", "1"])
    assert result.exit_code == 2 and "--allow-simulated" in result.output.splitlines()[-1], result.output
    assert not (tmp_path / "training").exists()


def test_production_run_on_the_simulated_pool_refuses_in_one_line(no_server, monkeypatch) -> None:
    monkeypatch.delenv("CONDUCTOR_POOL_FILE", raising=False)
    result = runner.invoke(app, ["run", "--profile", "production"])
    assert result.exit_code == 2
    line = _one_error_line(result.output)
    assert "local.yaml" in line and "--allow-simulated" in line


# The same rule (conductor/config.py's refuse_accidental_simulation) guards the commands that run
# on a pool outside the nightly: an evaluation and a server.
ON_A_POOL = {"eval": ["eval", "-m", "single:nobody"], "serve": ["serve"]}


@pytest.mark.parametrize("command", sorted(ON_A_POOL))
def test_production_eval_and_serve_on_the_simulated_pool_refuse_in_one_line(command: str, no_server,
                                                                            monkeypatch) -> None:
    from server.guards import KEYS_ENV

    for name in ("CONDUCTOR_POOL_FILE", "CONDUCTOR_ALLOW_SIMULATED", KEYS_ENV):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(app, [*ON_A_POOL[command], "--profile", "production"])
    assert result.exit_code == 2
    line = _one_error_line(result.output)
    assert "production" in line and "local.yaml" in line and "--allow-simulated" in line


@pytest.mark.parametrize(("command", "next_error"), [("eval", "no worker 'nobody'"), ("serve", "no API keys")])
def test_allowing_simulation_lets_eval_and_serve_past_the_refusal(command: str, next_error: str, no_server,
                                                                  monkeypatch) -> None:
    """CONDUCTOR_ALLOW_SIMULATED=1 (the setting behind --allow-simulated): the command goes on to its
    next check, which then fails on purpose, so nothing is evaluated or served."""
    from server.guards import KEYS_ENV

    monkeypatch.delenv("CONDUCTOR_POOL_FILE", raising=False)
    monkeypatch.delenv(KEYS_ENV, raising=False)
    monkeypatch.setenv("CONDUCTOR_ALLOW_SIMULATED", "1")
    result = runner.invoke(app, [*ON_A_POOL[command], "--profile", "production"])
    assert result.exit_code == 2
    assert next_error in _one_error_line(result.output)


def test_a_night_mixing_simulated_and_real_pools_is_refused() -> None:
    settings = load_settings(profile="local")
    with pytest.raises(SimulatedPoolRefused, match=r"mixes simulated and real pools: training on simulated pool"):
        NightConfig(pool_file=PAPER, training_pool_file=LOCAL).resolve(settings)
    with pytest.raises(SimulatedPoolRefused, match=r"training on real pool .*evaluation on simulated pool"):
        NightConfig(pool_file=LOCAL, training_pool_file=PAPER).resolve(settings)
    # allowing simulation does not allow mixing
    with pytest.raises(SimulatedPoolRefused, match="mixes"):
        NightConfig(profile="production", pool_file=PAPER, training_pool_file=LOCAL,
                    allow_simulated=True).resolve(settings)


def test_allow_simulated_lets_production_run_on_the_simulated_pool() -> None:
    night = NightConfig(profile="production", allow_simulated=True).resolve(load_settings(profile="production"))
    assert night.simulated and night.pool_file == night.training_pool_file == LOCAL
    assert night.training_overrides["pool_file"] == str(LOCAL)


def test_dry_run_prints_one_pool_the_accelerate_command_and_the_budget(no_server, monkeypatch) -> None:
    for name in PAPER_KEYS:
        monkeypatch.setenv(name, "test-key")
    monkeypatch.setenv("CONDUCTOR_POOL_FILE", "deployments/pools/paper.yaml")
    monkeypatch.setenv("CONDUCTOR_ACCELERATE_CONFIG", "deployments/accelerate/multi_gpu.yaml")
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["nightly", "--profile", "production", "--dry-run", "--max-usd", "25"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"^pool +deployments/pools/paper\.yaml \(real\): training, evaluation and gate$", out, re.M), out
    trainer = next(line for line in out.splitlines() if line.startswith("trainer"))
    assert "accelerate launch --config_file deployments/accelerate/multi_gpu.yaml" in trainer
    assert " train --config " in trainer and " --resume " in trainer
    assert re.search(r"^budget +\$25\.00 of training worker calls", out, re.M), out


def test_dry_run_without_the_pools_keys_refuses_in_one_line(no_server, no_keys, monkeypatch) -> None:
    monkeypatch.setenv("CONDUCTOR_POOL_FILE", str(PAPER))
    result = runner.invoke(app, ["nightly", "--profile", "production", "--dry-run"])
    assert result.exit_code == 2
    line = _one_error_line(result.output)
    assert "OPENAI_API_KEY" in line and "ANTHROPIC_API_KEY" in line and "paper.yaml" in line


@pytest.mark.parametrize("dry_run", [["--dry-run"], []], ids=["dry-run", "run"])
def test_a_training_value_the_config_refuses_is_one_line_before_anything_starts(no_server, dry_run) -> None:
    """`--set` values are checked by building the training config (read-only) before the server
    starts: the night refuses them in one line, not at its training stage after the curation."""
    result = runner.invoke(app, ["nightly", *dry_run, "--set", "bad_worker_fraction=2"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result.output) == "error: bad_worker_fraction must be between 0 and 1 (got 2)"
    needs = runner.invoke(app, ["nightly", *dry_run, "--set", "bad_worker_fraction=0.2"])
    assert needs.exit_code == 2 and "needs randomized_pools" in _one_error_line(needs.output)
    if dry_run:
        ok = runner.invoke(app, ["nightly", *dry_run, "--set", "randomized_pools=true", "--set", "bad_worker_fraction=0.2"])
        assert ok.exit_code == 0 and "bad_worker_fraction=0.2" in ok.output, ok.output


def test_nightly_gpu_deployment_names_the_real_pool() -> None:
    from conductor.workers.pool import read_pool_file

    deployments = {d["name"]: d for d in yaml.safe_load((REPO / "deployments" / "prefect.yaml").read_text())["deployments"]}
    config = NightConfig(**deployments["nightly-gpu"]["parameters"]["config"])
    assert config.profile == "production" and config.pool_file == Path("deployments/pools/paper.yaml")
    assert read_pool_file(REPO / config.pool_file).simulated is False
    # every nightly deployment's parameters are one NightConfig
    for name in ("nightly", "champion-eval"):
        assert set(deployments[name]["parameters"]) == {"config"}
        NightConfig(**deployments[name]["parameters"]["config"])


def test_the_nightly_flow_takes_one_night_config() -> None:
    import inspect

    from flows.nightly import champion_eval_flow, nightly_flow

    # the nightly also takes the command's Ctrl-C (a live handle, not a setting: docs/nightly.md)
    for fn, extra in ((nightly_flow, ["cancellation"]), (champion_eval_flow, [])):
        params = inspect.signature(fn.fn).parameters
        assert list(params) == ["config", *extra] and "NightConfig" in str(params["config"].annotation)
    assert all(f.description for f in NightConfig.model_fields.values())


def test_one_definition_of_profile_default_pool_and_the_simulated_rule() -> None:
    """What `grep` finds: one `Profile =`, one path to local.yaml, one provider comparison with
    "simulated" (conductor/simulation.py's `is_simulated_worker`; tests/test_simulated_once.py
    checks the rule and the banner by the syntax tree)."""
    sources = [p for d in ("conductor", "flows", "tasks", "server", "registry", "warehouse")
               for p in (REPO / d).rglob("*.py")]
    found: dict[str, list[str]] = {"profile": [], "pool": [], "rule": []}
    for path in sources:
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO))
        found["profile"] += [rel] * len(re.findall(r"^Profile\s*=", text, re.M))
        found["pool"] += [rel] * len(re.findall(r"""["']local\.yaml["']""", text))
        found["rule"] += [rel] * len(re.findall(r"""provider\s*[!=]=\s*(["']simulated["']|SIMULATED_PROVIDER)""", text))
    assert found == {"profile": ["conductor/profiles.py"], "pool": ["conductor/config.py"],
                     "rule": ["conductor/simulation.py"]}, found


def test_a_repeat_reseeds_simulated_workers_and_leaves_the_file_alone(tmp_path) -> None:
    from conductor.methods import Method
    from conductor.workers.pool import REPEAT_SEED_STRIDE
    from conductor.planners import TemplatePlanner

    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(yaml.safe_dump({"name": "mixed", "workers": [
        {"id": "sim", "provider": "simulated", "options": {"seed": 3}},
        {"id": "real", "provider": "openai", "model": "gpt-5"}]}))
    before = mixed.read_text()
    first, third = (Method(TemplatePlanner("single"), mixed, repeat=r) for r in (0, 2))
    assert first.pool.workers[0].options["seed"] == 3
    assert third.pool.workers[0].options["seed"] == 3 + 2 * REPEAT_SEED_STRIDE
    assert third.pool.workers[1] == first.pool.workers[1] and third.name == first.name
    assert mixed.read_text() == before and list(tmp_path.iterdir()) == [mixed]
