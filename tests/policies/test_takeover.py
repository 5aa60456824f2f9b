"""Human takeover decisions: table-driven over pauses, clocks, commands and session keys."""

from __future__ import annotations

import pytest

from chatgate.policies.takeover import (
    BotSwitch,
    Pause,
    human_by,
    human_key,
    is_paused,
    kept_as_context,
    may_switch,
    next_resume,
    parse_switch,
    pause_until,
    ran_out_text,
    resume_due,
    session_chat,
)

NOW = 1_800_000_000.0
FOREVER = Pause("telegram:42", NOW, None, "cli")
HOUR = Pause("telegram:42", NOW, NOW + 3600, "dashboard")


@pytest.mark.parametrize(
    ("for_s", "auto_resume_s", "expected"),
    [(None, 3600.0, NOW + 3600),  # the configured auto resume
     (None, 0.0, None),  # auto resume off: until resumed
     (60.0, 3600.0, NOW + 60),  # the operator's --for wins
     (0.0, 3600.0, None),  # --for 0: until resumed
     (7200.0, 0.0, NOW + 7200)],
)  # fmt: skip
def test_pause_until(for_s: float | None, auto_resume_s: float, expected: float | None) -> None:
    assert pause_until(NOW, for_s, auto_resume_s) == expected


@pytest.mark.parametrize(
    ("pause", "at", "paused", "due"),
    [(None, NOW, False, False),
     (FOREVER, NOW, True, False), (FOREVER, NOW + 10**9, True, False),
     (HOUR, NOW, True, False), (HOUR, NOW + 3599.9, True, False),
     (HOUR, NOW + 3600, False, True),  # the end is exclusive: resumed at that instant
     (HOUR, NOW + 86_400, False, True)],
)  # fmt: skip
def test_paused_and_resume_due(pause: Pause | None, at: float, paused: bool, due: bool) -> None:
    assert (is_paused(pause, at), resume_due(pause, at)) == (paused, due)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("/bot off", BotSwitch.OFF), ("/bot on", BotSwitch.ON), ("/BOT Off", BotSwitch.OFF),
     ("/bot@helper_bot on", BotSwitch.ON), ("  /bot off  ", BotSwitch.OFF),
     ("/bot", None), ("/bot maybe", None), ("/bot off now", None), ("bot off", None),
     ("/bots off", None), ("/new", None), ("", None), ("please /bot off", None)],
)  # fmt: skip
def test_parse_switch(text: str, expected: BotSwitch | None) -> None:
    assert parse_switch(text) is expected


OPERATORS = frozenset({"telegram:7", "slack:U0OPS"})


@pytest.mark.parametrize(
    ("channel", "sender", "allowed"),
    [("telegram", "7", True), ("slack", "U0OPS", True),
     ("telegram", "42", False),  # a customer
     ("discord", "7", False),  # the same id on another channel is someone else
     ("telegram", "", False)],
)  # fmt: skip
def test_may_switch(channel: str, sender: str, allowed: bool) -> None:
    assert may_switch(channel, sender, OPERATORS) is allowed


@pytest.mark.parametrize(
    ("key", "expected"),
    [("default:telegram:42", ("telegram:42", "telegram:42")),
     ("support:slack:C1:1700000000.000100", ("slack:C1", "slack:C1:1700000000.000100")),
     ("default:telegram:-1001:u42", ("telegram:-1001", "telegram:-1001")),  # per-user session
     ("default:telegram:-1001:7:u42", ("telegram:-1001", "telegram:-1001:7")),  # topic + user
     ("job:digest", None), ("a::b", None), ("", None)],
)  # fmt: skip
def test_session_chat(key: str, expected: tuple[str, str] | None) -> None:
    assert session_chat(key) == expected


def test_a_pause_survives_its_dict_form() -> None:
    for pause in (FOREVER, HOUR):
        assert Pause.from_dict(pause.to_dict()) == pause


@pytest.mark.parametrize(
    ("pauses", "expected"),
    [([], None), ([FOREVER], None), ([FOREVER, HOUR], NOW + 3600),
     ([HOUR, Pause("slack:C1", NOW, NOW + 60, "cli")], NOW + 60)],
)  # fmt: skip
def test_next_resume_is_the_earliest_end(pauses: list[Pause], expected: float | None) -> None:
    assert next_resume(pauses) == expected


@pytest.mark.parametrize(
    ("key", "by"),
    [(human_key("cli", "ab12"), "cli"),
     (human_key("telegram:7", "ab12"), "telegram:7"),  # the operator's address has a colon
     ("human:ab12", None),  # a line of before the key carried who
     ("human:ab12:", None), ("telegram:42:m1", None), ("", None), (None, None)],
)  # fmt: skip
def test_an_operator_reply_is_known_by_its_key(key: str | None, by: str | None) -> None:
    assert human_by(key) == by


@pytest.mark.parametrize(
    ("scheduled", "elsewhere", "kept"),
    [(False, False, True), (True, False, False), (False, True, False), (True, True, False)],
)
def test_a_paused_chat_keeps_users_words_not_a_jobs_prompt_nor_a_webhooks_payload(
    scheduled: bool, elsewhere: bool, kept: bool
) -> None:
    assert kept_as_context(scheduled, elsewhere) is kept


def test_the_operator_is_told_which_pause_ran_out() -> None:
    text = ran_out_text(HOUR)
    assert "telegram:42" in text and "dashboard" in text and "ran out" in text
