"""A signed webhook carrying a W3C `traceparent` continues the caller's trace."""

from __future__ import annotations

import json
import time
from pathlib import Path

from chatgate.channels.signatures import sign
from tests.fakes.otlp_receiver import OtlpReceiver
from tests.harness import http, running, url, write_config

SECRET = "whsec-trace-test-secret"
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


async def test_a_webhook_traceparent_continues_the_callers_trace(tmp_path: Path) -> None:
    body = json.dumps({"n": 7}).encode()
    async with OtlpReceiver() as receiver:
        config = write_config(
            tmp_path,
            f"""
telemetry: {{otlp_endpoint: {receiver.base_url}}}
channels:
  webhook:
    routes:
      gh:
        path: /hooks/gh
        secret: {SECRET}
        signature: github
        prompt: "event {{payload.n}}"
""",
        )
        async with running(config) as gw, http() as client:
            for delivery, traceparent in (
                ("d-1", f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"),
                ("d-2", None),
            ):
                headers = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery}
                headers.update(sign("github", SECRET, body, time.time()))
                if traceparent:
                    headers["traceparent"] = traceparent
                async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
                    assert resp.status == 200
    continued, fresh = receiver.named("webhook message")
    assert (continued.trace_id, continued.parent_id) == (CALLER_TRACE, CALLER_SPAN)
    assert fresh.trace_id != CALLER_TRACE and fresh.parent_id == ""
    assert continued.attributes["messaging.message.id"] == "gh:id-d-1"
