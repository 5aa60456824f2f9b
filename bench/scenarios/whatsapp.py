"""Scenario whatsapp: a burst of messages and a concurrency wave through the real daemon vs a
bare aiohttp Cloud API bot (the library chatgate's WhatsApp channel runs on).

Each side has its own FakeWhatsApp (Graph API, in the bench process); the bench posts signed
webhooks to the subject's port the way Meta does (at most ``POST_CONCURRENCY`` in flight) and
matches every `/messages` send the fake records back to its text. Both sides mark each message
read and answer quoting it. Burst: the Slack scenario's shape (200 users, ``--dms`` messages in
all), ``llm`` (litellm to the fake model, zero latency) and ``echo`` variants (``--quick``: llm
only). Concurrency (llm rig): 200 users send one message each while the model takes 500 ms per
call; ideally the whole wave takes one model latency.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    AnnouncedProc,
    FakeLLMProc,
    Proc,
    daemon,
    free_port,
    started,
    wait_ready,
)
from bench.runner import Context, Outcome
from bench.scenarios.first_reply import TIMEOUT_S
from bench.scenarios.posted_burst import Record, posted_burst, posted_first_reply
from bench.scenarios.slack import Platform, burst_specs, measure, shape_params, wave_specs
from bench.scenarios.tgrig import QUIET_S, REPLY_PREFIX, Backend, Burst
from tests.fakes.whatsapp import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID, FakeWhatsApp

WARM_UP_USERS = ("15550099998", "15550099999")  # below every burst's users
POST_CONCURRENCY = 64  # Meta's webhook delivery keeps several posts in flight
WEBHOOK = "/whatsapp/webhook"
REPLY = "/messages"
SPECS = {v: burst_specs(v, REPLY, "Graph API") for v in ("llm", "echo")}
WAVE = wave_specs(REPLY)


@dataclass
class Subject:
    name: str
    fake: FakeWhatsApp
    proc: Proc
    url: str


@dataclass
class WhatsAppRig:
    backend: Backend
    chatgate: Subject
    floor: Subject
    llm: FakeLLMProc | None
    quiet_s: float = QUIET_S
    first_reply_s: tuple[float, float] = (math.nan, math.nan)  # chatgate, floor
    next_user: int = 15_550_100_000

    def users(self, count: int) -> list[str]:
        """Fresh phone numbers (new sessions) for every burst."""
        first = self.next_user
        self.next_user += count
        return [str(n) for n in range(first, first + count)]


def chatgate_section(fake: FakeWhatsApp) -> dict[str, Any]:
    return {
        "access_token": ACCESS_TOKEN,
        "app_secret": APP_SECRET,
        "verify_token": "bench-verify",
        "phone_number_id": PHONE_NUMBER_ID,
        "api_base": fake.api_base,
        "dm_policy": "open",
    }


def floor_argv(fake: FakeWhatsApp, backend: Backend, llm: FakeLLMProc | None) -> list[str]:
    argv = [PYTHON, "-m", "bench.floors.wa_echo", "--api-base", fake.api_base]
    argv += ["--access-token", ACCESS_TOKEN, "--app-secret", APP_SECRET]
    argv += ["--phone-number-id", PHONE_NUMBER_ID, "--mode", backend]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    return argv


async def rig(ctx: Context, backend: Backend, stack: contextlib.AsyncExitStack) -> WhatsAppRig:
    """Start the floor, then chatgate, each answering its first message the moment it is ready
    (the first-reply row and the warm-up); return once both did."""
    workdir = ctx.scratch(f"whatsapp-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_fake = await stack.enter_async_context(FakeWhatsApp())
    floor_fake = await stack.enter_async_context(FakeWhatsApp())
    quiet = ctx.settle(QUIET_S)
    argv = floor_argv(floor_fake, backend, llm)
    floor_proc = await stack.enter_async_context(
        started(AnnouncedProc("wa-floor", argv, workdir / "floor.log"))
    )
    floor = Subject("floor", floor_fake, floor_proc, f"http://127.0.0.1:{floor_proc.port}{WEBHOOK}")
    floor_first = await first_contact(floor, floor_proc.ready_at, WARM_UP_USERS[0], quiet)
    port = free_port()
    section = chatgate_section(gate_fake)
    config = DaemonConfig(port, llm_base=llm.base_url if llm else None, whatsapp=section)
    gate_proc = await stack.enter_async_context(started(daemon(config.write(workdir / "chatgate"))))
    ready_at = await wait_ready(ctx.http, gate_proc, port, TIMEOUT_S)
    gate = Subject("chatgate", gate_fake, gate_proc, f"http://127.0.0.1:{port}{WEBHOOK}")
    gate_first = await first_contact(gate, ready_at, WARM_UP_USERS[1], quiet)
    return WhatsAppRig(backend, gate, floor, llm, quiet, first_reply_s=(gate_first, floor_first))


def sends(fake: FakeWhatsApp, start: int = 0) -> list[tuple[str, float]]:
    """(text, arrival) of every accepted text message from call ``start`` on."""
    return [
        (str(c.body["text"]["body"]), c.at)
        for c in fake.calls[start:]
        if c.status == 200 and c.body.get("type") == "text"
    ]


def record(fake: FakeWhatsApp) -> Record:
    return Record(
        lambda start: sends(fake, start),
        lambda: len(fake.calls),
        lambda: fake.calls[-1].at if fake.calls else None,
        lambda start: Counter(_call_name(c.body) for c in fake.calls[start:]),
    )


async def first_contact(subject: Subject, ready_at: float, user: str, quiet_s: float) -> float:
    """One message posted now, answered end to end (imports done, connections warm):
    seconds from ready to the reply."""
    fake = subject.fake

    async def post() -> int:
        return (await fake.post(subject.url, fake.message(user, text="warm-up")))[0]

    return await posted_first_reply(
        subject.name, subject.proc, ready_at, post, record(subject.fake), quiet_s
    )


async def burst(
    owner: WhatsAppRig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """The posted burst (bench/scenarios/posted_burst.py) of signed webhooks."""
    fake = subject.fake

    async def post(text: str, user: str) -> int:
        return (await fake.post(subject.url, fake.message(user, text=text)))[0]

    return await posted_burst(
        subject.proc,
        record(fake),
        post,
        owner.users(users),
        per_user=per_user,
        tag=tag,
        prefix=REPLY_PREFIX[owner.backend],
        within_s=within_s,
        quiet_s=owner.quiet_s,
        concurrency=POST_CONCURRENCY,
    )


def _call_name(body: dict[str, Any]) -> str:
    return "read" if body.get("status") == "read" else str(body.get("type") or "other")


def summary(result: Burst) -> dict[str, object]:
    out = result.summary()
    out["graph_api_calls"] = out.pop("bot_api_calls")
    out["refused_posts"] = out.pop("unexpected")
    return out


WHATSAPP = Platform(
    rig, burst, summary, lambda variant: SPECS[variant], WAVE, "/readyz; floor: listening"
)


async def scenario(ctx: Context) -> Outcome:
    table, extra = await measure(ctx, WHATSAPP)
    params = {
        **shape_params(ctx),
        "transport": "signed webhook posts to the subject + Graph API over plain HTTP, "
        f"FakeWhatsApp in the bench, {POST_CONCURRENCY} posts in flight",
        "floor": "bare aiohttp webhook (HMAC check, 200 at once) + aiohttp Graph client: "
        "read receipt, then one quoted text send per message (litellm or echo)",
        "chatgate": "daemon, channels.whatsapp defaults (read receipts, quotes), dm_policy open, "
        "rate limits off",
    }
    return Outcome(table, params, extra)
