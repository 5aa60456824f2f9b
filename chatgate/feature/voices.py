"""Which Voice answers a message: the catalog built from the current config, the user's or
channel's language, and the channel's command form. Rebuilt when the config is reloaded."""

from __future__ import annotations

from chatgate.config.loader import LoadedConfig
from chatgate.feature.ports import LiveConfig
from chatgate.model.messages import InboundMessage
from chatgate.texts import Catalog, style_for
from chatgate.texts.commands import CommandStyle
from chatgate.texts.voice import Voice

USER_LANGUAGE_KEY = "language"  # InboundMessage.extra key an adapter sets from the platform
# Voices kept per (channel, user language, agent) until the next reload: a turn asks for its voice
# several times (budget, agent call, conclusion, delivery) and the answer is always the same one.
# Bounded, as user language tags come from the platforms.
_KEPT_VOICES = 512


def catalog_from(loaded: LoadedConfig) -> Catalog:
    gateway = loaded.config.gateway
    overrides = {}
    languages = {}
    for name, section in loaded.channels.items():
        chat = section.chat
        if chat is None:
            continue
        overrides[name] = chat.texts.as_overrides()
        if chat.language:
            languages[name] = chat.language
    return Catalog(
        agent_overrides={
            name: agent.texts.as_overrides() for name, agent in loaded.config.agents.items()
        },
        default_language=gateway.language,
        overrides=gateway.texts.as_overrides(),
        channel_overrides=overrides,
        channel_languages=languages,
    )


class Voices:
    def __init__(self, live: LiveConfig) -> None:
        self.live = live
        self._built_from: LoadedConfig | None = None
        self._catalog = Catalog()
        self._styles: dict[str, CommandStyle] = {}
        self._integrations: frozenset[str] = frozenset()
        self._kept: dict[tuple[str, str | None, str | None], Voice] = {}

    def _refresh(self) -> None:
        loaded = self.live.loaded
        if loaded is self._built_from:
            return
        self._kept = {}
        self._catalog = catalog_from(loaded)
        self._styles = {
            name: style_for(section.platform, getattr(section.config, "slash_command", None))
            for name, section in loaded.channels.items()
        }
        # A webhook's caller is a system the operator wired up: it gets the operator detail.
        self._integrations = frozenset(
            name for name, section in loaded.channels.items() if section.chat is None
        )
        self._built_from = loaded

    def for_channel(
        self, channel: str, user_language: str | None = None, agent: str | None = None
    ) -> Voice:
        self._refresh()
        key = (channel, user_language, agent or None)
        voice = self._kept.get(key)
        if voice is None:
            if len(self._kept) >= _KEPT_VOICES:
                self._kept = {}
            voice = self._kept[key] = Voice(
                catalog=self._catalog,
                language=self._catalog.language_for(channel, user_language),
                channel=channel,
                agent=agent or None,
                commands=self._styles.get(channel, CommandStyle()),
                verbose=self.live.loaded.config.gateway.failure_replies == "verbose"
                or channel in self._integrations,
            )
        return voice

    def for_message(self, msg: InboundMessage, agent: str | None = None) -> Voice:
        """The Voice answering ``msg``; ``agent`` once routing chose one (its overrides)."""
        language = msg.extra.get(USER_LANGUAGE_KEY)
        user = language if isinstance(language, str) else None
        return self.for_channel(msg.channel, user, agent)
