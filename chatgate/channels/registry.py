"""Channel registry: built-in channel packages plus plugins from the `chatgate.channels` group.

A channel is one package exporting a `DESCRIPTOR` (see `descriptor.py`); adding a built-in is one
line in `BUILTIN`. A plugin's entry point may resolve to a ChannelDescriptor or, for older
plugins, to a ChannelAdapter subclass. Descriptors are cheap to import; an adapter's SDK is only
imported when its channel is built, so `chatgate --help` and `chatgate status` stay fast.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from chatgate.channels.descriptor import ChannelDescriptor, descriptor_for_class, load_object

if TYPE_CHECKING:
    from pydantic import BaseModel

    from chatgate.channels.base import ChannelAdapter
    from chatgate.config.claims import Claim

log = logging.getLogger("chatgate.channels")
ENTRY_POINT_GROUP = "chatgate.channels"

BUILTIN: dict[str, str] = {
    "webhook": "chatgate.channels.webhook:DESCRIPTOR",
    "telegram": "chatgate.channels.telegram:DESCRIPTOR",
    "discord": "chatgate.channels.discord:DESCRIPTOR",
    "slack": "chatgate.channels.slack:DESCRIPTOR",
    "webchat": "chatgate.channels.webchat:DESCRIPTOR",
    "whatsapp": "chatgate.channels.whatsapp:DESCRIPTOR",
    "matrix": "chatgate.channels.matrix:DESCRIPTOR",
    "email": "chatgate.channels.email:DESCRIPTOR",
    "teams": "chatgate.channels.teams:DESCRIPTOR",
}


def _as_descriptor(obj: Any, where: str) -> ChannelDescriptor:
    from chatgate.channels.base import ChannelAdapter

    if isinstance(obj, ChannelDescriptor):
        return obj
    if isinstance(obj, type) and issubclass(obj, ChannelAdapter):
        return descriptor_for_class(obj)
    raise TypeError(f"{where} is neither a ChannelDescriptor nor a ChannelAdapter subclass")


class ChannelRegistry:
    """Platform name → descriptor, loaded on first use."""

    def __init__(self, *, plugins: bool = True) -> None:
        self._paths: dict[str, str] = dict(BUILTIN)
        self._loaded: dict[str, ChannelDescriptor] = {}
        self._broken: set[str] = set()
        if plugins:
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                if ep.name in BUILTIN:
                    log.warning("plugin channel %r ignored: the name is built in", ep.name)
                    continue
                self._paths[ep.name] = ep.value

    def register(self, name: str, channel: ChannelDescriptor | type[ChannelAdapter]) -> None:
        """Register a channel directly (embedding, tests, benchmarks)."""
        self._loaded[name] = _as_descriptor(channel, name)
        self._paths.setdefault(name, name)

    def names(self) -> list[str]:
        return sorted(self._paths)

    def descriptor(self, platform: str) -> ChannelDescriptor:
        found = self._loaded.get(platform)
        if found is None:
            path = self._paths.get(platform)
            if path is None:
                raise KeyError(platform)
            found = self._loaded[platform] = _as_descriptor(load_object(path), path)
        return found

    def get(self, platform: str) -> type[ChannelAdapter]:
        """The adapter class of ``platform`` (imports its SDK)."""
        return self.descriptor(platform).adapter_class()

    def items(self) -> Iterator[tuple[str, ChannelDescriptor]]:
        """Every loadable descriptor by name; a plugin that fails to import is logged once and
        skipped (it cannot take down the channels that do load)."""
        for name in self.names():
            if name in self._broken:
                continue
            try:
                yield name, self.descriptor(name)
            except Exception:
                self._broken.add(name)
                log.exception("channel plugin %s failed to load", name)

    def config_models(self) -> Mapping[str, type[BaseModel]]:
        return {name: d.config_model for name, d in self.items()}

    def claims(self, platform: str, section: BaseModel) -> Iterable[Claim]:
        return self.descriptor(platform).claims(section)

    def noisy_loggers(self) -> tuple[str, ...]:
        return tuple(logger for _, d in self.items() for logger in d.noisy_loggers)
