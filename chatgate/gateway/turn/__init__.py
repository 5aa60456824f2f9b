"""The turn side of the message path: a per-turn record carried through named steps
(`steps.py`), run by `TurnRunner` (`runner.py`); the warm-session cache it reads."""
