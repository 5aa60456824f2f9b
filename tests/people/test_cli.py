"""`chatgate people` against a running daemon: show, export (a 0600 archive that is never
overwritten), erase and the audit trail; a malformed person is a usage error before asking."""

from __future__ import annotations

import asyncio
import io
import tarfile
from pathlib import Path

import pytest

from chatgate.cli.main import main
from chatgate.gateway.app import Gateway
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage
from chatgate.state.records import JournalMark, JournalState
from tests.harness import running, write_config


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


async def plant(gw: Gateway, text: str) -> None:
    """A message of Ann's in the journal and her session, as a turn would leave them."""
    state, now = gw.rt.state, gw.rt.clock.time()
    msg = InboundMessage("telegram", "telegram", "ann", "direct", "ann", "1", text)
    await state.journal.record(msg, now, 3600)
    mark = JournalMark(
        JournalState.DONE, now, stage="turn", reason="text", session="a:telegram:ann"
    )
    await state.journal.settle(msg.key, mark)
    await state.sessions.append(
        "a:telegram:ann", 0, [ChatMessage("user", text, None, msg.key)], now
    )


async def test_people_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, "channels:\n  webhook: {routes: {}}\n")
    cfg = ("--config", str(config))

    async def cli(*args: str) -> tuple[int, str, str]:
        return await asyncio.to_thread(run, capsys, *args, *cfg)

    code, _, err = await cli("people", "show", "no-colon")
    assert code == 64 and "CHANNEL:USER" in err, err
    async with running(config) as gw:
        await plant(gw, "remember the blue door")
        code, out, _ = await cli("people", "show", "telegram:ann")
        assert code == 0 and "telegram:ann: 1 messages" in out and "blue door" in out

        archive = tmp_path / "ann.tar.gz"
        code, out, _ = await cli("people", "export", "telegram:ann", "--out", str(archive))
        assert code == 0 and "journal 1" in out
        assert archive.stat().st_mode & 0o777 == 0o600
        with tarfile.open(fileobj=io.BytesIO(archive.read_bytes())) as tar:
            names = {m.name.split("/", 1)[1] for m in tar.getmembers()}
            assert {"person.json", "journal.json", "transcripts.json"} <= names
        code, _, err = await cli("people", "export", "telegram:ann", "--out", str(archive))
        assert code == 64 and "exists" in err

        code, out, _ = await cli("people", "erase", "telegram:ann")
        assert code == 0 and "journal: 0 removed, 1 tombstones kept" in out
        assert "blue door" not in (await cli("people", "show", "telegram:ann"))[1]
        code, out, _ = await cli("people", "audit")
        lines = [line.split()[2] for line in out.splitlines()]
        assert code == 0 and lines[:4] == ["shown", "erased", "exported", "shown"]
