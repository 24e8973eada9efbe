"""Secrets drill: sentinel keys in the environment for every provider and for the server; a real
`conductor serve` subprocess answers through loopback provider servers that require those keys;
then the sentinels occur zero times in the DuckDB file (after ingesting the staged traces) and
in the server's log. A positive control shows the scan would find text the traces do hold.

The second test does the same for a pipeline run: `conductor run` (the Prefect flow, with its
temporary Prefect server) over the same loopback providers; the sentinels occur zero times in
its warehouse, anywhere under its Prefect home (the Prefect database holds the flow's logs) and
in its output.

The third is a full nightly run: the nightly flow (`conductor nightly`'s `nightly_flow`, with
the smallest training settings) under the session's Prefect server, its pool the same loopback
providers (training rollouts and the held-out evaluation send them the keys), then `conductor
serve` answering with the registered conductor@challenger and with the pool; the sentinels occur
zero times in any file of the home (DuckDB, mlflow.db, the MLflow artifacts, Prefect results),
in every log record the Prefect server holds (read through its API) and its database file, and
in the server's log. Seen failing when the nightly flow logged ANTHROPIC_API_KEY (found in the
Prefect logs and the Prefect database)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import openai

from server.running import free_port
from tests.loopback import ANTHROPIC_MESSAGES, OPENAI_CHAT, LoopbackServer, Reply, anthropic_message, \
    gemini_path, gemini_response, openai_chat
from warehouse.staging import ingest_staged
from warehouse.store import TraceStore

CONDUCTOR = Path(sys.executable).with_name("conductor")
SENTINELS = {
    "OPENAI_API_KEY": "sk-SENTINEL-openai-5b1e0c",
    "ANTHROPIC_API_KEY": "sk-ant-SENTINEL-anthropic-77d2",
    "GEMINI_API_KEY": "SENTINEL-gemini-a9f3",
    "GOOGLE_API_KEY": "SENTINEL-google-41aa",
    "CONDUCTOR_SERVE_API_KEYS": "sk-SENTINEL-serve-key-90ab",
}
WRONG_KEY = "sk-SENTINEL-wrong-key-c3c3"
MARKER = "QMARKER-5521 what is the capital of France?"


def _pool(tmp: Path, url: str) -> Path:
    path = tmp / "pool.yaml"
    path.write_text(f"""name: secrets-drill
workers:
  - {{id: w-openai, provider: openai, model: gpt-5, options: {{base_url: "{url}/v1"}}}}
  - {{id: w-anthropic, provider: anthropic, model: claude-sonnet-4-5, options: {{base_url: "{url}"}}}}
  - {{id: w-google, provider: google, model: gemini-2.5-pro, options: {{base_url: "{url}"}}}}
""")
    return path


def _loopback() -> LoopbackServer:
    loop = LoopbackServer()
    loop.on(OPENAI_CHAT, lambda r: Reply(body=openai_chat("Paris")))
    loop.on(ANTHROPIC_MESSAGES, lambda r: Reply(body=anthropic_message("Paris")))
    loop.on(gemini_path("gemini-2.5-pro"), lambda r: Reply(body=gemini_response("Paris")))
    return loop


def _assert_keys_were_sent(loop: LoopbackServer) -> None:
    seen = " ".join(str(r.headers) for r in loop.requests)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        assert SENTINELS[name] in seen
    # both Google variables are set: the adapter's documented order picks GEMINI_API_KEY
    assert SENTINELS["GEMINI_API_KEY"] in seen and SENTINELS["GOOGLE_API_KEY"] not in seen


def _serve(args: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`conductor serve ARGS` on a free port, its stdout and stderr into `log`; waits for /health."""
    port = free_port()
    proc = subprocess.Popen([str(CONDUCTOR), "serve", *args, "--port", str(port)], env=env,
                            stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(url + "/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]


def _env(home: Path, **more: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | SENTINELS | {
        "CONDUCTOR_HOME": str(home)} | more


def test_sentinel_keys_never_reach_the_warehouse_or_the_server_log(tmp_path):
    loop = _loopback()
    home, log = tmp_path / "home", tmp_path / "serve.log"
    env = _env(home)
    with loop:
        proc, url = _serve(["--pool", str(_pool(tmp_path, loop.url))], env, log)
        try:
            c = openai.OpenAI(base_url=url + "/v1", api_key=SENTINELS["CONDUCTOR_SERVE_API_KEYS"], max_retries=0)
            r = c.chat.completions.create(model="conductor", messages=[{"role": "user", "content": MARKER}])
            assert r.model_extra["conductor"]["status"] == "answered" and r.choices[0].message.content == "Paris"
            bad = httpx.post(url + "/v1/chat/completions", json={"model": "conductor", "messages": []},
                             headers={"Authorization": f"Bearer {WRONG_KEY}"})
            assert bad.status_code == 401
        finally:
            _stop(proc, log)
    _assert_keys_were_sent(loop)  # the keys were really used: each provider received its own
    db = home / "warehouse.duckdb"
    with TraceStore(db) as store:
        assert ingest_staged(store, home / "staging").traces == 1
        dumped = " ".join(str(store.query(f"SELECT * FROM {t}").to_pylist()) for t in ("traces", "steps", "calls", "runs"))
    raw = db.read_bytes()
    assert MARKER in dumped and b"QMARKER-5521" in raw  # positive control: the scans see stored text
    logged = log.read_bytes()
    assert b"/v1/chat/completions" in logged  # positive control: the access log was written
    for secret in [*SENTINELS.values(), WRONG_KEY]:
        assert secret.encode() not in raw, secret
        assert secret not in dumped, secret
        assert secret.encode() not in logged, secret


def test_sentinel_keys_never_reach_a_pipeline_runs_warehouse_prefect_home_or_output(tmp_path):
    loop = _loopback()
    home = tmp_path / "home"
    env = _env(home, PREFECT_HOME=str(tmp_path / "prefect"))
    env.pop("PREFECT_API_URL", None)
    with loop:
        r = subprocess.run([str(CONDUCTOR), "run", "--limit", "1", "--pool", str(_pool(tmp_path, loop.url))],
                           env=env, capture_output=True, timeout=540)
    output = r.stdout + r.stderr
    assert r.returncode == 0, output.decode(errors="replace")[-3000:]
    _assert_keys_were_sent(loop)
    files = [p for root in (home, tmp_path / "prefect") for p in root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".duckdb" for p in files) and any("prefect" in p.parts for p in files)
    everything = b"".join(p.read_bytes() for p in files) + output
    assert b"secrets-drill" in everything or b"w-openai" in everything  # positive control
    for secret in SENTINELS.values():
        assert secret.encode() not in everything, secret


# The nightly's smallest settings (tests/test_nightly.py's TINY): SFT warm start on 8 problems,
# one GRPO step, registration, the held-out evaluation, costs and the gate.
TINY = {"sft_problems": 8, "sft_copies": 1, "sft_epochs": 1.0, "per_device_train_batch_size": 2,
        "num_generations": 2, "max_completion_length": 48, "eval_every": 0, "early_stopping_patience": 0}


def _prefect_logs(flow_run_ids: set[str]) -> tuple[str, set[str]]:
    """Every log record the session's Prefect server holds (read back through its API), and the
    flow runs among `flow_run_ids` that have records."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import LogSort

    async def read() -> list:
        out, offset = [], 0
        async with get_client() as client:
            while True:
                page = await client.read_logs(limit=200, offset=offset, sort=LogSort.TIMESTAMP_ASC)
                out += page
                offset += len(page)
                if len(page) < 200:
                    return out

    import asyncio

    records = asyncio.run(read())
    text = "\n".join(f"{r.name} {r.message}" for r in records)
    return text, {str(r.flow_run_id) for r in records if str(r.flow_run_id) in flow_run_ids}


def _prefect_database() -> Path:
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL

    url = PREFECT_API_DATABASE_CONNECTION_URL.value()
    assert url and "sqlite" in url, url
    return Path(url.split(":///", 1)[1])


def test_sentinel_keys_never_reach_any_store_over_a_nightly_run_and_serve(prefect_harness, tmp_path, monkeypatch):
    """The nightly flow for real (`conductor nightly`'s flow, under the session's Prefect server):
    curation, SFT + one GRPO step over the loopback providers, registration as
    conductor@challenger in MLflow, the held-out evaluation, costs, the gate; then `conductor
    serve` answers with the registered challenger and with the loopback pool. No sentinel occurs
    in any file of the home (DuckDB, mlflow.db, MLflow artifacts, Prefect results), in the Prefect
    server's logs (read through its API) and database, or in the server's log."""
    from flows.nightly import NightConfig, nightly_flow

    loop = _loopback()
    home = tmp_path / "home"
    for name in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    for name, value in SENTINELS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{home / 'mlflow.db'}")
    # registry/ points mlflow's process-wide URIs at this store: put them back afterwards, so
    # later tests never see this test's registry
    import mlflow.tracking._model_registry.utils as registry_uris
    import mlflow.tracking._tracking_service.utils as tracking_uris

    monkeypatch.setattr(tracking_uris, "_tracking_uri", tracking_uris._tracking_uri)
    monkeypatch.setattr(registry_uris, "_registry_uri", registry_uris._registry_uri)
    with loop:
        pool = _pool(tmp_path, loop.url)
        night = nightly_flow(NightConfig(steps=1, chunk_steps=1, heldout_problems=2, baselines=["single:w-google"],
                                         training_overrides=TINY, concurrency=2, pool_file=pool,
                                         run_key=f"secrets-{uuid.uuid4().hex[:8]}"))
        assert night.trained.version == "1" and not night.evaluated.simulated
        _assert_keys_were_sent(loop)  # training rollouts and the evaluation called every provider with its key
        sent = len(loop.requests)
        log = tmp_path / "serve.log"
        proc, url = _serve(["--pool", str(pool)], dict(os.environ), log)
        try:
            c = openai.OpenAI(base_url=url + "/v1", api_key=SENTINELS["CONDUCTOR_SERVE_API_KEYS"], max_retries=0,
                              timeout=300)
            assert "conductor@challenger" in [m.id for m in c.models.list()]
            trained = c.chat.completions.create(model="conductor@challenger", messages=[{"role": "user", "content": MARKER}])
            assert trained.model_extra["conductor"]["served_by"] == "conductor/1"
            answered = c.chat.completions.create(model="conductor", messages=[{"role": "user", "content": MARKER}])
            assert answered.choices[0].message.content == "Paris"
            bad = httpx.get(url + "/v1/models", headers={"Authorization": f"Bearer {WRONG_KEY}"})
            assert bad.status_code == 401
        finally:
            _stop(proc, log)
        assert len(loop.requests) > sent
    with TraceStore(home / "warehouse.duckdb") as store:
        assert ingest_staged(store, home / "staging").traces >= 2
        nightly_rows = store.query("SELECT count(*) AS n FROM runs WHERE kind = 'nightly' AND status = 'finished'")
        assert nightly_rows.to_pylist() == [{"n": 1}]
    logs, with_records = _prefect_logs({night.night.flow_run_id})
    assert with_records == {night.night.flow_run_id}  # positive control: the nightly's own log records were read
    files = [p for p in home.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"mlflow.db", "warehouse.duckdb", "MLmodel", "model.safetensors"} <= names, names
    assert any("mlartifacts" in p.parts for p in files) and any("results" in p.parts for p in files)
    scanned = {str(p): p.read_bytes() for p in files} | {
        "prefect logs (API)": logs.encode(), "prefect database": _prefect_database().read_bytes(),
        "server log": log.read_bytes()}
    everything = b"".join(scanned.values())
    # positive controls: the scans see what the stores do hold
    assert b"QMARKER-5521" in everything and b"w-openai" in everything and b"challenger" in everything
    assert night.night.run_key.encode() in scanned["prefect logs (API)"] or b"conductor-nightly" in scanned["prefect database"]
    leaks = [(name, secret) for secret in [*SENTINELS.values(), WRONG_KEY] for name, data in scanned.items()
             if secret.encode() in data]
    assert not leaks, leaks
