"""The journal cannot write: new work is refused visibly (503 + Retry-After, degraded owner,
/readyz 503), nothing is acked, and the gateway recovers once a probe write succeeds."""

from __future__ import annotations

import asyncio
import errno
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from chatgate.gateway.app import Gateway
from chatgate.gateway.intake.state_guard import STATE_OWNER, unwritable
from chatgate.model.errors import StateUnavailable
from chatgate.state.sqlite.db import Database
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import Call, FakeTelegram
from tests.gateway.test_webhook_e2e import gh_config, gh_headers, issue_body
from tests.harness import http, operator, running, url


def _database(gw: Gateway) -> Database:
    db = getattr(gw.rt.state.stores.journal, "_db", None)
    assert isinstance(db, Database), "these tests drive the SQLite backend"
    return db


FILL = "_fill:"


async def disk_full(gw: Gateway, on: bool) -> None:
    """Fault injection on the daemon's own connection: cap the database at its current size and
    fill the free space, so every write that needs room fails with SQLITE_FULL ("database or
    disk is full"), as on a full disk; ``on=False`` lifts the cap and frees the filler."""

    db = _database(gw)
    if not on:
        await db.call(lambda c: c.execute("PRAGMA max_page_count = 1073741823"))
        await db.call(
            lambda c: c.execute("DELETE FROM dead_targets WHERE address LIKE ?", (FILL + "%",))
        )
        return

    def cap(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")

    def rows(start: int, count: int) -> Callable[[sqlite3.Connection], None]:
        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO dead_targets(address, kind, error, first_at, last_at)"
                " VALUES (?, 'transient', '', 0, 0)",
                [(f"{FILL}{i:07d}",) for i in range(start, start + count)],
            )

        return insert

    await db.call(cap)
    filled = 0
    for chunk in (1000, 100, 10, 1):  # a failed chunk is rolled back whole: then smaller ones
        for _ in range(1000):
            try:
                await db.call(rows(filled, chunk))
            except sqlite3.OperationalError as exc:
                assert "full" in str(exc)
                break
            filled += chunk


async def _until_ready(gw: Gateway, clock: ManualClock) -> None:
    async with http() as client, asyncio.timeout(10):
        while True:
            clock.advance(2.0)  # the probe's interval, on the injected clock
            async with client.get(url(gw, "/readyz")) as resp:
                if resp.status == 200:
                    return
            await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (sqlite3.OperationalError("database or disk is full"), True),
        (sqlite3.OperationalError("attempt to write a readonly database"), True),
        (OSError(errno.ENOSPC, "No space left on device"), True),
        (OSError(errno.EROFS, "Read-only file system"), True),
        (StateUnavailable("redis down"), True),
        (sqlite3.IntegrityError("UNIQUE constraint failed"), False),
        (OSError(errno.ECONNREFUSED, "refused"), False),
        (ValueError("bug"), False),
    ],
)
def test_unwritable_classifies_only_disk_failures(exc: BaseException, expected: bool) -> None:
    assert unwritable(exc) is expected


async def test_webhook_refused_while_unwritable_then_answered_once_after_recovery(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("Triage: startup crash.")
    clock = ManualClock()
    async with running(gh_config(tmp_path, fake_llm), clock=clock) as gw, http() as client:
        await disk_full(gw, True)
        body = issue_body(title="Crash on start " + "x" * 20_000)  # needs pages of its own
        headers = gh_headers(body, delivery="d-1")
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 503
            assert resp.headers["Retry-After"].isdigit()
            refused = await resp.json()
        assert refused["reason_code"] == "state_unavailable"
        assert fake_llm.requests == []

        # Visible: the degraded owner with its fix, and not ready.
        async with client.get(url(gw, "/api/status"), headers=operator(gw)) as resp:
            status = await resp.json()
        [owner] = [o for o in status["degraded"] if o["owner_id"] == STATE_OWNER]
        assert owner["owner_kind"] == "gateway"
        assert str(gw.rt.state_dir) in owner["retry_hint"]
        async with client.get(url(gw, "/readyz")) as resp:
            assert resp.status == 503
            assert (await resp.json())["status"] == "degraded"

        # Still refused while degraded, even a second delivery (the probe tests the disk).
        # A probe on the still-full disk fails: the gateway stays degraded, refusing.
        clock.advance(2.0)
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert gw.pipeline.guard.current() is not None
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 503

        await disk_full(gw, False)
        await _until_ready(gw, clock)
        assert gw.pipeline.guard.current() is None

        # The sender retries the refused delivery: answered once, by one model call.
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "Triage: startup crash."
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 200  # a duplicate gets the stored answer
    assert len(fake_llm.requests) == 1


async def test_telegram_batch_not_confirmed_while_unwritable_then_answered_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel="    dm_policy: open")
    async with running(config, clock=clock) as gw:
        await fake_tg.wait_for("getUpdates", timeout=15)
        await disk_full(gw, True)
        text = "please look at this " + "y" * 3800  # needs pages of its own
        update_id = fake_tg.dm(42, text)["update_id"]

        def refetch(call: Call) -> bool:  # a getUpdates that does not confirm the update
            offset = call.params.get("offset")
            return offset is None or int(offset) <= update_id

        before = len(fake_tg.calls_of("getUpdates"))
        await fake_tg.wait_for(
            "getUpdates", count=before + 2, timeout=15, where=lambda c: refetch(c)
        )
        assert gw.pipeline.guard.current() is not None
        assert fake_tg.calls_of("sendMessage") == []
        assert fake_llm.requests == []

        await disk_full(gw, False)
        await _until_ready(gw, clock)
        [sent] = await fake_tg.wait_for("sendMessage", timeout=15)
        await fake_tg.wait_for(
            "getUpdates", timeout=15, where=lambda c: int(c.params.get("offset") or 0) > update_id
        )
        for _ in range(20):
            await asyncio.sleep(0.01)
    assert sent.params["text"] == f"echo: {text}"
    assert len(fake_tg.calls_of("sendMessage")) == 1
    assert len(fake_llm.requests) == 1


async def test_telegram_webhook_update_refused_with_503_then_answered_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    from tests.channels.telegram.test_webhook_mode import CHANNEL, post

    clock = ManualClock()
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)
    async with running(config, clock=clock) as gw, http() as client:
        await disk_full(gw, True)
        update = fake_tg.dm(42, "over webhook " + "z" * 3800)
        status, _ = await post(client, gw, update)
        assert status == 503  # Telegram re-sends on anything but 2xx
        assert fake_llm.requests == []

        await disk_full(gw, False)
        await _until_ready(gw, clock)
        assert (await post(client, gw, update))[0] == 200
        await fake_tg.wait_for("sendMessage", timeout=15)
        assert (await post(client, gw, update))[0] == 200  # a redelivery is answered once
        for _ in range(20):
            await asyncio.sleep(0.01)
    assert len(fake_tg.calls_of("sendMessage")) == 1
    assert len(fake_llm.requests) == 1
