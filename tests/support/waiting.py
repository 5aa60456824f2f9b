"""The one way a test waits for something that happens in real time: poll a probe."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any


async def eventually(
    probe: Callable[[], Any], timeout: float = 10.0, what: str = "condition", *, every: float = 0.02
) -> Any:
    """Poll a sync or async probe until it returns something truthy, and return that.

    Fails naming ``what`` after ``timeout`` seconds of the running loop's clock.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(every)
