"""HTTP agent: POSTs the turn as JSON to an external agent service."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from chatgate.agents.base import AgentError, AgentReply, Turn, recent, with_parts
from chatgate.agents.python_callable import coerce_reply
from chatgate.config.agent_models import HttpAgentConfig
from chatgate.config.base import secret_value
from chatgate.config.masking import masked, masker_for
from chatgate.model.outbound import File
from chatgate.model.reasons import FailureReason
from chatgate.policies.failure import parse_retry_after, reason_from_status


class HttpAgent:
    """Request: {session, text, messages, channel, sender_id, metadata}; reply: {"reply": str} or blocks."""

    def __init__(self, name: str, config: HttpAgentConfig) -> None:
        self.name = name
        self._config = config
        self._session: aiohttp.ClientSession | None = None
        headers = {k: v.get_secret_value() for k, v in config.headers.items()}
        key = secret_value(config.api_key)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers

    def _payload(self, turn: Turn) -> dict[str, Any]:
        """The request body: the turn, its history and every file of the turn with what
        became of it."""
        history = recent(turn.history, self._config.max_history)
        payload: dict[str, Any] = {
            "session": turn.session,
            "text": turn.text,
            "messages": [
                *(m.to_openai() for m in history),
                *(with_parts(m.to_openai(), turn.parts.get(m.source or "")) for m in turn.new),
            ],
            "system_prompt": self._config.system_prompt,
            "channel": turn.channel,
            "sender_id": turn.sender_id,
            "metadata": dict(turn.metadata),
        }
        media = [f for m in turn.new for f in (m.meta or {}).get("media") or ()]
        if media:
            payload["media"] = media
        return payload

    async def run(self, turn: Turn) -> AgentReply:
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers)
        payload = masked(self._payload(turn), masker_for(turn.secrets))  # no secret leaves
        timeout = aiohttp.ClientTimeout(total=self._config.timeout_s)
        if turn.before_model is not None:
            await turn.before_model()
        try:
            async with self._session.post(self._config.url, json=payload, timeout=timeout) as resp:
                if resp.status >= 400:
                    body = (await resp.text())[:200]
                    raise AgentError(
                        reason_from_status(resp.status, body),
                        f"agent service answered HTTP {resp.status}",
                        retry_after_s=parse_retry_after(
                            resp.headers.get("Retry-After"), time.time()
                        ),
                        provider=self.provider_id(),
                    )
                data = await resp.json(content_type=None)
        except TimeoutError:
            raise AgentError(
                FailureReason.TIMEOUT, "agent service timed out", provider=self.provider_id()
            ) from None
        except aiohttp.ClientConnectionError:
            raise AgentError(
                FailureReason.UNAVAILABLE, "agent service unreachable", provider=self.provider_id()
            ) from None
        except (aiohttp.ContentTypeError, ValueError):
            raise AgentError(
                FailureReason.FORMAT_ERROR,
                "agent service sent invalid JSON",
                provider=self.provider_id(),
            ) from None
        reply = coerce_reply(data)
        if reply.message is not None and any(
            isinstance(b, File) and b.path for b in reply.message.blocks
        ):
            raise AgentError(
                FailureReason.FORMAT_ERROR,
                "an http agent sends files as 'data_base64' or 'url', not a local 'path'",
                provider=self.provider_id(),
            )
        return reply

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        await asyncio.sleep(0)

    def provider_id(self) -> str | None:
        return f"http:{self._config.url}"
