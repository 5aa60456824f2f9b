"""Files in webhook payloads: a route maps a payload field to attachments, each either a URL
from a host the route allow-lists (no server-side request forgery: no other host, no redirect)
or base64 inside the signed body (bounded by the route's `max_body_bytes`)."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.download import stream_to_file
from chatgate.channels.webhook.config import WebhookAttachmentsConfig, WebhookRouteConfig
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason
from chatgate.policies.webhook_filter import resolve_field

URL, INLINE = "url", "base64"
DECODE_CHUNK = 64 * 1024  # characters of base64 (a multiple of 4) per decoded chunk


def payload_attachments(
    route: str, spec: WebhookAttachmentsConfig, event: Mapping[str, Any]
) -> tuple[Attachment, ...]:
    """The attachments the route's field names; entries that are neither kind are skipped."""
    value = resolve_field(event, spec.field)
    items = value if isinstance(value, list) else [value]
    found = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        name = str(item.get("name") or "") or None
        mime = str(item.get("mime") or "") or None
        if isinstance(item.get("url"), str):
            handle = f"{URL}:{route}:{item['url']}"
        elif isinstance(item.get("base64"), str):
            handle = f"{INLINE}:{route}:{item['base64']}"
        else:
            continue
        found.append(Attachment(_kind(mime), None, name, mime, None, handle))
    return tuple(found)


def host_allowed(url: str, spec: WebhookAttachmentsConfig) -> bool:
    parts = urlsplit(url)
    allowed = {h.lower() for h in spec.allow_hosts}
    return parts.scheme in ("http", "https") and (parts.hostname or "").lower() in allowed


async def fetch_payload_file(
    http: aiohttp.ClientSession,
    routes: Mapping[str, WebhookRouteConfig],
    attachment: Attachment,
    dest: Path,
    max_bytes: int,
) -> int:
    kind, _, rest = (attachment.handle or "").partition(":")
    route_name, _, value = rest.partition(":")
    route = routes.get(route_name)
    spec = route.attachments if route is not None else None
    if spec is None:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "route no longer takes files")
    if kind == INLINE:
        return await asyncio.to_thread(decode_to_file, value, dest, max_bytes)
    if kind != URL or not host_allowed(value, spec):
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "host not in the route's allow_hosts")
    return await stream_to_file(http, value, dest, max_bytes, redirects=False)


def decode_to_file(text: str, dest: Path, max_bytes: int) -> int:
    """Strict base64 decoded into ``dest`` a chunk at a time (never a second whole copy of the
    file in memory); refused past ``max_bytes`` before anything is written. Blocking."""
    size = len(text) // 4 * 3 - len(text[-2:]) + len(text[-2:].rstrip("="))
    if len(text) % 4:
        raise FetchError(MediaReason.CORRUPT, "invalid base64")
    if size > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{size} bytes")
    written = 0
    with dest.open("wb") as fh:
        for start in range(0, len(text), DECODE_CHUNK):
            try:
                chunk = base64.b64decode(text[start : start + DECODE_CHUNK], validate=True)
            except (binascii.Error, ValueError):
                raise FetchError(MediaReason.CORRUPT, "invalid base64") from None
            fh.write(chunk)
            written += len(chunk)
    return written


def _kind(mime: str | None) -> str:
    major = (mime or "").split("/")[0]
    return major if major in ("image", "audio", "video") else "document"
