"""`compact_json`: the compact encoder's text from one shared encoder."""

from __future__ import annotations

import json

import pytest

from chatgate.model.compact import compact_json

COMPACT = json.JSONEncoder(separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [{"outcome": "text", "message": {"blocks": [{"type": "text", "text": "hi", "markdown": True}]},
      "persist": [], "stopped": False, "ids": ["1", 2, 3.5, None]},
     'ä "q"\n\u2028\ud800', float("nan"), -0.0, 10**30, [], {}, {1: "int key", None: "none"},
     ("tuple", float("-inf"))],
)  # fmt: skip
def test_the_text_is_the_encoders(value: object) -> None:
    assert compact_json(value) == COMPACT.encode(value)


def test_what_json_cannot_hold_is_refused_as_by_the_encoder() -> None:
    with pytest.raises(TypeError):
        compact_json({"when": object()})
    assert compact_json({"later": 1}) == '{"later":1}'  # nothing left over from the failure
