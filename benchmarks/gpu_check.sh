#!/usr/bin/env bash
# Muon vs AdamW on one GPU, in one command (benchmarks/gpu_check.py says what it measures):
#
#   bash benchmarks/gpu_check.sh                         # ~1B Llama-style model, 8 x 4096 tokens per step
#   bash benchmarks/gpu_check.sh --steps 20 --batch 16   # arguments pass through to gpu_check.py
#   bash benchmarks/gpu_check.sh --model tiny            # a smoke run, also on a CPU
#
# Needs only a Python with torch: the model is written in the script and the project's muon.py and
# qk_clip.py are loaded by file path, so neither our package nor transformers need be installed.
# Env: PYTHON (default: the first of python, python3 that imports torch), GPU_CHECK_TIMEOUT
# (seconds, default 600; at the limit the script gets SIGINT, prints the runs that finished and
# keeps them in the JSON, and is killed 20 s later if still running).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,memory.total,memory.used,utilization.gpu,driver_version --format=csv || true
else
    echo "nvidia-smi: not found"
fi

PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
    for candidate in python python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import torch" >/dev/null 2>&1; then
            PY="$candidate"
            break
        fi
    done
fi
if [[ -z "$PY" ]]; then
    echo "gpu_check.sh: no python with torch found (set PYTHON=/path/to/python)" >&2
    exit 1
fi
"$PY" -c "import torch; print(torch.__version__, torch.cuda.is_available())"

LIMIT="${GPU_CHECK_TIMEOUT:-600}"
if command -v timeout >/dev/null 2>&1; then
    exec timeout --signal=INT --kill-after=20 "$LIMIT" "$PY" benchmarks/gpu_check.py "$@"
fi
echo "timeout: not found; running without the ${LIMIT} s limit" >&2
exec "$PY" benchmarks/gpu_check.py "$@"
