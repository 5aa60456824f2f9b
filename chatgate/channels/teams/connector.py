"""The Bot Connector through the Teams SDK: one `ApiClient` per service URL sharing one HTTP
client and the cached bot token, and the conversation references proactive sends need.

A reference (service URL, conversation id, tenant) is saved from the last verified activity of
each chat, in the channel facts (shared by replicas, kept across restarts), before the
activity is acked; a send to a chat without one cannot reach Teams at all.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import urlsplit

import httpx

from chatgate import tracing
from chatgate.channels.teams import ids
from chatgate.channels.teams.auth import TokenSource
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.channels.teams.errors import TokenError
from chatgate.channels.teams.inbound import Reference
from chatgate.clock import Clock
from chatgate.config.base import secret_value
from chatgate.state.protocols import ChannelFacts

REFERENCE_TTL_S = 400 * 86_400.0
TRUSTED_SUFFIXES = (".trafficmanager.net", ".botframework.com", ".botframework.us", ".azure.cn")


def cloud_of(config: TeamsChannelConfig) -> Any:
    """The SDK's CloudEnvironment for the config (named cloud plus endpoint overrides)."""
    from microsoft_teams.api.auth.cloud_environment import from_name, with_overrides

    return with_overrides(from_name(config.cloud), **config.endpoints.model_dump())


def token_client(config: TeamsChannelConfig, clock: Clock) -> TokenSource:
    from microsoft_teams.api.auth.credentials import ClientCredentials
    from microsoft_teams.api.clients.bot.token_client import BotTokenClient
    from microsoft_teams.common.http import ClientOptions

    credentials = ClientCredentials(
        client_id=str(config.app_id),
        client_secret=secret_value(config.app_password) or "",
        tenant_id=config.tenant_id,
    )
    client = BotTokenClient(ClientOptions(timeout=config.request_timeout_s), cloud=cloud_of(config))
    return TokenSource(_TokenCalls(client), credentials, clock)


class _TokenCalls:
    """The SDK token client, its failures as TokenError (a refusal names no secret)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def get(self, credentials: Any) -> Any:
        try:
            return await self.client.get(credentials)
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            refused = status in (400, 401, 403)
            raise TokenError(f"token endpoint answered HTTP {status}", refused=refused) from None
        except (httpx.TransportError, TimeoutError) as exc:
            raise TokenError(
                f"token endpoint unreachable ({type(exc).__name__})", refused=False
            ) from None

    async def close(self) -> None:
        await self.client.http.http.aclose()


class Connector:
    """Sends through the SDK's conversation client, per service URL."""

    def __init__(
        self,
        config: TeamsChannelConfig,
        channel: str,
        facts: ChannelFacts | None,
        clock: Clock,
    ) -> None:
        from microsoft_teams.common.http import Client, ClientOptions

        self.config = config
        self.channel = channel
        self.facts = facts
        self.clock = clock
        self.tokens = token_client(config, clock)
        self.cloud = cloud_of(config)
        self._http = Client(ClientOptions(timeout=config.request_timeout_s, token=self.tokens.get))
        self._clients: dict[str, Any] = {}
        self._refs: dict[str, Reference] = {}
        self.hosts: set[str] = set()

    async def close(self) -> None:
        await self._http.http.aclose()
        await self.tokens.close()

    def client(self, service_url: str) -> Any:
        from microsoft_teams.api.clients.api_client import ApiClient

        found = self._clients.get(service_url)
        if found is None:
            found = self._clients[service_url] = ApiClient(
                service_url, self._http, cloud=self.cloud
            )
        return found

    # -- references ------------------------------------------------------------------------

    async def remember(self, ref: Reference) -> None:
        """Keep the chat's reference (written only when it changed)."""
        self.hosts.add(urlsplit(ref.service_url).netloc.lower())
        if self._refs.get(ref.chat_id) == ref:
            return
        if self.facts is not None:
            key = ids.reference_key(ref.chat_id)
            await self.facts.put(
                self.channel, key, ref.to_dict(), self.clock.time(), REFERENCE_TTL_S
            )
        self._refs[ref.chat_id] = ref

    async def reference(self, chat: str) -> Reference | None:
        found = self._refs.get(chat)
        if found is not None or self.facts is None:
            return found
        key = ids.reference_key(chat)
        value = (await self.facts.get_many(self.channel, [key], self.clock.time())).get(key)
        if not value or not value.get("service_url"):
            return None
        found = Reference(
            chat,
            str(value.get("conversation") or ""),
            str(value["service_url"]),
            str(value.get("tenant_id") or ""),
            str(value.get("kind") or ""),
        )
        self._refs[chat] = found
        self.hosts.add(urlsplit(found.service_url).netloc.lower())
        return found

    def trusted(self, url: str) -> bool:
        """Whether the bot token may go to ``url`` (a connector host, never a stranger)."""
        parts = urlsplit(url)
        host = parts.netloc.lower()
        if host in self.hosts:
            return True
        return (
            parts.scheme == "https"
            and parts.hostname is not None
            and parts.hostname.endswith(TRUSTED_SUFFIXES)
        )

    # -- calls -----------------------------------------------------------------------------

    async def post(self, ref: Reference, conversation: str, activity: dict[str, Any]) -> str:
        from microsoft_teams.api.activities.message import MessageActivityInput

        params = MessageActivityInput.model_validate({"type": "message", **activity})
        with _span("sendToConversation"):
            sent = await self.client(ref.service_url).conversations.create_activity(
                conversation, params
            )
        return str(sent.id)

    async def update(
        self, ref: Reference, conversation: str, activity_id: str, activity: dict[str, Any]
    ) -> str:
        from microsoft_teams.api.activities.message import MessageActivityInput

        params = MessageActivityInput.model_validate({"type": "message", **activity})
        api = self.client(ref.service_url).conversations
        with _span("updateActivity"):
            sent = await api.update_activity(conversation, activity_id, params)
        return str(sent.id)

    async def tell(self, ref: Reference, conversation: str, user: str, text: str) -> None:
        """A message only ``user`` (a Teams user id) sees: the SDK's targeted activity."""
        import warnings

        from microsoft_teams.api.activities.message import MessageActivityInput
        from microsoft_teams.api.models import Account
        from microsoft_teams.common.experimental import ExperimentalWarning

        warnings.filterwarnings("ignore", ".*ExperimentalTeamsTargeted", ExperimentalWarning)
        params = MessageActivityInput(text=text, recipient=Account(id=user))
        api = self.client(ref.service_url).conversations
        with _span("sendTargetedActivity"):
            await api.create_targeted_activity(conversation, params)

    async def typing(self, ref: Reference, conversation: str) -> None:
        from microsoft_teams.api.activities.typing import TypingActivityInput

        with _span("sendTyping"):
            await self.client(ref.service_url).conversations.create_activity(
                conversation, TypingActivityInput()
            )


def _span(method: str) -> AbstractContextManager[tracing.Span]:
    """A Bot Connector call's span, named by the REST operation (``sendToConversation``)."""
    return tracing.span(f"teams {method}", kind="client", inside=True, leaf=True)
