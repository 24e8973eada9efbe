"""Secrets drill: sentinel keys in the environment for every provider and for the server; a real
`conductor serve` subprocess answers through loopback provider servers that require those keys;
then the sentinels occur zero times in the DuckDB file (after ingesting the staged traces) and
in the server's log. A positive control shows the scan would find text the traces do hold.

The second test does the same for a pipeline run: `conductor run` (the Prefect flow, with its
temporary Prefect server) over the same loopback providers; the sentinels occur zero times in
its warehouse, anywhere under its Prefect home (the Prefect database holds the flow's logs) and
in its output.

The third covers the model's life: a short training run under Prefect, logged to MLflow and
registered (conductor@challenger), an evaluation flow over the loopback providers, then
`conductor serve` answering with that registered version; the sentinels occur zero times in
any file of the home (DuckDB, mlflow.db, the MLflow artifacts), the Prefect home, the outputs
and the server's log. (Not the nightly flow itself: it is not on main yet.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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
    assert SENTINELS["GEMINI_API_KEY"] in seen or SENTINELS["GOOGLE_API_KEY"] in seen


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
    home, port, log = tmp_path / "home", free_port(), tmp_path / "serve.log"
    env = _env(home)
    with loop, open(log, "wb") as out:
        proc = subprocess.Popen([str(CONDUCTOR), "serve", "--pool", str(_pool(tmp_path, loop.url)),
                                 "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                assert proc.poll() is None, log.read_text()[-3000:]
                try:
                    if httpx.get(url + "/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
            c = openai.OpenAI(base_url=url + "/v1", api_key=SENTINELS["CONDUCTOR_SERVE_API_KEYS"], max_retries=0)
            r = c.chat.completions.create(model="conductor", messages=[{"role": "user", "content": MARKER}])
            assert r.model_extra["conductor"]["status"] == "answered" and r.choices[0].message.content == "Paris"
            bad = httpx.post(url + "/v1/chat/completions", json={"model": "conductor", "messages": []},
                             headers={"Authorization": f"Bearer {WRONG_KEY}"})
            assert bad.status_code == 401
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]
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


def test_sentinel_keys_never_reach_mlflow_prefect_or_the_warehouse_over_train_eval_and_serve(tmp_path):
    from conductor.data.synthetic import generate_bank

    loop = _loopback()
    home, prefect_home, work = tmp_path / "home", tmp_path / "prefect", tmp_path / "work"
    # the temporary Prefect server's default 20 s to start is too short on a loaded machine
    # (as flows/cli.py sets for `conductor run`)
    env = _env(home, PREFECT_HOME=str(prefect_home), MLFLOW_TRACKING_URI=f"sqlite:///{home / 'mlflow.db'}",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")
    env.pop("PREFECT_API_URL", None)
    problems = tmp_path / "problems.jsonl"
    chosen = [p for p in generate_bank(30, seed=3) if p.domain in ("math", "choice")][:3]
    problems.write_text("".join(p.model_dump_json() + "\n" for p in chosen))
    pool = _pool(tmp_path, loop.url)
    with loop:
        r = subprocess.run([sys.executable, str(Path(__file__).with_name("drill_secrets_pipeline.py")), str(work),
                            str(pool), str(problems)], env=env, capture_output=True, timeout=900)
        output = r.stdout + r.stderr
        assert r.returncode == 0, output.decode(errors="replace")[-4000:]
        assert b"DRILL-RESULT" in output
        _assert_keys_were_sent(loop)  # the evaluation called every provider with its sentinel key
        sent = len(loop.requests)
        log = tmp_path / "serve.log"
        proc, url = _serve(["--pool", str(pool)], env, log)
        try:
            c = openai.OpenAI(base_url=url + "/v1", api_key=SENTINELS["CONDUCTOR_SERVE_API_KEYS"], max_retries=0,
                              timeout=300)
            assert "conductor@challenger" in [m.id for m in c.models.list()]
            trained = c.chat.completions.create(model="conductor@challenger", messages=[{"role": "user", "content": MARKER}])
            assert trained.model_extra["conductor"]["served_by"] == "conductor/1"
            answered = c.chat.completions.create(model="conductor", messages=[{"role": "user", "content": MARKER}])
            assert answered.choices[0].message.content == "Paris"
        finally:
            _stop(proc, log)
        assert len(loop.requests) > sent
    with TraceStore(home / "warehouse.duckdb") as store:
        assert ingest_staged(store, home / "staging").traces >= 2
    files = [p for root in (home, prefect_home, work) for p in root.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"mlflow.db", "warehouse.duckdb", "MLmodel", "model.safetensors"} <= names, names
    assert any("mlartifacts" in p.parts for p in files) and any(p.suffix == ".db" and "prefect" in str(p) for p in files)
    scanned = {str(p): p.read_bytes() for p in files} | {"pipeline output": output, "server log": log.read_bytes()}
    everything = b"".join(scanned.values())
    # positive controls: the scans see what the stores do hold
    assert b"QMARKER-5521" in everything and b"w-openai" in everything and b"challenger" in everything
    leaks = [(name, secret) for secret in SENTINELS.values() for name, data in scanned.items() if secret.encode() in data]
    assert not leaks, leaks
