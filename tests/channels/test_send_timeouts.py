"""Every channel's error classifier tells a timed-out request (outcome unknown) from other failures,
so delivery never repeats an upload that may have arrived."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp
import pytest
import telegram.error as tg

from chatgate.channels.discord import errors as discord_errors
from chatgate.channels.slack import errors as slack_errors
from chatgate.channels.telegram import errors as telegram_errors
from chatgate.channels.whatsapp import errors as whatsapp_errors
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

Classify = Callable[[BaseException], SendResult]
CLASSIFIERS: dict[str, Classify] = {
    "telegram": telegram_errors.classify,
    "slack": slack_errors.classify,
    "discord": discord_errors.classify,
    "whatsapp": whatsapp_errors.classify,
}


@pytest.mark.parametrize("channel", sorted(CLASSIFIERS))
@pytest.mark.parametrize(
    "exc, timed_out",
    [
        (TimeoutError("read timed out"), True),
        (ConnectionResetError("reset"), False),
        (aiohttp.ClientConnectionError("refused"), False),
        (ValueError("bug"), False),
    ],
)
def test_timeouts_are_marked_and_other_failures_are_not(
    channel: str, exc: BaseException, timed_out: bool
) -> None:
    result = CLASSIFIERS[channel](exc)
    assert not result.ok
    assert result.timed_out is timed_out
    if timed_out:
        assert result.kind is SendErrorKind.TRANSIENT


def test_telegram_sdk_timeouts_are_marked() -> None:
    assert telegram_errors.classify(tg.TimedOut()).timed_out
    assert not telegram_errors.classify(tg.NetworkError("down")).timed_out
