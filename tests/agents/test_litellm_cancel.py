"""A model call cancelled while litellm builds its request in a worker thread (as litellm's
acompletion does: the provider coroutine comes back from ``run_in_executor``) drops no coroutine:
the request is awaited and then cancelled."""

from __future__ import annotations

import asyncio
import gc
import threading
import types
import warnings
from typing import Any

from chatgate.agents import litellm_import


class ExecutorShapedLiteLLM:
    """``acompletion`` built like litellm's: the request coroutine is made in a worker thread."""

    def __init__(self) -> None:
        self.built = threading.Event()
        self.release = threading.Event()
        self.cancelled = asyncio.Event()

    async def request(self) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "late"

    def build(self) -> Any:
        self.built.set()
        self.release.wait(5)
        return self.request()

    async def acompletion(self, **kwargs: Any) -> Any:
        made = await asyncio.get_running_loop().run_in_executor(None, self.build)
        return await made


async def test_a_call_cancelled_in_the_worker_thread_drops_no_coroutine() -> None:
    fake = ExecutorShapedLiteLLM()
    module = types.SimpleNamespace(acompletion=fake.acompletion)
    caller = asyncio.ensure_future(litellm_import.completion(module, {}))  # type: ignore[arg-type]
    await asyncio.to_thread(fake.built.wait, 5)
    caller.cancel()  # the request coroutine is still being built in the thread
    await asyncio.sleep(0.01)
    fake.release.set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await asyncio.wait_for(fake.cancelled.wait(), 5)  # awaited, then cancelled
        assert caller.cancelled()
        gc.collect()
    assert [w for w in caught if "never awaited" in str(w.message)] == []
