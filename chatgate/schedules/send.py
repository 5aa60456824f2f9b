"""`POST /api/send`: an operator's or a script's message to any chat, without an agent.

Bearer token (the /api middleware: a call that changes something always needs one), audited (one
log line per send with the target, the caller's address and the outcome; a metric by status),
rate-limited (one bucket for the whole API: a runaway script cannot flood a chat), and sent
through the gateway's delivery: retries, dead targets and the DLQ as for any reply. Delivered
means the platform returned a message id.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from prometheus_client import Counter

from chatgate.feature.context import FeatureContext
from chatgate.http_input import BadInput, read_json
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus
from chatgate.policies.ratelimit import BucketSpec, BucketState, take

log = logging.getLogger("chatgate.send")
SEND_BUCKET = BucketSpec(rate_per_s=1.0, burst=30)
MAX_TEXT = 20_000
MAX_BODY = 128 * 1024  # the text's limit in UTF-8 with JSON escapes
RATE_LIMITED = "send_rate_limited"


class SendApi:
    def __init__(self, context: FeatureContext) -> None:
        self.context = context
        self._bucket: BucketState | None = None
        self.sends = Counter(
            "chatgate_operator_sends_total",
            "Messages sent through /api/send, by delivery status",
            ["status"],
            registry=context.metrics,
        )

    async def handle(self, request: web.Request) -> web.Response:
        try:
            body = await read_json(request, MAX_BODY)
        except BadInput as bad:
            return bad.answer()
        problem, target, text = _parse(body, self.context.loaded.channels)
        if problem is not None or target is None:
            return web.json_response(
                {"error": problem, "reason_code": "invalid_request"}, status=400
            )
        allowed, self._bucket, retry_after = take(
            SEND_BUCKET, self._bucket, self.context.clock.monotonic()
        )
        if not allowed:
            self.sends.labels(status=RATE_LIMITED).inc()
            return web.json_response(
                {
                    "error": "too many sends",
                    "reason_code": RATE_LIMITED,
                    "retry_after_s": retry_after,
                },
                status=429,
                headers={"Retry-After": str(max(1, round(retry_after)))},
            )
        report = await self.context.deliver(target, OutboundMessage.from_text(text))
        delivered = report.status is DeliveryStatus.SENT and bool(report.message_ids)
        self.sends.labels(status=report.status.value).inc()
        log.info(
            "operator send",
            extra={
                "target": target.address,
                "chars": len(text),
                "peer": request.remote,
                "status": report.status.value,
                "message_ids": report.message_ids,
            },
        )
        answer: dict[str, Any] = {
            "delivered": delivered,
            "status": report.status.value,
            "message_ids": report.message_ids,
            "target": target.address,
        }
        if not delivered:
            answer["reason_code"] = report.kind.value if report.kind else report.status.value
            answer["error"] = report.error[:200] or "not delivered (see chatgate dlq list)"
        return web.json_response(answer, status=200 if delivered else 502)


def _parse(body: Any, channels: Any) -> tuple[str | None, Target | None, str]:
    if not isinstance(body, dict) or not isinstance(body.get("to"), str):
        return "JSON body needs to (channel:chat_id[:thread_id]) and text", None, ""
    text = body.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        return f"text must be 1–{MAX_TEXT} characters", None, ""
    try:
        target = Target.parse(body["to"])
    except ValueError as exc:
        return str(exc), None, ""
    if target.channel not in channels:
        return f"channel '{target.channel}' is not configured", None, ""
    return None, target, text
