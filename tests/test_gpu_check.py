"""benchmarks/gpu_check.sh must work on the day a GPU is lent: that box has torch and nothing of
ours, so the script has to run from the repository alone. Here its CPU smoke run (a tiny random
Llama) goes through the shell wrapper with a Python whose `worldsmith` import is blocked, and every
variant must finish with a finite loss and a step time, importing nothing but torch."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_gpu_check_smoke_runs_with_torch_alone(tmp_path):
    # a sitecustomize that makes `import worldsmith` and `import transformers` fail, as on the GPU box
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('worldsmith', 'transformers'):\n"
        "            raise ImportError(f'{name} is not on the GPU box')\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    out = tmp_path / "gpu_check.json"
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(block), "GPU_CHECK_TIMEOUT": "300"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU smoke even where a GPU is visible: the 1B run is not a unit test
    proc = subprocess.run(
        ["bash", "benchmarks/gpu_check.sh", "--model", "tiny", "--steps", "2", "--length", "64", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["complete"] and result["imports_only_torch"], result
    runs = {r["name"]: r for r in result["results"]}
    assert {"adamw", "muon", "muon_qk_clip", "torch_adamw"} <= set(runs), sorted(runs)
    for name, r in runs.items():
        assert r["step_s_mean"] > 0 and r["tokens_per_s"] > 0, (name, r)
        assert math.isfinite(r["loss_first"]) and math.isfinite(r["loss_last"]), (name, r)
    assert result["ratios"]["muon_over_adamw"] > 0
    assert "Muon / AdamW step time" in proc.stdout
