"""`chatgate people show|export|erase CHANNEL:USER` and `/api/people/…`: the privacy requests as
operator actions, plus the audit trail the dashboard shows.

The actions are declared by `people_actions(desk)`; the CLI builds its parsers from
`people_actions(None)` (the handlers run in the daemon only: the channels' and features' stores
live there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatgate.http_input import BadInput, InputReason
from chatgate.operator.actions import (
    Action,
    AnyAction,
    Command,
    DashboardPart,
    Download,
    Route,
    arg,
)
from chatgate.operator.context import CALLER, NeedsDaemon, OperatorContext
from chatgate.people.desk import PrivacyDesk, Shown
from chatgate.state.personal import AuditRecord, Erased, Footprint, Person

GROUP_HELP = {"people": "privacy requests: what is stored about a person; export, erase"}
AUDIT_SHOWN = 20
SLOW_S = 600.0  # an export reads every store, an erase compacts the database
ARCHIVE_TYPE = "application/gzip"


def archive_name(person: str) -> str:
    return "chatgate-person-" + re.sub(r"[^A-Za-z0-9._-]", "_", person) + ".tar.gz"


@dataclass(frozen=True)
class PersonArgs:
    person: str = arg(help="CHANNEL:USER (the sender id the journal shows)")

    def problem(self) -> str | None:
        try:
            Person.parse(self.person)
        except ValueError as exc:
            return str(exc)
        return None


@dataclass(frozen=True)
class ExportArgs(PersonArgs):
    out: str | None = arg(
        None, cli="option", help="archive file (default: chatgate-person-….tar.gz)"
    )

    def problem(self) -> str | None:
        """The CLI refuses an existing archive before asking (the daemon ignores ``out``)."""
        if self.out is not None and os.path.lexists(self.out):
            return f"{self.out} exists; give another --out"
        return super().problem()


@dataclass(frozen=True)
class AuditArgs:
    limit: int = arg(AUDIT_SHOWN, cli="option", help="most records shown", low=1, high=10_000)


@dataclass(frozen=True)
class PersonShown:
    footprint: Footprint
    stores: Mapping[str, Any]

    @classmethod
    def of(cls, shown: Shown, *, records: bool) -> PersonShown:
        stores: dict[str, Any] = {}
        for part in shown.found:
            entry: dict[str, Any] = {"count": part.count}
            if records:
                entry["records"] = list(part.records)
                entry["files"] = [p.name for p in part.files]
            stores[part.store] = entry
        return cls(shown.footprint, stores)

    def to_json(self) -> dict[str, Any]:
        return {"footprint": self.footprint.to_json(), "stores": dict(self.stores)}


@dataclass(frozen=True)
class PersonErased:
    footprint: Footprint
    erased: tuple[Erased, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "footprint": self.footprint.to_json(),
            "erased": [e.to_json() for e in self.erased],
        }


@dataclass(frozen=True)
class PrivacyAudit:
    records: tuple[AuditRecord, ...]

    def to_json(self) -> dict[str, Any]:
        return {"records": [r.to_json() for r in self.records]}


def _person(args: PersonArgs) -> Person:
    try:
        return Person.parse(args.person)
    except ValueError as exc:
        raise BadInput(400, InputReason.BAD_PARAMETER, str(exc)) from None


def _desk(desk: PrivacyDesk | None) -> PrivacyDesk:
    if desk is None:
        raise NeedsDaemon("privacy requests need the running daemon")
    return desk


def people_actions(desk: PrivacyDesk | None) -> tuple[AnyAction, ...]:
    """The privacy actions, their handlers over ``desk`` (None: declarations for the CLI)."""

    async def show(ctx: OperatorContext, args: PersonArgs) -> PersonShown:
        shown = await _desk(desk).show(_person(args), CALLER.get())
        return PersonShown.of(shown, records=True)

    async def export(ctx: OperatorContext, args: ExportArgs) -> Download:
        person = _person(args)
        chunks, shown = await _desk(desk).export(person, CALLER.get())
        stores = {part.store: {"count": part.count} for part in shown.found}
        summary = {"person": person.address, "stores": stores}
        return Download(archive_name(person.address), ARCHIVE_TYPE, summary, chunks)

    async def erase(ctx: OperatorContext, args: PersonArgs) -> PersonErased:
        footprint, done = await _desk(desk).erase(_person(args), CALLER.get())
        return PersonErased(footprint, tuple(done))

    async def audit(ctx: OperatorContext, args: AuditArgs) -> PrivacyAudit:
        return PrivacyAudit(tuple(await _desk(desk).audit_log(args.limit)))

    return (
        Action(
            "people_show", PersonArgs, PersonShown, show,
            Route("GET", "/api/people/show"),
            Command("people", "show", help="everything stored about one person", json_flag=True,
                    offline=False, timeout_s=SLOW_S),
        ),
        Action(
            "people_export", ExportArgs, Download, export,
            Route("POST", "/api/people/export", download=True),
            Command("people", "export", help="write one archive of a person's data",
                    offline=False, timeout_s=SLOW_S),
        ),
        Action(
            "people_erase", PersonArgs, PersonErased, erase,
            Route("POST", "/api/people/erase"),
            Command("people", "erase", help="remove a person's data (tombstones kept for dedupe)",
                    json_flag=True, offline=False, timeout_s=SLOW_S),
        ),
        Action(
            "people_audit", AuditArgs, PrivacyAudit, audit,
            Route("GET", "/api/people/audit"),
            Command("people", "audit", help="the privacy requests answered", json_flag=True,
                    offline=False, timeout_s=SLOW_S),
            DashboardPart("privacy", {"limit": AUDIT_SHOWN}, empty=PrivacyAudit(())),
        ),
    )  # fmt: skip
