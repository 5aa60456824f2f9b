"""Teams pure parts, table-driven: config rules, chat ids, activity normalisation (through the
SDK's models), rendering and error classification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from microsoft_teams.api.activities import ActivityTypeAdapter
from pydantic import ValidationError

from chatgate.channels.registry import ChannelRegistry
from chatgate.channels.teams import errors, ids
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.channels.teams.inbound import Ignored, normalize, reference, tenant_allowed
from chatgate.channels.teams.render import MAX_TEXT_BYTES, render, utf8_length
from chatgate.config.errors import ConfigError
from chatgate.config.loader import load_config_text
from chatgate.config.redact import redacted_dict
from chatgate.model.messages import InboundMessage
from chatgate.model.outbound import Button, Buttons, OutboundMessage, Select, SelectOption, Text
from chatgate.model.reasons import DropReason, SendErrorKind
from chatgate.policies.edits import EDIT_OF, EditMode
from tests.fakes.teams import BOT_ID, FakeTeams

APP = "3f2b1c4d-0000-4000-8000-00000000a11d"
SECRET = "teams-secret-canary-0123456789"
ms = FakeTeams()  # only its activity builders (no server)


def test_credentials_come_in_pairs_and_ids_are_guids() -> None:
    ok = TeamsChannelConfig.model_validate({"app_id": APP.upper(), "app_password": SECRET})
    assert ok.app_id == APP
    assert TeamsChannelConfig.model_validate({"app_id": "", "app_password": ""}).app_id is None
    for section, words in [
        ({"app_id": APP}, "without app_password"),
        ({"app_password": SECRET}, "without app_id"),
        ({"app_id": "my-bot", "app_password": SECRET}, "not a GUID"),
        ({"allowed_users": ["ada@contoso.com"]}, "Entra object id"),
    ]:
        with pytest.raises(ValidationError, match=words):
            TeamsChannelConfig.model_validate(section)


@pytest.mark.parametrize(
    ("tenant_id", "allowed", "tenant", "taken"),
    [
        (None, [], "any", True),
        ("AAA", [], "aaa", True),
        ("aaa", [], "bbb", False),
        ("aaa", ["bbb"], "bbb", True),
        ("aaa", ["bbb"], "aaa", False),
        (None, ["ccc"], "ddd", False),
    ],
)
def test_tenants(tenant_id: str | None, allowed: list[str], tenant: str, taken: bool) -> None:
    guid = "72f988bf-0000-4000-8000-0000000000aa"
    swap = {"aaa": guid}
    section = TeamsChannelConfig.model_validate(
        {"tenant_id": swap.get((tenant_id or "").lower(), tenant_id), "allowed_tenants": allowed}
    )
    assert tenant_allowed(section.tenants(), swap.get(tenant, tenant)) is taken


def test_a_bad_section_names_key_and_line_and_show_hides_the_password(tmp_path: Path) -> None:
    head = "config_version: 1\nagents: {default: {backend: echo}}\nchannels:\n  teams:\n"
    bad = head + f"    app_id: {APP}\n    app_password: {SECRET}\n    group_policy: mentions\n"
    with pytest.raises(ConfigError) as caught:
        load_config_text(bad, tmp_path / "gateway.yaml", {}, catalog=ChannelRegistry())
    text = str(caught.value)
    assert "channels.teams.group_policy" in text and "gateway.yaml:7" in text
    assert SECRET not in text
    good = head + f"    app_id: {APP}\n    app_password: {SECRET}\n"
    loaded = load_config_text(good, tmp_path / "gateway.yaml", {}, catalog=ChannelRegistry())
    shown = redacted_dict(loaded)
    assert SECRET not in str(shown) and shown["channels"]["teams"]["app_id"] == APP


@pytest.mark.parametrize(
    "conversation",
    ["a:1abc", "19:x@thread.tacv2", "29:%3A odd:%", "plain"],
)
def test_chat_ids_round_trip_without_colons(conversation: str) -> None:
    chat = ids.chat_id(conversation)
    assert ":" not in chat and ids.conversation_id(chat) == conversation


def test_threads_split_and_rejoin() -> None:
    base, root = ids.split_thread("19:x@thread.tacv2;messageid=42")
    assert (base, root) == ("19:x@thread.tacv2", "42")
    assert ids.split_thread("a:1abc") == ("a:1abc", None)
    assert ids.thread_conversation(ids.chat_id(base), root) == "19:x@thread.tacv2;messageid=42"


def _normalize(activity: dict[str, Any], edits: EditMode = EditMode.IGNORE) -> Any:
    return normalize(ActivityTypeAdapter.validate_python(activity), "teams", edits)


THREAD = "19:c@thread.tacv2;messageid=7"
IMAGE = {"contentType": "image/png", "contentUrl": "https://smba.example/v3/attachments/1"}


@pytest.mark.parametrize(
    ("activity", "expect"),
    [
        (ms.message("hi"), {"chat_kind": "direct", "is_mention": True, "text": "hi"}),
        (
            ms.message("q", conversation=THREAD, kind="channel", mention=True, activity_id="9"),
            {
                "chat_kind": "channel",
                "thread_id": "7",
                "is_mention": True,
                "text": "q",
                "chat_id": "19%3Ac@thread.tacv2",
            },
        ),
        (ms.message("q", conversation=THREAD, kind="channel"), {"is_mention": False}),
        (ms.message("g", conversation="19:g@thread.v2", kind="groupChat"), {"chat_kind": "group"}),
        (ms.message("", value={"chatgate_choice": "red"}), {"choice": "red", "text": "red"}),
        (ms.message("/new"), {"is_command": True}),
        (ms.message("a &amp; <b>b</b>"), {"text": "a & b"}),
        (ms.message("", attachments=[IMAGE]), {"attachments": 1}),
        (
            {**ms.message("x"), "from": {"id": BOT_ID}},
            DropReason.SELF_MESSAGE,
        ),
        (ms.message("  "), DropReason.EMPTY_INPUT),
        (ms.added(), DropReason.CONVERSATION_UPDATE),
        ({**ms.message("x"), "type": "messageDelete"}, DropReason.EDITED_IGNORED),
        (
            {
                **ms.message("x"),
                "type": "messageUpdate",
                "channelData": {"eventType": "editMessage"},
            },
            DropReason.EDITED_IGNORED,
        ),
    ],
)
def test_normalize(activity: dict[str, Any], expect: Any) -> None:
    got = _normalize(activity)
    if isinstance(expect, DropReason):
        assert isinstance(got, Ignored) and got.reason is expect
        return
    assert isinstance(got, InboundMessage)
    for key, value in expect.items():
        actual = len(got.attachments) if key == "attachments" else getattr(got, key)
        assert actual == value, key


def test_an_edit_as_a_new_turn_names_its_original() -> None:
    edited = {
        **ms.message("fixed", activity_id="55"),
        "type": "messageUpdate",
        "channelData": {"eventType": "editMessage"},
    }
    got = _normalize(edited, EditMode.NEW_TURN)
    assert isinstance(got, InboundMessage) and got.text == "fixed"
    assert got.extra[EDIT_OF] == "teams:a%3A1personal-chat/55"
    assert got.message_id != "a%3A1personal-chat/55"


def test_reference_is_the_channel_not_the_thread() -> None:
    activity = ActivityTypeAdapter.validate_python(
        ms.message("q", conversation=THREAD, kind="channel", tenant="T1")
    )
    ref = reference(activity)
    assert (ref.conversation, ref.tenant_id) == ("19:c@thread.tacv2", "t1")
    assert ref.service_url == ms.service_url


def test_long_text_is_chunked_by_bytes_and_menus_become_one_card() -> None:
    long = "é" * (MAX_TEXT_BYTES)  # two bytes each: two chunks
    chunks = render(OutboundMessage.from_text(long))
    assert len(chunks) == 2 and all(utf8_length(c.text) <= MAX_TEXT_BYTES for c in chunks)
    message = OutboundMessage(
        (
            Text("Pick"),
            Buttons(
                (Button("Docs", url="https://example.com"), Button("Go", "go", style="danger"))
            ),
        )
    )
    [card] = render(message)
    content = card.native["activity"]["attachments"][0]["content"]
    assert [a["type"] for a in content["actions"]] == ["Action.OpenUrl", "Action.Submit"]
    assert content["actions"][1]["style"] == "destructive"
    [menu] = render(OutboundMessage((Select((SelectOption("A", "a"),)),)))
    body = menu.native["activity"]["attachments"][0]["content"]["body"]
    assert body == [
        {
            "type": "Input.ChoiceSet",
            "id": "chatgate_choice",
            "placeholder": "Choose…",
            "choices": [{"title": "A", "value": "a"}],
        }
    ]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, SendErrorKind.RATE_LIMITED),
        (401, SendErrorKind.AUTH_FATAL),
        (403, SendErrorKind.AUTH_FATAL),
        (404, SendErrorKind.TARGET_NOT_FOUND),
        (400, SendErrorKind.INVALID_REQUEST),
        (502, SendErrorKind.TRANSIENT),
        (408, SendErrorKind.TRANSIENT),
    ],
)
def test_connector_statuses(status: int, kind: SendErrorKind) -> None:
    result = errors.classify_status(status, 3.0)
    assert result.kind is kind
    assert errors.hint(kind, status) or kind is SendErrorKind.INVALID_REQUEST
    if status in (401, 403):  # both park; the fix names the cause
        assert (
            errors.hint(kind, status)
            == {401: errors.PASSWORD_HINT, 403: errors.FORBIDDEN_HINT}[status]
        )
    if kind is SendErrorKind.RATE_LIMITED:
        assert result.retry_after_s == 3.0
