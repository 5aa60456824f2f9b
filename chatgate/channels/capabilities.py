"""What a channel can do (limits, edits, reactions, threads, acknowledgement); presentation and
the pipeline adapt to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Flag, auto
from typing import Any

from chatgate.presentation.limits import PresentationLimits


class AckMode(Flag):
    """How a channel shows a turn is under way (both, either or neither)."""

    NONE = 0
    TYPING = auto()  # the platform's typing indicator, refreshed every `typing_every_s`
    REACTION = auto()  # `acknowledge()` at the start of a turn, `acknowledge_done()` at its end


@dataclass(frozen=True)
class Capabilities:
    """What a channel can do; presentation and the pipeline adapt to it."""

    limits: PresentationLimits
    length: Callable[[str], int] = len
    edits: bool = False
    reactions: bool = False
    threads: bool = False
    ack: AckMode = AckMode.NONE
    typing_every_s: float = 4.0
    stream: bool = False  # stream answers by editing a draft (needs `edits`)
    min_edit_interval_s: float = 1.0

    @property
    def typing(self) -> bool:
        return AckMode.TYPING in self.ack


def chat_capabilities(
    config: Any,
    limits: PresentationLimits,
    *,
    length: Callable[[str], int] = len,
    typing_every_s: float = 4.0,
) -> Capabilities:
    """A chat platform with edits, reactions and threads: typing while a turn runs, a reaction
    ack when `config.ack_reaction` is set, streaming as `config.stream` says."""
    ack = AckMode.TYPING | (AckMode.REACTION if config.ack_reaction else AckMode.NONE)
    return Capabilities(
        limits=limits,
        length=length,
        edits=True,
        reactions=True,
        threads=True,
        ack=ack,
        typing_every_s=typing_every_s,
        stream=config.stream.enabled,
        min_edit_interval_s=config.stream.min_edit_interval_s,
    )
