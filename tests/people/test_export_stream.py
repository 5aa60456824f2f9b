"""A person whose files are far larger than the archive window is still exported, whole, by
`chatgate people export` (the archive streams; it is never held in memory or in one answer)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import random
import tarfile
from pathlib import Path

import aiohttp
import pytest

from chatgate.gateway.app import Gateway
from chatgate.model.messages import Target
from chatgate.people import archive
from chatgate.state.personal import Footprint, Found, Person
from tests.harness import http, operator, running, url, write_config
from tests.people.test_cli import plant, run

WINDOW = 64 * 1024
FILES = 6  # of 3 windows each: the archive is some 18 windows long


def noise(seed: int, size: int) -> bytes:
    """Bytes gzip cannot shrink: the archive is as long as the files."""
    return random.Random(seed).randbytes(size)


async def plant_files(gw: Gateway) -> dict[str, str]:
    """Reply files of Ann's (undelivered replies to her message carry them): ref -> sha256."""
    files = gw.rt.delivery.files
    assert files is not None
    digests: dict[str, str] = {}
    blocks = []
    for i in range(FILES):
        ref = f"{i:032x}"
        data = noise(i, 3 * WINDOW)
        path = files.path_of(ref)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digests[ref] = hashlib.sha256(data).hexdigest()
        blocks.append({"type": "file", "ref": ref, "name": f"{i}.bin"})
    key = "telegram:1"
    message = {"blocks": [{"type": "text", "text": "here"}, *blocks]}
    await gw.rt.state.dead_letters.add(
        Target("telegram", "ann"), message, "forbidden", "gone", 3, gw.rt.clock.time(),
        inbound_key=key,
    )  # fmt: skip
    return digests


async def test_export_larger_than_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "WINDOW_BYTES", WINDOW)
    config = write_config(tmp_path, "channels:\n  webhook: {routes: {}}\n")
    async with running(config) as gw:
        await plant(gw, "remember the blue door")
        digests = await plant_files(gw)
        out = tmp_path / "ann.tar.gz"
        code, said, err = await asyncio.to_thread(
            run, capsys, "people", "export", "telegram:ann", "--out", str(out),
            "--config", str(config),
        )  # fmt: skip
        assert code == 0, err
        assert "outgoing_files 6" in said and "journal 1" in said
        assert out.stat().st_mode & 0o777 == 0o600
        with tarfile.open(fileobj=io.BytesIO(out.read_bytes())) as tar:
            got = {
                m.name.rsplit("/", 1)[1]: hashlib.sha256(tar.extractfile(m).read()).hexdigest()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if "/files/outgoing_files/" in m.name
            }
        assert got == digests


async def test_the_archive_thread_holds_at_most_the_window(tmp_path: Path) -> None:
    paths = []
    for i in range(FILES):
        paths.append(tmp_path / f"{i:032x}")
        paths[-1].write_bytes(noise(i, 3 * WINDOW))
    found = [Found("outgoing_files", ({"n": 1},), tuple(paths))]
    pipe = archive.Pipe(WINDOW)
    sent = [c async for c in archive.stream(Footprint(Person.parse("x:y")), found, 0.0, pipe=pipe)]
    total = sum(map(len, sent))
    assert total > 16 * WINDOW and pipe.peak <= WINDOW + archive.CHUNK_BYTES, (total, pipe.peak)
    with tarfile.open(fileobj=io.BytesIO(b"".join(sent))) as tar:
        assert len(tar.getmembers()) == 2 + FILES


async def test_a_reader_that_stops_ends_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(bytes(range(256)) * (64 * WINDOW // 256))
    pipe = archive.Pipe(WINDOW)
    chunks = archive.stream(
        Footprint(Person.parse("x:y")), [Found("f", (), (path,))], 0.0, pipe=pipe
    )
    assert await anext(chunks)
    await chunks.aclose()  # the thread is waited for: it was told to stop
    assert pipe.take() is None


async def test_a_failure_midway_cuts_the_download_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "WINDOW_BYTES", 1)  # the thread stays one write ahead
    config = write_config(tmp_path, "channels:\n  webhook: {routes: {}}\n")
    async with running(config) as gw, http() as session:
        await plant(gw, "remember the blue door")
        await plant_files(gw)
        files = gw.rt.delivery.files
        assert files is not None
        body = {"person": "telegram:ann"}
        async with session.post(
            url(gw, "/api/people/export"), json=body, headers=operator(gw)
        ) as r:
            assert r.status == 200
            assert await r.content.readexactly(archive.CHUNK_BYTES)
            last = files.path_of(f"{FILES - 1:032x}")
            last.unlink()
            last.mkdir()  # unreadable as a file now: the archive cannot be finished
            with pytest.raises(aiohttp.ClientPayloadError):
                await r.read()
