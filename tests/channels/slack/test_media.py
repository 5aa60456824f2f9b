"""Slack files end to end: several files of one message are one turn, each fetched from
``url_private`` with the bot token (the fake refuses a download without it)."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.slack.adapter import SlackChannel
from chatgate.channels.slack.media import token_host_ok
from chatgate.model.messages import Attachment
from tests.channels.slack.support import events_url, slack_config
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running


async def test_two_files_in_one_message_are_one_turn_fetched_with_the_bot_token(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    notes = fake_slack.files.add("F1", b"milk\neggs\n", "text/plain", "list.txt")
    blob = fake_slack.files.add(
        "F2", b"\x00\x01binary\x02" * 50, "application/octet-stream", "x.bin"
    )
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        event = fake_slack.message_event(
            "what do I need?", channel="D1", subtype="file_share", files=[notes, blob]
        )
        assert (await fake_slack.post_event(events_url(gw), event))[0] == 200
        [post] = await fake_slack.wait_posts(1, timeout=30)
    assert fake_slack.files.downloads == ["F1", "F2"] and fake_slack.files.refused == 0
    [request] = fake_llm.requests
    text = str(request.last_user_text)
    assert text.startswith("what do I need?\n\n[document: list.txt]\nmilk\neggs")
    assert "[file received: x.bin, application/octet-stream" in text
    assert "x.bin: this file type can't be read" in post["text"]


def test_the_bot_token_goes_only_to_slack_file_hosts_or_the_api_host() -> None:
    api = "http://127.0.0.1:9/api/"
    assert token_host_ok("https://files.slack.com/files-pri/T1-F1/x.png", api)
    assert token_host_ok("http://127.0.0.1:9/files-pri/F1/x.png", api)
    assert not token_host_ok("http://files.slack.com/files-pri/F1/x.png", api)  # not https
    assert not token_host_ok("https://files.slack.com.evil.example/x.png", api)
    assert not token_host_ok("https://evil.example/x.png", api)
    assert not token_host_ok("http://127.0.0.1:10/x.png", api)


async def test_an_adapter_not_running_here_still_fetches_url_private_with_the_token(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    """As on a replica where another holds the Socket Mode connection: never started, the
    adapter fetches through its own files session (closed on stop)."""
    sheet = fake_slack.files.add("F3", b"a,b\n1,2\n", "text/csv", "t.csv")
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        standby = SlackChannel(gw.channels.channels["slack"].adapter.ctx)
        attachment = Attachment("document", None, "t.csv", "text/csv", 8, sheet["url_private"])
        try:
            size = await standby.fetch(attachment, tmp_path / "t.csv", 1024)
        finally:
            await standby.stop()
    assert size == 8 and (tmp_path / "t.csv").read_bytes() == b"a,b\n1,2\n"
    assert fake_slack.files.downloads == ["F3"] and fake_slack.files.refused == 0
