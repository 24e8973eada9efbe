"""`conductor serve` serves the registry's Conductor versions as well as its start model:
/v1/models lists `conductor@champion`, `conductor@challenger` and `conductor/N` from a real MLflow
SQLite registry (two tiny random models registered with registry.models.log_and_register), and a
request naming one is planned by that version, loaded once and cached; an alias moved by the
promotion gate's `force` is followed; an unknown model is an OpenAI-style 404."""

from __future__ import annotations

from pathlib import Path

import httpx
import mlflow
import openai
import pytest

from conductor.models.tiny import build_tiny_causal_lm
from registry.models import list_versions, log_and_register
from registry.promotion import force
from registry.store import use_store
from server.build import build_app
from server.config import ServeConfig
from server.guards import KeyRing
from server.running import running_server
from warehouse.staging import ingest_staged
from warehouse.store import TraceStore

REPO = Path(__file__).resolve().parent.parent
POOL = REPO / "deployments" / "pools" / "local.yaml"
KEY = "sk-models-test"
AUTH = {"Authorization": f"Bearer {KEY}"}
ASK = [{"role": "user", "content": "What is 6 * 7?"}]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """Two versions of `conductor` (different seeds): v1 champion (forced), v2 challenger."""
    tmp = tmp_path_factory.mktemp("registry")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    experiment = use_store(uri)  # its artifacts beside the store, not in ./mlruns of the checkout
    for seed in (1, 2):
        model_dir = build_tiny_causal_lm(tmp / f"m{seed}", hidden_size=16, seed=seed)
        with mlflow.start_run(experiment_id=experiment):
            log_and_register(model_dir)  # each new version becomes the challenger
    force("1", tracking_uri=uri)
    return tmp, uri


def test_list_versions_reads_versions_and_aliases(registry, tmp_path):
    _, uri = registry
    found = [(v.version, v.aliases) for v in list_versions(tracking_uri=uri)]
    assert found == [("1", ("champion",)), ("2", ("challenger",))]
    missing = tmp_path / "absent.db"
    assert list_versions(tracking_uri=f"sqlite:///{missing}") == [] and not missing.exists()  # nothing created


def test_models_are_listed_served_by_their_version_cached_and_followed(registry, tmp_path):
    tmp, uri = registry
    config = ServeConfig(pool_file=POOL, staging_dir=tmp_path / "staging", warehouse_path=tmp_path / "wh.duckdb",
                         registry_uri=uri, registry_ttl_s=0, model_cache_dir=tmp_path / "models")
    served: dict[str, str] = {}
    with running_server(build_app(config, KeyRing([KEY]))) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0, timeout=300)
        ids = [m.id for m in client.models.list()]
        assert ids == ["conductor", "conductor@champion", "conductor@challenger", "conductor/1", "conductor/2"]
        assert httpx.get(url + "/health/details", headers=AUTH).json()["models_loaded"] == []  # nothing loaded until asked for

        def ask(model: str) -> str:
            r = client.chat.completions.create(model=model, messages=ASK)
            assert r.model == model
            served[r.model_extra["conductor"]["trace_id"]] = r.model_extra["conductor"]["served_by"]
            return r.model_extra["conductor"]["served_by"]

        assert ask("conductor") == "template:fanout"  # the start model
        assert ask("conductor@champion") == "conductor/1"
        assert ask("conductor@challenger") == "conductor/2"
        assert ask("conductor/1") == "conductor/1"
        assert ask("models:/conductor/2") == "conductor/2"
        assert httpx.get(url + "/health/details", headers=AUTH).json()["models_loaded"] == ["1", "2"]
        # the stream says which version answered too
        chunks = list(client.chat.completions.create(model="conductor@challenger", messages=ASK, stream=True))
        assert chunks[-1].model_extra["conductor"]["served_by"] == "conductor/2"
        served[chunks[-1].model_extra["conductor"]["trace_id"]] = "conductor/2"

        for bad in ("conductor/9", "conductor@nope", "other@champion", "gpt-4o"):
            with pytest.raises(openai.NotFoundError) as e:
                client.chat.completions.create(model=bad, messages=ASK)
            assert e.value.code == "model_not_found", bad

        force("2", tracking_uri=uri)  # a promotion: champion moves to v2 and the server follows it
        assert ask("conductor@champion") == "conductor/2"
        ids = [m.id for m in client.models.list()]
        assert ids == ["conductor", "conductor@champion", "conductor@challenger", "conductor/1", "conductor/2"]
        assert httpx.get(url + "/health/details", headers=AUTH).json()["models_loaded"] == ["1", "2"]  # v2 was not loaded again
    # every request was planned by the version it named: its Conductor call names that version's
    # model (the directory it was built in); (both tiny random models write only newlines, so
    # their texts cannot tell them apart)
    with TraceStore(tmp_path / "wh.duckdb") as store:
        ingest_staged(store, tmp_path / "staging")
        rows = store.query("SELECT t.trace_id, t.conductor_output, c.model FROM traces t JOIN calls c"
                           " ON c.trace_id = t.trace_id AND c.role = 'conductor' WHERE t.depth = 0").to_pylist()
    by_trace = {r["trace_id"]: r for r in rows}
    assert set(by_trace) == set(served), (set(by_trace) ^ set(served))
    outputs: dict[str, set[str]] = {}
    for trace_id, version in served.items():
        model = by_trace[trace_id]["model"]
        if version == "template:fanout":
            assert model.startswith("template"), model
            continue
        # the model a version's Conductor call names is the directory it was trained in (m1, m2)
        assert Path(model).name == f"m{version.split('/')[1]}", (version, model)
        outputs.setdefault(version, set()).add(by_trace[trace_id]["conductor_output"])
    assert all(len(o) == 1 for o in outputs.values()), outputs  # greedy: one version, one plan for one question
    assert set(outputs) == {"conductor/1", "conductor/2"}
