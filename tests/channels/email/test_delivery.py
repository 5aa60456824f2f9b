"""SMTP failures by RFC 5321: a 4xx is retried with backoff until the mail goes; a 5xx is
permanent: not retried, to the DLQ at once with the server's reply as the reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.support.spans import Spans, failed, retries


async def test_a_temporary_refusal_is_retried(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM, spans: Spans
) -> None:
    world.handler.defer = 2
    async with running(email_config(tmp_path, world, fake_llm)) as gw:
        await world.deliver(mail(ALICE, world.address, "Later", "try again"))
        (answer,) = await world.wait_sent(1)
        assert await gw.rt.dead_letters.list() == []
    assert answer["Subject"] == "Re: Later"
    assert world.handler.defer == 0
    # traced: one client span per SMTP transaction under the turn, each retry an event on it
    calls = spans.deliveries("email send")
    assert [failed(c) for c in calls] == [True, True, False]
    turn = spans.turn_of(calls[-1])
    assert retries(turn) == ["transient", "transient"] and not failed(turn)


async def test_a_permanent_refusal_goes_to_the_dlq_at_once(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM, spans: Spans
) -> None:
    world.handler.refuse[ALICE] = "550 5.1.1 <alice@example.org>: mailbox unavailable"
    async with running(email_config(tmp_path, world, fake_llm)) as gw:
        await world.deliver(mail(ALICE, world.address, "Hello", "anyone?"))
        letters = []
        for _ in range(200):
            letters = await gw.rt.dead_letters.list()
            if letters:
                break
            await asyncio.sleep(0.05)
        [letter] = letters
    assert letter.target.chat_id == ALICE
    assert "550 5.1.1" in letter.error and "mailbox unavailable" in letter.error
    assert letter.attempts == 1
    assert world.sent() == []
    # traced: the refused transaction is an error span, the dead letter marks its turn failed
    [call] = spans.deliveries("email send")
    assert failed(call) and failed(spans.turn_of(call)) and not retries(spans.turn_of(call))
