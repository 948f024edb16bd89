"""MCP servers: the server list, one cached venv per server package, connections, the
crawl of their tool specs, the committed snapshot, and real execution of safe tools.
The `mcp` SDK is imported inside the functions that connect, so reading the list or the
snapshot stays light."""

from worldsmith.mcp.crawl import CrawlResult, crawl_all, crawl_server, run_crawl
from worldsmith.mcp.servers import ServerEntry, ServerListError, load_server_list
from worldsmith.mcp.session import stdio_params
from worldsmith.mcp.snapshot import load_snapshot, load_snapshot_servers, load_snapshot_specs, write_snapshot
from worldsmith.mcp.venvs import InstallError, ensure_venv

__all__ = [
    "CrawlResult",
    "InstallError",
    "ServerEntry",
    "ServerListError",
    "crawl_all",
    "crawl_server",
    "ensure_venv",
    "load_server_list",
    "load_snapshot",
    "load_snapshot_servers",
    "load_snapshot_specs",
    "run_crawl",
    "stdio_params",
    "write_snapshot",
]
