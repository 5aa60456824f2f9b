"""litellm agent: one model plus ordered fallbacks; litellm is imported lazily, on a thread, and
only when a model is called through it (``openai/`` models take the openai SDK)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chatgate import genai_metrics, tracing
from chatgate.agents.base import (
    REPLY_TO,
    AgentError,
    AgentReply,
    Turn,
    TurnFenced,
    recent,
    with_parts,
)
from chatgate.agents.litellm_errors import classify_model_error
from chatgate.agents.litellm_import import completion, litellm_module
from chatgate.agents.model_reply import read_completion, read_stream
from chatgate.agents.model_reply import usage_of as usage_of  # media's metered calls read it here
from chatgate.agents.openai_route import (
    OpenAIClients,
    chat_completion,
    estimated_usage,
    openai_base,
    openai_module,
    sdk_model,
    speaks_openai,
)
from chatgate.agents.tools.loop import ModelStep, ToolLoop
from chatgate.agents.tools.types import ToolContext, ToolSource
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.base import secret_value
from chatgate.config.masking import masked, masker_for
from chatgate.model.reasons import FailureReason
from chatgate.policies.taint import history_taint

TOOL_STEPS_META = "tool_steps"  # ChatMessage.meta key: the tool calls and results behind an answer
MAX_RATE_WAITS = 3  # provider rate limits with a Retry-After waited out per model call
RATE_WAIT_EVENT = "rate_limit_wait"  # on_event: the call waits out a provider's Retry-After
# Providers whose key litellm reads from the environment when none is configured.
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "azure": "AZURE_API_KEY",
}
# Failures after which trying the next model cannot help.
_NO_FALLBACK = frozenset({FailureReason.CANCELLED, FailureReason.FORMAT_ERROR})


@dataclass(frozen=True)
class ModelSpec:
    model: str
    api_base: str | None
    api_key: str | None

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else "openai"

    @property
    def provider_id(self) -> str:
        return f"{self.provider}@{self.api_base}" if self.api_base else self.provider


class LiteLLMAgent:
    def __init__(
        self,
        name: str,
        config: LiteLLMAgentConfig,
        env: Mapping[str, str] | None = None,
        tools: ToolSource | None = None,
    ) -> None:
        self.name = name
        self._config = config
        self._tools = tools if config.tools is not None else None
        self._env = os.environ if env is None else env
        primary = ModelSpec(config.model, config.api_base, secret_value(config.api_key))
        fallbacks = [
            ModelSpec(
                f.model, f.api_base or config.api_base, secret_value(f.api_key) or primary.api_key
            )
            for f in config.fallbacks
        ]
        self._models = [primary, *fallbacks]
        self._warm = False
        self._openai = OpenAIClients()
        # At most this many calls in flight for the agent (a burst must not trip the provider).
        most = config.max_concurrent
        self._slots = asyncio.Semaphore(most) if most else None

    def provider_id(self) -> str | None:
        return self._models[0].provider_id

    def require_keys(self) -> None:
        """Raise AgentError(MISSING_KEY) when a model has no key to send; no network involved."""
        for spec in self._models:
            self._key_for(spec)

    async def prewarm(self) -> None:
        """Ready the primary model's route: the openai SDK for a model that speaks its API, else
        one offline litellm completion (``mock_response``, no request): litellm imports that
        route's modules on its first call (a second of CPU under load), which the first real turn
        then does not pay. litellm itself (seconds of CPU, ~200 MB) is imported only when a model
        of the agent is called through it."""
        spec, client = self._models[0], self._config.client
        needs = not all(speaks_openai(m.model, client) for m in self._models)
        litellm = await litellm_module() if needs else None
        if self._warm:
            return
        self._warm = True
        if litellm is None or speaks_openai(spec.model, client):
            await openai_module()
            return
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": [{"role": "user", "content": "warm-up"}],
            "mock_response": "ok",
            "max_retries": 0,
        }
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        with contextlib.suppress(Exception):  # best effort: the real call reports real errors
            kwargs["api_key"] = self._key_for(spec) or "not-needed"
            await litellm.acompletion(**kwargs)

    async def aclose(self) -> None:
        await self._openai.aclose()

    async def run(self, turn: Turn) -> AgentReply:
        messages = self._messages(turn)
        tracked = _DeltaTracker(turn)
        if self._tools is None or self._config.tools is None:
            step = await self._complete(messages, None, tracked)
            return AgentReply(text=step.text, model=step.model, usage=step.usage)
        source = self._tools
        bind = getattr(source, "bound", None)  # a source with per-turn tools (gateway.schedule)
        if bind is not None:
            source = bind(tool_context(self.name, turn))
        loop = ToolLoop(
            self.name,
            source,
            self._config.tools,
            secrets=[*(s.api_key for s in self._models if s.api_key), *turn.secrets],
            on_event=turn.on_event,
            on_progress=turn.on_progress,
            approve=turn.approve,
            taint=self._taint(turn),
        )

        async def complete(
            msgs: list[dict[str, Any]], defs: list[dict[str, Any]] | None
        ) -> ModelStep:
            return await self._complete(msgs, defs, tracked)

        result = await loop.run(messages, complete)
        return AgentReply(
            text=result.text,
            model=result.model,
            usage={"total_tokens": result.tokens},
            meta={TOOL_STEPS_META: list(result.exchange)} if result.exchange else None,
        )

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tracked: _DeltaTracker,
    ) -> ModelStep:
        """One model call through the fallback chain."""
        turn = tracked.turn
        last_error: AgentError | None = None
        for index, spec in enumerate(self._models):
            try:
                last = index == len(self._models) - 1  # a fallback answers without waiting
                return await self._attempts(spec, messages, turn, tools, wait=last)
            except (asyncio.CancelledError, TurnFenced):
                raise
            except Exception as exc:
                error = classify_model_error(exc, spec.provider_id)
                if error.reason is FailureReason.BUDGET_EXHAUSTED and error.notice is not None:
                    raise error from None  # a spend budget refused: no other model may run
                last_error = error
                nxt = self._models[index + 1] if index + 1 < len(self._models) else None
                # Once deltas reached the caller a fallback would stream a second answer after them.
                if nxt is None or error.reason in _NO_FALLBACK or tracked.emitted:
                    raise error from None
                if turn.on_event is not None:
                    turn.on_event(
                        "model_fallback",
                        {
                            "agent": self.name,
                            "from_model": spec.model,
                            "to_model": nxt.model,
                            "reason": error.reason.value,
                            "fallback_index": index + 1,
                        },
                    )
        assert last_error is not None
        raise last_error

    async def _attempts(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        turn: Turn,
        tools: list[dict[str, Any]] | None,
        *,
        wait: bool,
    ) -> ModelStep:
        """One model's call; with ``wait``, a rate limit that names its wait (Retry-After) is
        waited out and the call made again (the turn's deadline bounds the waits; the chat
        sees typing)."""
        waits = 0
        while True:
            try:
                return await self._metered(spec, messages, turn, tools)
            except (asyncio.CancelledError, TurnFenced, AgentError):
                raise
            except Exception as exc:
                error = classify_model_error(exc, spec.provider_id)
                pause = error.retry_after_s if error.reason is FailureReason.RATE_LIMIT else None
                if not wait or pause is None or pause > self._config.timeout_s:
                    raise
                if waits >= MAX_RATE_WAITS:
                    raise
                waits += 1
                if turn.on_event is not None:
                    turn.on_event(RATE_WAIT_EVENT, {"agent": self.name, "wait_s": pause})
                await asyncio.sleep(pause)

    async def _metered(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        turn: Turn,
        tools: list[dict[str, Any]] | None,
    ) -> ModelStep:
        """`_call` fenced, admitted by the turn's meter, in one of the agent's slots, charged."""
        if turn.before_model is not None:
            await turn.before_model()
        meter = turn.meter
        ticket = await meter.admit(spec.model, messages) if meter is not None else None
        usage: Mapping[str, int] = {}
        try:
            async with self._slots or contextlib.nullcontext():
                step = await self._call(spec, messages, turn, tools)
            usage = step.usage
            return step
        finally:
            if meter is not None:
                await asyncio.shield(meter.settle(ticket, spec.model, usage))

    def _messages(self, turn: Turn) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._config.system_prompt:
            out.append({"role": "system", "content": self._config.system_prompt})
        for message in recent(turn.history, self._config.max_history):
            steps = (message.meta or {}).get(TOOL_STEPS_META)
            if self._tools is not None and message.role == "assistant" and steps:
                out.extend(dict(step) for step in steps)  # the tool steps before the answer
            out.append(message.to_openai())
        out.extend(with_parts(m.to_openai(), turn.parts.get(m.source or "")) for m in turn.new)
        return out

    def _taint(self, turn: Turn) -> tuple[str, ...]:
        """What makes the turn untrusted before any tool runs: the lines the model is sent."""
        lines = [*recent(turn.history, self._config.max_history), *turn.new]
        return history_taint(m.meta for m in lines)

    def _scrubbed(self, messages: list[dict[str, Any]], turn: Turn) -> list[dict[str, Any]]:
        """``messages`` with every configured secret (and the models' own keys) masked."""
        keys = frozenset(s.api_key for s in self._models if s.api_key)
        scrubbed: list[dict[str, Any]] = masked(messages, masker_for(turn.secrets | keys))
        return scrubbed

    def _key_for(self, spec: ModelSpec) -> str | None:
        if spec.api_key:
            return spec.api_key
        env_name = PROVIDER_KEY_ENV.get(spec.provider)
        if env_name is None:
            return None
        env_key = self._env.get(env_name)
        if env_key:
            return env_key  # passed explicitly: ``env`` need not be os.environ
        if spec.api_base:
            return "not-needed"  # a self-hosted OpenAI-compatible server may not check keys
        raise AgentError(
            FailureReason.MISSING_KEY,
            f"no api_key for {spec.model} and {env_name} is not set",
            provider=spec.provider_id,
        )

    async def _call(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        turn: Turn,
        tools: list[dict[str, Any]] | None = None,
    ) -> ModelStep:
        """`_request` in a GenAI client span (`chat {model}`, the model as configured), counted in
        the GenAI client metrics; every configured secret masked out of what the model is sent
        (tool results, documents, errors)."""
        messages = self._scrubbed(messages, turn)
        with tracing.span(
            f"chat {spec.model}",
            kind="client",
            leaf=True,
            gen_ai__operation__name="chat",
            gen_ai__request__model=spec.model,
            **tracing.genai_provider(spec.provider),
        ) as span:
            step = await self._measured(spec, messages, turn, tools)
            span.set(
                gen_ai__response__model=step.response_model,
                gen_ai__response__finish_reasons=list(step.finish_reasons) or None,
                gen_ai__usage__input_tokens=step.usage.get("prompt_tokens"),
                gen_ai__usage__output_tokens=step.usage.get("completion_tokens"),
            )
            if tracing.capturing():
                given = json.dumps(messages, default=str)
                tracing.genai_content(span, given=given, answered=step.text)
            return step

    async def _measured(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        turn: Turn,
        tools: list[dict[str, Any]] | None,
    ) -> ModelStep:
        """`_request`, its duration and tokens recorded in the GenAI client metrics."""
        if not genai_metrics.on():
            return await self._request(spec, messages, turn, tools)
        started = time.perf_counter()
        call = genai_metrics.Call("chat", spec.provider, spec.model)
        try:
            step = await self._request(spec, messages, turn, tools)
        except BaseException as exc:
            kind = exc.reason.value if isinstance(exc, AgentError) else type(exc).__qualname__
            genai_metrics.model_call(call, time.perf_counter() - started, error=kind)
            raise
        genai_metrics.model_call(
            call,
            time.perf_counter() - started,
            response_model=step.response_model,
            input_tokens=step.usage.get("prompt_tokens"),
            output_tokens=step.usage.get("completion_tokens"),
        )
        return step

    async def _request(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        turn: Turn,
        tools: list[dict[str, Any]] | None = None,
    ) -> ModelStep:
        """One call to ``spec``: through the openai SDK when the model speaks the OpenAI chat
        API (``openai_route``), else through litellm; the same answer either way."""
        api_key = self._key_for(spec)
        params: dict[str, Any] = {"messages": messages}
        if self._config.max_tokens:
            params["max_tokens"] = self._config.max_tokens
        if self._config.temperature is not None:
            params["temperature"] = self._config.temperature
        if tools:
            params["tools"] = tools
        stream = self._config.stream and turn.on_delta is not None
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}  # the last chunk reports usage
        timeout = self._config.timeout_s
        sdk = speaks_openai(spec.model, self._config.client)
        if sdk:
            openai = await openai_module()
            key = api_key or "not-needed"
            client = self._openai.client(openai, openai_base(spec.api_base), key)
            body = {"model": sdk_model(spec.model), **params}
            call = chat_completion(openai, client, body, timeout, stream=stream)
        else:
            litellm = await litellm_module()
            kwargs = {"model": spec.model, **params, "timeout": timeout, "max_retries": 0}
            if spec.api_base:
                kwargs["api_base"] = spec.api_base
            if api_key:
                kwargs["api_key"] = api_key
            call = completion(litellm, kwargs)
        async with asyncio.timeout(timeout + 5.0):
            response = await call
            if not stream:
                return read_completion(response, spec.model)
            try:
                step = await read_stream(response, spec.model, turn.on_delta)
            finally:
                if sdk:  # the SDK's stream holds a pooled connection until closed
                    await response.close()
        if sdk and not step.usage.get("total_tokens"):  # outside the deadline: the answer is in
            step = replace(step, usage=await estimated_usage(spec.model, messages, step))
        return step


def tool_context(agent: str, turn: Turn) -> ToolContext:
    """Whose turn the tools run in: the agent, the sender and the chat the answer goes to."""
    chat = turn.metadata.get(REPLY_TO)
    return ToolContext(agent, turn.channel, turn.sender_id, chat if isinstance(chat, str) else "")


class _DeltaTracker:
    """Wraps the turn's ``on_delta`` to remember whether any delta was delivered."""

    def __init__(self, turn: Turn) -> None:
        self.emitted = False
        self._forward = turn.on_delta
        self.turn = turn if turn.on_delta is None else replace(turn, on_delta=self._on_delta)

    async def _on_delta(self, delta: str) -> None:
        self.emitted = True
        if self._forward is not None:
            await self._forward(delta)
