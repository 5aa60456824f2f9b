"""Read Server-Sent Events with aiohttp until a condition holds (for the web pages' streams)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp

Event = tuple[str, Any]


async def read_events(
    session: aiohttp.ClientSession,
    url: str,
    until: Callable[[list[Event]], bool],
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> list[Event]:
    """Every event of the stream at ``url`` up to the first moment ``until(events)`` holds."""
    got: list[Event] = []
    async with session.get(url, headers=headers) as response:
        assert response.status == 200, await response.text()
        assert response.content_type == "text/event-stream"
        event, data = "message", ""
        async with asyncio.timeout(timeout):
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data += line[5:].strip()
                elif not line and data:
                    got.append((event, json.loads(data)))
                    event, data = "message", ""
                    if until(got):
                        return got
    raise AssertionError(f"the stream ended first: {got}")


def messages(events: list[Event]) -> dict[str, Any]:
    """The latest version of every message in a web chat stream, by id."""
    return {data["id"]: data for kind, data in events if kind == "message"}
