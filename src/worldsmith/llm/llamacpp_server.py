"""Run llama.cpp's OpenAI-compatible server in this process (the `xllamacpp` wheel has no
server command line). Started by `worldsmith serve` as its own process; stops on SIGTERM, and
with `--exit-with PID` (a run's embedded server) also when the process that started it is gone."""

from __future__ import annotations

import argparse
import os
import signal
import threading


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="GGUF file")
    parser.add_argument("--alias", required=True, help="model name the API reports and accepts")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8010)
    parser.add_argument("--ctx-size", type=int, default=32768)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=0,
        help="reply length for a request that sends none (0: until the context ends)",
    )
    parser.add_argument("--threads", type=int, default=0, help="threads that generate (0: llama.cpp's default)")
    parser.add_argument("--threads-batch", type=int, default=0, help="threads that evaluate prompts (0: as --threads)")
    parser.add_argument(
        "--kv-unified",
        action="store_true",
        help="one KV cache shared by all slots (a sequence may outgrow ctx-size / parallel; every sequence then "
        "attends over every slot's cells: slower with many slots)",
    )
    parser.add_argument("--chat-template", required=True, help="Jinja chat template file")
    parser.add_argument(
        "--exit-with",
        type=int,
        default=0,
        help="the pid of the process that started this one: stop when it is gone (0: outlive it, as `serve` does)",
    )
    args = parser.parse_args()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias} if not isinstance(params.model_alias, str) else args.alias
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    if args.max_tokens > 0:  # a default only: a request's own max_tokens still applies, above it too
        params.n_predict = args.max_tokens
    # by default each slot has its own KV stream of ctx_size / parallel tokens: in one unified cache every sequence
    # attends over every slot's cells, and 8 conversations took 1.17x as long on 2 cores (benchmarks/kv_cache.py)
    params.kv_unified = args.kv_unified
    params.cont_batching = True
    params.use_jinja = True
    params.chat_template = open(args.chat_template).read()
    params.endpoint_metrics = True
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    if args.threads_batch:  # llama.cpp's split: prompts on every core, generation leaving one to the rest
        params.cpuparams_batch.n_threads = args.threads_batch

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.exit_with:  # a run killed outright (SIGKILL) cannot stop its server: the server notices instead
        threading.Thread(target=_exit_with, args=(args.exit_with, stop), daemon=True).start()
    server = xllamacpp.Server(params)  # noqa: F841  (keeps serving while referenced)
    print(f"worldsmith: llama.cpp serving {args.alias} on {server.listening_address} (pid {os.getpid()})", flush=True)
    stop.wait()
    print("worldsmith: llama.cpp server stopping", flush=True)
    os._exit(0)  # the native server threads do not join; exit without waiting on them


def _exit_with(owner: int, stop: threading.Event, every_s: float = 1.0) -> None:
    """Set `stop` once `owner`, this process's parent, is gone (the parent pid changes to a reaper's)."""
    while not stop.wait(every_s):
        if os.getppid() != owner:
            print(f"worldsmith: the process that started this server ({owner}) is gone; stopping", flush=True)
            stop.set()


if __name__ == "__main__":
    main()
