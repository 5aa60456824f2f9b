"""What a channel package tells the gateway about itself, described once.

Each package under `chatgate/channels/` exports a `DESCRIPTOR`: its config model, the keys a
running adapter takes live, what its section claims (HTTP paths, agents, other channels), its
`doctor` check, its noisy SDK loggers, its presentation limits, its markdown converter and the
route hints its config grants. The gateway, config loader, reload, doctor and logging read these;
none names a platform. Importing a descriptor must stay cheap: the adapter (and its SDK) is
referenced by import path.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from chatgate.config.channel_models import ChatChannelConfig
from chatgate.config.claims import AgentRef, Claim
from chatgate.config.findings import Finding
from chatgate.model.messages import RouteHint
from chatgate.presentation.limits import PLAIN, PresentationLimits

if TYPE_CHECKING:
    from chatgate.channels.base import ChannelAdapter

# Keys of the shared chat-channel section that apply without reconnecting.
CHAT_HOT_KEYS = frozenset(
    {
        "agent",
        "dm_policy",
        "group_policy",
        "allowed_users",
        "blocked_users",
        "allowed_chats",
        "stream",
        "pairing_notify",
        "ack_reaction",
    }
)

DoctorCheck = Callable[[str, Any, bool], Awaitable[list[Finding]]]


def chat_claims(section: Any) -> Iterable[Claim]:
    """A chat channel names the agent that serves it."""
    if isinstance(section, ChatChannelConfig):
        yield AgentRef(section.agent, ("agent",))


def no_hints(section: Any) -> Mapping[str, RouteHint]:
    return {}


def not_exclusive(section: Any) -> str | None:
    return None


def markdown_as_is(md: str) -> str:
    """A platform that shows our reply dialect as written (the default `render`)."""
    return md


def secret_lease(platform: str, secret: Any) -> str:
    """A lease name for a connection identified by a secret (a bot token), without the secret."""
    value = secret.get_secret_value() if hasattr(secret, "get_secret_value") else str(secret)
    return f"{platform}:{hashlib.sha256(value.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class ChannelDescriptor:
    """One channel platform, as the rest of chatgate sees it."""

    platform: str
    config_model: type[BaseModel]
    adapter: str  # "package.module:Class", imported only when the channel is built
    limits: PresentationLimits = PLAIN
    # Our reply dialect → the platform's own text markup (pure; lives in the channel's folder).
    markdown: Callable[[str], str] = markdown_as_is
    hot_keys: frozenset[str] = CHAT_HOT_KEYS
    claims: Callable[[Any], Iterable[Claim]] = chat_claims
    route_hints: Callable[[Any], Mapping[str, RouteHint]] = no_hints
    doctor: str | None = None  # "package.module:function" → DoctorCheck
    noisy_loggers: tuple[str, ...] = ()
    # The lease name of a connection only one replica may hold (a polling token, a gateway
    # shard, a socket), or None when every replica may serve the section (webhooks).
    exclusive: Callable[[Any], str | None] = not_exclusive
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def adapter_class(self) -> type[ChannelAdapter]:
        cls = self._cache.get("adapter")
        if cls is None:
            from chatgate.channels.base import ChannelAdapter

            cls = load_object(self.adapter)
            if not (isinstance(cls, type) and issubclass(cls, ChannelAdapter)):
                raise TypeError(f"{self.adapter} is not a ChannelAdapter subclass")
            self._cache["adapter"] = cls
        return cls

    def doctor_check(self) -> DoctorCheck | None:
        if self.doctor is None:
            return None
        check: DoctorCheck = load_object(self.doctor)
        return check

    def hot_change(self, old: BaseModel, new: BaseModel) -> tuple[list[str], list[str]]:
        """(keys that apply live, keys that need the adapter rebuilt) between two sections."""
        if type(old) is not type(new):
            return [], ["type"]
        changed = [n for n in type(old).model_fields if getattr(old, n) != getattr(new, n)]
        return (
            [k for k in changed if k in self.hot_keys],
            [k for k in changed if k not in self.hot_keys],
        )


def load_object(path: str) -> Any:
    """Import "package.module:attribute"."""
    module_name, _, attr = path.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def descriptor_for_class(cls: type[ChannelAdapter]) -> ChannelDescriptor:
    """A descriptor for a bare adapter class (older plugins and tests register classes)."""
    model = cls.config_model or ChatChannelConfig
    descriptor = ChannelDescriptor(
        platform=cls.platform, config_model=model, adapter=f"{cls.__module__}:{cls.__qualname__}"
    )
    descriptor._cache["adapter"] = cls
    return descriptor
