"""Tool effects and tainted turns: which tools change things, and when untrusted content in a
turn's context means a person must approve them.

A tool is ``read`` or ``write``: the operator's ``effects`` globs decide first, then the MCP
annotations (``readOnlyHint`` without ``destructiveHint`` is ``read``); anything unknown is
``write``. A turn is tainted once untrusted content enters its context; in a tainted turn a
``write`` tool configured ``auto`` is asked for instead. Pure functions over plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any

from chatgate.model.reasons import MediaReason, TaintSource
from chatgate.policies.tools import Approval

TAINT_META = "taint"  # ChatMessage.meta key: the TaintSource of an untrusted transcript line
UNTRUSTED_EXTRA = "untrusted"  # InboundMessage.extra key: a body from a route marked untrusted


class Effect(StrEnum):
    """What a tool may do to the world."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class ToolHints:
    """The MCP tool annotations chatgate reads (None: the server did not say)."""

    read_only: bool | None = None
    destructive: bool | None = None
    open_world: bool | None = None

    @classmethod
    def from_annotations(cls, annotations: Any) -> ToolHints:
        """From an MCP ``ToolAnnotations`` (or a mapping in its wire form, or None)."""
        if annotations is None:
            return cls()

        def hint(attr: str, wire: str) -> bool | None:
            if isinstance(annotations, Mapping):
                value = annotations.get(wire, annotations.get(attr))
            else:
                value = getattr(annotations, attr, getattr(annotations, wire, None))
            return value if isinstance(value, bool) else None

        return cls(
            hint("read_only_hint", "readOnlyHint"),
            hint("destructive_hint", "destructiveHint"),
            hint("open_world_hint", "openWorldHint"),
        )


def effect_of(name: str, hints: ToolHints, overrides: Iterable[tuple[str, Effect]]) -> Effect:
    """The effect class of tool ``name``: the first matching override glob, else the server's
    annotations, else ``write``."""
    for pattern, effect in overrides:
        if fnmatchcase(name, pattern):
            return effect
    if hints.read_only is True and hints.destructive is not True:
        return Effect.READ
    return Effect.WRITE


def untrusted_output(name: str, hints: ToolHints, globs: Sequence[str]) -> bool:
    """Whether the result of tool ``name`` taints the turn: it matches an ``untrusted_output``
    glob, or its server says it reaches an open world (web fetch, mail, file readers)."""
    return hints.open_world is True or any(fnmatchcase(name, pattern) for pattern in globs)


def guarded(approval: Approval, effect: Effect, taint: Sequence[str]) -> Approval:
    """The approval a call gets: ``auto`` becomes ``ask`` for a write tool in a tainted turn."""
    if approval is Approval.AUTO and effect is Effect.WRITE and taint:
        return Approval.ASK
    return approval


def escalated(approval: Approval, effect: Effect, taint: Sequence[str]) -> bool:
    """Whether the taint is what makes this call need approval."""
    return guarded(approval, effect, taint) is not approval


def history_taint(metas: Iterable[Mapping[str, Any] | None]) -> tuple[str, ...]:
    """The taint sources of the transcript lines a model request carries (in order, once):
    lines marked untrusted, and lines holding a document's text."""
    found: dict[str, None] = {}
    for meta in metas:
        meta = meta or {}
        source = meta.get(TAINT_META)
        if isinstance(source, str) and source in TaintSource._value2member_map_:
            found[source] = None
        media = meta.get("media")
        if isinstance(media, list) and any(_document(m) for m in media):
            found[TaintSource.DOCUMENT.value] = None
    return tuple(found)


def _document(outcome: Any) -> bool:
    return isinstance(outcome, Mapping) and outcome.get("reason") == MediaReason.DOCUMENT_TEXT


def taint_label(source: TaintSource, detail: str = "") -> str:
    """How a taint source is shown (`why`, the refusal): ``tool_output:web.fetch``."""
    return f"{source.value}:{detail}" if detail else source.value


def refusal(name: str, taint: Sequence[str]) -> str:
    """What the model is told when a write tool of a tainted turn has nobody to approve it."""
    return (
        f"error: the tool {name!r} can change things and this turn holds untrusted content "
        f"({', '.join(taint)}); it needs a person's approval and nobody can approve here, "
        "so it did not run. Do not retry it; tell the user what you wanted to do instead."
    )
