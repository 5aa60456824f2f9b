"""The shared input rules, table-driven: JSON, numbers, text, and the client-error log line."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp.http_exceptions import BadStatusLine

from chatgate.http_input import BadInput, InputReason, bounded_int, parse_json, utf8_clean
from chatgate.http_input.client_errors import ClientErrorLog


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", InputReason.NOT_JSON),
        (b"{", InputReason.NOT_JSON),
        (b"\xff{}", InputReason.NOT_UTF8),
        (b"[" * 100_000 + b"]" * 100_000, InputReason.JSON_TOO_DEEP),
        (b"[" * 65 + b"]" * 65, InputReason.JSON_TOO_DEEP),
        (b'{"a": "\\ud800"}', InputReason.LONE_SURROGATE),
        (b'["\\udcff"]', InputReason.LONE_SURROGATE),
    ],
)
def test_refused_json(raw: bytes, reason: InputReason) -> None:
    with pytest.raises(BadInput) as info:
        parse_json(raw)
    assert info.value.status == 400 and info.value.reason == reason


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b"{}", {}),
        (b"[" * 3 + b"]" * 3, [[[]]]),
        (b'{"a": "\\ud83d\\ude00 \\u00e9"}', {"a": "😀 é"}),
        (b'"[[[[ not nesting"', "[[[[ not nesting"),
    ],
)
def test_accepted_json(raw: bytes, value: Any) -> None:
    assert parse_json(raw) == value


def test_an_empty_body_may_stand_for_a_default() -> None:
    assert parse_json(b"  ", empty={}) == {}


@pytest.mark.parametrize(
    ("given", "low", "high", "value"),
    [
        ("0", 0, 10, 0),
        ("10", 0, 10, 10),
        ("007", 0, 10, 7),
        ("9223372036854775807", 0, 2**63 - 1, 2**63 - 1),
    ],
)
def test_bounded_int_accepts(given: str, low: int, high: int, value: int) -> None:
    assert bounded_int(given, "n", low=low, high=high) == value


@pytest.mark.parametrize(
    "given",
    ["", "abc", "²", "¹⁰", "٣", "-1", "+1", " 1", "1.0", "11", "9" * 23, "9223372036854775808"],
)
def test_bounded_int_refuses_naming_the_parameter(given: str) -> None:
    high = 2**63 - 1 if len(given) > 10 else 10
    with pytest.raises(BadInput) as info:
        bounded_int(given, "limit", low=0, high=high)
    assert info.value.status == 400 and "limit" in info.value.message


def test_utf8_clean_refuses_escaped_bytes() -> None:
    utf8_clean(["plain", "é", "😀"], "a header")
    with pytest.raises(BadInput) as info:
        utf8_clean([b"\xe9".decode("utf-8", "surrogateescape")], "a header")
    assert info.value.reason == InputReason.NOT_UTF8


def _record(peer: str) -> logging.LogRecord:
    try:
        raise BadStatusLine("GARBAGE / HTTP/9")
    except BadStatusLine as exc:
        exc_info = (type(exc), exc, exc.__traceback__)
    return logging.LogRecord(
        "aiohttp.server",
        logging.ERROR,
        __file__,
        1,
        "Error handling request from %s",
        (peer,),
        exc_info,
    )


def test_a_malformed_request_is_one_warning_per_peer_without_traceback() -> None:
    log = ClientErrorLog(every_s=3600)
    first = _record("10.0.0.1")
    assert log.filter(first)
    assert first.levelno == logging.WARNING and first.exc_info is None
    assert first.getMessage().startswith("malformed request from 10.0.0.1")
    assert not log.filter(_record("10.0.0.1"))  # the same peer again: counted, not logged
    assert log.filter(_record("10.0.0.2"))
    assert log.suppressed == 1
    other = logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "boom", (), None)
    assert log.filter(other) and other.levelno == logging.ERROR  # anything else passes as is


@pytest.mark.parametrize("given", ["9" * 23, "²", "-1"])
def test_the_cli_refuses_dead_letter_ids_that_cannot_exist(given: str) -> None:
    from chatgate.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["dlq", "drop", given])
    assert info.value.code == 2


@pytest.mark.parametrize(
    "body",
    [
        b'{"type": "event_callback", "event": null}',
        b'{"type": "event_callback"}',
        b'{"type": "block_actions", "message": []}',
        b"[1]",
        b"payload=%7B%7D%5B",
        b"payload=null",
        b"\xff",
    ],
)
def test_slack_bodies_bolt_cannot_read_are_refused(body: bytes) -> None:
    from chatgate.channels.slack.events_body import check_events_body

    with pytest.raises(BadInput):
        check_events_body(body, "application/json" if body[:1] in (b"{", b"[") else "")


def test_slack_bodies_bolt_reads_pass() -> None:
    from chatgate.channels.slack.events_body import check_events_body

    event = b'{"type": "event_callback", "event": {"type": "message"}}'
    assert check_events_body(event, "application/json") == event.decode()
    assert check_events_body(b"command=%2Fx&text=hi", "application/x-www-form-urlencoded")
    assert check_events_body(b"", "") == ""
