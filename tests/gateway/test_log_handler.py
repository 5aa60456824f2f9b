"""The daemon's log handler: one write per loop iteration, in order, nothing left behind."""

from __future__ import annotations

import asyncio
import io
import logging
import threading
from collections.abc import Iterator

import pytest

from chatgate.gateway.process.log_handler import LoopBatchedHandler


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


class BrokenStream(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("disk gone")


@pytest.fixture
def stream() -> CountingStream:
    return CountingStream()


@pytest.fixture
def log(stream: CountingStream) -> Iterator[logging.Logger]:
    handler = LoopBatchedHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("test.log_handler")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield logger
    logger.removeHandler(handler)


async def test_lines_of_one_iteration_go_out_in_one_write_at_its_end(
    log: logging.Logger, stream: CountingStream
) -> None:
    for i in range(5):
        log.info("line %d", i)
    assert stream.getvalue() == ""  # still this iteration
    await asyncio.sleep(0)
    assert stream.getvalue().splitlines() == [f"line {i}" for i in range(5)]
    assert stream.writes == 1
    log.info("next")
    await asyncio.sleep(0)
    assert stream.getvalue().splitlines()[-1] == "next" and stream.writes == 2


async def test_a_thread_writes_at_once_after_what_the_loop_buffered(
    log: logging.Logger, stream: CountingStream
) -> None:
    log.info("from the loop")
    worker = threading.Thread(target=log.info, args=("from a thread",))
    worker.start()
    worker.join()
    assert stream.getvalue().splitlines() == ["from the loop", "from a thread"]
    await asyncio.sleep(0)  # the scheduled flush finds nothing left
    assert stream.getvalue().splitlines() == ["from the loop", "from a thread"]


def test_a_loop_that_stopped_before_its_flush_does_not_strand_later_lines(
    log: logging.Logger, stream: CountingStream
) -> None:
    first = asyncio.new_event_loop()

    def stop_then_log() -> None:
        first.stop()
        log.info("on a loop that stops")  # its flush is queued for an iteration that never runs

    first.call_soon(stop_then_log)
    first.run_forever()
    first.close()
    assert stream.getvalue() == ""

    async def log_on_the_next_loop() -> None:
        log.info("on the next loop")

    asyncio.run(log_on_the_next_loop())
    assert stream.getvalue().splitlines() == ["on a loop that stops", "on the next loop"]


def test_without_a_running_loop_a_line_is_written_at_once(
    log: logging.Logger, stream: CountingStream
) -> None:
    log.info("at start-up")
    assert stream.getvalue() == "at start-up\n"


async def test_flush_writes_what_is_pending_when_the_loop_will_not_run_again(
    log: logging.Logger, stream: CountingStream
) -> None:
    log.info("last words")
    for handler in log.handlers:
        handler.flush()  # what LogSetup.stop and logging.shutdown do at exit
    assert stream.getvalue() == "last words\n"


async def test_a_broken_stream_is_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("test.log_handler.broken")
    logger.propagate = False
    handler = LoopBatchedHandler(BrokenStream())
    logger.addHandler(handler)
    try:
        logger.warning("lost line")
        await asyncio.sleep(0)  # the flush fails inside a loop callback: it must not raise there
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "--- Logging error ---" in err and "OSError: disk gone" in err and "lost line" in err
