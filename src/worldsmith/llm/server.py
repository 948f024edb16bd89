"""Model servers worldsmith starts itself: llama.cpp (embedded default) and vLLM.

Both serve the OpenAI API that `worldsmith.llm.client` talks to, with the same tool-aware
chat template, so the code path is the same on a laptop CPU and on a GPU cluster. A server
runs as its own process (new session), logs to a file, and is tracked by a state file
holding its pid, so `worldsmith serve --stop` can stop it from another shell.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from worldsmith.config import ServerConfig
from worldsmith.llm.hf_to_gguf import UnsupportedModel, ensure_gguf, read_config
from worldsmith.llm.packaged import ServerError, packaged_gguf  # callers import these from here too

CHAT_TEMPLATE = Path(__file__).parent / "chat_templates" / "smollm2_tools.jinja"
CONVERTER = Path(__file__).parent / "convert_gguf.py"


def max_model_len(model_dir: Path, ctx_size: int) -> int:
    """ctx_size, capped at the model's trained context: vLLM refuses a longer one (llama.cpp allows it)."""
    try:
        trained = json.loads((Path(model_dir) / "config.json").read_text()).get("max_position_embeddings")
    except (OSError, ValueError):
        return ctx_size
    return min(ctx_size, int(trained)) if trained else ctx_size


def model_kind(model: Path) -> str:
    """`gguf` for a .gguf file, `hf` for a Hugging Face folder (config.json and weights)."""
    if model.is_file() and model.suffix == ".gguf":
        return "gguf"
    if model.is_dir() and (model / "config.json").is_file():
        return "hf"
    raise ServerError(
        f"--model {model}: neither a .gguf file nor a Hugging Face model folder (config.json and *.safetensors)"
    )


def serve_config(
    cfg: ServerConfig,
    model: Path,
    engine: str | None = None,
    port: int | None = None,
    name: str | None = None,
    log=print,
) -> ServerConfig:
    """The server config that serves `model`, an HF folder or a GGUF, as `name` on `port`.

    Engine: llama.cpp unless told otherwise (5-8x vLLM's CPU build on SmolLM2); an HF folder
    is then converted to a GGUF once (llm/hf_to_gguf.py, cached in model_cache_dir), or served
    by vLLM when the converter does not write its architecture. vLLM serves an HF folder as it
    is and a GGUF converted to a folder (convert_gguf.py).
    """
    model = Path(model).expanduser().resolve()
    kind = model_kind(model)
    served, path = name or (model.name if kind == "hf" else model.stem), model
    if kind == "hf" and engine != "vllm":
        try:
            read_config(model)
        except UnsupportedModel as exc:
            if engine == "llamacpp":
                raise ServerError(f"{exc}; serve it with --engine vllm") from None
            log(f"{exc}: serving it with vLLM")
            engine = "vllm"
        else:
            try:
                path = ensure_gguf(model, cache_dir=Path(cfg.model_cache_dir), log=log)
            except ImportError as exc:  # gguf, torch, safetensors: the train extra
                need = f"converting {model} to a GGUF needs the train extra ({exc}); or use --engine vllm"
                raise ServerError(need) from None
            except UnsupportedModel as exc:  # e.g. a tokenizer that is not byte-level BPE
                raise ServerError(f"{exc}; serve it with --engine vllm") from None
    engine = engine or "llamacpp"
    return cfg.model_copy(update={"engine": engine, "model_path": str(path), "model": served, "port": port or cfg.port})


def example_request(url: str, model: str) -> str:
    """A one-line chat completion against the server, for the user to paste."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Hello!"}]})
    return f"curl {url}/chat/completions -H 'Content-Type: application/json' -d {shlex.quote(body)}"


def worldsmith_command() -> str:
    """This worldsmith as the user's shell runs it: `worldsmith` when PATH finds this one, else
    the binary beside this Python (a venv's bin is often not on PATH; relative to the current
    folder when under it), else `python -m worldsmith.cli`."""
    binary = Path(sys.executable).parent / "worldsmith"
    if not binary.is_file():
        return f"{shlex.quote(sys.executable)} -m worldsmith.cli"
    on_path = shutil.which("worldsmith")
    if on_path and Path(on_path).resolve() == binary.resolve():
        return "worldsmith"
    try:
        shown = str(binary.absolute().relative_to(Path.cwd()))
    except ValueError:
        shown = str(binary.absolute())
    return shlex.quote(shown if "/" in shown else f"./{shown}")


class ModelServer:
    """One engine on one host:port."""

    def __init__(
        self, cfg: ServerConfig, project_root: Path, data_dir: Path, engine: str | None = None, reloadable: bool = False
    ):
        self.cfg = cfg
        self.engine = engine or cfg.engine
        # vLLM with its development endpoints (/collective_rpc, /reset_prefix_cache), so that new weights can be
        # loaded in place (`reload_weights`); only for a server worldsmith starts for itself (the RL rounds):
        # those endpoints run code in the server, and `worldsmith serve` may listen beyond this machine
        self.reloadable = reloadable
        self.root = Path(project_root)
        self.data_dir = Path(data_dir)
        self.state_file = self.data_dir / "server" / f"{cfg.host}_{cfg.port}.json"
        self.log_file = self.data_dir / "logs" / f"server-{self.engine}-{cfg.port}.log"

    @property
    def base(self) -> str:
        return f"http://{self.cfg.host}:{self.cfg.port}"

    @property
    def url(self) -> str:
        return self.base + "/v1"

    # ------------------------------------------------------------------ health
    def healthy(self, timeout: float = 2.0) -> bool:
        try:
            r = httpx.get(self.base + "/health", timeout=timeout)
            if r.status_code != 200:
                return False
            models = httpx.get(self.url + "/models", timeout=timeout)
            return models.status_code == 200
        except httpx.HTTPError:
            return False

    def served_models(self) -> list[str]:
        r = httpx.get(self.url + "/models", timeout=5)
        r.raise_for_status()
        return [m["id"] for m in r.json().get("data", [])]

    # ------------------------------------------------------------------ start
    def command(self) -> list[str]:
        cfg = self.cfg
        if self.engine == "llamacpp":
            model = Path(cfg.model_path).expanduser() if cfg.model_path else packaged_gguf()
            return [
                sys.executable,
                "-m",
                "worldsmith.llm.llamacpp_server",
                "--model",
                str(model),
                "--alias",
                cfg.model,
                "--host",
                cfg.host,
                "--port",
                str(cfg.port),
                "--ctx-size",
                str(cfg.ctx_size),
                "--parallel",
                str(cfg.parallel),
                "--max-tokens",
                str(cfg.max_tokens),
                "--threads",
                str(cfg.threads),
                "--threads-batch",
                str(cfg.threads_batch or 0),
                "--chat-template",
                str(CHAT_TEMPLATE),
            ]
        if self.engine == "vllm":
            python = self.vllm_python()
            model_dir = self.hf_model_dir(python)
            return [
                str(python),
                "-m",
                "vllm.entrypoints.openai.api_server",
                "--model",
                str(model_dir),
                "--served-model-name",
                cfg.model,
                "--host",
                cfg.host,
                "--port",
                str(cfg.port),
                "--max-model-len",
                str(max_model_len(model_dir, cfg.ctx_size)),
                "--max-num-seqs",
                str(cfg.parallel),
                "--enable-auto-tool-choice",
                "--tool-call-parser",
                "hermes",
                "--chat-template",
                str(CHAT_TEMPLATE),
                "--generation-config",
                "vllm",
                # the reply length of a request without max_tokens (a default, not a ceiling)
                *(
                    ["--override-generation-config", json.dumps({"max_new_tokens": cfg.max_tokens})]
                    if cfg.max_tokens
                    else []
                ),
                "--enable-prefix-caching",
                # usage.prompt_tokens_details.cached_tokens: the client counts prefix-cache hits
                "--enable-prompt-tokens-details",
                *cfg.vllm_args,
            ]
        raise ServerError(f"unknown engine {self.engine!r}")

    def vllm_python(self) -> Path:
        python = Path(self.cfg.vllm_python).expanduser()
        if not python.is_absolute():
            python = self.root / python
        if not python.exists():
            raise ServerError(
                f"vLLM is not installed at {python}: run `make setup-vllm` (CPU build) or point "
                "llm.server.vllm_python at a Python with `vllm` (GPU), or use an external endpoint URL"
            )
        return python

    def hf_model_dir(self, python: Path) -> Path:
        """vLLM serves an HF folder: a given model_path folder, or the GGUF converted once."""
        if self.cfg.model_path and Path(self.cfg.model_path).expanduser().is_dir():
            return Path(self.cfg.model_path).expanduser()
        gguf = Path(self.cfg.model_path).expanduser() if self.cfg.model_path else packaged_gguf()
        out = Path(self.cfg.model_cache_dir).expanduser() / f"{gguf.stem}-hf"
        if not (out / "config.json").exists():
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_file, "ab") as log:
                proc = subprocess.run(
                    [
                        str(python),
                        str(CONVERTER),
                        "--gguf",
                        str(gguf),
                        "--out",
                        str(out),
                        "--chat-template",
                        str(CHAT_TEMPLATE),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=False,
                )
            if proc.returncode != 0:
                raise ServerError(f"converting {gguf.name} to an HF folder failed:\n{self.log_tail()}")
        return out

    def start(self, owner_pid: int | None = None) -> None:
        """Start the engine in the background and wait until it answers, or raise with its log. With
        `owner_pid` (the caller's pid) a llama.cpp server stops by itself when that process is gone, so a run
        killed outright leaves no server behind; without it the server outlives its caller (`worldsmith serve`)."""
        if self.healthy():
            raise ServerError(
                f"something already answers on {self.base}; stop it first ({worldsmith_command()} serve --stop)"
            )
        self._wait_for_port()
        command = self.command()
        if owner_pid and self.engine == "llamacpp":
            command += ["--exit-with", str(owner_pid)]
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        if self.engine == "vllm":
            # without it vLLM's CPU build reserves 92% of RAM for the KV cache and fails
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
            env.setdefault("VLLM_NO_USAGE_STATS", "1")
            iomp = Path(command[0]).parent.parent / "lib" / "libiomp5.so"
            if iomp.exists():  # Intel OpenMP: ~10-20% faster single stream on CPU
                env.setdefault("LD_PRELOAD", str(iomp))
            env.setdefault("HF_HUB_OFFLINE", "1")
            env.setdefault("TRANSFORMERS_OFFLINE", "1")
            if self.reloadable:
                env["VLLM_SERVER_DEV_MODE"] = "1"
        started = time.monotonic()
        with open(self.log_file, "ab") as log:
            log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(command)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
                env=env,
                start_new_session=True,
            )
        state = {
            "pid": proc.pid,
            "engine": self.engine,
            "url": self.url,
            "model": self.cfg.model,
            "model_path": self.cfg.model_path,
            "log": str(self.log_file),
            "started_at": time.time(),
        }
        self.state_file.write_text(json.dumps(state, indent=2))
        deadline = started + self.cfg.startup_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.state_file.unlink(missing_ok=True)
                raise ServerError(
                    f"{self.engine} server exited with code {proc.returncode} during start-up:\n{self.log_tail()}"
                )
            if self.healthy():
                state["ready_s"] = round(time.monotonic() - started, 2)
                self.state_file.write_text(json.dumps(state, indent=2))
                return
            time.sleep(0.5)
        self.stop()
        raise ServerError(
            f"{self.engine} server did not become healthy within {self.cfg.startup_timeout_s:.0f}s:\n{self.log_tail()}"
        )

    def _wait_for_port(self, patience: float = 10.0) -> None:
        """Raise a clear error when something that is no model server holds the port (the engine would only log
        "couldn't bind" and exit). Waits `patience` seconds first: a connection's local end can hold a port briefly."""
        deadline = time.monotonic() + patience
        while True:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the engines bind: TIME_WAIT is fine
                try:
                    probe.bind((self.cfg.host, self.cfg.port))
                    return
                except OSError as e:
                    if time.monotonic() >= deadline:
                        raise ServerError(
                            f"cannot start the {self.engine} server on {self.cfg.host}:{self.cfg.port}: the port is "
                            f"taken by a process that does not answer as a model server ({e.strerror}); free it or "
                            "choose another port (llm.server.port, llm.policy.port, eval.port or `serve --port`)"
                        ) from None
            time.sleep(0.5)

    def state(self) -> dict | None:
        return json.loads(self.state_file.read_text()) if self.state_file.exists() else None

    def reload_weights(self, folder: Path, timeout: float = 600) -> float:
        """Load the weights in HF folder `folder` (same architecture) into the running vLLM engine in place, and
        drop its prefix cache (computed with the old weights); returns the seconds it took. The engine, its
        compiled graphs and its KV cache stay: what a restart would redo. vLLM only, started `reloadable`."""
        if self.engine != "vllm" or not self.reloadable:
            raise ServerError(
                f"{self.engine} server on {self.base}: weights are loaded in place only by a vLLM server started "
                "reloadable (llama.cpp is restarted on a new GGUF instead)"
            )
        t0 = time.monotonic()
        body = {"method": "reload_weights", "kwargs": {"weights_path": str(Path(folder).resolve())}}
        for path, payload in (("/collective_rpc", body), ("/reset_prefix_cache", None)):
            r = httpx.post(self.base + path, json=payload, timeout=timeout)
            if r.status_code != 200:
                raise ServerError(f"{path} on {self.base} answered {r.status_code}: {r.text[:500]}\n{self.log_tail()}")
        return time.monotonic() - t0

    def stop(self, timeout: float = 30) -> bool:
        """Stop the server recorded in the state file; returns whether one was stopped."""
        state = self.state()
        if not state:
            return False
        pid = state["pid"]
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            self.state_file.unlink(missing_ok=True)
            return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(pid):
                break
            time.sleep(0.2)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        self.state_file.unlink(missing_ok=True)
        return True

    def log_tail(self, lines: int = 25) -> str:
        if not self.log_file.exists():
            return "(no log)"
        text = self.log_file.read_text(errors="replace").splitlines()
        return "\n".join("    " + line for line in text[-lines:])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # reap it if it is our child, so it does not linger as a zombie
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def share_cores(main: ServerConfig, policy: ServerConfig) -> tuple[ServerConfig, ServerConfig]:
    """Two llama.cpp servers on one machine (eval: the policy under test beside the simulators'
    server) each took every core by default (`threads: 0`); their spinning threads then fought
    over the cores and an eval episode took ~5 minutes on 2 cores. Split the cores between
    them instead; a `threads` the user set is kept."""
    if main.engine != "llamacpp" or policy.engine != "llamacpp" or main.threads or policy.threads:
        return main, policy
    cores = os.cpu_count() or 1
    return (
        main.model_copy(update={"threads": max(1, cores - cores // 2)}),
        policy.model_copy(update={"threads": max(1, cores // 2)}),
    )


@contextlib.contextmanager
def embedded_server(cfg: ServerConfig, project_root: Path, data_dir: Path, log=print) -> Iterator[str]:
    """Yield the embedded server's URL, starting it if nothing answers and stopping what we started."""
    server = ModelServer(cfg, project_root, data_dir)
    if server.healthy():
        state = server.state()
        if state and (state.get("model_path"), state.get("engine")) != (cfg.model_path, server.engine):
            raise ServerError(
                f"{server.url} serves {state.get('model_path') or 'the packaged model'} ({state.get('engine')}), not "
                f"{cfg.model_path or 'the packaged model'} ({server.engine}); "
                f"stop it first ({worldsmith_command()} serve --stop)"
            )
        log(f"using the model server already answering on {server.url}")
        yield server.url
        return
    log(f"starting the embedded {server.engine} server on {server.url} (log: {server.log_file})")
    t0 = time.monotonic()
    server.start(owner_pid=os.getpid())
    log(f"{server.engine} server ready in {time.monotonic() - t0:.1f}s")
    try:
        yield server.url
    finally:
        server.stop()
