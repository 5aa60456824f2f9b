"""The event loop the daemon runs on: uvloop when installed, else the standard library's.

uvloop (libuv, in C) runs the same asyncio programs with less overhead per callback and per socket
read; `gateway.event_loop: asyncio` keeps the standard loop, e.g. to rule the loop out while
debugging.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable

from chatgate.config.models import LoopChoice

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def loop_factory(choice: LoopChoice) -> LoopFactory | None:
    """What `asyncio.Runner(loop_factory=...)` gets: None is the standard library's loop."""
    if choice == "asyncio" or (choice == "auto" and not uvloop_installed()):
        return None
    import uvloop

    factory: LoopFactory = uvloop.new_event_loop
    return factory


def implementation(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: the package the running loop comes from."""
    return type(loop).__module__.partition(".")[0]
