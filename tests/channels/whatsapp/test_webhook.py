"""WhatsApp end to end: the real gateway with the channel on its HTTP port, signed posts from
the fake Meta, answers through the Graph API fake, the model through litellm (or a python
agent for menus)."""

from __future__ import annotations

import json
from pathlib import Path

from chatgate.channels.whatsapp import errors
from tests.channels.telegram.helpers_b import settled
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.whatsapp import APP_SECRET, DISPLAY_NUMBER, VERIFY_TOKEN, FakeWhatsApp
from tests.harness import channel_status, running


async def test_meta_verifies_the_callback_url_with_the_verify_token(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        good = await fake_wa.verify(webhook_url(gw), VERIFY_TOKEN, challenge="31337")
        wrong = await fake_wa.verify(webhook_url(gw), "guess")
    assert good == (200, "31337")
    assert wrong[0] == 403 and "31337" not in wrong[1]


async def test_bad_or_missing_signatures_get_401_and_nothing_runs(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        url = webhook_url(gw)
        post = fake_wa.message(USER, text="forged")
        other_secret = await fake_wa.post(url, post, secret="not-the-app-secret")
        missing = await fake_wa.post(url, post, signed=False)
        garbage = await fake_wa.post(url, post, signature="sha256=" + "0" * 64)
        assert await gw.rt.journal.find("whatsapp", sender_id=USER) == []
    assert [other_secret[0], missing[0], garbage[0]] == [401, 401, 401]
    assert json.loads(other_secret[1]) == {"error": "invalid signature"}
    assert fake_llm.requests == [] and fake_wa.sent() == []


async def test_a_text_is_answered_quoting_it_after_a_read_receipt(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        post = fake_wa.message(USER, text="hello **there**", wamid="wamid.IN-hello")
        assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        [sent] = await fake_wa.wait_sent(1)
        entry = await settled(gw, "whatsapp:wamid.IN-hello")
    assert sent["to"] == USER and sent["type"] == "text"
    assert sent["text"]["body"] == "echo: hello *there*"  # our markdown, WhatsApp's formatting
    assert sent["context"] == {"message_id": "wamid.IN-hello"}
    assert {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": "wamid.IN-hello",
        "typing_indicator": {"type": "text"},
    } in fake_wa.reads()
    assert fake_llm.requests[0].last_user_text == "hello **there**"
    assert (
        entry.state == "done"
        and entry.delivery_ids
        and entry.delivery_ids[0].startswith("wamid.OUT")
    )


async def test_a_slow_turn_is_marked_read_and_typing_in_one_call(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    """The read receipt carries the typing indicator: a turn past the typing delay (and under
    the indicator's refresh) costs one Graph call besides its answer."""
    fake_llm.latency_s = 1.2
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        post = fake_wa.message(USER, text="think hard", wamid="wamid.IN-slow")
        assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        await fake_wa.wait_sent(1)
        await settled(gw, "whatsapp:wamid.IN-slow")
    assert fake_wa.reads() == [
        {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": "wamid.IN-slow",
            "typing_indicator": {"type": "text"},
        }
    ]


async def test_redelivered_posts_run_one_turn(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        post = fake_wa.message(USER, text="once", wamid="wamid.IN-once")
        for _ in range(3):  # Meta retries when it misses the 200
            assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        await fake_wa.wait_sent(1)
        await settled(gw, "whatsapp:wamid.IN-once")
    assert len(fake_llm.requests) == 1 and len(fake_wa.sent()) == 1


async def test_button_and_list_round_trips(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    config = whatsapp_config(tmp_path, fake_wa, fake_llm, agent="menu")
    async with running(config) as gw:
        url = webhook_url(gw)
        await fake_wa.post(url, fake_wa.message(USER, text="pick 3"))
        [menu] = await fake_wa.wait_sent(1)
        buttons = menu["interactive"]["action"]["buttons"]
        assert menu["interactive"]["type"] == "button" and len(buttons) == 3
        assert menu["interactive"]["body"]["text"] == "Which *one*?"
        press = {"type": "button_reply", "button_reply": buttons[1]["reply"]}
        await fake_wa.post(url, fake_wa.message(USER, "interactive", interactive=press))
        [_, chosen] = await fake_wa.wait_sent(2)
        assert chosen["text"]["body"] == "you chose opt-2"

        await fake_wa.post(url, fake_wa.message(USER, text="pick 12"))
        [*_, listed] = await fake_wa.wait_sent(3)
        interactive = listed["interactive"]
        rows = interactive["action"]["sections"][0]["rows"]
        assert interactive["type"] == "list" and len(rows) == 10
        assert "2 options dropped" in interactive["body"]["text"]  # the degrade report, visible
        pick = {
            "type": "list_reply",
            "list_reply": {"id": rows[9]["id"], "title": rows[9]["title"]},
        }
        await fake_wa.post(url, fake_wa.message(USER, "interactive", interactive=pick))
        sent = await fake_wa.wait_sent(4)
    assert sent[3]["text"]["body"] == "you chose opt-10"


async def test_reactions_and_other_events_are_ignored_with_a_reason(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        url = webhook_url(gw)
        reaction = {"message_id": "wamid.OUT1", "emoji": "👍"}
        await fake_wa.post(url, fake_wa.message(USER, "reaction", reaction=reaction))
        await fake_wa.post(url, fake_wa.message(DISPLAY_NUMBER, text="echo of our own"))
        await fake_wa.post(url, fake_wa.message(USER, "unsupported", errors=[]))
        detail = channel_status(gw, "whatsapp")
    assert detail["ignored"] == {
        "reaction_ignored": 1,
        "self_message": 1,
        "unsupported_interaction": 1,
    }
    assert fake_llm.requests == []


async def test_receipts_update_the_delivery_record_instead_of_starting_turns(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    from chatgate.state.admin import why

    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        url = webhook_url(gw)
        await fake_wa.post(url, fake_wa.message(USER, text="track me", wamid="wamid.IN-track"))
        entry = await settled(gw, "whatsapp:wamid.IN-track")
        [out] = entry.delivery_ids
        for state in ("read", "delivered", "sent"):  # out of order: read wins
            assert (await fake_wa.post(url, fake_wa.status(out, state, USER)))[0] == 200
        read = await why(gw.rt.state, "whatsapp", "wamid.IN-track", None)
        assert (await fake_wa.post(url, fake_wa.status(out, "failed", USER, code=131047)))[0] == 200
        failed = await why(gw.rt.state, "whatsapp", "wamid.IN-track", None)
        detail = channel_status(gw, "whatsapp")
    [trail] = read["trails"]
    assert trail["receipts"][out]["status"] == "read"
    assert trail["summary"].endswith("; read per the platform")
    assert "failed: Re-engagement message" in failed["trails"][0]["summary"]
    assert detail["last_error"]["hint"] == errors.WINDOW_HINT
    assert len(fake_llm.requests) == 1


async def test_status_shows_the_number_and_its_quality_rating(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.quality_rating = "YELLOW"
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        entry = channel_status(gw, "whatsapp")
    assert entry["state"] == "running"
    assert entry["summary"] == (
        "+1 555-078-3881 (Chatgate Test) · quality YELLOW · webhook /whatsapp/webhook"
    )


async def test_a_failing_model_gets_a_visible_reply(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_llm.script(Fault.server_error(), Fault.server_error(), Fault.server_error())
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        await fake_wa.post(webhook_url(gw), fake_wa.message(USER, text="are you there?"))
        [sent] = await fake_wa.wait_sent(1, timeout=20)
    assert sent["type"] == "text" and sent["text"]["body"]


def test_app_secret_is_what_the_fake_signs_with() -> None:
    fake = FakeWhatsApp()
    assert fake.signature(b"{}") == fake.signature(b"{}", APP_SECRET)


async def test_oversized_and_unparsable_posts_are_refused_without_a_5xx(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    max_body_bytes: 2048\n"
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, channel=channel)) as gw:
        url = webhook_url(gw)
        big = fake_wa.message(USER, text="x" * 4000)
        too_big = await fake_wa.post(url, big)
        assert fake_wa._session is not None
        body = b"{not json"
        headers = {"X-Hub-Signature-256": fake_wa.signature(body)}
        async with fake_wa._session.post(url, data=body, headers=headers) as response:
            bad_json = response.status
        assert await gw.rt.journal.find("whatsapp", sender_id=USER) == []
    assert (too_big[0], bad_json) == (413, 400)
    assert fake_llm.requests == []
