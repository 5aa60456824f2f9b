"""`compact_json` and `standard_json`: the encoders' texts from shared encoders."""

from __future__ import annotations

import json

import pytest

from chatgate.model.compact import compact_json, standard_json

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
    assert standard_json(value) == json.dumps(value)  # a webhook's sync answer


def test_what_json_cannot_hold_is_refused_as_by_the_encoder() -> None:
    with pytest.raises(TypeError):
        compact_json({"when": object()})
    assert compact_json({"later": 1}) == '{"later":1}'  # nothing left over from the failure


def test_standard_json_refuses_what_json_dumps_refuses() -> None:
    with pytest.raises(TypeError):
        standard_json({"when": object()})
    assert standard_json({"later": [1, "a"]}) == '{"later": [1, "a"]}'
