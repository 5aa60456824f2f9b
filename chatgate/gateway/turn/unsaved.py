"""Answers a turn got from the agent but could not write (the state store failed right after):
kept in this process so the turn's re-run (the caller's retry, or the resume once the store is
back) sends that answer instead of asking the model again. Keyed by the batch's message keys and
the warm transcript's length, so an answer is only reused when the re-run starts where the failed
run left the session."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from chatgate.agents.base import AgentReply

KEEP = 256  # turns; the oldest go first (a store outage long enough to fill this is rare)


class UnsavedAnswers:
    def __init__(self, size: int = KEEP) -> None:
        self._size = size
        self._answers: OrderedDict[tuple[tuple[str, ...], int], AgentReply] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    def keep(self, keys: Sequence[str], history_len: int, reply: AgentReply) -> None:
        self._answers[(tuple(keys), history_len)] = reply
        while len(self._answers) > self._size:
            self._answers.popitem(last=False)

    def take(self, keys: Sequence[str], history_len: int) -> AgentReply | None:
        return self._answers.pop((tuple(keys), history_len), None)
