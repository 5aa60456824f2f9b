"""The turn side of the message path: a per-turn record carried through named steps
(`steps.py`), run by `TurnRunner` (`runner.py`)."""

from chatgate.gateway.turn.runner import TurnRunner

__all__ = ["TurnRunner"]
