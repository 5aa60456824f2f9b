"""A kill -9 loop against real `chatgate run` processes under steady load, and its figures.

Load: Telegram DMs at the fake Bot API and signed async webhooks whose replies are delivered to a
Telegram chat. The daemon is killed with SIGKILL at random points and restarted; at the end one
last daemon drains the backlog. Every message is then counted at the fake: lost (no reply),
duplicated (more than one), and model calls made for a message that had already been answered.
The one duplicate no gateway can rule out is counted apart (``in_doubt``): a reply the Bot API
took from a daemon killed before its journal recorded the send (the row still `answered` on
disk after the kill), sent once more by a later daemon. Any other second copy is a duplicate.
Used by `tests/reliability/test_kill_loop.py` (a few kills) and `make soak` (many).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from chatgate.model.text_ids import TextId
from chatgate.state.sqlite import DB_FILE
from chatgate.texts.voice import Voice
from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon, post_signed_job
from tests.fakes.llm import FakeLLM, RecordedRequest
from tests.fakes.telegram import FakeTelegram
from tests.harness import over_http

SECRET = "whsec-kill-loop-7f3a"
HOOK_CHAT = 9000  # where the async webhook replies go
USERS = (201, 202, 203, 204)


@dataclass
class Figures:
    kills: int = 0
    telegram_sent: int = 0
    webhooks_accepted: int = 0
    webhook_retries: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    in_doubt: list[str] = field(default_factory=list)  # sent, killed before the journal said so
    reruns_after_answer: list[str] = field(default_factory=list)
    model_calls: int = 0
    busy_notices: int = 0  # queue_full replies: refused visibly, not answered
    restart_to_ready_s: list[float] = field(default_factory=list)
    drain_s: float = 0.0

    def summary(self) -> str:
        ready = sorted(self.restart_to_ready_s)
        p50 = ready[len(ready) // 2] if ready else 0.0
        worst = ready[-1] if ready else 0.0
        return (
            f"kills survived: {self.kills}; messages: {self.telegram_sent} Telegram DMs + "
            f"{self.webhooks_accepted} webhooks accepted ({self.webhook_retries} re-posts after a "
            f"refused connection); lost: {len(self.lost)}; duplicated: {len(self.duplicated)}; "
            f"re-sent after a kill between send and its journal mark: {len(self.in_doubt)}; "
            f"busy (queue_full) notices sent: {self.busy_notices}; "
            f"model re-runs after an answer: {len(self.reruns_after_answer)}; model calls: "
            f"{self.model_calls}; restart->ready p50 {p50:.2f} s, max {worst:.2f} s; "
            f"final drain {self.drain_s:.1f} s"
        )


def config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM) -> Path:
    channel = f"""    dm_policy: open
  webhook:
    routes:
      jobs:
        path: /hooks/jobs
        secret: {SECRET}
        prompt: "{{payload.text}}"
        session: "{{payload.user}}"
        respond: async
        deliver: {{to: "telegram:{HOOK_CHAT}"}}
"""
    gateway = "  rate_limits: {per_sender: null, per_chat: null}\n"
    # about kills and restarts, not the model: the http agent, no litellm import per start
    return telegram_config(tmp_path, tg, over_http(llm), channel=channel, gateway=gateway)


def _replies(tg: FakeTelegram) -> Counter[str]:
    return Counter(c.params.get("text", "") for c in tg.calls_of("sendMessage"))


def _sent_texts(tg: FakeTelegram) -> list[str]:
    return [c.params.get("text", "") for c in tg.calls_of("sendMessage")]


def _answered_not_done(db: Path) -> set[str]:
    """Texts of messages the journal on disk holds answered but not yet delivered."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT message_json FROM inbound WHERE state = 'answered'").fetchall()
    return {str(json.loads(row[0])["text"]) for row in rows}


def _in_doubt(text: str, sends: list[str], kills: list[tuple[int, set[str]]]) -> bool:
    """Whether the second copy of ``text`` follows the one kill -9 that exactly-once cannot cover:
    the first copy sent by a daemon that was then killed with the row still `answered` on disk."""
    reply = f"echo: {text}"
    at = [i for i, sent in enumerate(sends) if sent == reply]
    if len(at) != 2:
        return False
    start = 0
    for end, unfinished in kills:
        if start <= at[0] < end:
            return text in unfinished and at[1] >= end
        start = end
    return False


class _Load:
    """Sends a DM and a signed webhook every ``period_s`` until stopped."""

    def __init__(self, tg: FakeTelegram, period_s: float) -> None:
        self.tg = tg
        self.period_s = period_s
        self.base: str | None = None  # None while the daemon is down
        self.texts: list[str] = []
        self.webhooks: list[str] = []
        self.retries = 0
        self._stop = asyncio.Event()
        self._pending: list[str] = []  # webhooks not yet accepted, re-posted like a platform does

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        i = 0
        while not self._stop.is_set():
            user = USERS[i % len(USERS)]
            text = f"tg-{i}"
            self.tg.dm(user, text)
            self.texts.append(text)
            self._pending.append(f"wh-{i}")  # its session is hook{i % 4}
            await self._post_pending()
            i += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.period_s)

    async def flush(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self._pending and time.monotonic() < deadline:
            await self._post_pending()
            await asyncio.sleep(0.1)
        assert not self._pending, f"webhooks never accepted: {self._pending}"

    async def _post_pending(self) -> None:
        for text in list(self._pending):
            if self.base is None:
                return
            try:
                status, _ = await asyncio.wait_for(
                    post_signed_job(
                        self.base, SECRET, text, delivery=text, user=f"hook{int(text[3:]) % 4}"
                    ),
                    5,
                )
            except (aiohttp.ClientError, TimeoutError, ValueError):
                self.retries += 1
                return
            if status in (200, 202):
                self._pending.remove(text)
                self.webhooks.append(text)
            else:
                self.retries += 1
                return


async def kill_loop(
    tmp_path: Path,
    tg: FakeTelegram,
    llm: FakeLLM,
    *,
    kills: int,
    seed: int = 15,
    period_s: float = 0.1,
    up_s: tuple[float, float] = (0.5, 2.5),
    drain_timeout_s: float = 60.0,
) -> Figures:
    rng = random.Random(seed)
    figures = Figures()
    reruns: list[str] = []
    kill_marks: list[tuple[int, set[str]]] = []  # sends so far, journal rows answered not done

    def reply(request: RecordedRequest) -> str:
        text = request.last_user_text or ""
        if _replies(tg)[f"echo: {text}"]:
            reruns.append(text)  # the model is asked again for a message already answered
        return f"echo: {text}"

    llm.default_reply = reply
    llm.latency_s = 0.05
    path = config(tmp_path, tg, llm)
    load = _Load(tg, period_s)
    loader = asyncio.create_task(load.run())
    try:
        for n in range(kills):
            started = time.monotonic()
            daemon = await Daemon(path, log_name=f"daemon{n}.log").start()
            figures.restart_to_ready_s.append(time.monotonic() - started)
            load.base = daemon.base
            await asyncio.sleep(rng.uniform(*up_s))
            load.base = None
            daemon.kill9()
            await daemon.wait()
            figures.kills += 1
            unfinished = _answered_not_done(tmp_path / "state" / DB_FILE)
            kill_marks.append((len(_sent_texts(tg)), unfinished))
        load.stop()
        await loader
        started = time.monotonic()
        last = await Daemon(path, log_name="daemon-final.log").start()
        figures.restart_to_ready_s.append(time.monotonic() - started)
        load.base = last.base
        try:
            await load.flush(30)
            wanted = [f"echo: {t}" for t in load.texts + load.webhooks]
            deadline = time.monotonic() + drain_timeout_s
            while time.monotonic() < deadline:
                got = _replies(tg)
                if all(got[w] for w in wanted):
                    break
                await asyncio.sleep(0.2)
            figures.drain_s = time.monotonic() - started
            await asyncio.sleep(1.0)  # room for a late duplicate to show up
        finally:
            assert await last.terminate() == 0, last.logs()[-3000:]
    finally:
        load.stop()
        if not loader.done():
            loader.cancel()
    got = _replies(tg)
    sends = _sent_texts(tg)
    figures.telegram_sent = len(load.texts)
    figures.webhooks_accepted = len(load.webhooks)
    figures.webhook_retries = load.retries
    for text in load.texts + load.webhooks:
        count = got[f"echo: {text}"]
        if count == 0:
            figures.lost.append(text)
        elif count == 2 and _in_doubt(text, sends, kill_marks):
            figures.in_doubt.append(text)
        elif count > 1:
            figures.duplicated[text] = count
    figures.reruns_after_answer = reruns
    figures.model_calls = len(llm.requests)
    figures.busy_notices = got[Voice().text(TextId.QUEUE_FULL)]
    return figures
