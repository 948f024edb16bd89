"""Tool repository stage: crawl real MCP servers, normalize, evolve, tool graph."""
