"""Fake Microsoft cloud for the Teams channel on 127.0.0.1: the Bot Framework token issuer
(OpenID metadata, a JWKS of its own RSA key endorsing `msteams`, the client-credentials login
endpoint) and the Bot Connector (conversation activities: create, update; inline attachments).

It also plays Teams: ``post`` sends an activity to chatgate's messaging endpoint with a bearer
JWT signed by the real rules (RS256, issuer, audience = app id, `serviceurl`, expiry), and a
user's press on a file-consent card (``consent``: the `fileConsent/invoke` with an upload
session on this server, whose PUT pieces land in ``uploads``). Forged,
expired, wrong-audience and wrong-serviceUrl tokens are one keyword away. Connector faults are
queued with ``fail`` (status, Retry-After). Point chatgate at it only through the channel's
public ``endpoints`` settings (the SDK's CloudEnvironment) and the activity's ``serviceUrl``.
"""

from __future__ import annotations

import itertools
import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.slack_socket import Signal, wait_until

JSONDict = dict[str, Any]
APP_ID: Final = "3f2b1c4d-0000-4000-8000-00000000a11d"
APP_PASSWORD: Final = "fake-teams-client-secret~0123456789"
TENANT: Final = "72f988bf-0000-4000-8000-0000000000aa"
OTHER_TENANT: Final = "0b0b0b0b-0000-4000-8000-0000000000bb"
ISSUER: Final = "https://api.botframework.com"
KID: Final = "fake-bf-key-1"
BOT_ID: Final = f"28:{APP_ID}"
PNG: Final = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass(frozen=True)
class Fault:
    status: int
    retry_after: float | None = None


@dataclass
class Sent:
    """An activity the bot posted (or updated) through the connector."""

    method: str  # POST (create) or PUT (update)
    conversation: str
    activity: JSONDict
    id: str
    at: float  # time.monotonic() of arrival
    targeted: bool = False  # visible to its recipient only

    @property
    def text(self) -> str:
        return str(self.activity.get("text") or "")

    def attachment(self, content_type: str) -> JSONDict | None:
        for item in self.activity.get("attachments") or ():
            if item.get("contentType") == content_type:
                return dict(item)
        return None

    @property
    def card(self) -> JSONDict | None:
        for item in self.activity.get("attachments") or ():
            if item.get("contentType") == "application/vnd.microsoft.card.adaptive":
                return dict(item["content"])
        return None


@dataclass
class FakeTeams:
    """``async with FakeTeams() as ms``; ``ms.base`` goes into ``channels.teams.endpoints``."""

    app_id: str = APP_ID
    password: str = APP_PASSWORD
    token_lifetime_s: int = 3600
    sent: list[Sent] = field(default_factory=list)
    token_requests: list[JSONDict] = field(default_factory=list)
    token_answers: list[JSONDict] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)  # statuses of faults answered
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # id → (bytes, type)
    fetches: list[tuple[str, bool]] = field(default_factory=list)  # (path, had the bot token)
    uploads: dict[str, bytearray] = field(default_factory=dict)  # upload session id → bytes
    upload_auth: list[bool] = field(default_factory=list)  # each upload piece: had a token
    port: int = 0
    _key: rsa.RSAPrivateKey = field(default_factory=_new_key)
    _rogue: rsa.RSAPrivateKey = field(default_factory=_new_key)
    _faults: list[Fault] = field(default_factory=list)
    _issued: set[str] = field(default_factory=set)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _signal: Signal = field(default_factory=Signal)
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> FakeTeams:
        app = web.Application()
        app.router.add_get("/v1/.well-known/openidconfiguration", self._openid)
        app.router.add_get("/v1/.well-known/keys", self._keys)
        app.router.add_post("/{tenant}/oauth2/v2.0/token", self._token)
        app.router.add_post("/v3/conversations/{conv}/activities", self._create)
        app.router.add_put("/v3/conversations/{conv}/activities/{id}", self._update)
        app.router.add_get("/v3/attachments/{id}/views/original", self._attachment)
        app.router.add_get("/shared/{id}", self._shared)
        app.router.add_put("/upload/{id}", self._upload)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def service_url(self) -> str:
        return f"{self.base}/"

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/v1/.well-known/openidconfiguration"

    def endpoints_yaml(self, indent: str = "    ") -> str:
        return (
            f"{indent}endpoints:\n"
            f"{indent}  login_endpoint: {self.base}\n"
            f"{indent}  openid_metadata_url: {self.metadata_url}\n"
        )

    # -- issuer ---------------------------------------------------------------------------------

    async def _openid(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": ISSUER,
                "jwks_uri": f"{self.base}/v1/.well-known/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
            }
        )

    async def _keys(self, request: web.Request) -> web.Response:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        jwk.update(kid=KID, use="sig", endorsements=["msteams"])
        return web.json_response({"keys": [jwk]})

    async def _token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        self.token_requests.append({"tenant": request.match_info["tenant"], **form})
        if form.get("client_id") != self.app_id or form.get("client_secret") != self.password:
            return web.json_response(
                {"error": "invalid_client", "error_description": "AADSTS7000215"}, status=401
            )
        token = f"bot-token-{next(self._ids)}-{secrets.token_hex(8)}"
        self._issued.add(token)
        answer = {
            "token_type": "Bearer",
            "expires_in": self.token_lifetime_s,
            "access_token": token,
        }
        self.token_answers.append(answer)
        return web.json_response(answer)

    def revoke_tokens(self) -> None:
        self._issued.clear()

    # -- connector ------------------------------------------------------------------------------

    def fail(self, *faults: Fault) -> None:
        """The next message posts and updates answer these, in order (typing goes through)."""
        self._faults.extend(faults)

    def _authorised(self, request: web.Request) -> bool:
        given = request.headers.get("Authorization", "")
        return given.startswith("Bearer ") and given[7:] in self._issued

    def _fault(self) -> web.Response | None:
        if not self._faults:
            return None
        fault = self._faults.pop(0)
        self.refused.append(fault.status)
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        body = {"error": {"code": f"HTTP{fault.status}", "message": "fake fault"}}
        return web.json_response(body, status=fault.status, headers=headers)

    async def _create(self, request: web.Request) -> web.Response:
        return await self._record(request, "POST", f"act-{next(self._ids)}")

    async def _update(self, request: web.Request) -> web.Response:
        return await self._record(request, "PUT", request.match_info["id"])

    async def _record(self, request: web.Request, method: str, activity_id: str) -> web.Response:
        if not self._authorised(request):
            return web.json_response({"error": {"code": "Unauthorized"}}, status=401)
        activity = await request.json()
        fault = self._fault() if activity.get("type") != "typing" else None
        if fault is not None:
            self._signal.fire()
            return fault
        if activity.get("type") == "typing":
            self.sent.append(
                Sent(method, request.match_info["conv"], activity, "", time.monotonic())
            )
            self._signal.fire()
            return web.json_response({})
        targeted = request.query.get("isTargetedActivity") == "true"
        conversation = request.match_info["conv"]
        self.sent.append(
            Sent(method, conversation, activity, activity_id, time.monotonic(), targeted)
        )
        self._signal.fire()
        return web.json_response({"id": activity_id})

    async def _attachment(self, request: web.Request) -> web.Response:
        """An image pasted into a chat: the connector serves it to the bot's token only."""
        self.fetches.append((request.path, self._authorised(request)))
        if not self._authorised(request):
            return web.Response(status=401)
        data, mime = self.files.get(request.match_info["id"], (PNG, "image/png"))
        return web.Response(body=data, content_type=mime)

    async def _shared(self, request: web.Request) -> web.Response:
        """A file shared in a personal chat: a pre-authorised download URL (no token)."""
        self.fetches.append((request.path, "Authorization" in request.headers))
        found = self.files.get(request.match_info["id"])
        if found is None:
            return web.Response(status=404)
        return web.Response(body=found[0], content_type=found[1])

    async def _upload(self, request: web.Request) -> web.Response:
        """A OneDrive upload session: pieces by Content-Range, 202 until the last, then 201."""
        self.upload_auth.append("Authorization" in request.headers)
        span, _, total = (
            request.headers.get("Content-Range", "").removeprefix("bytes ").partition("/")
        )
        first, _, last = span.partition("-")
        body = await request.read()
        data = self.uploads.setdefault(request.match_info["id"], bytearray())
        if (
            not first.isdigit()
            or int(first) != len(data)
            or len(body) != int(last) - int(first) + 1
        ):
            return web.json_response({"error": "bad range"}, status=416)
        data.extend(body)
        self._signal.fire()
        done = len(data) == int(total)
        return web.json_response({"id": "drive-item"} if done else {}, status=201 if done else 202)

    def consent(self, card: Sent, *, accept: bool = True, user: str = "aad-user-1") -> JSONDict:
        """The `fileConsent/invoke` Teams sends when the user answers the consent card."""
        attachment = card.attachment("application/vnd.microsoft.teams.card.file.consent")
        assert attachment is not None, card.activity
        content, name = attachment["content"], attachment["name"]
        session = f"s{next(self._ids)}"
        value: JSONDict = {
            "type": "fileUpload",
            "action": "accept" if accept else "decline",
            "context": content["acceptContext" if accept else "declineContext"],
        }
        if accept:
            value["uploadInfo"] = {
                "name": name,
                "uploadUrl": f"{self.base}/upload/{session}",
                "contentUrl": f"https://contoso-my.sharepoint.com/personal/{session}/{name}",
                "uniqueId": f"unique-{session}",
                "fileType": name.rpartition(".")[2],
            }
        activity = self.message("", user=user, conversation=card.conversation)
        activity.update(type="invoke", name="fileConsent/invoke", value=value, replyToId=card.id)
        activity.pop("text", None)
        return activity

    def inline_image(self, image_id: str = "img-1") -> JSONDict:
        url = f"{self.base}/v3/attachments/{image_id}/views/original"
        return {"contentType": "image/png", "contentUrl": url, "name": "pasted.png"}

    def shared_file(self, file_id: str, name: str, file_type: str) -> JSONDict:
        content = {
            "downloadUrl": f"{self.base}/shared/{file_id}",
            "uniqueId": file_id,
            "fileType": file_type,
        }
        return {
            "contentType": "application/vnd.microsoft.teams.file.download.info",
            "name": name,
            "content": content,
        }

    async def wait_refused(self, count: int = 1, timeout: float = 30.0) -> list[int]:
        return await wait_until(
            self._signal,
            lambda: self.refused if len(self.refused) >= count else None,
            timeout,
            lambda: f"wanted {count} refused calls, got {self.refused}",
        )

    def messages(self) -> list[Sent]:
        return [s for s in self.sent if s.activity.get("type") != "typing" and not s.targeted]

    def targeted(self) -> list[Sent]:
        return [s for s in self.sent if s.targeted]

    def typings(self) -> list[Sent]:
        return [s for s in self.sent if s.activity.get("type") == "typing"]

    async def wait_sent(self, count: int, timeout: float = 30.0) -> list[Sent]:
        return await wait_until(
            self._signal,
            lambda: self.messages() if len(self.messages()) >= count else None,
            timeout,
            lambda: f"wanted {count} messages, got {[s.text for s in self.messages()]}",
        )

    async def wait_text(self, needle: str, timeout: float = 30.0) -> list[Sent]:
        """The messages so far, once one of them holds ``needle``."""

        def found() -> list[Sent] | None:
            sent = self.messages()
            return sent if any(needle in s.text for s in sent) else None

        return await wait_until(self._signal, found, timeout, lambda: f"no message with {needle}")

    async def wait_card(self, count: int, timeout: float = 30.0) -> Sent:
        """The ``count``-th card with actions the bot posted, once it came."""

        def found() -> Sent | None:
            cards = [
                s for s in self.messages() if s.method == "POST" and (s.card or {}).get("actions")
            ]
            return cards[count - 1] if len(cards) >= count else None

        return await wait_until(self._signal, found, timeout, lambda: f"no card #{count}")

    async def wait_update(self, activity_id: str, timeout: float = 30.0) -> Sent:
        """The PUT that replaced activity ``activity_id`` (the latest, once one came)."""

        def found() -> Sent | None:
            puts = [s for s in self.sent if s.method == "PUT" and s.id == activity_id]
            return puts[-1] if puts else None

        return await wait_until(self._signal, found, timeout, lambda: f"no update of {activity_id}")

    # -- Teams' side ----------------------------------------------------------------------------

    def token(
        self,
        *,
        audience: str | None = None,
        service_url: str | None = None,
        expires_in: float = 3600.0,
        forged: bool = False,
        issuer: str = ISSUER,
    ) -> str:
        now = time.time()
        claims = {
            "iss": issuer,
            "aud": audience or self.app_id,
            "exp": int(now + expires_in),
            "nbf": int(now - 60),
            "serviceurl": service_url if service_url is not None else self.service_url,
            "appid": "d6d49420-f39b-4df7-a1dc-d59a935871db",
        }
        key = self._rogue if forged else self._key
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})

    def message(
        self,
        text: str,
        *,
        user: str = "aad-user-1",
        conversation: str = "a:1personal-chat",
        kind: str = "personal",
        activity_id: str | None = None,
        mention: bool = False,
        tenant: str = TENANT,
        value: JSONDict | None = None,
        reply_to: str | None = None,
        attachments: list[JSONDict] | None = None,
    ) -> JSONDict:
        activity: JSONDict = {
            "type": "message",
            "id": activity_id or f"{int(time.time() * 1000)}{next(self._ids)}",
            "timestamp": "2026-12-06T10:00:00.000Z",
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": {"id": f"29:{user}", "name": user.title(), "aadObjectId": user},
            "conversation": {"id": conversation, "conversationType": kind, "tenantId": tenant},
            "recipient": {"id": BOT_ID, "name": "Gate"},
            "text": f"<at>Gate</at> {text}" if mention else text,
            "locale": "en-US",
            "channelData": {"tenant": {"id": tenant}},
        }
        if mention:
            activity["entities"] = [
                {
                    "type": "mention",
                    "text": "<at>Gate</at>",
                    "mentioned": {"id": BOT_ID, "name": "Gate"},
                }
            ]
        if value is not None:
            activity["value"] = value
            activity["text"] = ""
        if reply_to:
            activity["replyToId"] = reply_to
        if attachments:
            activity["attachments"] = attachments
        return activity

    def added(self, conversation: str = "a:1personal-chat", tenant: str = TENANT) -> JSONDict:
        """The bot was installed (a conversationUpdate with the bot among membersAdded)."""
        return {
            "type": "conversationUpdate",
            "id": f"upd-{next(self._ids)}",
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": {"id": "29:aad-user-1"},
            "conversation": {
                "id": conversation,
                "conversationType": "personal",
                "tenantId": tenant,
            },
            "recipient": {"id": BOT_ID},
            "membersAdded": [{"id": BOT_ID}],
            "channelData": {"tenant": {"id": tenant}},
        }

    async def post(
        self, url: str, activity: JSONDict, *, token: str | None = None, signed: bool = True
    ) -> tuple[int, str]:
        assert self._session is not None
        headers = {"Content-Type": "application/json"}
        if signed:
            headers["Authorization"] = f"Bearer {token or self.token()}"
        async with self._session.post(url, data=json.dumps(activity), headers=headers) as response:
            return response.status, await response.text()
