"""Platform-neutral outbound messages: model, channel limits, degradation, markdown, chunking.

Pure code: no I/O, no asyncio. Flow: agent reply → `OutboundMessage` → `adapt` to the channel's
`PresentationLimits` (+ `with_note` for the `DegradedDelivery` report) → native rendering →
`chunk_text` for long text.
"""

from chatgate.model.outbound import (
    Block,
    Button,
    Buttons,
    ButtonStyle,
    Chart,
    Context,
    Divider,
    File,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Series,
    Table,
    Text,
    message_from_dict,
    message_to_dict,
)
from chatgate.presentation.chunking import chunk_text, utf16_len
from chatgate.presentation.degrade import CallbackStore, DegradedDelivery, adapt, with_note
from chatgate.presentation.limits import PLAIN, PresentationLimits
from chatgate.presentation.markdown import markdown_to_html, markdown_to_plain
from chatgate.presentation.render import to_markdown

__all__ = [
    "PLAIN",
    "Block",
    "Button",
    "ButtonStyle",
    "Buttons",
    "CallbackStore",
    "Chart",
    "Context",
    "DegradedDelivery",
    "Divider",
    "File",
    "Image",
    "OutboundMessage",
    "PresentationLimits",
    "Select",
    "SelectOption",
    "Series",
    "Table",
    "Text",
    "adapt",
    "chunk_text",
    "markdown_to_html",
    "markdown_to_plain",
    "message_from_dict",
    "message_to_dict",
    "to_markdown",
    "utf16_len",
    "with_note",
]
