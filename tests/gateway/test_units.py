"""Unit tests for gateway building blocks: turn lock, warm cache, routing, database, journal window."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from chatgate.gateway.session_cache import SessionCache
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage
from chatgate.state.local_lock import LocalTurnLock
from chatgate.state.protocols import TranscriptAppend
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.sqlite.db import Database
from chatgate.state.sqlite.journal import SqliteJournal as Journal
from chatgate.state.sqlite.sessions import SqliteSessionStore
from tests.fakes.clock import ManualClock


def msg(**kw: object) -> InboundMessage:
    base: dict[str, object] = dict(
        channel="tg",
        platform="telegram",
        chat_id="c",
        chat_kind="direct",
        sender_id="u",
        message_id="1",
        text="hi",
    )
    base.update(kw)
    return InboundMessage(**base)  # type: ignore[arg-type]


async def test_turn_lock_serialises_and_release_is_identity_checked() -> None:
    lock = LocalTurnLock()
    order: list[str] = []

    async def turn(name: str) -> None:
        async with lock.hold("s", owner=name, ttl=5):
            order.append(f"{name}+")
            await asyncio.sleep(0.01)
            order.append(f"{name}-")

    await asyncio.gather(turn("a"), turn("b"))
    assert order in (["a+", "a-", "b+", "b-"], ["b+", "b-", "a+", "a-"])
    first = await lock.acquire("k", owner="x", ttl=5)
    await lock.release(first)
    second = await lock.acquire("k", owner="y", ttl=5)
    await lock.release(first)  # stale token: must not free the new holder's lease
    waiter = asyncio.create_task(lock.acquire("k", owner="z", ttl=5))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    await lock.release(second)
    await lock.release(await waiter)
    assert len(lock) == 0  # no per-key leak once nobody holds or waits


async def settle_tasks() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_turn_lock_lease_expires_unless_renewed() -> None:
    clock = ManualClock()
    lock = LocalTurnLock(clock)
    dead = await lock.acquire("k", owner="crashed", ttl=10)
    waiter = asyncio.create_task(lock.acquire("k", owner="next", ttl=10))
    await settle_tasks()  # the waiter is now sleeping until the lease runs out
    clock.advance(5)
    await asyncio.sleep(0)
    assert not waiter.done()  # the lease still runs
    clock.advance(6)
    taken = await asyncio.wait_for(waiter, 1)  # a holder that never renews loses its lease
    assert taken.owner == "next"
    assert await lock.renew(dead, 10) is False  # the stale holder cannot extend it back
    await lock.release(dead)  # nor free it
    clock.advance(8)
    assert await lock.renew(taken, 10) is True
    again = asyncio.create_task(lock.acquire("k", owner="third", ttl=10))
    await settle_tasks()
    clock.advance(4)  # 12 s after taking it, but renewed 4 s ago: still held
    await asyncio.sleep(0)
    assert not again.done()
    await lock.release(taken)
    await lock.release(await asyncio.wait_for(again, 1))
    assert len(lock) == 0


async def test_turn_lock_hold_keeps_the_lease_for_the_whole_block() -> None:
    clock = ManualClock()
    lock = LocalTurnLock(clock)
    async with lock.hold("k", owner="long turn", ttl=1):
        clock.advance(3600)
        contender = asyncio.create_task(lock.acquire("k", owner="other", ttl=1))
        await asyncio.sleep(0)
        assert not contender.done()
    await lock.release(await asyncio.wait_for(contender, 1))


@pytest.fixture
async def db(tmp_path: Path) -> Database:  # type: ignore[misc]
    database = Database(tmp_path / "state.db")
    await database.open()
    yield database
    await database.close()


async def test_group_commit_isolates_a_failing_call(db: Database) -> None:
    def good(i: int):  # type: ignore[no-untyped-def]
        return lambda c: (
            c.execute("INSERT INTO meta(key, value) VALUES (?, 'v')", (f"k{i}",)).rowcount
        )

    def bad(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO meta(key, value) VALUES ('dup', 'v')")
        c.execute("INSERT INTO meta(key, value) VALUES ('dup', 'v')")

    results = await asyncio.gather(
        *(db.call(good(i)) for i in range(50)), db.call(bad), return_exceptions=True
    )
    assert results[:50] == [1] * 50
    assert isinstance(results[50], sqlite3.IntegrityError)
    count = await db.call(
        lambda c: c.execute(
            "SELECT COUNT(*) FROM meta WHERE key LIKE 'k%' OR key = 'dup'"
        ).fetchone()[0]
    )
    assert count == 50


async def test_none_binds_as_null_without_an_adapter_lookup_that_raises(db: Database) -> None:
    """sqlite3 finds an adapter for None at once (none registered: it raised and cleared an
    AttributeError for every None bound, ~16 a turn); what is stored is still NULL."""
    assert (type(None), sqlite3.PrepareProtocol) in sqlite3.adapters
    row = await db.call(
        lambda c: c.execute("SELECT ? IS NULL, COALESCE(?, 'kept')", (None, None)).fetchone()
    )
    assert tuple(row) == (1, "kept")


async def test_writes_behind_are_seen_by_the_next_call_and_committed_on_close(
    tmp_path: Path,
) -> None:
    database = Database(tmp_path / "behind.db")
    await database.open()

    def insert(key: str):  # type: ignore[no-untyped-def]
        return lambda c: c.execute("INSERT INTO meta(key, value) VALUES (?, 'v')", (key,))

    database.submit(insert("first"))
    keys = await database.call(lambda c: [r[0] for r in c.execute("SELECT key FROM meta")])
    assert "first" in keys  # a later call never overtakes a write handed in before it
    database.submit(insert("last"))
    await database.close()  # nothing waited for "last": close still commits it
    database = Database(tmp_path / "behind.db")
    await database.open()
    keys = await database.call(lambda c: [r[0] for r in c.execute("SELECT key FROM meta")])
    await database.close()
    assert {"first", "last"} <= set(keys)


async def test_journal_dedupes_within_window_and_accepts_after(db: Database) -> None:
    journal = Journal(db)
    m = msg()
    assert (await journal.record(m, 1000.0, 60))[0] is True
    new, existing = await journal.record(m, 1030.0, 60)
    assert new is False and existing is not None and existing.state is JournalState.PENDING
    await journal.settle(m.key, JournalMark(JournalState.DONE, 1031.0, stage="turn", reason="text"))
    assert (await journal.record(m, 1200.0, 60))[0] is True  # outside the window: a new message
    assert [e.key for e in await journal.unfinished()] == [m.key]
    await journal.settle(
        m.key, JournalMark(JournalState.DROPPED, 1201.0, stage="admission", reason="blocked")
    )
    assert await journal.purge(2000.0) == 1


async def test_sqlite_turn_writer_marks_every_key_and_appends_in_one_call(db: Database) -> None:
    journal, store = Journal(db), SqliteSessionStore(db)
    first, second = msg(message_id="1"), msg(message_id="2")
    for m in (first, second):
        await journal.record(m, 1000.0, 60)
    await journal.settle(first.key, JournalMark(JournalState.PENDING, 1000.5, stage="intake"))
    writer = journal.turn_writer()
    assert writer is not None
    mark = JournalMark(JournalState.ANSWERED, 1001.0, session="s", reason="text", reply={"a": 1})
    lines = [ChatMessage("user", "hi", source=first.key)]
    failed = await writer.settle_turn(
        [first.key, second.key], mark, TranscriptAppend("s", 0, lines)
    )
    assert failed is None
    entries = [await journal.get(m.key) for m in (first, second)]
    assert [(e.state, e.session, e.reply) for e in entries if e] == [
        (JournalState.ANSWERED, "s", {"a": 1})
    ] * 2
    assert entries[0] is not None and entries[0].stage == "intake"  # None leaves a field as it was
    assert [m.content for m in (await store.load("s", 10)).messages] == ["hi"]


async def test_warm_cache_lru_never_evicts_in_flight_or_unflushed(db: Database) -> None:
    store = SqliteSessionStore(db)
    cache = SessionCache(store, max_warm=2, max_messages=3)
    a = await cache.acquire("a", 1.0)  # stays in flight
    b = await cache.acquire("b", 2.0)
    cache.release(b)
    b.unflushed.append(ChatMessage("user", "pending"))
    c = await cache.acquire("c", 3.0)
    cache.release(c)
    assert cache.get("a") is a and cache.get("b") is b and len(cache) == 3  # nothing evictable
    b.unflushed.clear()
    d = await cache.acquire("d", 4.0)
    cache.release(d)
    assert cache.get("b") is None and cache.evictions >= 1  # coldest evictable went first
    cache.extend(d, [ChatMessage("user", str(i)) for i in range(5)])
    assert [m.content for m in d.transcript] == ["2", "3", "4"]


async def test_dead_letter_get_leaves_the_entry_and_take_hands_it_out_once(db: Database) -> None:
    from chatgate.model.messages import Target
    from chatgate.model.reasons import SendErrorKind
    from chatgate.state.sqlite.dead_letters import SqliteDeadLetters

    dlq = SqliteDeadLetters(db)
    await dlq.load()
    entry = await dlq.add(Target("tg", "c1"), {"blocks": []}, SendErrorKind.FORBIDDEN, "e", 1, 1.0)
    peeked = await dlq.get(entry)
    assert peeked is not None and peeked.target == Target("tg", "c1") and await dlq.count() == 1
    assert await dlq.take(entry) is not None
    assert await dlq.get(entry) is None and await dlq.take(entry) is None


async def test_transcript_meta_survives_the_store_and_an_older_database(tmp_path: Path) -> None:
    """A line's ``meta`` (media references, tool calls) is kept; a database created before the
    column existed gains it at open and keeps its old lines."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL,"
        " epoch INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, name TEXT,"
        " source TEXT, at REAL NOT NULL, UNIQUE (session_key, epoch, source, role));"
        "INSERT INTO messages(session_key, epoch, role, content, at) VALUES ('s', 0, 'user', 'old', 1);"
    )
    conn.commit()
    conn.close()
    database = Database(path)
    await database.open()
    try:
        store = SqliteSessionStore(database)
        meta = {"media": [{"kind": "image", "handle": "f1"}]}
        await store.append("s", 0, [ChatMessage("assistant", "new", None, "k1", meta)], 2.0)
        loaded = await store.load("s", 10)
    finally:
        await database.close()
    assert [(m.content, m.meta) for m in loaded.messages] == [("old", None), ("new", meta)]


def test_chat_message_dict_round_trip_keeps_meta_and_reads_old_lines() -> None:
    line = ChatMessage("user", "hi", "Ann", "k", {"media": [{"kind": "voice"}]})
    assert ChatMessage.from_dict(line.to_dict()) == line
    assert "meta" not in ChatMessage("user", "hi").to_dict()
    assert ChatMessage.from_dict({"role": "user", "content": "x"}) == ChatMessage("user", "x")
