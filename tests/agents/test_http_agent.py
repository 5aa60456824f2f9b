"""HTTP agent against a small aiohttp agent service on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from chatgate.agents.base import AgentError, Turn
from chatgate.agents.http_agent import HttpAgent
from chatgate.config.agent_models import HttpAgentConfig
from chatgate.model.chat import ChatMessage
from chatgate.model.outbound import File, OutboundMessage, Text
from chatgate.model.reasons import FailureReason
from tests.agents.helpers import closed_port, make_turn


@dataclass
class AgentService:
    """Records each POST (JSON body and lower-cased headers) and answers per path."""

    received: list[tuple[dict[str, Any], dict[str, str]]] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    base: str = ""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    async def _record(self, request: web.Request) -> dict[str, Any]:
        body: dict[str, Any] = await request.json()
        self.received.append((body, {k.lower(): v for k, v in request.headers.items()}))
        return body

    async def reply(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        return web.json_response({"reply": f"service got {body['text']}"})

    async def file(self, request: web.Request) -> web.Response:
        source = request.match_info["source"]
        value = "aGk=" if source == "data_base64" else "/etc/passwd"
        block = {"type": "file", "name": "f.txt", "mime": "text/plain", source: value}
        return web.json_response({"blocks": [block]})

    async def blocks(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response({"blocks": [{"type": "text", "text": "rich"}]})

    async def status(self, request: web.Request) -> web.Response:
        await self._record(request)
        message = request.query.get("message", "the service refused")
        headers = (
            {"Retry-After": request.query["retry_after"]} if "retry_after" in request.query else {}
        )
        return web.json_response(
            {"error": message}, status=int(request.match_info["code"]), headers=headers
        )

    async def hang(self, request: web.Request) -> web.Response:
        await self._record(request)
        await self.release.wait()
        return web.json_response({"reply": "too late"})

    async def not_json(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.Response(text="<html>oops{", content_type="text/html")

    async def wrong_shape(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response([1, 2, 3])


@pytest_asyncio.fixture
async def service() -> AsyncIterator[AgentService]:
    svc = AgentService()
    app = web.Application()
    app.router.add_post("/reply", svc.reply)
    app.router.add_post("/blocks", svc.blocks)
    app.router.add_post("/file/{source}", svc.file)
    app.router.add_post("/status/{code}", svc.status)
    app.router.add_post("/hang", svc.hang)
    app.router.add_post("/not-json", svc.not_json)
    app.router.add_post("/wrong-shape", svc.wrong_shape)
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    svc.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield svc
    finally:
        svc.release.set()
        await runner.cleanup()


@pytest_asyncio.fixture
async def agents() -> AsyncIterator[list[HttpAgent]]:
    """Agents created by a test; closed afterwards so no client session leaks."""
    made: list[HttpAgent] = []
    yield made
    for agent in made:
        await agent.aclose()


def http_agent(made: list[HttpAgent], url: str, **settings: Any) -> HttpAgent:
    agent = HttpAgent(
        "remote", HttpAgentConfig.model_validate({"backend": "http", "url": url, **settings})
    )
    made.append(agent)
    return agent


async def test_request_carries_history_system_prompt_and_turn_fields(
    service: AgentService, agents: list[HttpAgent]
) -> None:
    agent = http_agent(agents, service.url("/reply"), system_prompt="Be brief.")
    turn = Turn(
        session="telegram:42",
        history=(
            ChatMessage("user", "earlier question"),
            ChatMessage("assistant", "earlier answer"),
        ),
        new=(ChatMessage("user", "new question", name="Ann Lee"),),
        channel="telegram",
        sender_id="1001",
        metadata={"chat_id": "42", "thread_id": None},
    )

    reply = await agent.run(turn)

    assert reply.text == "service got new question"
    body, _ = service.received[0]
    assert body == {
        "session": "telegram:42",
        "text": "new question",
        "messages": [
            {"role": "user", "content": "earlier question"},
            {"role": "assistant", "content": "earlier answer"},
            {"role": "user", "content": "new question", "name": "Ann_Lee"},
        ],
        "system_prompt": "Be brief.",
        "channel": "telegram",
        "sender_id": "1001",
        "metadata": {"chat_id": "42", "thread_id": None},
    }


@pytest.mark.parametrize(
    ("max_history", "kept"), [(2, ["h3", "h4"]), (0, []), (10, ["h1", "h2", "h3", "h4"])]
)
async def test_max_history_trims_the_transcript_sent(
    service: AgentService, agents: list[HttpAgent], max_history: int, kept: list[str]
) -> None:
    agent = http_agent(agents, service.url("/reply"), max_history=max_history)
    history = [ChatMessage("user", f"h{i}") for i in range(1, 5)]

    await agent.run(make_turn("now", history=history))

    body, _ = service.received[0]
    assert [m["content"] for m in body["messages"]] == [*kept, "now"]
    assert body["system_prompt"] is None


@pytest.mark.parametrize(
    ("settings", "authorization"),
    [({"api_key": "svc-secret"}, "Bearer svc-secret"), ({}, None), ({"api_key": ""}, None)],
)
async def test_bearer_header_comes_from_api_key(
    service: AgentService,
    agents: list[HttpAgent],
    settings: dict[str, Any],
    authorization: str | None,
) -> None:
    agent = http_agent(agents, service.url("/reply"), headers={"X-Tenant": "acme"}, **settings)

    await agent.run(make_turn())

    _, headers = service.received[0]
    assert headers.get("authorization") == authorization
    assert headers["x-tenant"] == "acme"


async def test_blocks_reply_becomes_a_rich_message(
    service: AgentService, agents: list[HttpAgent]
) -> None:
    reply = await http_agent(agents, service.url("/blocks")).run(make_turn())

    assert reply.message == OutboundMessage((Text("rich"),))
    assert reply.text == "rich"


async def test_files_come_as_base64_and_a_local_path_is_refused(
    service: AgentService, agents: list[HttpAgent]
) -> None:
    reply = await http_agent(agents, service.url("/file/data_base64")).run(make_turn())
    assert reply.message is not None
    assert reply.message.blocks == (File("f.txt", "text/plain", data=b"hi"),)
    with pytest.raises(AgentError) as caught:
        await http_agent(agents, service.url("/file/path")).run(make_turn())
    assert caught.value.reason is FailureReason.FORMAT_ERROR and "path" in caught.value.detail


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/status/400", FailureReason.FORMAT_ERROR),
        ("/status/400?message=maximum context length exceeded", FailureReason.CONTEXT_OVERFLOW),
        ("/status/401", FailureReason.AUTH_PERMANENT),
        ("/status/401?message=token expired", FailureReason.AUTH_EXPIRED),
        ("/status/402", FailureReason.PROVIDER_QUOTA),
        ("/status/403", FailureReason.AUTH_PERMANENT),
        ("/status/404", FailureReason.MODEL_NOT_FOUND),
        ("/status/408", FailureReason.TIMEOUT),
        ("/status/422", FailureReason.FORMAT_ERROR),
        ("/status/429", FailureReason.RATE_LIMIT),
        ("/status/500", FailureReason.OVERLOADED),
        ("/status/502", FailureReason.OVERLOADED),
        ("/status/503", FailureReason.OVERLOADED),
        ("/not-json", FailureReason.FORMAT_ERROR),
        ("/wrong-shape", FailureReason.FORMAT_ERROR),
    ],
)
async def test_error_answers_map_to_failure_reasons(
    service: AgentService, agents: list[HttpAgent], path: str, reason: FailureReason
) -> None:
    agent = http_agent(agents, service.url(path))

    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn())

    assert caught.value.reason is reason
    assert len(service.received) == 1


@pytest.mark.parametrize(
    ("query", "retry_after_s"),
    [("?retry_after=7", 7.0), ("?retry_after=soon", None), ("", None)],
)
async def test_retry_after_reaches_the_failure(
    service: AgentService, agents: list[HttpAgent], query: str, retry_after_s: float | None
) -> None:
    agent = http_agent(agents, service.url("/status/429" + query))

    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn())

    assert caught.value.reason is FailureReason.RATE_LIMIT
    assert caught.value.retry_after_s == retry_after_s


async def test_slow_service_times_out(service: AgentService, agents: list[HttpAgent]) -> None:
    agent = http_agent(agents, service.url("/hang"), timeout_s=0.2)

    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn())

    assert caught.value.reason is FailureReason.TIMEOUT
    assert caught.value.provider == f"http:{service.url('/hang')}"


async def test_connection_refused_is_unavailable(agents: list[HttpAgent]) -> None:
    url = f"http://127.0.0.1:{closed_port()}/agent"
    agent = http_agent(agents, url)

    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn())

    assert caught.value.reason is FailureReason.UNAVAILABLE
    assert caught.value.provider == f"http:{url}"


async def test_agent_is_reusable_after_aclose(
    service: AgentService, agents: list[HttpAgent]
) -> None:
    agent = http_agent(agents, service.url("/reply"))

    first = await agent.run(make_turn("one"))
    await agent.aclose()
    second = await agent.run(make_turn("two"))

    assert [first.text, second.text] == ["service got one", "service got two"]
    assert agent.provider_id() == f"http:{service.url('/reply')}"


async def test_a_turn_with_files_sends_image_parts_and_what_became_of_each_file(
    service: AgentService, agents: list[HttpAgent]
) -> None:
    agent = http_agent(agents, service.url("/reply"))
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}
    media = [
        {"name": "photo", "kind": "image", "reason": "image_sent", "mime": "image/png"},
        {"name": "x.zip", "kind": "document", "reason": "media_unsupported_type"},
    ]
    turn = Turn(
        session="s",
        history=(ChatMessage("user", "before", None, "k0", {"media": media[1:]}),),
        new=(ChatMessage("user", "look\n\n[image: photo, 9x9]", None, "k1", {"media": media}),),
        parts={"k1": (image,)},
    )
    await agent.run(turn)
    body, _ = service.received[0]
    assert body["messages"] == [
        {"role": "user", "content": "before"},  # an earlier turn's image is never resent
        {
            "role": "user",
            "content": [{"type": "text", "text": "look\n\n[image: photo, 9x9]"}, image],
        },
    ]
    assert body["media"] == media  # this turn's files only
