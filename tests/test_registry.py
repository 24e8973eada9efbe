"""registry/ against a real MLflow SQLite store in a temporary directory."""

from __future__ import annotations

import mlflow
import pytest

from conductor.models.tiny import build_tiny_causal_lm
from registry.models import resolve_model_uri
from registry.runs import TrainingRun
from registry.store import REGISTERED_MODEL


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


def test_run_logs_params_metrics_artifacts_and_registers_challenger(tmp_path, store, plot_titles, capfd) -> None:
    model_dir = build_tiny_causal_lm(tmp_path / "m", hidden_size=16, seed=1)
    history = [{"step": s, "reward": 0.5 + 0.1 * s, "format_rate": 1.0, "usd_total": 0.01 * s} for s in (1, 2, 3)]
    with TrainingRun({"learning_rate": 3e-4, "pool_file": "local.yaml", "report_to": ["none"]}, simulated=False,
                     run_name="t") as run:
        for row in history:
            run.log_step(row)
        logged = run.finish(
            model_dir, history=history, eval_history=[{"step": 3, "eval_accuracy": 0.7}],
            samples=[{"question": "q", "workflow": "model_id = [0]"}], summary={"wall_s": 1.0},
        )
    # logged from code (a file), not as a pickled object: MLflow has nothing to warn about
    assert "CloudPickle" not in capfd.readouterr().err
    client = mlflow.MlflowClient(store)
    data = client.get_run(logged.run_id).data
    assert data.params["learning_rate"] == "0.0003" and data.params["report_to"] == '["none"]'
    assert [m.value for m in client.get_metric_history(logged.run_id, "reward")] == pytest.approx([0.6, 0.7, 0.8])
    assert data.metrics["eval_accuracy"] == 0.7
    artifacts = {a.path for a in client.list_artifacts(logged.run_id)} | {
        a.path for a in client.list_artifacts(logged.run_id, "plots")
    }
    assert "plots/curves.png" in artifacts and "sample_workflows.json" in artifacts
    # A run on a real pool: neither its curves nor its tags say simulated (the curves always did).
    assert plot_titles == [("Conductor GRPO", False)]
    assert data.tags["conductor.simulated"] == "false" and data.tags["conductor.kind"] == "training"
    # Registered as a new version with alias challenger, resolvable to the model directory.
    version = client.get_model_version_by_alias(REGISTERED_MODEL, "challenger")
    assert str(version.version) == logged.model.version and version.run_id == logged.run_id
    local = resolve_model_uri("models:/conductor@challenger", tmp_path / "dl")
    assert (local / "config.json").is_file() and (local / "tokenizer.json").is_file()
    assert (local / "model.safetensors").read_bytes() == (model_dir / "model.safetensors").read_bytes()
    requirements = (local.parent.parent / "requirements.txt").read_text()
    assert "transformers==" in requirements and "torchvision" not in requirements
    # Any MLflow client can load it and ask for workflows: one chat in, one text out.
    model = mlflow.pyfunc.load_model("models:/conductor@challenger")
    texts = model.predict([[{"role": "user", "content": "What is 2 + 2?"}]], params={"max_new_tokens": 4})
    assert isinstance(texts, list) and len(texts) == 1 and isinstance(texts[0], str)


def test_the_logged_model_class_is_typed_so_mlflow_does_not_warn_at_import() -> None:
    """MLflow warns ("Add type hints to the `predict` method") when a PythonModel subclass is
    defined without them: at every import of registry/, in every `make run`."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import registry.models"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "type hint" not in done.stderr.lower(), done.stderr


def test_second_run_is_a_new_version_and_moves_the_alias(tmp_path, store) -> None:
    versions, run_ids = [], []
    for seed in (1, 2):
        model_dir = build_tiny_causal_lm(tmp_path / f"m{seed}", hidden_size=16, seed=seed)
        with TrainingRun({"seed": seed}, simulated=True) as run:
            versions.append(run.finish(model_dir).model.version)
            run_ids.append(run.run_id)
    assert versions == ["1", "2"]
    client = mlflow.MlflowClient(store)
    assert {client.get_run(r).data.tags["conductor.simulated"] for r in run_ids} == {"true"}
    assert str(client.get_model_version_by_alias(REGISTERED_MODEL, "challenger").version) == "2"
    local = resolve_model_uri("models:/conductor/1", tmp_path / "v1")
    assert (local / "model.safetensors").read_bytes() == (tmp_path / "m1" / "model.safetensors").read_bytes()


def test_plain_path_is_returned_as_is(tmp_path) -> None:
    assert resolve_model_uri(str(tmp_path)) == tmp_path


def test_an_unknown_registered_model_is_one_clear_error(tmp_path, monkeypatch):
    from conductor.models.resolve import UnresolvableModel, resolve_conductor

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    with pytest.raises(UnresolvableModel, match=r"^cannot resolve models:/conductor@champion: .*not found"):
        resolve_conductor("models:/conductor@champion")
