"""MCP servers as tool sources, started lazily and supervised like channels."""
