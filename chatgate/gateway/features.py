"""The gateway's side of the Feature seam: the `FeatureContext` built over the runtime and the
message path (transcripts, routing, the queue's hold), so features never see either."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatgate.config.loader import ChannelCatalog, LoadedConfig, load_config_text
from chatgate.feature.context import FeatureContext
from chatgate.feature.operator_notify import OperatorNotifier
from chatgate.gateway.intake.pipeline import Pipeline
from chatgate.gateway.runtime import Runtime
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import ChatKind, Target
from chatgate.policies.routing import route


@dataclass(frozen=True)
class _ChatFacts:
    """Route facts of a chat without a message (an operator's first words in it)."""

    channel: str
    chat_id: str
    thread_id: str | None
    sender_id: str = ""
    chat_kind: ChatKind = "direct"


class _Transcripts:
    def __init__(self, runtime: Runtime, pipeline: Pipeline) -> None:
        self.runtime, self.pipeline = runtime, pipeline

    async def append(self, key: str, line: ChatMessage) -> None:
        cache, clock = self.runtime.cache, self.runtime.clock
        session = await cache.acquire(key, clock.time())
        try:
            if any(m.source == line.source for m in session.transcript):
                return  # already there (sent once before)
            await self.pipeline.runner.persistence.append(session, [line])
        finally:
            cache.release(session)

    async def forget(self, keys: Collection[str]) -> None:
        for key in keys:
            self.runtime.cache.drop(key)


class _Routing:
    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def principal_of(self, address: str) -> str:
        return self.pipeline.stages.principals.get(address, address)

    def session_for(self, target: Target) -> str:
        facts = _ChatFacts(target.channel, target.chat_id, target.thread_id)
        agent = self.pipeline.policy(target.channel).agent
        _, key = route(facts, self.pipeline.stages.bindings, agent, None, per_user_in_groups=False)
        return key


class ConfigPort:
    """`ConfigFiles` over the daemon's channel catalog and environment; the gateway binds its
    reload once it exists (features are made first)."""

    def __init__(self, catalog: ChannelCatalog, env: Mapping[str, str]) -> None:
        self.catalog, self.env = catalog, env
        self._reload: Callable[[], Awaitable[Mapping[str, Any]]] | None = None

    def bind(self, reload: Callable[[], Awaitable[Mapping[str, Any]]]) -> None:
        self._reload = reload

    def validate(self, text: str, path: Path) -> LoadedConfig:
        return load_config_text(text, path, self.env, catalog=self.catalog)

    async def reload(self) -> Mapping[str, Any]:
        if self._reload is None:
            raise RuntimeError("the gateway is not built yet")
        return await self._reload()


def feature_context(
    runtime: Runtime, pipeline: Pipeline, config_files: ConfigPort | None = None
) -> FeatureContext:
    deliver = runtime.delivery.deliver
    return FeatureContext(
        live=runtime,
        clock=runtime.clock,
        state=runtime.state,
        metrics=runtime.metrics.registry,
        owner=runtime.owner,
        agents=lambda: runtime.agents,
        voices=pipeline.stages.voices,
        deliver=deliver,
        submit=pipeline.submit,
        queue=pipeline.scheduler,
        transcripts=_Transcripts(runtime, pipeline),
        routing=_Routing(pipeline),
        channels=runtime.channels,
        operators=OperatorNotifier(runtime, runtime.clock, deliver),
        tools=runtime.tools,
        files=runtime.delivery.files,
        config_files=config_files,
    )
