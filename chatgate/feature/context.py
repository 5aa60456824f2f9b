"""What a feature is given at build time: the clock, the stores, the live config, and narrow
ways to act on the message path (see `ports`). The builder makes one for all features."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from chatgate.agents.base import Agent
from chatgate.agents.tools.runtime import ToolRuntime
from chatgate.clock import Clock
from chatgate.config.loader import LoadedConfig
from chatgate.config.models import GatewayConfig
from chatgate.feature.operator_notify import OperatorNotifier
from chatgate.feature.ports import (
    ChannelLookup,
    ConfigFiles,
    Deliver,
    LiveConfig,
    Routing,
    Submit,
    Transcripts,
    TurnQueue,
)
from chatgate.feature.voices import Voices
from chatgate.media.outgoing import OutgoingFiles
from chatgate.state.factory import State


@dataclass(frozen=True)
class FeatureContext:
    live: LiveConfig
    clock: Clock
    state: State
    metrics: CollectorRegistry
    owner: str  # this replica's name in the shared stores
    agents: Callable[[], Mapping[str, Agent]]  # the configured agents (reloads replace them)
    voices: Voices
    deliver: Deliver
    submit: Submit
    queue: TurnQueue
    transcripts: Transcripts
    routing: Routing
    channels: ChannelLookup
    operators: OperatorNotifier
    tools: ToolRuntime | None = None  # MCP servers and tool metrics (None: no tools configured)
    files: OutgoingFiles | None = None  # the files replies carry (None: no media store)
    config_files: ConfigFiles | None = None  # validate and reload the config file

    @property
    def loaded(self) -> LoadedConfig:
        return self.live.loaded

    @property
    def config(self) -> GatewayConfig:
        return self.live.loaded.config
