"""User journeys: every command a user is shown in README.md and docs/operations.md, run as
written (or at the smaller size stated beside it where the documented size takes minutes). Each
exits 0, prints no traceback and prints its summary.

The commands are read from the docs' ```bash blocks here, so a documented command that no journey
covers fails `test_every_documented_command_is_a_journey_or_a_stated_exclusion`. Each command line
maps to a journey of this file (a test function), to a test elsewhere that runs it the same way
(`conductor ui`, `conductor deploy`: real servers, already started and checked there), or to an
exclusion with its reason (API keys, GPUs, a Postgres server) and, where one exists, a stand-in.

The `conductor` commands run in this process through Typer's runner (the same app the console
script runs) under the session's Prefect test server, in a fresh CONDUCTOR_HOME of this module;
`conductor serve` runs as its own process. Sizes reach what a user meets where that is cheap: the
warm start logs several times (the CLI's bar broke at its second log line), the night's GRPO runs
across a chunk boundary, and one evaluation runs every method kind."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner, Result

from conductor.cli import app
from conductor.config import REPO_ROOT

# The night and the training fixtures run whole pipelines: on a 2-core machine shared with other
# jobs (load 15) the night alone took 9 min, past the suite's default 600 s guard.
pytestmark = pytest.mark.timeout(1800)

DOCS = ("README.md", "docs/operations.md")
CONDUCTOR = str(Path(sys.executable).with_name("conductor"))

# The smallest training that still runs each stage; the warm start takes 3 SFT steps and logs each.
TINY_TRAINING = ["--set", "sft_problems=48", "--set", "sft_copies=1", "--set", "per_device_train_batch_size=2",
                 "--set", "num_generations=2", "--set", "max_completion_length=48"]
# A night at test size: 2 GRPO steps in chunks of 1 (a chunk boundary), 8 held-out problems.
NIGHT_SIZE = ["--steps", "2", "--chunk-steps", "1", "--heldout", "8", *TINY_TRAINING]
FAKE_KEYS = {"OPENAI_API_KEY": "sk-test-not-a-key", "ANTHROPIC_API_KEY": "sk-test-not-a-key",
             "GEMINI_API_KEY": "test-not-a-key"}

# --- the docs' commands -------------------------------------------------------------------------


def command_lines(text: str) -> list[str]:
    """Each command of the ```bash blocks: continuation lines joined, comments and blank lines
    dropped, whitespace collapsed."""
    commands: list[str] = []
    for block in re.findall(r"^\s*```bash\n(.*?)^\s*```", text, re.S | re.M):
        joined = re.sub(r"\\\n", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                commands.append(" ".join(line.split()))
    return commands


def documented() -> dict[str, list[str]]:
    return {doc: command_lines((REPO_ROOT / doc).read_text()) for doc in DOCS}


# Command (as the docs write it, normalised) -> the journey in this file that runs it.
JOURNEYS = {
    "make run": "test_make_run_is_the_nightly_and_leaves_a_challenger",
    "conductor nightly": "test_make_run_is_the_nightly_and_leaves_a_challenger",
    ".venv/bin/conductor --help": "test_help",
    "CONDUCTOR_POOL_FILE=deployments/pools/paper.yaml conductor nightly --profile production --dry-run":
        "test_production_dry_runs",
    "CONDUCTOR_POOL_FILE=deployments/pools/paper.yaml CONDUCTOR_ACCELERATE_CONFIG=deployments/accelerate/multi_gpu.yaml"
    " conductor nightly --profile production --dry-run --max-usd 50": "test_production_dry_runs",
    "conductor run --limit 5": "test_run",
    "conductor pool show deployments/pools/local.yaml": "test_pool_show_and_check",
    'conductor ask "Solve x^2 = 4" --plan plan.txt --json': "test_ask",
    "conductor solve --shape verify --out traces.jsonl": "test_solve_and_curate",
    "conductor data curate --profile local --out curated/": "test_solve_and_curate",
    'conductor sql "SELECT * FROM v_leaderboard"': "test_sql_and_the_warehouse",
    "conductor sql": "test_sql_and_the_warehouse",
    "conductor warehouse info | export --parquet DIR | ingest DIR": "test_sql_and_the_warehouse",
    "conductor train --estimate": "test_train",
    "conductor model init --tiny runs/tiny": "test_model_init",
    "conductor train --profile local": "test_train",
    "conductor registry resolve models:/conductor@challenger": "test_registry_and_the_champion",
    "conductor model list | promote VERSION [--force] | rollback": "test_registry_and_the_champion",
    "conductor eval -m single:sim-generalist -m moa -m oracle": "test_eval_every_method_kind_then_costs_and_plots",
    "conductor costs --run RUN": "test_eval_every_method_kind_then_costs_and_plots",
    "conductor plot RUN --out plots/": "test_eval_every_method_kind_then_costs_and_plots",
    "conductor serve --model template:fanout --pool deployments/pools/local.yaml": "test_serve",
    "export CONDUCTOR_SERVE_API_KEYS=sk-mine": "test_serve",
    'conductor ask "What is 17 * 3?" --effort low': "test_effort",
    'conductor ask "What is 17 * 3?" --conductor models:/conductor@challenger --effort high': "test_effort",
    'conductor eval -m "conductor:models:/conductor@challenger?effort=low" -m "template:fanout?effort=medium"':
        "test_effort",
    "conductor serve --model template:fanout --pool deployments/pools/local.yaml --port 8000": "test_serve",
}

# Command -> the test elsewhere that runs it as a user does (real servers, already paid for there).
ELSEWHERE = {
    "make ui": "tests/test_ui.py::test_conductor_ui_serves_every_printed_url_and_ctrl_c_stops_every_process",
    "conductor ui --prefect-port 4200 --mlflow-port 5000":
        "tests/test_ui.py::test_conductor_ui_serves_every_printed_url_and_ctrl_c_stops_every_process",
    "make deploy": "tests/test_deployments.py::test_deploy_creates_the_pools_and_the_scheduled_deployments",
    "conductor deploy": "tests/test_deployments.py::test_deploy_creates_the_pools_and_the_scheduled_deployments",
    # the real model: its weights dequantized (~30 s) and answering, already paid for in
    # test_real_model's own home (both commands in a fresh `conductor` process, --json added to read the trace)
    'conductor ask "What is the chemical symbol of sodium?"':
        "tests/test_real_model.py::test_the_readme_question_falls_back_to_the_real_pool",
    'conductor ask "What is the capital of France?" --pool deployments/pools/local-real.yaml':
        "tests/test_real_model.py::test_conductor_ask_answers_with_the_real_pool",
    # a second whole night for one more row: test_nightly's night runs with challenger_efforts=["low"]
    "conductor nightly --challenger-effort low --challenger-effort high":
        "tests/test_nightly.py::test_the_challenger_at_an_effort_level_is_its_own_row_with_the_level_in_its_prompts",
}

GPU = "needs GPUs (and vLLM); tests/test_training_accelerate.py runs the same launch path on 2 CPU processes"
# Command -> why no test runs it as written (and the stand-in that runs instead, where one exists).
EXCLUDED = {
    "make test": "the test suite itself",
    "conductor train --profile small-real": "unpacks and trains the real 135M model on CPU (tens of minutes);"
                                           " tests/test_real_model.py covers its path",
    "conductor pool check deployments/pools/paper.yaml": "needs API keys and the paper's vLLM servers (it calls each"
                                                       " worker); stand-in: the same check of deployments/pools/"
                                                       "local.yaml in test_pool_show_and_check",
    "export OPENAI_API_KEY=... ANTHROPIC_API_KEY=... GEMINI_API_KEY=...": "real API keys",
    "CONDUCTOR_POOL_FILE=deployments/pools/paper.yaml conductor run --profile production":
        "paid calls to real APIs; stand-in: the production dry runs in test_production_dry_runs",
    'export PREFECT_API_DATABASE_CONNECTION_URL="postgresql+asyncpg://prefect:PASSWORD@db-host:5432/prefect"':
        "a Postgres server (a placeholder password and host)",
    "prefect server start --host 0.0.0.0 --port 4200": "Prefect's own command, on all interfaces (tests keep to"
                                                        " 127.0.0.1; tests/test_ui.py starts it there)",
    "export PREFECT_UI_API_URL=http://<public-host>:4200/api": "a public host name placeholder",
    'CUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file deployments/accelerate/multi_gpu.yaml'
    ' "$(which conductor)" train --profile production --pool deployments/pools/paper.yaml --set use_vllm=false': GPU,
    'CUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file deployments/accelerate/multi_gpu.yaml'
    ' "$(which conductor)" train --profile production --pool deployments/pools/paper.yaml --set use_vllm=true'
    " --set vllm_mode=colocate --set vllm_gpu_memory_utilization=0.3": GPU,
    "CUDA_VISIBLE_DEVICES=2 trl vllm-serve --model Qwen/Qwen2.5-7B-Instruct --tensor_parallel_size 1"
    " --data_parallel_size 1 --port 8000 --gpu_memory_utilization 0.9 &": GPU,
    'CUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file deployments/accelerate/multi_gpu.yaml'
    ' "$(which conductor)" train --profile production --pool deployments/pools/paper.yaml --set use_vllm=true'
    " --set vllm_mode=server --set vllm_server_base_url=http://127.0.0.1:8000": GPU,
    "CUDA_VISIBLE_DEVICES=0,1 CONDUCTOR_POOL_FILE=deployments/pools/paper.yaml conductor nightly --profile production"
    " --accelerate-config deployments/accelerate/multi_gpu.yaml --set vllm_mode=colocate --max-usd 50": GPU,
}


def test_every_documented_command_is_a_journey_or_a_stated_exclusion() -> None:
    commands = {c for cs in documented().values() for c in cs}
    uncovered = sorted(commands - set(JOURNEYS) - set(ELSEWHERE) - set(EXCLUDED))
    assert not uncovered, f"documented commands no journey runs (add a journey or a justified exclusion): {uncovered}"
    stale = sorted((set(JOURNEYS) | set(ELSEWHERE) | set(EXCLUDED)) - commands)
    assert not stale, f"journeys for commands the docs no longer show: {stale}"
    for name in set(JOURNEYS.values()):
        assert callable(globals().get(name)), name
    for ref in set(ELSEWHERE.values()):
        path, name = ref.split("::")
        assert f"def {name}(" in (REPO_ROOT / path).read_text(), ref


def make_recipe(target: str) -> str:
    """The command a Makefile target runs (its last recipe line, `$(BIN)/` dropped)."""
    text = (REPO_ROOT / "Makefile").read_text()
    recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert recipe, target
    return recipe.group(1).strip().splitlines()[-1].strip().replace("$(BIN)/", "")


# --- running a documented command ---------------------------------------------------------------


def split(line: str) -> tuple[dict[str, str], list[str]]:
    """A command line as the shell reads it: its VAR=VALUE prefixes and its `conductor` arguments."""
    words = shlex.split(line)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] in ("conductor", ".venv/bin/conductor"), line
    return env, words[1:]


def conduct(line: str, *extra: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            stdin: str | None = None, stdout_only: bool = False) -> str:
    """Run a documented `conductor` command (plus `extra` arguments: the stated smaller size);
    it must exit 0 with no traceback. Returns what it printed (`stdout_only`: its standard output
    alone, as a pipe reads a `--json` command's)."""
    prefix, args = split(line)
    with contextlib.chdir(cwd or REPO_ROOT):
        result: Result = CliRunner().invoke(app, [*args, *extra], env={**prefix, **(env or {})}, input=stdin)
    console_logs_to(sys.stderr)
    shown = f"$ {line} {' '.join(extra)}\n{result.output}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        shown += "".join(traceback.format_exception(*result.exc_info))
    assert result.exit_code == 0, shown
    assert "Traceback" not in result.output, shown
    return result.stdout if stdout_only else result.output


def console_logs_to(stream: object) -> None:
    """Point Prefect's console log handler back at `stream`: a flow run inside the runner leaves it
    writing to the runner's captured stderr, closed once the command returns (every later log
    line was then a "Logging error" traceback)."""
    import logging

    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler):
            handler.stream = stream  # not setStream: it flushes the closed stream first
            handler.console.file = stream  # type: ignore[assignment]


@pytest.fixture(scope="module")
def home(prefect_harness: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh CONDUCTOR_HOME (and MLflow store in it) for this module's journeys."""
    fresh = tmp_path_factory.mktemp("journeys-home")
    saved = {k: os.environ.get(k) for k in ("CONDUCTOR_HOME", "MLFLOW_TRACKING_URI")}
    os.environ["CONDUCTOR_HOME"] = str(fresh)
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    try:
        yield fresh
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def night(home: Path) -> str:
    """`make run` at test size: `conductor nightly --profile local` (the Makefile's recipe)."""
    return conduct(make_recipe("run"), *NIGHT_SIZE)


# --- the journeys -------------------------------------------------------------------------------


def test_make_run_is_the_nightly_and_leaves_a_challenger(night: str) -> None:
    assert make_recipe("run") == "conductor nightly --profile local"
    assert "Nightly " in night and "model: conductor v1, alias challenger" in night and "gate vs " in night
    assert "where to look:" in night and "challenger v1" in night  # the summary table, with the decision above


def test_help() -> None:
    out = conduct(".venv/bin/conductor --help")
    for command in ("nightly", "train", "eval", "serve", "sql"):
        assert command in out


def test_production_dry_runs(home: Path) -> None:
    """What a production night would run, printed without running (the keys: placeholders, as
    after the README's `export OPENAI_API_KEY=...`)."""
    readme, operations = (c for c in JOURNEYS if c.startswith("CONDUCTOR_POOL_FILE=") and "--dry-run" in c)
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    out = conduct(readme, env=FAKE_KEYS)
    assert "production" in out and "paper.yaml" in out
    out = conduct(operations, env=FAKE_KEYS)
    assert "accelerate launch" in out and "multi_gpu.yaml" in out
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before  # a dry run changes nothing


def test_run(home: Path) -> None:
    out = conduct("conductor run --limit 5")
    assert "run " in out


def test_pool_show_and_check(home: Path) -> None:
    out = conduct("conductor pool show deployments/pools/local.yaml")
    assert "pool local-simulated" in out and "sim-generalist" in out
    out = conduct("conductor pool check deployments/pools/local.yaml")  # the stand-in for the paper pool's check
    assert "all 4 workers answered" in out


def test_ask(home: Path, tmp_path: Path) -> None:
    (tmp_path / "plan.txt").write_text('model_id = [0]\nsubtasks = ["Solve it; give only the answer."]\n'
                                       "access_list = [[]]\n")
    trace = json.loads(conduct('conductor ask "Solve x^2 = 4" --plan plan.txt --json', cwd=tmp_path, stdout_only=True))
    assert len(trace["steps"]) == 1


def test_effort(night: str) -> None:
    """The effort knob: the default workflow at a level, a trained Conductor told the level (the
    night's challenger), and an evaluation row per level (1 problem per benchmark)."""
    low = conduct('conductor ask "What is 17 * 3?" --effort low')
    assert "answer" in low.lower()
    high = conduct('conductor ask "What is 17 * 3?" --conductor models:/conductor@challenger --effort high')
    assert "answer" in high.lower()
    out = conduct('conductor eval -m "conductor:models:/conductor@challenger?effort=low" -m "template:fanout?effort=medium"',
                  "--limit", "1", "--no-mlflow")
    assert "+effort-low" in out and "+effort-medium" in out, out


def test_solve_and_curate(home: Path, tmp_path: Path) -> None:
    out = conduct("conductor solve --shape verify --out traces.jsonl", cwd=tmp_path)
    traces = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert f"{len(traces)} problems over pool" in out and len(traces) >= 1
    conduct("conductor data curate --profile local --out curated/", cwd=tmp_path)
    assert (tmp_path / "curated" / "manifest.json").is_file() and (tmp_path / "curated" / "train.jsonl").is_file()


@pytest.fixture(scope="module")
def evaluation(home: Path, night: str) -> tuple[str, str]:
    """The README's eval, with every other method kind added (a trained Conductor: the night's
    challenger), 3 problems per benchmark. Returns its output and its evaluation id."""
    others = ["-m", "single:sim-coder", "-m", "reflect:sim-generalist", "-m", "budget:sim-generalist",
              "-m", "random", "-m", "router", "-m", "template:fanout", "-m", "conductor:models:/conductor@challenger"]
    out = conduct("conductor eval -m single:sim-generalist -m moa -m oracle", *others, "--limit", "3", "--no-mlflow")
    found = re.search(r"costs: conductor costs --run (\S+)", out)
    assert found, out
    return out, found.group(1)


def test_eval_every_method_kind_then_costs_and_plots(evaluation: tuple[str, str], tmp_path: Path) -> None:
    from conductor.evaluation.methods import METHOD_KINDS

    out, run = evaluation
    for kind in METHOD_KINDS:
        assert kind in out, kind
    assert "$" in conduct(f"conductor costs --run {run}")
    conduct(f"conductor plot {run} --out plots/", cwd=tmp_path)
    assert list((tmp_path / "plots").glob("*.png"))


def test_sql_and_the_warehouse(evaluation: tuple[str, str], tmp_path: Path) -> None:
    out = conduct('conductor sql "SELECT * FROM v_leaderboard"')
    assert "accuracy" in out
    conduct("conductor sql", stdin="SELECT 1 AS one;\n.quit\n")
    assert "traces" in conduct("conductor warehouse info")
    conduct(f"conductor warehouse export --parquet {tmp_path / 'dir'}")
    assert list((tmp_path / "dir").rglob("*.parquet"))
    conduct(f"conductor warehouse ingest {tmp_path / 'dir'}")


def test_model_init(home: Path, tmp_path: Path) -> None:
    """`--no-sft`: the warm start is what test_train runs (at 3 steps; the 400 of the profile's
    take minutes)."""
    out = conduct("conductor model init --tiny runs/tiny", "--no-sft", cwd=tmp_path)
    assert "model: " in out and (tmp_path / "runs" / "tiny" / "base" / "config.json").is_file()


@pytest.fixture(scope="module")
def trained(night: str) -> str:
    """`conductor train --profile local` at test size: a warm start of 3 SFT steps, each logged
    (the progress bar once broke at the second), 2 GRPO steps, registered in MLflow."""
    return conduct("conductor train --profile local", *TINY_TRAINING, "--max-steps", "2", "--compare", "8")


def test_train(trained: str) -> None:
    assert "projected" in conduct("conductor train --estimate").lower()
    assert "models:/conductor" in trained


def test_registry_and_the_champion(trained: str) -> None:
    out = conduct("conductor registry resolve models:/conductor@challenger")
    assert Path(out.strip().splitlines()[-1]).is_dir()
    listed = conduct("conductor model list")
    assert "challenger" in listed
    conduct("conductor model promote 1 --force")
    conduct("conductor model promote 2 --force")
    conduct("conductor model rollback")
    assert re.search(r"champion", conduct("conductor model list"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve(home: Path) -> None:
    """`conductor serve` as the README starts it (its own process, a free port for 8000), hit once
    by the README's OpenAI client code."""
    from openai import OpenAI

    port = free_port()
    _, args = split("conductor serve --model template:fanout --pool deployments/pools/local.yaml --port 8000")
    args[args.index("--port") + 1] = str(port)
    env = {**os.environ, "CONDUCTOR_SERVE_API_KEYS": "sk-mine"}
    server = subprocess.Popen([CONDUCTOR, *args], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            time.sleep(0.2)
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-mine")
        r = client.chat.completions.create(model="conductor", messages=[{"role": "user", "content": "What is 17 * 3?"}])
        assert r.choices[0].message.content and r.usage.total_tokens > 0 and "trace_id" in json.dumps(r.model_extra)
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    assert "Traceback" not in out, out
