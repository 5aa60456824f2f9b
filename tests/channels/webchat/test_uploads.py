"""Web chat uploads over HTTP: a browser uploads a file, sends its id, the model receives it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path

import aiohttp
import pytest

from chatgate.channels.webchat.adapter import WebChatChannel
from chatgate.channels.webchat.uploads import (
    MAX_LIVE_PER_SESSION,
    Upload,
    UploadStore,
    _safe_name,
)
from chatgate.gateway.app import Gateway
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason
from tests.channels.webchat.test_http import CHAT_TOKEN, browser, sign_in
from tests.fakes.llm import FakeLLM
from tests.harness import running, url, write_config
from tests.media.samples import png
from tests.support.waiting import eventually

MAX_UPLOAD = 64 * 1024


@pytest.fixture
async def gateway(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[Gateway]:
    config = write_config(
        tmp_path,
        f"""agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake_llm.base_url}
    api_key: sk-webchat-test
    timeout_s: 10
    media: {{vision: true}}
channels:
  webchat:
    auth: token
    token: {CHAT_TOKEN}
    dm_policy: open
    max_upload_bytes: {MAX_UPLOAD}
    upload_ttl_s: 600
""",
    )
    async with running(config) as gw:
        yield gw


def adapter(gw: Gateway) -> WebChatChannel:
    channel = gw.channels.adapters["webchat"]
    assert isinstance(channel, WebChatChannel)
    return channel


async def upload(
    gw: Gateway,
    client: aiohttp.ClientSession,
    csrf: str,
    data: bytes,
    name: str = "shot.png",
    mime: str = "image/png",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, object]]:
    form = aiohttp.FormData()
    form.add_field("file", data, filename=name, content_type=mime)
    sent = {"X-CSRF-Token": csrf, **(headers or {})}
    async with client.post(url(gw, "/chat/api/upload"), data=form, headers=sent) as r:
        return r.status, await r.json()


async def send(
    gw: Gateway, client: aiohttp.ClientSession, csrf: str, body: dict[str, object]
) -> tuple[int, dict[str, object]]:
    headers = {"X-CSRF-Token": csrf}
    async with client.post(url(gw, "/chat/api/send"), json=body, headers=headers) as r:
        return r.status, await r.json()


async def test_an_uploaded_image_reaches_the_model_as_an_image_part(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    image = png()
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        async with client.get(url(gateway, "/chat/api/session")) as r:
            assert (await r.json())["max_upload_bytes"] == MAX_UPLOAD
        # the claimed type lies: the bytes decide the kind
        status, up = await upload(gateway, client, csrf, image, "shot.png", "text/plain")
        assert status == 201, up
        assert (up["kind"], up["mime"], up["size"], up["name"]) == (
            "image",
            "image/png",
            len(image),
            "shot.png",
        )
        body = {
            "client_id": "upload-0001",
            "text": "what is this?",
            "attachments": [up["upload_id"]],
        }
        status, answer = await send(gateway, client, csrf, body)
        assert status == 202, answer
        [request] = await fake_llm.wait_for_requests(1, timeout=30)
    content = request.messages[-1]["content"]
    assert content[0]["text"].startswith("what is this?")
    assert (
        content[1]["image_url"]["url"]
        == "data:image/png;base64," + base64.b64encode(image).decode()
    )


async def test_a_file_alone_needs_no_text_and_another_session_cannot_use_it(
    gateway: Gateway, fake_llm: FakeLLM
) -> None:
    async with browser() as client, browser() as stranger:
        csrf = await sign_in(gateway, client)
        _, up = await upload(gateway, client, csrf, b"name,qty\nbolts,4\n", "parts.csv", "text/csv")
        assert up["kind"] == "document"
        other = await sign_in(gateway, stranger)
        status, answer = await send(
            gateway, stranger, other, {"client_id": "steal-0001", "attachments": [up["upload_id"]]}
        )
        assert status == 400 and "attach the file again" in str(answer["error"])
        status, _ = await send(
            gateway, client, csrf, {"client_id": "alone-0001", "attachments": [up["upload_id"]]}
        )
        assert status == 202
        [request] = await fake_llm.wait_for_requests(1, timeout=30)
    assert "bolts,4" in str(request.last_user_text)


async def test_csrf_origin_sign_in_and_size_are_enforced(gateway: Gateway) -> None:
    async with browser() as client:
        status, _ = await upload(gateway, client, "x", png())
        assert status == 401  # not signed in
        csrf = await sign_in(gateway, client)
        status, _ = await upload(gateway, client, "wrong", png())
        assert status == 403
        evil = {"Origin": "https://evil.example"}
        status, answer = await upload(gateway, client, csrf, png(), headers=evil)
        assert status == 403 and "cross-origin" in str(answer["error"])
        status, answer = await upload(gateway, client, csrf, b"\x00" * (MAX_UPLOAD + 1))
        assert status == 413 and str(MAX_UPLOAD) in str(answer["error"])
    store = adapter(gateway).uploads
    assert store is not None
    leftovers = list(store.root.iterdir())
    assert leftovers == []  # a refused upload leaves nothing behind


async def test_an_expired_upload_is_refused_and_swept(gateway: Gateway) -> None:
    channel = adapter(gateway)
    now = [channel.clock()]
    channel.clock = lambda: now[0]
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        _, up = await upload(gateway, client, csrf, png())
        now[0] += 601  # past upload_ttl_s
        status, answer = await send(
            gateway, client, csrf, {"client_id": "late-00001", "attachments": [up["upload_id"]]}
        )
        assert status == 400 and "expired" in str(answer["error"])
    assert channel.uploads is not None
    assert await channel.uploads.sweep() == 1
    assert list(channel.uploads.root.iterdir()) == []


def test_upload_names_lose_their_path_and_control_characters() -> None:
    assert _safe_name("../../etc/passwd") == "passwd"
    assert _safe_name("C:\\Users\\me\\a\x07b.txt") == "ab.txt"
    assert _safe_name(None) == _safe_name("  ") == "upload"


async def test_the_store_sweeps_expired_uploads_and_crash_leftovers(tmp_path: Path) -> None:
    now = [1000.0]
    store = UploadStore(tmp_path / "up", ttl_s=60, max_bytes=10, clock=lambda: now[0])
    await store.open()
    kept = Upload("k" * 24, "sid", "a.txt", "text/plain", 1, 990.0)
    gone = Upload("g" * 24, "sid", "b.txt", "text/plain", 1, 900.0)
    for upload in (kept, gone):
        (store.root / upload.id).write_bytes(b"x")
        (store.root / f"{upload.id}.json").write_text(json.dumps(asdict(upload)))
    half = store.root / ("h" * 24)  # bytes whose metadata a crash never wrote
    half.write_bytes(b"x")
    os.utime(half, (800.0, 800.0))
    assert await store.get(gone.id) is None and await store.get(kept.id) == kept
    assert await store.get(kept.id, "another-sid") is None
    assert await store.sweep() == 2
    assert sorted(p.name for p in store.root.iterdir()) == [kept.id, f"{kept.id}.json"]
    now[0] = 1051.0  # kept is past its TTL now too
    assert await store.get(kept.id) is None and await store.sweep() == 1


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b"{}"),
        ("multipart/form-data", b"--x\r\n\r\n"),  # no boundary
        ("multipart/form-data; boundary=x", b"garbage with no parts"),
        ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data\r\n\r\nv"),
        ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="a"'),
    ],
)
async def test_malformed_uploads_are_client_errors(
    gateway: Gateway, content_type: str, body: bytes
) -> None:
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        headers = {"X-CSRF-Token": csrf, "Content-Type": content_type}
        async with client.post(url(gateway, "/chat/api/upload"), data=body, headers=headers) as r:
            assert 400 <= r.status < 500, (r.status, await r.text())
    store = adapter(gateway).uploads
    assert store is not None and list(store.root.iterdir()) == []


async def test_one_browser_holds_a_bounded_number_of_uploads(gateway: Gateway) -> None:
    channel = adapter(gateway)
    now = [channel.clock()]
    channel.clock = lambda: now[0]
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        for _ in range(MAX_LIVE_PER_SESSION):
            status, _ = await upload(gateway, client, csrf, b"note", "n.txt", "text/plain")
            assert status == 201
        status, answer = await upload(gateway, client, csrf, b"note", "n.txt", "text/plain")
        assert status == 429 and "too many uploads" in str(answer["error"])
        now[0] += 601  # the earlier ones expired
        status, _ = await upload(gateway, client, csrf, b"note", "n.txt", "text/plain")
        assert status == 201


async def test_max_upload_bytes_zero_turns_uploads_off(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        f"""agents:
  default: {{backend: echo}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open, max_upload_bytes: 0}}
""",
    )
    async with running(config) as gw, browser() as client:
        csrf = await sign_in(gw, client)
        async with client.get(url(gw, "/chat/api/session")) as r:
            assert (await r.json())["max_upload_bytes"] == 0
        status, answer = await upload(gw, client, csrf, b"hi", "a.txt", "text/plain")
        assert status == 403 and "max_upload_bytes: 0" in str(answer["error"])
        assert (gw.rt.state_dir / "webchat").is_dir()
        assert not (gw.rt.state_dir / "webchat" / "webchat-uploads").exists()


async def test_fetch_copies_the_upload_until_it_expires(gateway: Gateway, tmp_path: Path) -> None:
    channel = adapter(gateway)
    now = [channel.clock()]
    channel.clock = lambda: now[0]
    image = png()
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        _, up = await upload(gateway, client, csrf, image)
    att = Attachment(kind="image", handle=str(up["upload_id"]))
    assert await channel.fetch(att, tmp_path / "a", 1 << 20) == len(image)
    assert (tmp_path / "a").read_bytes() == image  # the journaled handle fetches it again
    with pytest.raises(FetchError) as small:
        await channel.fetch(att, tmp_path / "b", 10)
    assert small.value.reason == MediaReason.TOO_LARGE
    now[0] += 601
    with pytest.raises(FetchError) as late:
        await channel.fetch(att, tmp_path / "c", 1 << 20)
    assert late.value.reason == MediaReason.DOWNLOAD_FAILED
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


async def test_a_browser_leaving_mid_file_leaves_nothing(gateway: Gateway) -> None:
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        cookie = "; ".join(f"{c.key}={c.value}" for c in client.cookie_jar)
    head = (
        b'--x\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    request = (
        f"POST /chat/api/upload HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\n"
        f"Cookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
        f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: {MAX_UPLOAD}\r\n\r\n"
    ).encode()
    _, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    writer.write(request + head + b"\x00" * 4096)
    await writer.drain()
    store = adapter(gateway).uploads
    assert store is not None
    await eventually(lambda: any(store.root.iterdir()), what="the part being written")
    writer.close()
    await eventually(lambda: not any(store.root.iterdir()), what="the half-file removed")
