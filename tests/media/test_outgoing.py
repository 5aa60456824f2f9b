"""The outgoing-file store: agent bytes, paths and URLs become stored references, or a notice."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from chatgate.media.outgoing import FileMissing, OutgoingFiles, refs_of
from chatgate.presentation.model import File, OutboundMessage, Text

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
        (File("big.bin", data=b"x" * 5000), "it is 4.9 KB, over the 4.0 KB limit"),
        (File("gone.txt", path="/nonexistent/gone.txt"), "could not be attached: No such file"),
        (File("ftp.txt", url="ftp://example/x"), "only http(s) URLs"),
    ],
)
async def test_a_file_that_cannot_be_stored_becomes_a_visible_notice(
    tmp_path: Path, file: File, notice: str
) -> None:
    store = OutgoingFiles(tmp_path / "out", max_bytes=4096)
    out = await store.store(OutboundMessage((file,)))
    [block] = out.blocks
    assert isinstance(block, Text) and notice in block.text and file.name in block.text


@pytest.mark.parametrize(("path", "notice"), [("/missing", "HTTP 404"), ("/big", "over the")])
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
