"""Files in rendered replies: the text renders as before, each file becomes an upload chunk.

Delivery fills in the stored bytes (`native["data"]`) just before an upload chunk is sent, so a
renderer never reads files and a chunk list stays cheap to build.
"""

from __future__ import annotations

from collections.abc import Callable

from chatgate.channels.base import Rendered
from chatgate.model.outbound import File, OutboundMessage

FILE_KEY = "file"
DATA_KEY = "data"


def render_with_files(
    message: OutboundMessage, render_text: Callable[[OutboundMessage], list[Rendered]]
) -> list[Rendered]:
    """`render_text` of the message without its files, then one upload chunk per file."""
    files = [b for b in message.blocks if isinstance(b, File)]
    if not files:
        return render_text(message)
    rest = OutboundMessage(tuple(b for b in message.blocks if not isinstance(b, File)))
    chunks = render_text(rest) if rest.blocks else []
    return [*chunks, *(Rendered(f.caption, None, {FILE_KEY: f}) for f in files)]


def upload_of(rendered: Rendered) -> tuple[File, bytes] | None:
    """The file and its bytes when `rendered` is an upload chunk (bytes filled in by delivery)."""
    file = rendered.native.get(FILE_KEY)
    if not isinstance(file, File):
        return None
    data = rendered.native.get(DATA_KEY)
    return file, data if isinstance(data, bytes) else b""
