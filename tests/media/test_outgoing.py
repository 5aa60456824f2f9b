"""The outgoing-file store: agent bytes, paths and URLs become stored references, or a notice."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from chatgate.media.outgoing import FileMissing, OutgoingFiles, refs_of
from chatgate.model.outbound import File, OutboundMessage, Text
from chatgate.texts.voice import Voice

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async def png(_: web.Request) -> web.Response:
        return web.Response(body=PNG, content_type="image/png")

    async def big(_: web.Request) -> web.Response:
        return web.Response(body=b"x" * 5000)

    async def missing(_: web.Request) -> web.Response:
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/chart.png", png)
    app.router.add_get("/big", big)
    app.router.add_get("/missing", missing)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_bytes_paths_and_urls_become_references(tmp_path: Path, server: str) -> None:
    src = tmp_path / "report.txt"
    src.write_bytes(b"report")
    store = OutgoingFiles(tmp_path / "out")
    message = OutboundMessage(
        (
            Text("here"),
            File("a.png", data=PNG, kind="image"),
            File("report.txt", "text/plain", path=str(src)),
            File("chart.png", url=f"{server}/chart.png", kind="image"),
        )
    )
    out = await store.store(message)
    await store.close()
    files = [b for b in out.blocks if isinstance(b, File)]
    assert [f.stored for f in files] == [True, True, True]
    assert all(f.data is None and not f.path and not f.url for f in files)
    assert [f.mime for f in files] == ["image/png", "text/plain", "image/png"]  # sniffed
    assert [f.size for f in files] == [len(PNG), 6, len(PNG)]
    assert await store.read(files[1].ref) == b"report"
    assert os.stat(store.root).st_mode & 0o777 == 0o700
    await store.discard(out)
    for ref in refs_of(out):
        with pytest.raises(FileMissing):
            await store.read(ref)


@pytest.mark.parametrize(
    ("file", "notice"),
    [
        (File("big.bin", data=b"x" * 5000), "could not be attached: it is over the 4 kB limit."),
        (File("gone.txt", path="/nonexistent/gone.txt"), "📎 gone.txt could not be attached."),
        (File("ftp.txt", url="ftp://example/x"), "📎 ftp.txt could not be attached."),
    ],
)
async def test_a_file_that_cannot_be_stored_becomes_a_visible_notice(
    tmp_path: Path, file: File, notice: str
) -> None:
    store = OutgoingFiles(tmp_path / "out", max_bytes=4096)
    out = await store.store(OutboundMessage((file,)))
    [block] = out.blocks
    assert isinstance(block, Text) and notice in block.text and file.name in block.text


@pytest.mark.parametrize(
    ("path", "notice"), [("/missing", "could not be attached."), ("/big", "over the 4 kB")]
)
async def test_url_failures_are_notices(
    tmp_path: Path, server: str, path: str, notice: str
) -> None:
    store = OutgoingFiles(tmp_path / "out", max_bytes=4096)
    out = await store.store(OutboundMessage((File("u", url=server + path),)))
    await store.close()
    assert isinstance(out.blocks[0], Text) and notice in out.blocks[0].text


async def test_references_cannot_walk_out_of_the_store(tmp_path: Path) -> None:
    store = OutgoingFiles(tmp_path / "out")
    for ref in ("../secret", "/etc/passwd", "A" * 32, ""):
        with pytest.raises(FileMissing):
            await store.read(ref)


async def test_sweep_keeps_what_open_entries_reference(tmp_path: Path) -> None:
    store = OutgoingFiles(tmp_path / "out")
    out = await store.store(OutboundMessage((File("a", data=b"1"), File("b", data=b"2"))))
    keep, old = refs_of(out)
    now = os.stat(store.path_of(old)).st_mtime + 3600
    assert await store.sweep(600, now, {keep}) == 1
    assert await store.read(keep) == b"1"


async def test_the_sweep_loop_spares_files_a_dlq_entry_still_needs(tmp_path: Path) -> None:
    import asyncio
    import time

    from chatgate.media.links import FileLinks
    from chatgate.media.outgoing import refs_in, sweep_forever
    from chatgate.model.messages import Target
    from chatgate.model.outbound import message_to_dict
    from chatgate.model.reasons import SendErrorKind
    from chatgate.state.sqlite.db import Database
    from chatgate.state.sqlite.dead_letters import SqliteDeadLetters
    from tests.fakes.clock import ManualClock

    db = Database(tmp_path / "state.db")
    await db.open()
    dlq = SqliteDeadLetters(db)
    await dlq.load()
    store = OutgoingFiles(tmp_path / "out", links=FileLinks(tmp_path, ttl_s=60))
    held = await store.store(OutboundMessage((File("held", data=b"1"),)))
    gone = await store.store(OutboundMessage((File("gone", data=b"2"),)))
    await dlq.add(Target("tg", "1"), message_to_dict(held), SendErrorKind.FORBIDDEN, "e", 1, 1.0)
    assert refs_in(message_to_dict(held)) == refs_of(held)
    clock = ManualClock(wall_start=time.time() + 3700)  # past the link TTL + an hour
    task = asyncio.create_task(sweep_forever(store, dlq, clock, every_s=10))
    await asyncio.sleep(0)
    clock.advance(10)
    for _ in range(50):
        await asyncio.sleep(0.01)
        if not store.path_of(refs_of(gone)[0]).exists():
            break
    task.cancel()
    await db.close()
    assert not store.path_of(refs_of(gone)[0]).exists()
    assert await store.read(refs_of(held)[0]) == b"1"


async def test_a_refused_file_notice_is_in_the_chats_language_without_the_detail(
    tmp_path: Path,
) -> None:
    store = OutgoingFiles(tmp_path / "out", max_bytes=4096)
    message = OutboundMessage((File("gone.txt", path="/nonexistent/gone.txt"),))
    [block] = (await store.store(message, Voice(language="de"))).blocks
    assert isinstance(block, Text)
    assert block.text == "📎 gone.txt konnte nicht angehängt werden."  # errno stays in the log


MB3 = bytes(range(256)) * (3 * 4096)  # 3 MB, every byte position distinguishable


@pytest.fixture
async def slow_server() -> AsyncIterator[str]:
    """Serves MB3 in 64 kB chunks with a pause between them, with and without a length."""

    async def slow(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        if request.query.get("length"):
            resp.content_length = len(MB3)
        await resp.prepare(request)
        for start in range(0, len(MB3), 65536):
            await resp.write(MB3[start : start + 65536])
            await asyncio.sleep(0.001)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/manual.pdf", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_a_large_url_file_served_slowly_is_stored_whole(
    tmp_path: Path, slow_server: str
) -> None:
    store = OutgoingFiles(tmp_path / "out")
    out = await store.store(OutboundMessage((File("manual.pdf", url=f"{slow_server}/manual.pdf"),)))
    await store.close()
    [block] = out.blocks
    assert isinstance(block, File) and block.size == len(MB3)
    assert await store.read(block.ref) == MB3
    assert [p.name for p in store.root.iterdir()] == [block.ref]  # no temporary left behind


@pytest.mark.parametrize("query", ["", "?length=1"])
async def test_a_url_file_over_the_cap_is_a_notice_never_cut_bytes(
    tmp_path: Path, slow_server: str, query: str
) -> None:
    store = OutgoingFiles(tmp_path / "out", max_bytes=1024 * 1024)
    url = f"{slow_server}/manual.pdf{query}"
    out = await store.store(OutboundMessage((File("manual.pdf", url=url),)))
    await store.close()
    [block] = out.blocks
    assert isinstance(block, Text) and "over the 1 MB limit" in block.text
    assert not store.root.exists() or list(store.root.iterdir()) == []


async def test_the_delivery_gets_the_stored_bytes_without_reading_them_back(
    tmp_path: Path,
) -> None:
    """The first read of a just-stored file hands back the agent's bytes (no disk read); later
    reads come from disk; a file gone from disk is missing either way."""
    store = OutgoingFiles(tmp_path / "out")
    data = bytes(range(256)) * 20
    out = await store.store(OutboundMessage((File("a.bin", data=data),)))
    [ref] = refs_of(out)
    assert await store.read(ref) is data
    again = await store.read(ref)
    assert again == data and again is not data
    gone = await store.store(OutboundMessage((File("b.bin", data=data),)))
    [gone_ref] = refs_of(gone)
    os.remove(store.path_of(gone_ref))
    with pytest.raises(FileMissing):
        await store.read(gone_ref)
    discarded = await store.store(OutboundMessage((File("c.bin", data=data),)))
    await store.discard(discarded)
    with pytest.raises(FileMissing):
        await store.read(refs_of(discarded)[0])
