"""Channel registry: built-in adapters plus plugins from the `chatgate.channels` entry-point group.

Adapters are referenced by import path and loaded only when their channel is configured, so an
unused SDK is never imported and `chatgate --help` stays fast.
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

    from chatgate.channels.base import ChannelAdapter

log = logging.getLogger("chatgate.channels")
ENTRY_POINT_GROUP = "chatgate.channels"

BUILTIN: dict[str, str] = {
    "webhook": "chatgate.channels.webhook.adapter:WebhookChannel",
    "telegram": "chatgate.channels.telegram.adapter:TelegramChannel",
}


def _load(path: str) -> type[ChannelAdapter]:
    from chatgate.channels.base import ChannelAdapter

    module_name, _, attr = path.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(cls, type) and issubclass(cls, ChannelAdapter)):
        raise TypeError(f"{path} is not a ChannelAdapter subclass")
    return cls


class ChannelRegistry:
    def __init__(self) -> None:
        self._paths: dict[str, str] = dict(BUILTIN)
        self._classes: dict[str, type[ChannelAdapter]] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in BUILTIN:
                log.warning("plugin channel %r ignored: the name is built in", ep.name)
                continue
            self._paths[ep.name] = ep.value

    def register(self, name: str, cls: type[ChannelAdapter]) -> None:
        """Register an adapter class directly (embedding, tests, benchmarks)."""
        self._classes[name] = cls
        self._paths.setdefault(name, f"{cls.__module__}:{cls.__qualname__}")

    def names(self) -> list[str]:
        return sorted(self._paths)

    def get(self, name: str) -> type[ChannelAdapter]:
        cls = self._classes.get(name)
        if cls is None:
            path = self._paths.get(name)
            if path is None:
                raise KeyError(name)
            cls = self._classes[name] = _load(path)
        return cls

    def plugin_config_models(self) -> dict[str, type[BaseModel]]:
        """Config models of non-built-in channels (loading those plugins, which is cheap by contract)."""
        models: dict[str, type[BaseModel]] = {}
        for name in self._paths:
            if name in BUILTIN:
                continue
            try:
                model = self.get(name).config_model
            except Exception:
                log.exception("channel plugin %s failed to load", name)
                continue
            if model is not None:
                models[name] = model
        return models
