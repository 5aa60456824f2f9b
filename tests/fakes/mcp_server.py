"""A real MCP server built with the SDK's `MCPServer`, for tests: stdio or streamable HTTP.

    python -m tests.fakes.mcp_server stdio
    python -m tests.fakes.mcp_server http [--port 0] [--token T]   # prints ``READY <port>``

Tools: ``echo``, ``add``, ``lookup_order`` (takes an ``api_token``), ``fail`` (an error
result), ``slow`` (sleeps), ``crash`` (the process exits mid-call) and ``whoami`` (the
``FAKE_MCP_TAG`` environment variable and the working directory).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
from typing import Any


def build() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("fake-tools")

    @server.tool(description="Repeat the text back.")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool(description="Look up an order by id.")
    def lookup_order(order_id: str, api_token: str) -> str:
        return f"order {order_id}: shipped (token ok: {bool(api_token)})"

    @server.tool(description="Always fails.")
    def fail(message: str = "boom") -> str:
        raise ValueError(message)

    @server.tool(description="Sleep, then answer.")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool(description="Exit the server process mid-call.")
    def crash() -> str:
        os._exit(3)

    @server.tool(description="The server's tag and working directory (and one env variable).")
    def whoami(variable: str = "") -> str:
        seen = f" {variable}={os.environ.get(variable, '<unset>')}" if variable else ""
        return f"tag={os.environ.get('FAKE_MCP_TAG', '')} cwd={os.getcwd()}{seen}"

    return server


async def _serve_http(port: int, token: str | None) -> None:
    import uvicorn
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Receive, Scope, Send

    app = build().streamable_http_app()

    def guard(inner: ASGIApp) -> ASGIApp:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if token and scope["type"] == "http":
                headers = dict(scope.get("headers") or [])
                if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                    await JSONResponse({"error": "unauthorized"}, 401)(scope, receive, send)
                    return
            await inner(scope, receive, send)

        return wrapped

    config = uvicorn.Config(guard(app), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)  # connections queue until uvicorn accepts them
    bound = sock.getsockname()[1]
    task = asyncio.create_task(server.serve(sockets=[sock]))
    print(f"READY {bound}", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    await done.wait()
    server.should_exit = True
    await task


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.mcp_server")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=None, help="HTTP: require `Authorization: Bearer T`")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        build().run("stdio")
    else:
        asyncio.run(_serve_http(args.port, args.token))
    sys.exit(0)


if __name__ == "__main__":
    main()
