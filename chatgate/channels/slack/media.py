"""Slack files: ``url_private`` opens only with the bot token, so the token is sent to Slack's
own file hosts (or the configured API host) and nowhere else."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.download import stream_to_file
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason

FILE_HOST_SUFFIX = ".slack.com"


def token_host_ok(url: str, api_base: str) -> bool:
    """Whether ``url`` may receive the bot token: https on *.slack.com, or the API's own host."""
    target, api = urlsplit(url), urlsplit(api_base)
    if target.hostname is None:
        return False
    if target.scheme == "https" and target.hostname.endswith(FILE_HOST_SUFFIX):
        return True
    return (target.scheme, target.netloc) == (api.scheme, api.netloc)


async def fetch_file(
    http: aiohttp.ClientSession,
    token: str,
    api_base: str,
    attachment: Attachment,
    dest: Path,
    max_bytes: int,
) -> int:
    url = attachment.handle
    if not url:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "no url_private")
    if not token_host_ok(url, api_base):
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "file host is not Slack's")
    headers = {"Authorization": f"Bearer {token}"}
    return await stream_to_file(http, url, dest, max_bytes, headers=headers)
