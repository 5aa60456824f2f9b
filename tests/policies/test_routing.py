"""Routing: which agent serves a message and which session it belongs to."""

from __future__ import annotations

import pytest

from chatgate.model.messages import InboundMessage
from chatgate.policies.routing import Binding, resolve_agent, session_key


def msg(**kw: object) -> InboundMessage:
    base: dict[str, object] = dict(
        channel="tg",
        platform="telegram",
        chat_id="c",
        chat_kind="direct",
        sender_id="u",
        message_id="1",
        text="hi",
    )
    base.update(kw)
    return InboundMessage(**base)  # type: ignore[arg-type]


ROUTES = [
    Binding(channel="tg", chat_id="support", agent="support"),
    Binding(chat_kind="group", agent="groups"),
    Binding(sender_id="vip", agent="vip"),
]


@pytest.mark.parametrize(
    ("message", "route_agent", "expected"),
    [
        (msg(chat_id="support"), None, "support"),
        (msg(chat_id="support", channel="other"), None, "default"),
        (msg(chat_kind="group"), None, "groups"),
        (msg(sender_id="vip"), None, "vip"),
        (msg(), None, "default"),
        (msg(chat_id="support"), "forced", "forced"),  # a configured route's own agent wins
    ],
)
def test_route_bindings_first_match_wins(
    message: InboundMessage, route_agent: str | None, expected: str
) -> None:
    assert resolve_agent(message, ROUTES, "default", route_agent) == expected


@pytest.mark.parametrize(
    ("message", "per_user", "expected"),
    [
        (msg(), False, "a:tg:c"),
        (msg(thread_id="7"), False, "a:tg:c:7"),
        (msg(chat_kind="group"), True, "a:tg:c:uu"),
        (msg(chat_kind="direct"), True, "a:tg:c"),
        (msg(chat_id="route", thread_id="once:x"), True, "a:tg:route:once:x"),
    ],
)
def test_session_keys(message: InboundMessage, per_user: bool, expected: str) -> None:
    assert session_key("a", message, per_user_in_groups=per_user) == expected
