"""What a turn tells about its model provider: credentials rejected (degraded) or fine again,
and the model fallbacks the agent reports while it runs."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from chatgate.agents.base import AgentError, AgentReply
from chatgate.gateway.events import EventName
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.supervision.degraded import OwnerKind
from chatgate.model.reasons import FailureReason

log = logging.getLogger("chatgate.turn")
AUTH_FAILURES = frozenset({FailureReason.AUTH_PERMANENT, FailureReason.AUTH_EXPIRED})
PARKING = AUTH_FAILURES | {FailureReason.PROVIDER_QUOTA}  # failures that park the provider


def _parked(agent: str, reason: FailureReason) -> tuple[str, str]:
    """What the operator reads about a parked provider, and the fix."""
    if reason is FailureReason.PROVIDER_QUOTA:
        return (
            f"the model provider for agent '{agent}' has no quota left (insufficient_quota)",
            "top up or raise the provider account's quota",
        )
    return (
        f"the model provider for agent '{agent}' rejected its credentials ({reason.value})",
        f"fix agents.{agent}.api_key in gateway.yaml and run `chatgate reload`",
    )


class ProviderWatch:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def track(
        self, provider: str | None, agent: str, failure: AgentError | None, reply: AgentReply | None
    ) -> None:
        """A provider that rejects its credentials is degraded (read fail-closed); success clears it."""
        if provider is None:
            return
        runtime = self.rt
        if failure is not None and failure.reason in PARKING:
            probe = runtime.config.gateway.supervision.provider_probe_s
            what, fix = _parked(agent, failure.reason)
            runtime.degraded.mark(
                OwnerKind.PROVIDER,
                provider,
                what,
                f"{fix}; chatgate retries the provider every {probe:.0f} s",
                runtime.clock.monotonic(),
                probe_every_s=probe,
            )
            log.error(
                "provider degraded",
                extra={"provider": provider, "agent": agent, "reason": failure.reason.value},
            )
        elif reply is not None and runtime.degraded.clear(OwnerKind.PROVIDER, provider):
            log.info("provider recovered", extra={"provider": provider, "agent": agent})

    def agent_event(self, name: str, data: Mapping[str, Any]) -> None:
        """An agent's `on_event` callback: counts, logs and emits model fallbacks."""
        runtime = self.rt
        if name == EventName.MODEL_FALLBACK:
            runtime.metrics.fallbacks.labels(
                agent=str(data.get("agent")), reason=str(data.get("reason"))
            ).inc()
            log.warning("model fallback", extra=dict(data))
            runtime.events.emit(EventName.MODEL_FALLBACK, runtime.clock.time(), **data)
