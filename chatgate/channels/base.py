"""The ChannelAdapter contract: an adapter translates between a platform SDK and chatgate.

An adapter normalises native events into InboundMessages and hands them to the sink, renders
OutboundMessages natively, sends them, and classifies native send errors into SendErrorKind.
It makes no policy decision: admission, sessions, retries and replies all live in the gateway.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from aiohttp import web
from pydantic import BaseModel

from chatgate.channels.capabilities import Capabilities
from chatgate.clock import Clock, SystemClock
from chatgate.model.errors import FetchError
from chatgate.model.frozen import record
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DropReason, MediaReason, SendErrorKind
from chatgate.model.results import Submission
from chatgate.policies.send_errors import classify_status
from chatgate.presentation.chunking import chunk_text
from chatgate.presentation.degrade import REF_PREFIX, callback_hash
from chatgate.presentation.render import to_markdown
from chatgate.state.personal import PersonalData

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ChannelError(Exception):
    """A channel failure the supervisor can classify (fatal ones park the channel)."""

    def __init__(
        self,
        message: str,
        *,
        kind: SendErrorKind | None = None,
        fatal: bool = False,
        conflict: bool = False,
        hint: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.fatal = fatal or conflict or kind is SendErrorKind.AUTH_FATAL
        self.conflict = conflict
        self.hint = hint


class NotConfigured(ChannelError):
    """Credentials or required settings are missing: reported, never crashed on."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message, fatal=True, hint=hint)


class InboundSink(Protocol):
    """Where an adapter hands what it heard."""

    async def submit(self, msg: InboundMessage) -> Submission:
        """Journal ``msg`` and decide its fate; returns once it is durable (safe to ack).

        Raises StateUnavailable when it could not be journaled: refuse the platform update
        (503 / keep the offset) so it is delivered again once the state can write."""
        ...

    def ignored(self, channel: str, reason: DropReason, *, chat_id: str = "") -> None:
        """Record a platform event the adapter did not turn into a message (edits, joins, ...)."""
        ...

    async def in_conversation(self, msg: InboundMessage) -> bool:
        """Whether ``msg`` continues a conversation that already has history (a reply in a thread
        the bot answered, on platforms where that addresses the bot without a mention)."""
        ...


class HttpRoutes(Protocol):
    """The gateway's single HTTP server; adapters mount their endpoints here.

    ``prefix=True`` serves every path below ``path``; static files and WebSockets are plain
    handlers (aiohttp's `FileResponse`, `WebSocketResponse`).
    """

    def add(self, method: str, path: str, handler: Handler, *, prefix: bool = False) -> None: ...

    def remove(self, path: str) -> None: ...


class EventSink(Protocol):
    def count(self, metric: str, **labels: str) -> None: ...


class LeaseView(Protocol):
    """How long an exclusive connection (a polling token) may still be used by this replica."""

    def remaining_s(self) -> float | None:
        """Seconds left before the lease must be renewed; None when nothing limits it (one
        process per state). A long poll that outlasts it could overlap the next holder's."""
        ...


class Unleased:
    def remaining_s(self) -> float | None:
        return None


@dataclass
class ChannelContext:
    """Everything an adapter may use; given at construction."""

    name: str
    config: Any
    http: HttpRoutes
    state_dir: Path
    metrics: EventSink
    kv: Mapping[str, Any] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)  # signature windows, idle timers
    lease: LeaseView = field(default_factory=Unleased)


@record
class Rendered:
    """One native message ready to send (a chunk of a possibly longer reply)."""

    text: str
    format: str | None = None
    native: Mapping[str, Any] = field(default_factory=dict)


class ChannelAdapter(ABC):
    """Base class for channel adapters; subclasses live in channels/<platform>/.

    Lifecycle, driven by the supervisor: ``start(sink)`` → running (``failed()`` resolves when
    background work dies) → ``stop_intake()`` while draining (sends still work) → ``stop()``.
    """

    platform: ClassVar[str]
    config_model: ClassVar[type[BaseModel] | None] = None  # for plugins registered as a class

    def __init__(self, ctx: ChannelContext) -> None:
        self.ctx = ctx
        self.name = ctx.name
        self._failed: asyncio.Future[BaseException] | None = None
        self._capabilities_cache: tuple[Any, Capabilities] | None = None

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    def capabilities_of(self, build: Callable[[Any], Capabilities]) -> Capabilities:
        """`build(config)`, computed once per config section (a hot reload replaces it)."""
        config = self.ctx.config
        cached = self._capabilities_cache
        if cached is None or cached[0] is not config:
            cached = self._capabilities_cache = (config, build(config))
        return cached[1]

    @abstractmethod
    async def start(self, sink: InboundSink) -> None:
        """Connect and begin delivering inbound messages to ``sink``; return once running."""

    async def stop_intake(self) -> None:
        """Draining: stop accepting new input (acking nothing more) but keep sending."""
        return None

    @abstractmethod
    async def stop(self) -> None:
        """Stop taking input and release resources; idempotent."""

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        raise ChannelError(
            f"{self.platform} cannot send messages", kind=SendErrorKind.INVALID_REQUEST
        )

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        return SendResult.failed(SendErrorKind.INVALID_REQUEST, "edits are not supported")

    async def react(self, target: Target, message_id: str, emoji: str) -> None:
        return None

    async def typing(self, target: Target) -> None:
        return None

    async def tell_privately(self, msg: InboundMessage, text: str) -> bool:
        """Show ``text`` to the sender of ``msg`` alone, in its conversation (an ephemeral
        message); False where the platform cannot, so the caller answers in the chat."""
        return False

    async def acknowledge(self, msg: InboundMessage) -> None:
        """A turn for ``msg`` starts (capabilities.ack has REACTION); must not raise."""
        return None

    async def acknowledge_done(self, msg: InboundMessage, *, failed: bool) -> None:
        """The turn for ``msg`` ended (e.g. swap the ack reaction for a done mark); must not raise."""
        return None

    def shorten_choice(self, value: str) -> str:
        """A button value too long for the platform: a stored `ref:<id>` that `resolve_choice`
        turns back into the value when pressed (a lossy hash when no store is configured)."""
        store = self.ctx.kv.get("callbacks")
        return REF_PREFIX + str(store.put(value)) if store is not None else callback_hash(value)

    async def resolve_choice(self, msg: InboundMessage) -> InboundMessage:
        """A pressed button's value: presentation swapped values too long for the platform for a
        stored `ref:<id>` (the callbacks store in `ctx.kv`); the press carries it back."""
        value = msg.choice or ""
        resolver = self.ctx.kv.get("callbacks")
        if resolver is not None and value.startswith(REF_PREFIX):
            value = await resolver.resolve(value) or value
        return replace(msg, text=value, choice=value)

    def render(self, message: OutboundMessage) -> list[Rendered]:
        """Default rendering: markdown text chunked to the channel's limit."""
        caps = self.capabilities
        text = to_markdown(message)
        return [
            Rendered(chunk)
            for chunk in chunk_text(text, caps.limits.max_text_length, length=caps.length)
        ]

    def personal_data(self) -> Sequence[PersonalData]:
        """What the channel keeps about a person in stores of its own (an outbox, uploads),
        for `chatgate people` show, export and erase; most keep nothing of their own."""
        return ()

    def classify_error(self, exc: BaseException) -> SendResult:
        """Map a native send exception to a SendResult; adapters override for fidelity."""
        status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
        kind = classify_status(status if isinstance(status, int) else None, str(exc))
        if isinstance(exc, TimeoutError) and status is None:
            return SendResult.timeout(type(exc).__name__)
        if isinstance(exc, ConnectionError | OSError) and status is None:
            kind = SendErrorKind.TRANSIENT
        return SendResult.failed(kind, type(exc).__name__)

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """Download ``attachment`` into ``dest`` (at most ``max_bytes``); returns the size.

        Raises FetchError with a media reason code; the default channel cannot fetch files.
        """
        raise FetchError(MediaReason.UNSUPPORTED_TYPE, f"{self.platform} cannot fetch files")

    def status(self) -> dict[str, Any]:
        """Adapter-specific, secret-free facts for /api/status. `chatgate status` also prints
        two optional keys: ``summary`` (one line, e.g. shards and latency) and ``last_error``
        (``{"error", "hint", "at"}``: the latest failure while running, with its fix)."""
        return {}

    # Stall detection: a channel idle longer than stale_after_s whose probe fails is restarted.
    def stale_after_s(self) -> float | None:
        return None

    def idle_for_s(self) -> float | None:
        """Seconds since the platform last delivered anything (None: not tracked)."""
        return None

    async def probe(self) -> bool:
        """A cheap liveness call (getMe / auth.test style); True when the platform answers."""
        return True

    def reconfigure(self, config: Any) -> None:
        """Apply a hot-reloaded section whose connection settings did not change."""
        self.ctx.config = config

    # Background failure signalling for the supervisor.
    def failed(self) -> asyncio.Future[BaseException]:
        if self._failed is None:
            self._failed = asyncio.get_running_loop().create_future()
        return self._failed

    def fail(self, exc: BaseException) -> None:
        """Called by the adapter when its background work dies; the supervisor reacts."""
        future = self.failed()
        if not future.done():
            future.set_result(exc)

    def reset_failure(self) -> None:
        self._failed = None
