"""Delivery in the message's trace on a platform other than Telegram (real slack_sdk ↔ fake
Slack, OTLP/HTTP to a receiver on 127.0.0.1): one `slack <method>` span per Web API call, a
retry as an event, a dead-lettered reply as an error."""

from __future__ import annotations

from pathlib import Path

from tests.channels.slack.support import events_url, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.fakes.slack import FakeSlack
from tests.harness import running

ERROR = 2  # STATUS_CODE_ERROR


def _trace(receiver: OtlpReceiver) -> list[ReceivedSpan]:
    [root] = receiver.named("slack message")
    return [s for s in receiver.spans if s.trace_id == root.trace_id]


async def test_a_retried_send_is_two_api_spans_and_a_retry_event(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.rate_limit("chat.postMessage", retry_after=1)
    async with OtlpReceiver() as receiver:
        telemetry = f"telemetry: {{otlp_endpoint: {receiver.base_url}}}\n"
        async with running(slack_config(tmp_path, fake_slack, fake_llm, gateway=telemetry)) as gw:
            event = fake_slack.message_event("hi", channel="D1")
            await fake_slack.post_event(events_url(gw), event)
            await fake_slack.wait_posts(1, timeout=90)
    trace = _trace(receiver)
    posts = [s for s in trace if s.name == "slack chat.postMessage"]
    assert [p.status == ERROR for p in posts] == [True, False]  # 429, then delivered
    assert all(p.kind == 3 for p in posts)  # SPAN_KIND_CLIENT
    [turn] = [s for s in trace if s.name == "chatgate.turn"]
    assert {p.parent_id for p in posts} == {turn.span_id}
    retries = [attrs for name, attrs in turn.events if name == "chatgate.send_retry"]
    assert [r["kind"] for r in retries] == ["rate_limited"]
    assert turn.status != ERROR


async def test_a_dead_lettered_reply_marks_the_delivery_an_error(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.fail("chat.postMessage", "channel_not_found", times=10)
    async with OtlpReceiver() as receiver:
        telemetry = f"telemetry: {{otlp_endpoint: {receiver.base_url}}}\n"
        async with running(slack_config(tmp_path, fake_slack, fake_llm, gateway=telemetry)) as gw:
            event = fake_slack.app_mention_event("anyone?")
            await fake_slack.post_event(events_url(gw), event)
            await settled(gw, f"slack:C1:{event['ts']}", timeout=90)
    trace = _trace(receiver)
    [post] = [s for s in trace if s.name == "slack chat.postMessage"]
    [turn] = [s for s in trace if s.name == "chatgate.turn"]
    assert post.status == ERROR
    assert turn.status == ERROR and turn.attributes["error.type"]
