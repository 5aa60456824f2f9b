"""What this process did but could not write, because the state store failed right after: kept
in memory so the re-run (the caller's retry, or the resume once the store is back) does not do
it again.

- Answers a turn got from the agent: the re-run sends that answer instead of asking the model
  again. Keyed by the batch's message keys and the warm transcript's length, so an answer is only
  reused when the re-run starts where the failed run left the session.
- Deliveries whose DONE mark failed: the resumed re-delivery records this outcome instead of
  sending the answer a second time."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from chatgate.agents.base import AgentReply
from chatgate.model.results import DeliveryReport

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


class UnrecordedDeliveries:
    def __init__(self, size: int = KEEP) -> None:
        self._size = size
        self._reports: OrderedDict[str, DeliveryReport] = OrderedDict()

    def keep(self, keys: Sequence[str], report: DeliveryReport) -> None:
        for key in keys:
            self._reports[key] = report
        while len(self._reports) > self._size:
            self._reports.popitem(last=False)

    def take(self, key: str) -> DeliveryReport | None:
        return self._reports.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._reports
