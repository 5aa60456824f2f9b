"""The aiohttp Bot API transport under a real PTB Bot: TLS trust, timeouts, errors, bounds, proxy."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from telegram import Bot, Update
from telegram.error import NetworkError, TimedOut

from bench.procs import free_port
from chatgate.channels.telegram import errors
from chatgate.channels.telegram.adapter import make_bot as channel_bot
from chatgate.channels.telegram.config import TelegramChannelConfig
from chatgate.channels.telegram.polling import Poller
from chatgate.channels.telegram.request import BoundedRequest
from chatgate.model.reasons import SendErrorKind
from tests.fakes.telegram import TOKEN, FakeTelegram, FaultSpec
from tests.fakes.tls import server_ssl_context, session_ca

CHAT = 4242
HOLD = FaultSpec(200, "", delay_s=60.0)  # held until answered or the fake stops


def _bot(base_url: str, *, slots: int = 4, timeout_s: float = 5.0, connect_s: float = 5.0) -> Bot:
    request = BoundedRequest(slots=slots, timeout_s=timeout_s, connect_timeout_s=connect_s)
    return Bot(TOKEN, base_url=base_url, request=request)


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test CA is trusted through SSL_CERT_FILE only, as an operator would set it."""
    ca_file = tmp_path / "ca.pem"
    session_ca().cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return ca_file


@pytest.fixture
async def fake(trusted_ca: Path) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(ssl_context=server_ssl_context(["localhost"])) as server:
        server.dm(CHAT, "hi")
        yield server


async def test_tls_to_a_private_ca_is_trusted_through_ssl_cert_file(
    fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fake.base_url.startswith("https://")
    async with _bot(fake.base_url) as bot:
        await bot.send_message(CHAT, "over TLS")
    monkeypatch.delenv("SSL_CERT_FILE")
    with pytest.raises(NetworkError, match="CERTIFICATE_VERIFY_FAILED") as caught:
        async with _bot(fake.base_url):  # getMe on entry
            pass
    assert not isinstance(caught.value, TimedOut)
    assert [c.params["text"] for c in fake.calls_of("sendMessage")] == ["over TLS"]


async def test_a_slow_answer_is_timed_out_and_classified_transient(fake: FakeTelegram) -> None:
    async with _bot(fake.base_url) as bot:
        fake.fail("sendMessage", HOLD)
        with pytest.raises(TimedOut) as caught:
            await bot.send_message(CHAT, "slow", read_timeout=0.2)
        await bot.send_message(CHAT, "next")  # the connection it lost is not missed
    assert errors.classify(caught.value).kind is SendErrorKind.TRANSIENT


async def test_a_tls_handshake_that_never_completes_hits_the_connect_timeout(
    trusted_ca: Path,
) -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def mute(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # accepts TCP, never answers the ClientHello

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = BoundedRequest(slots=1, timeout_s=300.0, connect_timeout_s=0.2)
    try:
        with pytest.raises(TimedOut):
            async with Bot(TOKEN, base_url=f"https://127.0.0.1:{port}/bot", request=request):
                pass
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
    assert accepted


async def test_a_refused_connection_is_a_network_error_not_a_timeout(trusted_ca: Path) -> None:
    with pytest.raises(NetworkError) as caught:
        async with _bot(f"https://127.0.0.1:{free_port()}/bot"):
            pass
    assert not isinstance(caught.value, TimedOut)
    assert "aiohttp.ClientConnectorError" in str(caught.value)
    assert errors.classify(caught.value).kind is SendErrorKind.TRANSIENT


async def test_a_dropped_connection_is_a_network_error(fake: FakeTelegram) -> None:
    async with _bot(fake.base_url) as bot:
        fake.fail("sendMessage", FaultSpec(200, "", drop_connection=True))
        with pytest.raises(NetworkError) as caught:
            await bot.send_message(CHAT, "dropped")
    assert not isinstance(caught.value, TimedOut)


async def test_no_more_than_slots_requests_are_in_flight_or_connected(
    fake: FakeTelegram,
) -> None:
    async with _bot(fake.base_url, slots=3) as bot:
        fake.fail("sendChatAction", FaultSpec(200, "", delay_s=0.2), times=12)
        await asyncio.gather(*(bot.send_chat_action(CHAT, "typing") for _ in range(12)))
    assert fake.max_in_flight["sendchataction"] == 3
    assert fake.connection_attempts == 3


async def test_cancelled_requests_leave_the_slots_and_the_pool_usable(fake: FakeTelegram) -> None:
    async with _bot(fake.base_url, slots=2) as bot:
        for round_ in range(3):
            fake.fail("sendMessage", HOLD, times=2)
            held = [asyncio.create_task(bot.send_message(CHAT, f"held {i}")) for i in range(2)]
            await fake.wait_for("sendMessage", 2 * (round_ + 1))  # both are on the wire
            for task in held:
                task.cancel()
            for task in held:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        # a leaked slot or connection would leave these waiting until the request timed out
        sent = await asyncio.gather(*(bot.send_message(CHAT, f"after {i}") for i in range(4)))
    assert sorted(m.text for m in sent) == [f"after {i}" for i in range(4)]


async def test_files_go_as_multipart_with_the_other_fields(fake: FakeTelegram) -> None:
    async with _bot(fake.base_url) as bot:
        await bot.send_document(CHAT, b"%PDF-1.4 bytes", filename="report.pdf", caption="weekly")
    [call] = fake.calls_of("sendDocument")
    assert call.content_type == "multipart/form-data"
    assert call.params["caption"] == "weekly" and call.params["chat_id"] == CHAT
    assert call.params["document"]["filename"] == "report.pdf"
    assert call.params["document"]["data"] == b"%PDF-1.4 bytes"


async def test_the_poller_polls_without_initialize_and_closes_its_request_on_stop(
    fake: FakeTelegram,
) -> None:
    config = TelegramChannelConfig(token=TOKEN, api_base=fake.base_url.removesuffix("/bot"))
    bots: list[Bot] = []
    batches: list[tuple[Update, ...]] = []

    def make_bot() -> Bot:  # the channel's polling bot: never initialised (no getMe)
        bots.append(channel_bot(config, polling=True))
        return bots[-1]

    async def handle(batch: tuple[Update, ...]) -> None:
        batches.append(batch)

    poller = Poller(
        make_bot, handle, lambda _: None, lambda _: None, poll_timeout_s=1, stale_after_s=60
    )
    poller.start()
    try:
        await fake.wait_for("getUpdates", 2)  # the first batch (the fixture's DM) was confirmed
    finally:
        await poller.stop()
    assert [u.message.text for batch in batches for u in batch if u.message] == ["hi"]
    with pytest.raises(RuntimeError, match="shut down"):
        await bots[0].request.do_request(f"{fake.base_url}{TOKEN}/getMe", "POST")


class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that tunnels bytes and records each CONNECT target."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> ConnectProxy:
        self._server = await asyncio.start_server(self._tunnel, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for pipe in self._pipes:
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        verb, target, _ = head.split(" ", 2)
        if verb != "CONNECT":
            writer.close()
            return
        self.targets.append(target)
        host, port = target.rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            pipe = asyncio.create_task(self._pipe(source, sink))
            self._pipes.add(pipe)
            pipe.add_done_callback(self._pipes.discard)

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        finally:
            sink.close()


async def test_https_proxy_from_the_environment_is_used_unless_no_proxy_matches(
    fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        async with _bot(fake.base_url) as bot:
            await bot.send_message(CHAT, "via proxy")
        assert proxy.targets == [f"127.0.0.1:{fake.port}"]
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with _bot(fake.base_url) as bot:
            await bot.send_message(CHAT, "direct")
        assert len(proxy.targets) == 1
    assert [c.params["text"] for c in fake.calls_of("sendMessage")] == ["via proxy", "direct"]
