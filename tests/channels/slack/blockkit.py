"""A Block Kit validator for rendered Slack messages: the fake's checks plus the element rules.

`slack_errors` lists why Slack (or a careful reading of its Block Kit reference) would refuse
one Rendered: the fake Slack's own `_block_errors` and 40,000-character text cap, then caps on
elements, options, labels and alt text, unique action ids and balanced code fences.
"""

from __future__ import annotations

from typing import Any

from chatgate.channels.base import Rendered
from chatgate.channels.slack.render import FORMAT, MAX_TEXT, render
from chatgate.model.outbound import OutboundMessage
from chatgate.presentation.markdown import closes_fence, parse_fence
from tests.fakes.slack import MAX_TEXT as SLACK_MAX_TEXT
from tests.fakes.slack import _block_errors


def open_fence(text: str) -> bool:
    """Whether a ``` block is left open at the end of `text`."""
    fence = None
    for line in text.split("\n"):
        if fence is None:
            fence = parse_fence(line)
        elif closes_fence(line, fence):
            fence = None
    return fence is not None


def _text_errors(where: str, text: Any, limit: int = MAX_TEXT) -> list[str]:
    if not isinstance(text, str) or not text.strip():
        return [f"{where}: empty text"]
    errors = [f"{where}: {len(text)} > {limit}"] if len(text) > limit else []
    return errors + ([f"{where}: unbalanced code fence"] if open_fence(text) else [])


def _plain_errors(where: str, obj: Any, limit: int) -> list[str]:
    if not isinstance(obj, dict) or obj.get("type") != "plain_text":
        return [f"{where}: not plain_text"]
    text = obj.get("text")
    ok = isinstance(text, str) and 0 < len(text) <= limit and text.strip()
    return [] if ok else [f"{where}: plain_text {text!r} not 1..{limit}"]


def _element_errors(where: str, element: dict[str, Any]) -> list[str]:
    kind = element.get("type")
    errors = [] if len(element.get("action_id", "")) <= 255 else [f"{where}: long action_id"]
    if kind == "button":
        errors += _plain_errors(f"{where}/text", element["text"], 75)
        if len(element.get("value", "")) > 2000:
            errors.append(f"{where}: value over 2000")
        if not str(element.get("url", "https://")).startswith(("http://", "https://")):
            errors.append(f"{where}: url {element['url']!r}")
        if element.get("style") not in (None, "primary", "danger"):
            errors.append(f"{where}: style {element['style']!r}")
        return errors
    if kind != "static_select":
        return [f"{where}: unexpected element {kind!r}"]
    errors += _plain_errors(f"{where}/placeholder", element["placeholder"], 150)
    options = element["options"]
    if not 0 < len(options) <= 100:
        errors.append(f"{where}: {len(options)} options")
    for k, option in enumerate(options):
        errors += _plain_errors(f"{where}/options/{k}", option["text"], 75)
        if not 0 < len(option["value"]) <= 150:
            errors.append(f"{where}/options/{k}: value length {len(option['value'])}")
    return errors


def _block_kit_errors(blocks: tuple[dict[str, Any], ...]) -> list[str]:
    """Block Kit rules beyond the fake's checks: element caps, alt text, unique action ids."""
    errors: list[str] = []
    action_ids: list[str] = []
    for i, block in enumerate(blocks):
        kind, where = block["type"], f"/blocks/{i}"
        if kind == "section":
            errors += _text_errors(where, block["text"]["text"])
        elif kind == "context":
            elements = block["elements"]
            if not 0 < len(elements) <= 10:
                errors.append(f"{where}: {len(elements)} context elements")
            errors += [e for el in elements for e in _text_errors(where, el["text"])]
        elif kind == "image":
            url, alt = block["image_url"], block["alt_text"]
            if not url.startswith(("http://", "https://")) or len(url) > 3000:
                errors.append(f"{where}: bad image_url")
            if not 0 < len(alt) <= 2000 or not alt.strip():
                errors.append(f"{where}: alt_text length {len(alt)}")
        elif kind == "actions":
            elements = block["elements"]
            if not 0 < len(elements) <= 25:
                errors.append(f"{where}: {len(elements)} elements")
            for j, element in enumerate(elements):
                errors += _element_errors(f"{where}/elements/{j}", element)
                action_ids.append(element["action_id"])
        elif kind != "divider":
            errors.append(f"{where}: unexpected block {kind!r}")
    if len(action_ids) != len(set(action_ids)):
        errors.append("duplicate action_id")
    return errors


def slack_errors(rendered: Rendered, limit: int = MAX_TEXT) -> list[str]:
    """Why Slack (or a careful reading of its Block Kit reference) would refuse this message."""
    blocks = rendered.native["blocks"]
    errors = _block_errors(list(blocks)) + _block_kit_errors(blocks)
    if rendered.format != FORMAT or not rendered.text.strip():
        errors.append("no fallback text")
    if len(rendered.text) > SLACK_MAX_TEXT:
        errors.append("msg_too_long")
    return errors + _text_errors("text", rendered.text, limit if not blocks else MAX_TEXT)


def check(parts: list[Rendered], limit: int = MAX_TEXT) -> list[Rendered]:
    """Assert every message is valid and only the first quotes the trigger; returns `parts`."""
    for part in parts:
        assert slack_errors(part, limit) == [], part
    assert [p.native["reply"] for p in parts] == [i == 0 for i in range(len(parts))]
    return parts


def blocks_of(message: OutboundMessage, **kwargs: Any) -> list[dict[str, Any]]:
    """Every block of the checked messages `message` renders to, in order."""
    return [b for part in check(render(message, **kwargs)) for b in part.native["blocks"]]
