"""One daemon per state directory: a second one is refused with the holder's pid, kill -9 frees it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatgate.gateway.process.state_lock import LOCK_FILE, StateDirInUse, StateLock
from tests.daemon import Daemon, run_cli
from tests.fakes.llm import FakeLLM
from tests.gateway.test_daemon import daemon_config
from tests.harness import over_http


def test_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    first, second = StateLock(tmp_path), StateLock(tmp_path)
    first.acquire()
    first.acquire()  # idempotent for its holder

    with pytest.raises(StateDirInUse, match=rf"in use by another chatgate \(pid {os.getpid()}\)"):
        second.acquire()

    first.release()
    second.acquire()
    assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    second.release()


async def test_second_daemon_on_the_same_state_dir_exits_71_and_the_first_keeps_serving(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = daemon_config(tmp_path, over_http(fake_llm))
    first = await Daemon(config).start()
    try:
        code, _, err = await run_cli("run", "--config", str(config))
        assert code == 71
        assert "is in use by another chatgate" in err
        assert first.proc is not None and f"pid {first.proc.pid}" in err
        assert (await first.get("/healthz"))[0] == 200
    finally:
        assert await first.terminate() == 0
