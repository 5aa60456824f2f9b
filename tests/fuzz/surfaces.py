"""One live daemon serving every HTTP surface, a raw-socket client, and a traceback counter
for the surface fuzzers (API, web chat, Telegram webhook, Slack Events, WhatsApp webhook, Teams
messaging endpoint, webhooks, framing)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chatgate.gateway.app import Gateway
from tests.channels.whatsapp.support import section as whatsapp_section
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.teams import APP_ID, APP_PASSWORD, FakeTeams
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import build, write_config

API_TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"
CHAT_TOKEN = "wc-7Hq2Lm9Xv4Rt8Kp1Zs6Yd3Nb5"
TG_SECRET = "tg-fuzz-secret"
HOOK_SECRET = "whsec-fuzz-secret"
TG_PATH = "/tg/hook"
SLACK_PATH = "/slack/events"
WA_PATH = "/whatsapp/webhook"
TEAMS_PATH = "/teams/messages"
_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


@dataclass
class Fakes:
    """The platform fakes the daemon talks to while it is fuzzed."""

    tg: FakeTelegram = field(default_factory=FakeTelegram)
    slack: FakeSlack = field(default_factory=FakeSlack)
    wa: FakeWhatsApp = field(default_factory=FakeWhatsApp)
    teams: FakeTeams = field(default_factory=FakeTeams)

    async def __aenter__(self) -> Fakes:
        for fake in (self.tg, self.slack, self.wa, self.teams):
            await fake.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for fake in (self.teams, self.wa, self.slack, self.tg):
            await fake.__aexit__(None, None, None)


def _config(tmp: Path, fakes: Fakes) -> Path:
    tg, slack, wa, teams = fakes.tg, fakes.slack, fakes.wa, fakes.teams
    return write_config(
        tmp,
        f"""  api_token: {API_TOKEN}
agents:
  default: {{backend: echo, prefix: "echo: "}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open, max_streams: 50}}
  telegram:
    token: "{TOKEN}"
    api_base: {tg.base_url.removesuffix("/bot")}
    dm_policy: open
    mode: webhook
    request_timeout_s: 5
    webhook: {{public_url: "https://example.test", path: {TG_PATH}, secret_token: {TG_SECRET}}}
  slack:
    bot_token: "{BOT_TOKEN}"
    app_token: "{APP_TOKEN}"
    signing_secret: "{SIGNING_SECRET}"
    mode: events
    api_base: {slack.api_url}
    request_timeout_s: 5
    dm_policy: open
{whatsapp_section(wa)}    dm_policy: open
  teams:
    app_id: "{APP_ID}"
    app_password: "{APP_PASSWORD}"
    request_timeout_s: 5
    dm_policy: open
{teams.endpoints_yaml()}  webhook:
    routes:
      gh: {{path: /f/gh, secret: {HOOK_SECRET}, signature: github, max_body_bytes: 4096}}
      tpl:
        path: /f/tpl
        signature: none
        respond: async
        max_body_bytes: 4096
        prompt: "{{payload.a}} {{headers.X-Odd}} {{query.q}}"
        session: "{{headers.X-Odd}}"
""",
    )


class TracebackCounter(logging.Handler):
    """Counts log records that carry a traceback (the goal after any fuzz run is zero)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.levelno >= logging.WARNING:
            self.records.append(record)

    def describe(self) -> str:
        return "\n".join(
            f"{r.name}: {r.getMessage()} ({r.exc_info[1]!r})" for r in self.records if r.exc_info
        )


@dataclass
class Live:
    loop: asyncio.AbstractEventLoop
    gateway: Gateway
    fakes: Fakes
    cookie: str = ""
    csrf: str = ""
    teams_token: str = ""  # a Bot Framework token the daemon accepts, and one it must refuse
    forged_token: str = ""
    tracebacks: TracebackCounter = field(default_factory=TracebackCounter)
    sent: dict[str, int] = field(default_factory=dict)

    def request(self, surface: str, raw: bytes, *, stream: bool = False) -> list[int]:
        """Send ``raw`` bytes as they are; every status the daemon answered (pipelined requests
        get one each). ``stream``: an event stream, read only to its headers."""
        self.sent[surface] = self.sent.get(surface, 0) + 1
        return self.loop.run_until_complete(self._request(raw, stream))

    async def _request(self, raw: bytes, stream: bool) -> list[int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.gateway.port)
        try:
            writer.write(raw)
            if writer.can_write_eof() and not stream:
                writer.write_eof()  # whatever the request claims, nothing more is coming
            await writer.drain()
            if stream:
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            else:
                answer = await asyncio.wait_for(reader.read(-1), 30)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            answer = getattr(exc, "partial", b"")
        finally:
            writer.close()
        return [int(code) for code in _STATUS.findall(answer)]


def start(tmp: Path) -> Iterator[Live]:
    loop = asyncio.new_event_loop()
    fakes = Fakes()
    loop.run_until_complete(fakes.__aenter__())
    gateway = build(_config(tmp, fakes))
    loop.run_until_complete(gateway.start())
    live = Live(loop, gateway, fakes)
    live.teams_token, live.forged_token = fakes.teams.token(), fakes.teams.token(forged=True)
    logging.getLogger().addHandler(live.tracebacks)
    try:
        live.cookie, live.csrf = loop.run_until_complete(_sign_in(gateway))
        yield live
    finally:
        logging.getLogger().removeHandler(live.tracebacks)
        loop.run_until_complete(gateway.stop())
        for task in asyncio.all_tasks(loop):  # connections the fuzz left half-sent
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.run_until_complete(fakes.__aexit__(None, None, None))
        loop.close()
        print(f"\nsurface fuzz requests: {live.sent}; tracebacks: {len(live.tracebacks.records)}")


async def _sign_in(gateway: Gateway) -> tuple[str, str]:
    body = json.dumps({"token": CHAT_TOKEN}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    writer.write(
        b"POST /chat/api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    answer = await reader.read(-1)
    writer.close()
    head, _, rest = answer.partition(b"\r\n\r\n")
    cookie = re.search(rb"Set-Cookie: ([^;]+)", head)
    assert cookie is not None, answer
    return cookie.group(1).decode(), str(json.loads(rest)["csrf"])
