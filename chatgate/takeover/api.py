"""`/api/chats`: paused chats, pause, resume and an operator's reply as the bot.

Mounted on the gateway's dynamic routes, so the /api/ middleware applies: a bearer token
(`gateway.api_token` or the daemon's local one) for every call that changes something, sent in
the Authorization header and never a cookie (the dashboard's CSRF rule). Bodies are read through
`chatgate/http_input` (bounded, UTF-8, JSON within depth); a bad one is a 400 naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from chatgate.config.redact import scrub
from chatgate.feature.ports import RouteTable
from chatgate.http_input import BadInput, InputReason, read_json, utf8_clean
from chatgate.takeover.service import Takeover, TakeoverError

MAX_BODY = 64 * 1024
MAX_FOR_S = 366 * 86_400.0
BY_NAMES = frozenset({"cli", "dashboard", "api"})


class ChatsApi:
    def __init__(self, takeover: Takeover) -> None:
        self.takeover = takeover

    def mount(self, routes: RouteTable) -> None:
        routes.add("GET", "/api/chats", self.list)
        routes.add("POST", "/api/chats/pause", self.pause)
        routes.add("POST", "/api/chats/resume", self.resume)
        routes.add("POST", "/api/chats/reply", self.reply)

    def _json(self, data: dict[str, Any], status: int = 200) -> web.Response:
        return web.json_response(scrub(data, self.takeover.context.loaded.secrets), status=status)

    async def list(self, request: web.Request) -> web.Response:
        return self._json(await self.takeover.view())

    async def pause(self, request: web.Request) -> web.StreamResponse:
        async def act() -> web.Response:
            body = await _body(request, "chat")
            for_s = _for_s(body.get("for_s"))
            pause = await self.takeover.pause(body["chat"], _by(body), for_s)
            return self._json({"paused": True, "pause": pause.to_dict()})

        return await self._refusing(act)

    async def resume(self, request: web.Request) -> web.StreamResponse:
        async def act() -> web.Response:
            body = await _body(request, "chat")
            resumed = await self.takeover.resume(body["chat"], _by(body))
            return self._json({"resumed": resumed, "chat": body["chat"]})

        return await self._refusing(act)

    async def reply(self, request: web.Request) -> web.StreamResponse:
        async def act() -> web.Response:
            body = await _body(request, "chat", "text")
            answer = await self.takeover.reply(body["chat"], body["text"], _by(body))
            return self._json(answer, 200 if answer["delivered"] else 502)

        return await self._refusing(act)

    async def _refusing(self, act: Callable[[], Awaitable[web.Response]]) -> web.Response:
        """A bad body or an unknown chat is a 400 naming it; a state store that is away is the
        /api/ middleware's 503 with Retry-After."""
        try:
            return await act()
        except BadInput as bad:
            return bad.answer()
        except TakeoverError as exc:
            return self._json({"error": str(exc), "reason_code": "invalid_request"}, 400)


async def _body(request: web.Request, *names: str) -> dict[str, Any]:
    data = await read_json(request, MAX_BODY)
    if not isinstance(data, dict):
        raise BadInput(400, InputReason.NOT_JSON, f"JSON body needs {', '.join(names)}")
    for name in names:
        if not isinstance(data.get(name), str) or not data[name]:
            raise BadInput(400, InputReason.MISSING_PARAMETER, f"JSON body needs {name}")
    utf8_clean([data[n] for n in names], "a parameter")
    return data


def _for_s(value: Any) -> float | None:
    """Seconds the pause lasts (0: until resumed); None: the configured auto resume."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInput(400, InputReason.BAD_PARAMETER, "for_s must be a number of seconds")
    if not math.isfinite(value) or not 0 <= value <= MAX_FOR_S:
        raise BadInput(400, InputReason.BAD_PARAMETER, f"for_s must be 0–{MAX_FOR_S:.0f}")
    return float(value)


def _by(body: dict[str, Any]) -> str:
    """Who acted, for the log and the pause record: the client names itself (cli, dashboard)."""
    by = body.get("by")
    return by if isinstance(by, str) and by in BY_NAMES else "api"
