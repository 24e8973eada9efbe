"""Logged Conductor models: a pyfunc wrapper around the model directory (so any MLflow client
can load it), explicit pip requirements, registration as a new version of `conductor` with an
alias, and `models:/` URIs resolved to a local directory the library can load."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import mlflow
import yaml
from mlflow.pyfunc import PythonModel

from conductor.stops import signals_held
from registry.store import REGISTERED_MODEL, use_store

MODEL_ARTIFACT = "conductor_model"
LOGGED_MODEL_CODE = Path(__file__).with_name("logged_model.py")  # sets ConductorModel as the model
CHALLENGER = "challenger"


def pip_requirements() -> list[str]:
    """Explicit (MLflow would otherwise infer extras such as torchvision)."""
    return [f"{pkg}=={version(pkg)}" for pkg in ("torch", "transformers", "tokenizers", "mlflow")]


class ConductorModel(PythonModel):
    """`predict(chats)` -> workflow texts (greedy), for MLflow clients; the project itself
    resolves the directory and plans with the library."""

    def load_context(self, context) -> None:  # noqa: ANN001
        from conductor.models.constrained import load_causal_lm
        from conductor.models.tiny import load_tokenizer

        path = context.artifacts[MODEL_ARTIFACT]
        self.tokenizer = load_tokenizer(path)
        self.model = load_causal_lm(path)

    # Typed, as MLflow asks of a PythonModel (it warned at import without): it infers the input
    # schema from the hint and checks what a client sends against it.
    def predict(self, context, model_input: list[list[dict[str, str]]],  # noqa: ANN001
                params: dict[str, int] | None = None) -> list[str]:
        """One chat per workflow wanted (the Conductor's prompt as {"role", "content"} messages,
        as `conductor.prompts` builds it) -> the workflow text each gets, greedily."""
        from conductor.training.evaluate import generate_workflows

        return generate_workflows(self.model, self.tokenizer, list(model_input),
                                  max_new_tokens=int((params or {}).get("max_new_tokens", 256)))


@dataclass(frozen=True)
class RegisteredVersion:
    name: str
    version: str
    alias: str
    model_uri: str


def log_and_register(model_dir: str | Path, *, alias: str = CHALLENGER, name: str = REGISTERED_MODEL) -> RegisteredVersion:
    """Inside the active run: log `model_dir`, register it as a new version of `name`, point
    `alias` at it. The version and its alias are written whole: a Ctrl-C or SIGTERM meanwhile
    waits for them (conductor/stops.py), so no version is left registered with no alias."""
    with signals_held():
        return _log_and_register(model_dir, alias, name)


def _log_and_register(model_dir: str | Path, alias: str, name: str) -> RegisteredVersion:
    info = mlflow.pyfunc.log_model(
        name="model",
        python_model=str(LOGGED_MODEL_CODE),  # models from code: a file, not a pickled object
        artifacts={MODEL_ARTIFACT: str(model_dir)},
        pip_requirements=pip_requirements(),
        registered_model_name=name,
    )
    version_ = str(info.registered_model_version)
    mlflow.MlflowClient().set_registered_model_alias(name, alias, version_)
    return RegisteredVersion(name=name, version=version_, alias=alias, model_uri=f"models:/{name}@{alias}")


def resolve_model_uri(uri: str, dst: str | Path | None = None, *, tracking_uri: str | None = None) -> Path:
    """`models:/conductor@challenger` (or `models:/conductor/3`, `runs:/...`) -> the local model
    directory inside the downloaded model; a plain path is returned as it is."""
    if not uri.startswith(("models:/", "runs:/")):
        return Path(uri)
    use_store(tracking_uri)
    local = Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(dst) if dst else None))
    mlmodel = yaml.safe_load((local / "MLmodel").read_text())
    rel = mlmodel["flavors"]["python_function"]["artifacts"][MODEL_ARTIFACT]["path"]
    return local / rel


@dataclass(frozen=True)
class VersionInfo:
    """One version of a registered model and the aliases that point at it."""

    name: str
    version: str
    aliases: tuple[str, ...]
    run_id: str | None
    created_ms: int | None


def list_versions(name: str = REGISTERED_MODEL, *, tracking_uri: str | None = None) -> list[VersionInfo]:
    """The versions of `name` (oldest first) with their aliases, read without creating anything:
    a SQLite store whose file does not exist yet, or a store without the model, has none."""
    from mlflow.exceptions import MlflowException

    from registry.store import tracking_uri as default_uri

    uri = tracking_uri or default_uri()
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        return []
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
    try:
        # search_model_versions leaves `aliases` empty on this store; the registered model has them.
        model = client.get_registered_model(name)
    except MlflowException as exc:
        if exc.error_code == "RESOURCE_DOES_NOT_EXIST":
            return []
        raise
    aliases: dict[str, list[str]] = {}
    for alias, version_ in model.aliases.items():
        aliases.setdefault(str(version_), []).append(alias)
    found = client.search_model_versions(f"name='{name}'")
    return [VersionInfo(name=name, version=str(v.version), aliases=tuple(sorted(aliases.get(str(v.version), []))),
                        run_id=v.run_id or None, created_ms=v.creation_timestamp)
            for v in sorted(found, key=lambda v: int(v.version))]
