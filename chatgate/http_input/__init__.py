"""One rule for reading what a stranger sends to any HTTP surface the daemon serves.

Every route (webhooks, Telegram webhook mode, Slack Events, WhatsApp, web chat, the operator API)
reads its body, JSON and parameters through here, so a new surface gets the same limits and
the same 4xx answers for free: a bounded body (also when the sender compressed it), a charset
only from an allow-list, JSON within depth limits and storable as UTF-8, numeric parameters of
ASCII digits within bounds, and a missing parameter named in the answer.
"""

from chatgate.http_input.answers import BadInput, InputReason, refuse
from chatgate.http_input.body import read_body
from chatgate.http_input.json_body import MAX_JSON_DEPTH, json_depth, parse_json, read_json
from chatgate.http_input.params import bounded_int, required, utf8_clean

__all__ = [
    "MAX_JSON_DEPTH",
    "BadInput",
    "InputReason",
    "bounded_int",
    "json_depth",
    "parse_json",
    "read_body",
    "read_json",
    "refuse",
    "required",
    "utf8_clean",
]
