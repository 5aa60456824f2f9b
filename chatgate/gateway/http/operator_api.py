"""`OperatorApi`: what the HTTP surface and the dashboard need of the gateway."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from chatgate.operator.actions import AnyAction, Download


class OperatorApi(Protocol):
    """What the HTTP surface needs of the gateway (the Gateway lifecycle provides it)."""

    @property
    def api_token_configured(self) -> bool: ...

    def accepts_token(self, given: str) -> bool: ...

    def health(self) -> tuple[bool, dict[str, Any]]: ...

    def readiness(self) -> tuple[bool, dict[str, Any]]: ...

    def metrics_text(self) -> bytes: ...

    async def status(self) -> dict[str, Any]: ...

    async def reload(self) -> dict[str, Any]: ...

    async def restart_channel(self, name: str) -> bool: ...

    @property
    def actions(self) -> Mapping[str, AnyAction]:
        """The declared operator actions, by name."""

    async def answer(self, action: AnyAction, args: Any) -> dict[str, Any]:
        """The action's JSON answer, scrubbed of secrets."""

    async def download(self, action: AnyAction, args: Any) -> Download:
        """A download action's answer (its summary scrubbed of secrets)."""
