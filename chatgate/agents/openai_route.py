"""Models that speak the OpenAI chat API, called through the official ``openai`` SDK directly.

litellm spends ~20 M instructions on a chat call that the SDK makes in ~2.6 M (provider lookup,
a logging object, callbacks, cost, re-modelling the response; valgrind, the fake model): for an
``openai/`` model litellm only forwards the request to this same SDK. So those calls skip it:
the same JSON body, the same ``max_retries=0`` and timeout, an aiohttp pool under the same bound,
and the SDK's own exceptions, whose class names ``litellm_errors`` already maps. Everything else
(other providers; OpenAI reasoning models, whose parameters litellm rewrites) stays on litellm,
as does every call when the agent says ``client: litellm``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from types import ModuleType
from typing import Any

from chatgate.agents.litellm_import import MODEL_CONNECTIONS_PER_HOST, litellm_module

# litellm maps max_tokens/temperature for these families (max_completion_tokens, dropped
# temperature): they keep going through it.
LITELLM_REWRITES = ("o1", "o3", "o4", "gpt-5")
POOL_LIMIT_ENV = "AIOHTTP_CONNECTOR_LIMIT_PER_HOST"  # the operator's bound, as litellm reads it
CHAT_PATH = "/chat/completions"


def speaks_openai(model: str, client: str = "auto") -> bool:
    """Whether a call to ``model`` goes through the openai SDK rather than litellm."""
    if client != "auto":
        return False
    provider, _, name = model.partition("/")
    return provider == "openai" and bool(name) and not name.lower().startswith(LITELLM_REWRITES)


def openai_base(api_base: str | None) -> str | None:
    """The base URL a call goes to: the configured one, else the environment's, read in
    litellm's order (``OPENAI_BASE_URL``, then ``OPENAI_API_BASE``); None is OpenAI's own."""
    return api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")


def sdk_model(model: str) -> str:
    """The model name the provider knows (``openai/gpt-4o`` -> ``gpt-4o``)."""
    return model.partition("/")[2]


async def openai_module() -> ModuleType:
    """The ``openai`` SDK, imported off the event loop the first time (litellm imports it too)."""
    found = sys.modules.get("openai")
    if found is not None and hasattr(found, "AsyncOpenAI"):
        return found
    return await asyncio.to_thread(_import_openai)


def _import_openai() -> ModuleType:
    import openai

    return openai


def pool_limit(env: dict[str, str] | os._Environ[str]) -> int:
    """Connections open at once per client (one client per base URL and key)."""
    value = env.get(POOL_LIMIT_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else MODEL_CONNECTIONS_PER_HOST


class OpenAIClients:
    """One SDK client per (base URL, key), kept for the agent's life: a pooled connection is
    reused across turns, as litellm's cached client does."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str | None, str], Any] = {}

    def client(self, openai: ModuleType, api_base: str | None, api_key: str) -> Any:
        key = (api_base, api_key)
        found = self._clients.get(key)
        if found is None:
            import httpx2

            most = pool_limit(os.environ)
            limits = httpx2.Limits(max_connections=most, max_keepalive_connections=most)
            found = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=api_base,
                max_retries=0,  # the agent waits out rate limits and falls back itself
                http_client=openai.DefaultAioHttpClient(limits=limits),
            )
            self._clients[key] = found
        return found

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()


async def estimated_usage(model: str, messages: list[dict[str, Any]], step: Any) -> dict[str, int]:
    """Tokens of a streamed answer whose server sent no usage (one that ignores
    ``stream_options``), counted as litellm counts them then: spend budgets must still be
    charged. litellm is imported for it then (its counter, for exact parity), on first need."""
    litellm = await litellm_module()
    answered = step.text + "".join(
        _as_litellm_dumps(c) for c in step.message.get("tool_calls") or ()
    )
    name = sdk_model(model)
    try:
        prompt = int(litellm.token_counter(model=name, messages=messages))
    except Exception:  # as litellm: a prompt it cannot count must not fail the answer
        prompt = 0
    completion = int(litellm.token_counter(model=name, text=answered, count_response_tokens=True))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _as_litellm_dumps(call: dict[str, Any]) -> str:
    """A tool call as litellm's counter reads it (its pydantic model's compact JSON)."""
    function = call["function"]
    shaped = {
        "function": {"arguments": function["arguments"], "name": function["name"]},
        "id": call["id"],
        "type": "function",
    }
    return json.dumps(shaped, separators=(",", ":"))


async def chat_completion(
    openai: ModuleType, client: Any, body: dict[str, Any], timeout_s: float, *, stream: bool
) -> Any:
    """One chat-completions request; the completion's parsed JSON, or with ``stream`` an async
    stream of the chunks' parsed JSON (``model_reply`` reads either). The client's generic
    ``post`` with ``cast_to=object`` (the SDK's documented way to send a request body as is)
    rather than ``chat.completions.create``: the same request and errors, without the SDK walking
    the body against its typed parameters first (~3.8 M instructions a call) and building its
    response models (~0.8 M)."""
    return await client.post(
        CHAT_PATH,
        body=body,
        cast_to=object,
        options={"timeout": timeout_s},
        stream=stream,
        stream_cls=openai.AsyncStream[object],
    )
