"""The built-in operator actions: DLQ, pairing, sessions, `why` and the turn statistics.

Adding one: an arguments dataclass in `arguments.py` (its fields are the API parameters and the
CLI arguments), a result in `results.py`, a handler taking an `OperatorContext`, and an `Action`
in `BUILTIN`.
"""

from __future__ import annotations

from chatgate.operator import over_state as run
from chatgate.operator.actions import (
    Action,
    AnyAction,
    Command,
    DashboardPart,
    Route,
)
from chatgate.operator.arguments import (
    DlqListArgs,
    EntryArgs,
    NoArgs,
    PairingCodeArgs,
    RevokeArgs,
    SessionArgs,
    WhyArgs,
)
from chatgate.operator.results import (
    DlqDrop,
    DlqList,
    DlqReplay,
    Found,
    PairingApproval,
    PairingList,
    SessionReset,
    SessionShow,
    SessionsList,
    Trails,
    TurnStats,
)

DASHBOARD_DLQ_SHOWN = 50
# What each CLI command group is for (`chatgate --help`).
GROUP_HELP = {
    "dlq": "undelivered replies",
    "pairing": "approve unknown users",
    "sessions": "conversation transcripts",
}


DLQ_LIST = Action(
    "dlq_list", DlqListArgs, DlqList, run.dlq_list,
    Route("GET", "/api/dlq"),
    Command("dlq", "list", json_flag=True),
    DashboardPart("dlq", {"limit": DASHBOARD_DLQ_SHOWN}, empty=DlqList(())),
)  # fmt: skip
DLQ_REPLAY = Action(
    "dlq_replay", EntryArgs, DlqReplay, run.dlq_replay,
    Route("POST", "/api/dlq/{id}/replay", not_found_404=True),
    Command("dlq", "replay", offline=False),
)  # fmt: skip
DLQ_DROP = Action(
    "dlq_drop", EntryArgs, DlqDrop, run.dlq_drop,
    Route("DELETE", "/api/dlq/{id}", not_found_404=True),
    Command("dlq", "drop"),
)  # fmt: skip
PAIRING_LIST = Action(
    "pairing_list", NoArgs, PairingList, run.pairing_list,
    Route("GET", "/api/pairing"),
    Command("pairing", "list", json_flag=True),
    DashboardPart("pairing", empty=PairingList((), ())),
)  # fmt: skip
PAIRING_APPROVE = Action(
    "pairing_approve", PairingCodeArgs, PairingApproval, run.pairing_approve,
    Route("POST", "/api/pairing/approve"),
    Command("pairing", "approve"),
)  # fmt: skip
PAIRING_DENY = Action(
    "pairing_deny", PairingCodeArgs, Found, run.pairing_deny,
    Route("POST", "/api/pairing/deny", not_found_404=True),
    Command("pairing", "deny"),
)  # fmt: skip
PAIRING_REVOKE = Action(
    "pairing_revoke", RevokeArgs, Found, run.pairing_revoke,
    Route("POST", "/api/pairing/revoke", not_found_404=True),
    Command("pairing", "revoke"),
)  # fmt: skip
SESSIONS_LIST = Action(
    "sessions_list", NoArgs, SessionsList, run.sessions_list,
    Route("GET", "/api/sessions"),
    Command("sessions", "list", json_flag=True),
)  # fmt: skip
SESSION_SHOW = Action(
    "session_show", SessionArgs, SessionShow, run.session_show,
    Route("GET", "/api/sessions/show", not_found_404=True),
    Command("sessions", "show", help="print a transcript"),
)  # fmt: skip
SESSION_RESET = Action(
    "session_reset", SessionArgs, SessionReset, run.session_reset,
    Route("POST", "/api/sessions/reset"),
    Command("sessions", "reset", help="start a session over"),
)  # fmt: skip
WHY = Action(
    "why", WhyArgs, Trails, run.why,
    Route("GET", "/api/why"),
    Command("why", help="why did (or didn't) the bot answer a message?", json_flag=True),
)  # fmt: skip
TURN_STATS = Action(
    "turn_stats", NoArgs, TurnStats, run.turn_stats,
    Route("GET", "/api/stats"),
    dashboard=DashboardPart("stats"),
)  # fmt: skip

BUILTIN: tuple[AnyAction, ...] = (
    DLQ_LIST, DLQ_REPLAY, DLQ_DROP,
    PAIRING_LIST, PAIRING_APPROVE, PAIRING_DENY, PAIRING_REVOKE,
    SESSIONS_LIST, SESSION_SHOW, SESSION_RESET,
    WHY, TURN_STATS,
)  # fmt: skip
