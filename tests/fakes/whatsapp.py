"""Fake WhatsApp Cloud API on 127.0.0.1: the Graph API a business number sends through, and
Meta's side of the webhook (signed posts of messages and status callbacks).

The Graph API serves ``/{version}/{phone_number_id}`` (the number's facts),
``/{version}/{phone_number_id}/messages`` (sends, read receipts and typing),
``/{version}/{phone_number_id}/media`` (multipart uploads, recorded in ``uploads`` by the id it
answers; a media message must name one), ``/{version}/{waba_id}/subscribed_apps`` and
``/{version}/{waba_id}/message_templates``. It checks
the bearer token (code 190 once `expire_token` was called), Meta's message limits (4,096
characters of text, 1,024 of interactive body, 3 reply buttons of 20 characters, 10 list rows,
unique ids, approved templates) and the 24-hour window (131047 for a free-form message to a user
who last wrote over 24 h ago, per `now`). Faults are queued per path suffix with `fail`.
Point chatgate at it through ``channels.whatsapp.api_base`` only.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
from aiohttp import web

from tests.fakes.slack_socket import Signal, wait_until
from tests.fakes.whatsapp_media import MediaStore

JSONDict = dict[str, Any]
ACCESS_TOKEN: Final = "EAAG-fake-whatsapp-token"
APP_SECRET: Final = "fake-app-secret-0123456789"
VERIFY_TOKEN: Final = "fake-verify-token"
PHONE_NUMBER_ID: Final = "106540352242922"
DISPLAY_NUMBER: Final = "15550783881"
WABA_ID: Final = "102290129340398"
VERSION: Final = "v21.0"
WINDOW_S: Final = 86_400.0


@dataclass(frozen=True)
class GraphFault:
    """A canned Graph error answer (``code`` is Meta's error code)."""

    code: int
    message: str = "fake failure"
    status: int = 400
    subcode: int | None = None


@dataclass
class Call:
    method: str  # GET or POST
    path: str  # below /{version}/
    body: JSONDict
    at: float
    status: int = 200
    error: int | None = None


@dataclass(frozen=True)
class Upload:
    """A file received on ``/media``: its bytes, file name and the type the sender gave."""

    data: bytes
    filename: str
    mime: str


@dataclass
class Template:
    name: str
    language: str = "en_US"
    status: str = "APPROVED"
    parameters: int = 1


@dataclass
class FakeWhatsApp:
    """``async with FakeWhatsApp() as wa``; ``wa.api_base`` goes into the channel config."""

    token: str = ACCESS_TOKEN
    app_secret: str = APP_SECRET
    now: Callable[[], float] = time.time
    quality_rating: str = "GREEN"
    subscribed: bool = True
    templates: list[Template] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    last_inbound: dict[str, float] = field(default_factory=dict)
    uploads: dict[str, Upload] = field(default_factory=dict)
    port: int = 0
    _faults: dict[str, list[GraphFault]] = field(default_factory=dict)  # "suffix[#send]" → queue
    _expired: bool = False
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _signal: Signal = field(default_factory=Signal)
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None
    media: MediaStore = field(default_factory=MediaStore)

    async def __aenter__(self) -> FakeWhatsApp:
        app = web.Application()
        app.router.add_route("*", f"/{VERSION}/{{path:.+}}", self._handle)
        self.media.install(app, self.token)
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
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- control ----------------------------------------------------------------------------

    def fail(self, suffix: str, fault: GraphFault, times: int = 1, *, sends: bool = False) -> None:
        """The next ``times`` calls whose path ends with ``suffix`` (with ``sends``: only message
        sends, not read receipts) answer ``fault``."""
        self._faults.setdefault(suffix + ("#send" if sends else ""), []).extend([fault] * times)

    def expire_token(self) -> None:
        self._expired = True

    def sent(self, to: str | None = None) -> list[JSONDict]:
        """Messages accepted for delivery (not read receipts), oldest first."""
        return [
            c.body
            for c in self.calls
            if c.path.endswith("/messages")
            and c.status == 200
            and "to" in c.body
            and (to is None or c.body["to"] == to)
        ]

    def reads(self) -> list[JSONDict]:
        return [c.body for c in self.calls if c.body.get("status") == "read" and c.status == 200]

    async def wait_sent(self, n: int = 1, timeout: float = 30.0) -> list[JSONDict]:
        def probe() -> list[JSONDict] | None:
            found = self.sent()
            return found if len(found) >= n else None

        return await wait_until(self._signal, probe, timeout, lambda: self._explain(n))

    async def wait_calls(
        self, where: Callable[[Call], bool], n: int = 1, timeout: float = 10.0
    ) -> list[Call]:
        def probe() -> list[Call] | None:
            found = [c for c in self.calls if where(c)]
            return found if len(found) >= n else None

        return await wait_until(self._signal, probe, timeout, lambda: self._explain(n))

    def _explain(self, n: int) -> str:
        seen = [(c.method, c.path, c.status, c.error) for c in self.calls]
        return f"wanted {n}; calls so far: {seen}"

    # -- Graph API ------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        body: JSONDict = {}
        if request.method == "POST" and request.content_type == "multipart/form-data":
            body = await _form(request)
        elif request.method == "POST":
            raw = await request.read()
            body = json.loads(raw) if raw else {}
        call = Call(request.method, path, body, time.monotonic())
        self.calls.append(call)
        try:
            answer = self._answer(request, path, body)
        except _Refused as refused:
            call.status, call.error = refused.fault.status, refused.fault.code
            answer = refused.body()
        finally:
            self._signal.fire()
        return web.Response(
            status=call.status, body=json.dumps(answer).encode(), content_type="application/json"
        )

    def _answer(self, request: web.Request, path: str, body: JSONDict) -> JSONDict:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            raise _Refused(GraphFault(190, "Invalid OAuth access token.", 401))
        if self._expired:
            raise _Refused(
                GraphFault(190, "Error validating access token: Session has expired", 401, 463)
            )
        for suffix, queue in self._faults.items():
            plain, _, only = suffix.partition("#")
            if path.endswith(plain) and queue and (not only or "to" in body):
                raise _Refused(queue.pop(0))
        if path == PHONE_NUMBER_ID and request.method == "GET":
            return {
                "id": PHONE_NUMBER_ID,
                "display_phone_number": "+1 555-078-3881",
                "verified_name": "Chatgate Test",
                "quality_rating": self.quality_rating,
            }
        if path == f"{PHONE_NUMBER_ID}/messages" and request.method == "POST":
            return self._message(body)
        if path == f"{PHONE_NUMBER_ID}/media" and request.method == "POST":
            return self._upload(body)
        if path == f"{WABA_ID}/subscribed_apps":
            apps = [{"whatsapp_business_api_data": {"id": "1", "name": "chatgate"}}]
            return {"data": apps if self.subscribed else []}
        if path == f"{WABA_ID}/message_templates":
            wanted = request.query.get("name")
            return {
                "data": [
                    {"name": t.name, "language": t.language, "status": t.status}
                    for t in self.templates
                    if wanted in (None, t.name)
                ]
            }
        if request.method == "GET" and path in self.media.items:
            return self.media.lookup(path, self.api_base)
        raise _Refused(GraphFault(100, f"Unsupported {request.method} request", 400, 33))

    def _message(self, body: JSONDict) -> JSONDict:
        if body.get("messaging_product") != "whatsapp":
            raise _Refused(GraphFault(100, "messaging_product must be whatsapp"))
        if body.get("status") == "read":
            if not str(body.get("message_id", "")).startswith("wamid."):
                raise _Refused(GraphFault(100, "Invalid message_id"))
            return {"success": True}
        to, kind = str(body.get("to") or ""), body.get("type")
        if not to.isdigit():
            raise _Refused(GraphFault(131026, "Message undeliverable"))
        if kind == "template":
            self._check_template(body.get("template") or {})
        else:
            last = self.last_inbound.get(to)
            if last is None or self.now() - last >= WINDOW_S:
                raise _Refused(GraphFault(131047, "Re-engagement message"))
            if kind in MEDIA_TYPES:
                self._check_media(body)
            else:
                _check_limits(body)
        wamid = f"wamid.OUT{next(self._ids)}"
        return {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": to}],
            "messages": [{"id": wamid}],
        }

    def _upload(self, body: JSONDict) -> JSONDict:
        upload = body.get("file")
        if body.get("messaging_product") != "whatsapp" or not isinstance(upload, Upload):
            raise _Refused(GraphFault(100, "messaging_product and file are required"))
        if body.get("type") != upload.mime:
            raise _Refused(GraphFault(100, "Param type must be the file's MIME type"))
        media_id = f"{next(self._ids) + 900_000_000_000}"
        self.uploads[media_id] = upload
        return {"id": media_id}

    def _check_media(self, body: JSONDict) -> None:
        """Meta's rules for a media message: a known upload, its type and size, a caption only
        where the type takes one."""
        kind = str(body["type"])
        media = body.get(kind) or {}
        upload = self.uploads.get(str(media.get("id")))
        if upload is None:
            raise _Refused(GraphFault(131053, "Media upload error: unknown media id"))
        mimes, cap = MEDIA_TYPES[kind]
        if not upload.mime.startswith(mimes) or len(upload.data) > cap:
            raise _Refused(GraphFault(131053, f"Media upload error: {upload.mime} as {kind}"))
        caption = media.get("caption")
        if caption is not None and (kind == "audio" or not 1 <= len(caption) <= 1024):
            raise _Refused(GraphFault(100, "Param caption is not allowed or too long"))

    def _check_template(self, template: JSONDict) -> None:
        language = (template.get("language") or {}).get("code")
        for known in self.templates:
            if known.name == template.get("name") and known.language == language:
                parameters = [
                    p for c in template.get("components") or [] for p in c.get("parameters") or []
                ]
                if known.status != "APPROVED" or len(parameters) != known.parameters:
                    raise _Refused(GraphFault(132000, "Number of parameters does not match"))
                if any("\n" in p.get("text", "") or "\t" in p.get("text", "") for p in parameters):
                    raise _Refused(GraphFault(132018, "Param text cannot have new-line/tab"))
                return
        raise _Refused(GraphFault(132001, "Template name does not exist in the translation"))

    # -- Meta's side of the webhook ----------------------------------------------------------

    def signature(self, body: bytes, secret: str | None = None) -> str:
        key = (secret or self.app_secret).encode()
        return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()

    async def post(
        self,
        url: str,
        payload: JSONDict,
        *,
        secret: str | None = None,
        signature: str | None = None,
        signed: bool = True,
    ) -> tuple[int, str]:
        """POST a webhook the way Meta does; the users' messages open their windows first (Meta
        knows of a message before it tells the webhook)."""
        self._heard(payload)
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if signed:
            headers["X-Hub-Signature-256"] = signature or self.signature(body, secret)
        assert self._session is not None
        async with self._session.post(url, data=body, headers=headers) as response:
            return response.status, await response.text()

    async def verify(self, url: str, token: str, challenge: str = "1158201444") -> tuple[int, str]:
        """Meta's GET handshake when the callback URL is saved."""
        assert self._session is not None
        query = {"hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": challenge}
        async with self._session.get(url, params=query) as response:
            return response.status, await response.text()

    def _heard(self, payload: JSONDict) -> None:
        for entry in payload.get("entry", []):
            for change in entry.get("changes", []):
                for message in change.get("value", {}).get("messages", []):
                    stamp = float(message.get("timestamp", self.now()))
                    user = message["from"]
                    self.last_inbound[user] = max(self.last_inbound.get(user, 0.0), stamp)

    def message(
        self,
        user: str,
        kind: str = "text",
        *,
        wamid: str | None = None,
        at: float | None = None,
        name: str = "Ada",
        context: str | None = None,
        **content: Any,
    ) -> JSONDict:
        """A webhook post carrying one user message; ``content`` is the type's object
        (``text="hi"`` is the shorthand for a text message)."""
        message: JSONDict = {
            "from": user,
            "id": wamid or f"wamid.IN{next(self._ids)}",
            "timestamp": str(int(self.now() if at is None else at)),
            "type": kind,
        }
        if kind == "text" and isinstance(content.get("text"), str):
            content = {"text": {"body": content["text"]}}
        message.update(content)
        if context:
            message["context"] = {"from": DISPLAY_NUMBER, "id": context}
        value = {"contacts": [{"profile": {"name": name}, "wa_id": user}], "messages": [message]}
        return envelope(value)

    def status(self, wamid: str, status: str, user: str, *, code: int | None = None) -> JSONDict:
        item: JSONDict = {
            "id": wamid,
            "status": status,
            "timestamp": str(int(self.now())),
            "recipient_id": user,
        }
        if code is not None:
            item["errors"] = [{"code": code, "title": "Re-engagement message"}]
        return envelope({"statuses": [item]})


def envelope(value: JSONDict, phone_number_id: str = PHONE_NUMBER_ID) -> JSONDict:
    """The `whatsapp_business_account` post around one `messages` change value."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": DISPLAY_NUMBER, "phone_number_id": phone_number_id},
        **value,
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }


class _Refused(Exception):
    def __init__(self, fault: GraphFault) -> None:
        super().__init__(fault.message)
        self.fault = fault

    def body(self) -> JSONDict:
        error: JSONDict = {
            "message": self.fault.message,
            "type": "OAuthException",
            "code": self.fault.code,
            "fbtrace_id": "AbCdEf",
        }
        if self.fault.subcode is not None:
            error["error_subcode"] = self.fault.subcode
        return {"error": error}


MB = 1024 * 1024
# type → (accepted MIME prefixes, size cap) as the Cloud API documents them
MEDIA_TYPES: Final[dict[str, tuple[tuple[str, ...], int]]] = {
    "image": (("image/jpeg", "image/png"), 5 * MB),
    "audio": (("audio/",), 16 * MB),
    "video": (("video/mp4", "video/3gpp"), 16 * MB),
    "document": (("",), 100 * MB),
}


async def _form(request: web.Request) -> JSONDict:
    """A multipart upload as ``{"field": value, "file": Upload}``."""
    form: JSONDict = {}
    reader = await request.multipart()
    async for part in reader:
        if not isinstance(part, aiohttp.BodyPartReader) or part.name is None:
            continue
        if part.filename is not None:
            mime = part.headers.get("Content-Type", "application/octet-stream")
            form[part.name] = Upload(bytes(await part.read()), part.filename, mime)
        else:
            form[part.name] = await part.text()
    return form


def _check_limits(body: JSONDict) -> None:
    """Meta's limits for the message types the channel sends."""
    kind = body.get("type")
    if kind == "text":
        text = (body.get("text") or {}).get("body") or ""
        if not text or len(text) > 4096:
            raise _Refused(GraphFault(100, "Param text['body'] must be 1-4096 characters"))
        return
    if kind != "interactive":
        raise _Refused(GraphFault(131051, f"Unsupported message type {kind}"))
    interactive = body.get("interactive") or {}
    text = (interactive.get("body") or {}).get("text") or ""
    if not text or len(text) > 1024:
        raise _Refused(GraphFault(131009, "interactive body must be 1-1024 characters"))
    action = interactive.get("action") or {}
    if interactive.get("type") == "button":
        buttons = [b["reply"] for b in action.get("buttons") or []]
        _unique_ids([b["id"] for b in buttons], 256)
        if not 1 <= len(buttons) <= 3 or any(not 1 <= len(b["title"]) <= 20 for b in buttons):
            raise _Refused(GraphFault(131009, "1-3 buttons with 1-20 character titles"))
        return
    if interactive.get("type") == "list":
        rows = [r for s in action.get("sections") or [] for r in s.get("rows") or []]
        _unique_ids([r["id"] for r in rows], 200)
        if not 1 <= len(rows) <= 10 or any(not 1 <= len(r["title"]) <= 24 for r in rows):
            raise _Refused(GraphFault(131009, "1-10 rows with 1-24 character titles"))
        if not 1 <= len(action.get("button") or "") <= 20:
            raise _Refused(GraphFault(131009, "list button must be 1-20 characters"))
        return
    raise _Refused(GraphFault(131009, "unknown interactive type"))


def _unique_ids(ids: list[str], max_len: int) -> None:
    if len(set(ids)) != len(ids) or any(not 1 <= len(i) <= max_len for i in ids):
        raise _Refused(GraphFault(131009, "ids must be unique and short"))


async def settle(seconds: float = 0.2) -> None:
    """Room for something that should not happen to show up."""
    await asyncio.sleep(seconds)
