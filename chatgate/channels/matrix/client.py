"""The mautrix client the channel talks through: one aiohttp session, logged in, identity checked.

The session's trace hook keeps the `retry_after_ms` of the latest 429 (mautrix raises
`MLimitExceeded` without it), so a rate-limited send or sync waits as long as the server asks.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import aiohttp
from mautrix.api import HTTPAPI
from mautrix.client import Client
from mautrix.client.state_store import MemoryStateStore
from mautrix.client.state_store.sync import MemorySyncStore
from mautrix.types import DeviceID, LoginType, Membership, RoomID, UserID
from mautrix.util.logging import TraceLogger

from chatgate.channels.base import ChannelError, NotConfigured
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.config.base import secret_value
from chatgate.model.reasons import SendErrorKind

log = logging.getLogger("chatgate.matrix")
NO_CREDENTIALS_HINT = (
    "set channels.matrix.access_token (Element: Settings → Help & About → Access token, of a "
    "session logged in as the bot) or access_token_file, or password/password_file with user_id"
)
DEVICE_HINT = (
    "the access token belongs to device {actual}, not channels.matrix.device_id ({wanted}): set "
    "device_id: {actual}, or log in with a password so chatgate creates {wanted}"
)
USER_HINT = "the access token belongs to {actual}, not channels.matrix.user_id ({wanted})"


@dataclass
class RateNotes:
    """The wait the homeserver asked for on its latest 429, read by the error classifier."""

    retry_after_s: float | None = None
    at: float = field(default_factory=time.monotonic)

    def take(self) -> float | None:
        value, self.retry_after_s = self.retry_after_s, None
        return value


def _trace(notes: RateNotes) -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()

    async def on_end(
        session: aiohttp.ClientSession, ctx: SimpleNamespace, params: aiohttp.TraceRequestEndParams
    ) -> None:
        if params.response.status != 429:
            return
        wait: float | None = None
        with contextlib.suppress(Exception):
            body = json.loads(await params.response.read())
            ms = body.get("retry_after_ms")
            wait = ms / 1000 if isinstance(ms, int | float) else None
        header = params.response.headers.get("Retry-After", "")
        if wait is None and header.isdigit():
            wait = float(header)
        notes.retry_after_s, notes.at = wait, time.monotonic()

    trace.on_request_end.append(on_end)
    return trace


class RoomStates(MemoryStateStore):
    """Room state from the syncs, also answering what the crypto needs: the encrypted rooms a
    user shares with the bot (whose device changes rotate the room keys)."""

    async def find_shared_rooms(self, user_id: UserID) -> list[RoomID]:
        shared = []
        for room_id, members in self.members.items():
            member = members.get(user_id)
            joined = member is not None and member.membership in (
                Membership.JOIN,
                Membership.INVITE,
            )
            if joined and self.encryption.get(room_id) is not None:
                shared.append(room_id)
        return shared


@dataclass
class Session:
    client: Client
    http: aiohttp.ClientSession
    notes: RateNotes

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.client.crypto is not None:
                await self.client.crypto.crypto_store.close()
        await self.http.close()


def open_session(config: MatrixChannelConfig, token: str = "") -> Session:
    notes = RateNotes()
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=config.request_timeout_s)
    http = aiohttp.ClientSession(timeout=timeout, trace_configs=[_trace(notes)])
    api = HTTPAPI(
        base_url=config.homeserver_url,
        token=token,
        client_session=http,
        log=cast(TraceLogger, logging.getLogger("chatgate.matrix.http")),
        default_retry_count=0,
    )
    client = Client(
        mxid=UserID(config.user_id) if config.user_id else UserID(""),
        device_id=DeviceID(config.device_id),
        api=api,
        state_store=RoomStates(),
        sync_store=MemorySyncStore(),
    )
    client.ignore_initial_sync = False
    client.ignore_first_sync = False
    return Session(client, http, notes)


async def connect(config: MatrixChannelConfig) -> Session:
    """A logged-in session whose token belongs to `user_id` on `device_id` (whoami checked)."""
    token = secret_value(config.access_token)
    password = secret_value(config.password)
    if token is None and password is None:
        raise NotConfigured("no access token or password", NO_CREDENTIALS_HINT)
    session = open_session(config, token or "")
    try:
        if token is None:
            assert password is not None
            await session.client.login(
                identifier=UserID(config.user_id),
                login_type=LoginType.PASSWORD,
                password=password,
                device_id=config.device_id,
                device_name="chatgate",
                store_access_token=True,
                update_hs_url=False,
            )
        await check_identity(session.client, config)
    except BaseException:
        await session.close()
        raise
    return session


async def check_identity(client: Client, config: MatrixChannelConfig) -> dict[str, Any]:
    """`whoami` must name the configured user and device: E2EE keys live on that device."""
    who = await client.whoami()
    if config.user_id and who.user_id != config.user_id:
        hint = USER_HINT.format(actual=who.user_id, wanted=config.user_id)
        raise ChannelError(f"token is for {who.user_id}", kind=SendErrorKind.AUTH_FATAL, hint=hint)
    if who.device_id and who.device_id != config.device_id:
        hint = DEVICE_HINT.format(actual=who.device_id, wanted=config.device_id)
        raise ChannelError(
            f"token is for device {who.device_id}", kind=SendErrorKind.AUTH_FATAL, hint=hint
        )
    client.mxid = who.user_id
    client.device_id = who.device_id or client.device_id
    return {"user_id": str(who.user_id), "device_id": str(who.device_id or "")}
