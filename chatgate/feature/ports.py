"""The narrow interfaces a feature is given onto the running gateway (`FeatureContext` holds
them): each names one thing a feature may ask for, so a feature never sees the gateway itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from chatgate.channels.base import ChannelAdapter
from chatgate.config.loader import LoadedConfig
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.results import DeliveryReport, Submission

Submit = Callable[[InboundMessage], Awaitable[Submission]]
"""Put a message on the message path as if a channel had received it."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class LiveConfig(Protocol):
    """Anything holding the current config (reloads replace ``loaded``)."""

    @property
    def loaded(self) -> LoadedConfig: ...


class Deliver(Protocol):
    """The gateway's way out (retries, dead targets, the DLQ)."""

    def __call__(
        self,
        target: Target,
        message: OutboundMessage,
        *,
        inbound_key: str | None = None,
        session: str | None = None,
        edit_ids: Sequence[str] = (),
    ) -> Awaitable[DeliveryReport]: ...


@dataclass(frozen=True)
class HeldAs:
    """What a queued turn of a held chat becomes: an observed message with reason ``observed``,
    kept as context when ``kept(message)``; ``on_held`` hears of each one."""

    observed: str
    kept: Callable[[InboundMessage], bool]
    on_held: Callable[[InboundMessage], None]


class TurnQueue(Protocol):
    def hold(
        self, chat: Callable[[InboundMessage], bool], held: HeldAs, *, interrupt: bool
    ) -> tuple[int, int]:
        """Hold the queued turns of the chats ``chat`` matches (and the running agent call,
        with ``interrupt``); returns (waiting, running) held."""
        ...


class Transcripts(Protocol):
    async def append(self, key: str, line: ChatMessage) -> None:
        """Add ``line`` to session ``key``'s transcript, once (a line from the same source
        already there is not added again)."""
        ...

    async def forget(self, keys: Collection[str]) -> None:
        """Drop the warm copies of sessions ``keys`` (their store was changed underneath, e.g. a
        person's lines erased): the next turn rebuilds each from the store."""
        ...


class Routing(Protocol):
    def principal_of(self, address: str) -> str:
        """The person behind ``channel:sender_id`` (configured alternate ids map to one)."""
        ...

    def session_for(self, target: Target) -> str:
        """The session key a message in chat ``target`` would be routed to."""
        ...


class ChannelLookup(Protocol):
    async def ready_adapter(self, name: str) -> ChannelAdapter | None:
        """The channel's running adapter, waiting briefly while it (re)starts; None if absent."""
        ...


class RouteTable(Protocol):
    def add(
        self, method: str, path: str, handler: Handler, *, prefix: bool = False, token: bool = False
    ) -> None:
        """Serve ``path``; an /api/ path with ``token`` needs the operator token for reads too."""
        ...


class ConfigFiles(Protocol):
    """The config as the daemon reads it: a text validated with the running channel catalog and
    environment (blocking: call it in a worker thread), and the hot reload of the file."""

    def validate(self, text: str, path: Path) -> LoadedConfig: ...

    async def reload(self) -> Mapping[str, Any]:
        """Re-read the file and apply it live; the reload's report."""
        ...
