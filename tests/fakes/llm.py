"""OpenAI-compatible fake chat-completions server for tests, driven in-process or over HTTP.

Real SDKs (litellm, openai) talk to it over loopback via ``api_base``; tests script replies,
inject faults, add latency and inspect what was sent. See ``FakeLLM`` for the API.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.llm_audio import FakeTranscriptions

__all__ = ["FakeLLM", "Fault", "RecordedRequest", "ToolCall", "ToolCalls"]

_HOST = "127.0.0.1"
_SHUTDOWN_TIMEOUT_S = 2.0


def _error_body(
    message: str, type_: str, code: str | None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


@dataclass(frozen=True)
class _FaultSpec:
    """Fields of ``Fault``; kept apart so ``Fault.hang()`` can share a name with the field."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


class Fault(_FaultSpec):
    """An error answer: HTTP status, JSON error body and extra headers.

    With ``hang`` set the server holds the request open until ``FakeLLM.release()``/``stop()``
    (or the client gives up), then answers with ``status``/``body``. ``Fault.hang()`` on the class
    is the constructor; ``fault.hang`` on an instance is the flag.
    """

    @classmethod
    def unauthorized(cls) -> Fault:
        return cls(
            401,
            _error_body("Invalid API key supplied.", "invalid_request_error", "invalid_api_key"),
        )

    @classmethod
    def forbidden(cls) -> Fault:
        return cls(
            403, _error_body("This key may not use this model.", "permission_error", "forbidden")
        )

    @classmethod
    def model_not_found(cls, model: str = "fake-model") -> Fault:
        message = f"The model `{model}` does not exist or you do not have access to it."
        return cls(404, _error_body(message, "invalid_request_error", "model_not_found"))

    @classmethod
    def rate_limited(cls, retry_after: int = 1) -> Fault:
        body = _error_body("Too many requests; slow down.", "requests", "rate_limit_exceeded")
        return cls(429, body, {"retry-after": str(retry_after)})

    @classmethod
    def server_error(cls) -> Fault:
        return cls(500, _error_body("The fake model crashed.", "server_error", "internal_error"))

    @classmethod
    def unavailable(cls) -> Fault:
        return cls(503, _error_body("The fake model is overloaded.", "server_error", "unavailable"))

    @classmethod
    def context_overflow(cls) -> Fault:
        message = (
            "This model's maximum context length is 4096 tokens, "
            "but the request needs 5000 tokens. Shorten the messages."
        )
        return cls(
            400,
            _error_body(message, "invalid_request_error", "context_length_exceeded", "messages"),
        )

    @classmethod
    def bad_request(cls, message: str = "bad request") -> Fault:
        return cls(400, _error_body(message, "invalid_request_error", "invalid_request"))

    @classmethod
    def hang(cls) -> Fault:  # type: ignore[override]
        unavailable = cls.unavailable()
        return cls(unavailable.status, unavailable.body, hang=True)


@dataclass(frozen=True)
class ToolCall:
    """One function call the fake model asks for; ``arguments`` a dict or raw (maybe bad) JSON."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def raw_arguments(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class ToolCalls:
    """A scripted answer asking for one or more (parallel) tool calls, with optional text."""

    calls: tuple[ToolCall, ...]
    content: str = ""

    @classmethod
    def of(cls, *calls: ToolCall, content: str = "") -> ToolCalls:
        return cls(tuple(calls), content)


Reply = str | ToolCalls


def _text_of(content: Any) -> str:
    """Plain text of a message ``content``: a string or a list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "".join(str(p) for p in parts)
    return ""


@dataclass(frozen=True)
class RecordedRequest:
    """One chat-completions request as the fake received it (header names lower-cased)."""

    model: str
    messages: list[dict[str, Any]]
    stream: bool
    headers: dict[str, str]
    body: dict[str, Any]
    at: float
    peer: tuple[str, int] | None = None  # the client's address: one per connection it used

    @property
    def system_prompt(self) -> str | None:
        """Text of the first system (or developer) message, if any."""
        for message in self.messages:
            if message.get("role") in ("system", "developer"):
                return _text_of(message.get("content"))
        return None

    @property
    def last_user_text(self) -> str | None:
        """Text of the last user message, if any."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return None


def _echo(request: RecordedRequest) -> str:
    return f"echo: {request.last_user_text}"


def _split_for_stream(text: str) -> list[str]:
    """Split into word pieces that keep their whitespace, so the pieces concatenate to ``text``."""
    return re.findall(r"^\s+|\S+\s*", text) or [text]


def _count_tokens(messages: list[dict[str, Any]]) -> int:
    return max(1, sum(len(_text_of(m.get("content")).split()) for m in messages))


class _BadBody(Exception):
    """The request body is not a usable chat-completions request."""


def _parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise _BadBody("body is not valid JSON") from exc
    if not isinstance(body, dict):
        raise _BadBody("body must be a JSON object")
    if not isinstance(body.get("model"), str):
        raise _BadBody("`model` must be a string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise _BadBody("`messages` must be a list of objects")
    return body


class FakeLLM:
    """In-process OpenAI-compatible server on 127.0.0.1 with scripted replies and faults.

    Per request the answer is chosen, in order, from: a per-model fault, the ``fail_next`` queue,
    the ``script`` queue, then ``default_reply``. The choice is made on arrival; ``latency_s`` is
    then awaited without blocking other requests.
    """

    def __init__(self, *, latency_s: float = 0.0, stream_chunk_delay_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.stream_chunk_delay_s = stream_chunk_delay_s
        self.default_reply: Reply | Callable[[RecordedRequest], Reply] = _echo
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # Optional grouping (e.g. the conversation a request belongs to): concurrency per group.
        self.group_of: Callable[[RecordedRequest], str] | None = None
        self.in_flight_by: Counter[str] = Counter()
        self.max_in_flight_by: Counter[str] = Counter()
        # (group, request, answered at): each grouped request's time at the model, to tell which
        # requests of one group overlapped
        self.spans: list[tuple[str, RecordedRequest, float]] = []
        # While an unset Event: every request is held (after ``latency_s``) until it is set, then
        # answered as usual; a model as slow as the test needs, whatever the machine's load.
        self.held: asyncio.Event | None = None
        self.port = 0
        self._script: deque[Reply | Fault] = deque()
        self._next_faults: deque[Fault] = deque()
        self._model_faults: dict[str, tuple[Fault, int | None]] = {}
        self._release = asyncio.Event()
        self._stopping = asyncio.Event()
        self._arrived = asyncio.Event()
        self._completion_ids = 0
        self._runner: web.AppRunner | None = None
        self.audio = FakeTranscriptions()
        # Text-to-speech: the JSON bodies of `/audio/speech` calls, and per-model faults.
        self.speech_requests: list[dict[str, Any]] = []
        self.speech_faults: dict[str, Fault] = {}

    @property
    def base_url(self) -> str:
        return f"http://{_HOST}:{self.port}/v1"

    @property
    def agent_url(self) -> str:
        """The same scripted model behind chatgate's `http` agent protocol: a daemon whose test
        is not about the model skips litellm's import (about 5 CPU s a start)."""
        return f"{self.base_url}/agent"

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 (``port`` 0 picks a free one) and start serving."""
        app = web.Application(client_max_size=32 * 1024 * 1024)  # real APIs take 20 MB images
        app.router.add_post("/v1/chat/completions", self._handle_completion)
        app.router.add_post("/chat/completions", self._handle_completion)
        self.audio.install(app)
        app.router.add_post("/v1/audio/speech", self._handle_speech)
        app.router.add_post("/audio/speech", self._handle_speech)
        app.router.add_post("/v1/agent", self._handle_agent)
        app.router.add_get("/_fake/stats", self._handle_stats)
        app.router.add_post("/_fake/config", self._handle_config)
        app.router.add_post("/_fake/reset", self._handle_reset)
        runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            handler_cancellation=True,
            shutdown_timeout=_SHUTDOWN_TIMEOUT_S,
        )
        await runner.setup()
        self._stopping = asyncio.Event()
        self._release = asyncio.Event()
        self._arrived = asyncio.Event()
        await web.TCPSite(runner, _HOST, port).start()
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        """Release hung requests, cut latency short and shut the server down."""
        if self._runner is None:
            return
        self._stopping.set()
        self.release()
        runner, self._runner = self._runner, None
        await runner.cleanup()

    async def __aenter__(self) -> FakeLLM:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- driving -----------------------------------------------------------------------------

    def script(self, *replies: Reply | Fault) -> None:
        """Queue replies or faults, consumed one per request in order, before the default."""
        self._script.extend(replies)

    def fail_next(self, fault: Fault, times: int = 1) -> None:
        """Answer the next ``times`` requests (of any model) with ``fault``."""
        self._next_faults.extend([fault] * times)

    def fail_model(self, model: str, fault: Fault | None, times: int | None = None) -> None:
        """Answer requests for ``model`` (as sent in the body) with ``fault``.

        ``times=None`` means every request; ``fault=None`` clears the model's fault.
        """
        if fault is None or times == 0:
            self._model_faults.pop(model, None)
        else:
            self._model_faults[model] = (fault, times)

    def release(self) -> None:
        """Let every currently hung request finish (with its fault's status, normally 503)."""
        self._release.set()
        self._release = asyncio.Event()

    def reset(self) -> None:
        """Clear script, faults, recorded requests and peak counter; keep latency and default."""
        self._script.clear()
        self._next_faults.clear()
        self._model_faults.clear()
        self.requests.clear()
        self.max_in_flight = self.in_flight

    async def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait until at least ``n`` requests were recorded; return a copy of all records."""
        try:
            async with asyncio.timeout(timeout):
                while len(self.requests) < n:
                    await self._arrived.wait()
        except TimeoutError:
            got = len(self.requests)
            raise TimeoutError(f"expected {n} requests within {timeout}s, got {got}") from None
        return list(self.requests)

    def overlaps(self) -> list[tuple[RecordedRequest, RecordedRequest]]:
        """Pairs of requests of one group that were at the model at the same time."""
        out = []
        spans = sorted(self.spans, key=lambda s: s[1].at)
        for i, (group, first, ended) in enumerate(spans):
            for other_group, second, _ in spans[i + 1 :]:
                if second.at >= ended:
                    break
                if other_group == group:
                    out.append((first, second))
        return out

    def stats(self) -> dict[str, int]:
        return {
            "requests": len(self.requests),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
        }

    # -- request handling --------------------------------------------------------------------

    def _record(self, request: web.Request, body: dict[str, Any]) -> RecordedRequest:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        record = RecordedRequest(
            model=body["model"],
            messages=body["messages"],
            stream=bool(body.get("stream", False)),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            at=time.monotonic(),
            peer=(str(peer[0]), int(peer[1])) if peer else None,
        )
        self.requests.append(record)
        self._arrived.set()
        self._arrived = asyncio.Event()
        return record

    def _choose(self, record: RecordedRequest) -> Reply | Fault:
        model_fault = self._model_faults.get(record.model)
        if model_fault is not None:
            fault, times = model_fault
            if times is not None:
                self.fail_model(record.model, fault, times - 1)
            return fault
        if self._next_faults:
            return self._next_faults.popleft()
        if self._script:
            return self._script.popleft()
        reply = self.default_reply
        return reply if isinstance(reply, str | ToolCalls) else reply(record)

    async def _until(self, event: asyncio.Event) -> None:
        """Wait for ``event``, or less when the server is stopping."""
        waits = [asyncio.ensure_future(e.wait()) for e in (event, self._stopping)]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake early when the server is stopping."""
        if seconds > 0 and not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _handle_speech(self, request: web.Request) -> web.Response:
        """OpenAI's text-to-speech: audio bytes for `input` (an OGG header, then the text, so a
        test can tell what was spoken and in which format)."""
        body = json.loads(await request.read())
        self.speech_requests.append(body)
        fault = self.speech_faults.get(str(body.get("model")))
        if fault is not None:
            return web.json_response(fault.body, status=fault.status, headers=fault.headers)
        if body.get("response_format") != "opus":
            audio, mime = b"ID3" + str(body.get("input")).encode(), "audio/mpeg"
        else:
            audio, mime = b"OggS" + str(body.get("input")).encode(), "audio/ogg"
        return web.Response(body=audio, content_type=mime)

    async def _handle_completion(self, request: web.Request) -> web.StreamResponse:
        try:
            body = _parse_body(await request.read())
        except _BadBody as exc:
            return _fault_response(Fault.bad_request(str(exc)))
        async with self._counted(request, body) as record:
            outcome = await self._outcome(record)
            if isinstance(outcome, Fault):
                return _fault_response(outcome)
            if isinstance(outcome, ToolCalls):
                if record.stream:
                    return await self._stream_calls(request, record, outcome)
                return web.json_response(self._call_completion(record, outcome))
            if record.stream:
                return await self._stream(request, record, outcome)
            return web.json_response(self._completion(record, outcome))

    async def _outcome(self, record: RecordedRequest) -> Reply | Fault:
        """The answer chosen on arrival, after ``latency_s``; a hanging fault holds until
        `release` (or the server stops)."""
        outcome = self._choose(record)
        await self._pause(self.latency_s)
        if self.held is not None and not self._stopping.is_set():
            await self._until(self.held)
        if isinstance(outcome, Fault) and _hangs(outcome) and not self._stopping.is_set():
            await self._release.wait()
        return outcome

    @contextlib.asynccontextmanager
    async def _counted(
        self, request: web.Request, body: dict[str, Any]
    ) -> AsyncIterator[RecordedRequest]:
        """Record a request and count it in flight (overall and per `group_of`) while answered."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        group: str | None = None
        record: RecordedRequest | None = None
        try:
            record = self._record(request, body)
            if self.group_of is not None:
                group = self.group_of(record)
                self.in_flight_by[group] += 1
                self.max_in_flight_by[group] = max(
                    self.max_in_flight_by[group], self.in_flight_by[group]
                )
            yield record
        finally:
            self.in_flight -= 1
            if group is not None and record is not None:
                self.in_flight_by[group] -= 1
                self.spans.append((group, record, time.monotonic()))

    async def _handle_agent(self, request: web.Request) -> web.Response:
        """chatgate's `http` agent protocol (turn JSON in, ``{"reply": text}`` out), answered
        from the same script, faults and counters as a completion; recorded as model `agent`."""
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _fault_response(Fault.bad_request("body is not valid JSON"))
        async with self._counted(request, {**body, "model": "agent"}) as record:
            outcome = await self._outcome(record)
            if isinstance(outcome, Fault):
                return _fault_response(outcome)
            if isinstance(outcome, ToolCalls):
                return _fault_response(Fault.bad_request("an http agent has no tool calls"))
            return web.json_response({"reply": outcome})

    def _next_id(self) -> str:
        self._completion_ids += 1
        return f"chatcmpl-{self._completion_ids}"

    def _completion(self, record: RecordedRequest, reply: str) -> dict[str, Any]:
        return {
            "id": self._next_id(),
            "object": "chat.completion",
            "created": 0,
            "model": record.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(record, len(_split_for_stream(reply))),
        }

    def _call_id(self, call: ToolCall, index: int) -> str:
        return call.id or f"call_{self._completion_ids}_{index}"

    def _call_completion(self, record: RecordedRequest, reply: ToolCalls) -> dict[str, Any]:
        completion = self._completion(record, reply.content)
        calls = [
            {
                "id": self._call_id(call, i),
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments()},
            }
            for i, call in enumerate(reply.calls)
        ]
        choice = completion["choices"][0]
        choice["message"]["content"] = reply.content or None
        choice["message"]["tool_calls"] = calls
        choice["finish_reason"] = "tool_calls"
        return completion

    async def _stream_calls(
        self, request: web.Request, record: RecordedRequest, reply: ToolCalls
    ) -> web.StreamResponse:
        """Stream tool calls the way OpenAI does: id and name first, arguments in fragments."""
        response = web.StreamResponse(headers={"Cache-Control": "no-cache"})
        response.content_type = "text/event-stream"
        await response.prepare(request)
        completion_id = self._next_id()

        async def send(delta: dict[str, Any], finish: str | None = None) -> None:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": record.model,
                "choices": [choice],
            }
            await _send_event(response, payload)

        if reply.content:
            await send({"role": "assistant", "content": reply.content})
        for i, call in enumerate(reply.calls):
            raw = call.raw_arguments()
            head = {"index": i, "id": self._call_id(call, i), "type": "function"}
            head["function"] = {"name": call.name, "arguments": ""}
            await send({"role": "assistant", "tool_calls": [head]})
            half = len(raw) // 2
            for part in (raw[:half], raw[half:]):
                await send({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
        await send({}, "tool_calls")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _stream(
        self, request: web.Request, record: RecordedRequest, reply: str
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Cache-Control": "no-cache"})
        response.content_type = "text/event-stream"
        await response.prepare(request)
        completion_id = self._next_id()
        pieces = _split_for_stream(reply)

        def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": record.model,
                "choices": choices,
                **extra,
            }

        for index, piece in enumerate(pieces):
            if index:
                await self._pause(self.stream_chunk_delay_s)
            delta = {"role": "assistant", "content": piece} if index == 0 else {"content": piece}
            await _send_event(
                response, chunk([{"index": 0, "delta": delta, "finish_reason": None}])
            )
        await _send_event(response, chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        options = record.body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            await _send_event(response, chunk([], usage=_usage(record, len(pieces))))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    # -- control surface ---------------------------------------------------------------------

    async def _handle_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _handle_config(self, request: web.Request) -> web.Response:
        try:
            config = await request.json()
        except ValueError:
            return _fault_response(Fault.bad_request("config body is not valid JSON"))
        if not isinstance(config, dict):
            return _fault_response(Fault.bad_request("config must be a JSON object"))
        for key in ("latency_s", "stream_chunk_delay_s"):
            if key in config:
                value = config[key]
                if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                    return _fault_response(Fault.bad_request(f"`{key}` must be a number >= 0"))
                setattr(self, key, float(value))
        if "default_reply" in config:
            if not isinstance(config["default_reply"], str):
                return _fault_response(Fault.bad_request("`default_reply` must be a string"))
            self.default_reply = config["default_reply"]
        return web.json_response(self.stats())

    async def _handle_reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response(self.stats())


def _usage(record: RecordedRequest, completion_tokens: int) -> dict[str, int]:
    prompt_tokens = _count_tokens(record.messages)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _hangs(fault: _FaultSpec) -> bool:
    """Read the ``hang`` flag (typed via the base, since ``Fault.hang`` is the constructor)."""
    return fault.hang


def _fault_response(fault: Fault) -> web.Response:
    return web.json_response(fault.body, status=fault.status, headers=fault.headers)


async def _send_event(response: web.StreamResponse, payload: dict[str, Any]) -> None:
    await response.write(f"data: {json.dumps(payload)}\n\n".encode())


async def _serve(port: int, latency_s: float) -> None:
    fake = FakeLLM(latency_s=latency_s)
    await fake.start(port)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    print(f"READY {fake.port}", flush=True)
    try:
        await done.wait()
    finally:
        await fake.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve a FakeLLM until SIGINT/SIGTERM; prints ``READY <port>`` once listening."""
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.llm", description=main.__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = any free)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args.port, args.latency))


if __name__ == "__main__":
    main()
