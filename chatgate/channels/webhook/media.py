"""Files in webhook payloads: a route maps a payload field to attachments, each either a URL
from a host the route allow-lists (no server-side request forgery: no other host, no redirect)
or base64 inside the signed body (bounded by the route's `max_body_bytes`)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.base import FetchError
from chatgate.channels.download import stream_to_file, write_bytes
from chatgate.channels.types import Attachment
from chatgate.channels.webhook.config import WebhookAttachmentsConfig, WebhookRouteConfig
from chatgate.policies.media import MediaReason
from chatgate.policies.webhook_filter import resolve_field

URL, INLINE = "url", "base64"


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
        try:
            data = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise FetchError(MediaReason.CORRUPT, "invalid base64") from None
        if len(data) > max_bytes:
            raise FetchError(MediaReason.TOO_LARGE, f"{len(data)} bytes")
        return await write_bytes(dest, data)
    if kind != URL or not host_allowed(value, spec):
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "host not in the route's allow_hosts")
    return await stream_to_file(http, value, dest, max_bytes, redirects=False)


def _kind(mime: str | None) -> str:
    major = (mime or "").split("/")[0]
    return major if major in ("image", "audio", "video") else "document"
