"""Prefect flow: crawl the real MCP servers of tool_specs/servers.yaml into the committed
snapshot under tool_specs/crawled/ (what `make crawl` runs). Thin over worldsmith.commands.crawl."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from prefect import flow, get_run_logger  # noqa: E402
from prefect.artifacts import create_markdown_artifact  # noqa: E402

from worldsmith import commands  # noqa: E402
from worldsmith.config import load_config  # noqa: E402


@flow(name="crawl", log_prints=True)
def crawl(
    config_path: str = "pipeline.yaml", overrides: list[str] | None = None, servers: list[str] | None = None
) -> dict:
    """Install each server in its own cached venv, list its tools (never call one), write the snapshot."""
    logger = get_run_logger()
    cfg, root = load_config(config_path, overrides or [])
    summary = commands.crawl(cfg, root, servers, log=logger.info)
    failed = summary.get("failed", {})
    lines = [
        "# MCP crawl",
        "",
        "| servers ok | failed | tools in snapshot | servers in snapshot |",
        "|---:|---:|---:|---:|",
        (
            f"| {summary['servers_ok']} | {summary['servers_failed']} | {summary['tools']} | "
            f"{summary['servers_in_snapshot']} |"
        ),
    ]
    if failed:
        lines += ["", "| failed server | reason |", "|---|---|"] + [
            f"| {k} | {v[:120]} |" for k, v in sorted(failed.items())
        ]
    create_markdown_artifact(key="crawl-summary", markdown="\n".join(lines), description="worldsmith MCP crawl")
    return summary


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Crawl MCP servers into tool_specs/crawled/")
    parser.add_argument("--config", default="pipeline.yaml")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--server", dest="servers", action="append", default=None)
    args = parser.parse_args()
    crawl(config_path=args.config, overrides=args.overrides, servers=args.servers)
