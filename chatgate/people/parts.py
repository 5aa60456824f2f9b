"""A person's data in the stores every backend offers through the state protocols: dead letters,
pairing records, chat pauses, dead targets, and the files replies to them carry."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chatgate.media.outgoing import OutgoingFiles, refs_in
from chatgate.state.factory import State
from chatgate.state.personal import Erased, Footprint, Found, PersonalData
from chatgate.state.records import DeadLetter

DLQ_SCAN = 100_000  # the DLQ is read whole (it is bounded by operators dropping entries)


def _theirs(entry: DeadLetter, footprint: Footprint) -> bool:
    target = entry.target
    return (
        entry.inbound_key in footprint.keys
        or entry.session in footprint.own_sessions
        or footprint.owns_chat(target.channel, target.chat_id)
    )


class DeadLetters:
    name = "dead_letters"

    def __init__(self, state: State) -> None:
        self.state = state

    async def _theirs(self, footprint: Footprint) -> list[DeadLetter]:
        entries = await self.state.dead_letters.list(DLQ_SCAN)
        return [e for e in entries if _theirs(e, footprint)]

    async def collect(self, footprint: Footprint) -> Found:
        found = await self._theirs(footprint)
        records = [{**e.to_dict(), "message": e.message} for e in found]
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for entry in await self._theirs(footprint):
            removed += await self.state.dead_letters.drop(entry.id)
        return Erased(self.name, removed=removed)


class Pairing:
    """Their pending code and their approval (after an erase they pair again)."""

    name = "pairing"

    def __init__(self, state: State) -> None:
        self.state = state

    async def collect(self, footprint: Footprint) -> Found:
        person, now = footprint.person, 0.0
        pending = [
            p.to_dict()
            for p in await self.state.pairing.pending(now)
            if p.channel == person.channel and p.sender_id == person.user
        ]
        approved = [
            a.to_dict()
            for a in await self.state.pairing.approved(person.channel)
            if a.sender_id == person.user
        ]
        return Found(self.name, tuple(pending + approved))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        person, removed = footprint.person, 0
        for p in await self.state.pairing.pending(0.0):
            if p.channel == person.channel and p.sender_id == person.user:
                removed += await self.state.pairing.deny(p.channel, p.code)
        removed += await self.state.pairing.revoke(person.channel, person.user)
        return Erased(self.name, removed=removed)


class ChatMarks:
    """Pauses of their direct chats and the dead-target marks of those chats."""

    name = "chat_marks"

    def __init__(self, state: State) -> None:
        self.state = state

    async def collect(self, footprint: Footprint) -> Found:
        records: list[dict[str, Any]] = [
            {"pause": p.to_dict()}
            for p in await self.state.pauses.all()
            if _chat_of(p.chat) in footprint.chats
        ]
        dead = await self.state.dead_targets.all()
        records += [
            {"dead_target": address, "kind": kind}
            for address, kind in dead.items()
            if _chat_of(address) in footprint.chats
        ]
        return Found(self.name, tuple(records))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for pause in await self.state.pauses.all():
            if _chat_of(pause.chat) in footprint.chats:
                removed += await self.state.pauses.delete(pause.chat)
        for address in await self.state.dead_targets.all():
            if _chat_of(address) in footprint.chats:
                removed += await self.state.dead_targets.revive(address)
        return Erased(self.name, removed=removed)


def _chat_of(address: str) -> str:
    """``channel:chat_id`` of a chat address that may name a thread (``channel:chat:thread``)."""
    channel, _, rest = address.partition(":")
    return f"{channel}:{rest.partition(':')[0]}"


class ReplyFiles:
    """The files replies to them carry (outgoing store), found through the journal's stored
    answers and their dead letters; exported as they are."""

    name = "outgoing_files"

    def __init__(self, state: State, files: OutgoingFiles) -> None:
        self.state, self.files = state, files

    async def _refs(self, footprint: Footprint) -> list[str]:
        refs: list[str] = []
        for key in sorted(footprint.keys):
            entry = await self.state.journal.get(key)
            if entry is not None and entry.reply:
                refs += refs_in(entry.reply)
        for letter in await self.state.dead_letters.list(DLQ_SCAN):
            if _theirs(letter, footprint):
                refs += refs_in(letter.message)
        return list(dict.fromkeys(refs))

    async def _present(self, footprint: Footprint) -> list[Path]:
        paths = [self.files.path_of(r) for r in await self._refs(footprint)]
        return await asyncio.to_thread(lambda: [p for p in paths if p.is_file()])

    async def collect(self, footprint: Footprint) -> Found:
        return Found(self.name, files=tuple(await self._present(footprint)))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        present = await self._present(footprint)
        await self.files.discard_refs([p.name for p in present])
        return Erased(self.name, removed=len(present))


class SpilledLines:
    """Transcript lines the session store refused, kept in the spill file for the operator."""

    name = "spilled_transcripts"

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def _theirs(record: dict[str, Any], footprint: Footprint) -> list[dict[str, Any]]:
        if record.get("session") in footprint.own_sessions:
            return list(record.get("messages") or [])
        return [m for m in record.get("messages") or [] if m.get("source") in footprint.keys]

    def _read(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return []
        records = []
        for line in text.splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # a torn last line: left out
        return records

    async def collect(self, footprint: Footprint) -> Found:
        records = await asyncio.to_thread(self._read)
        found = [
            {"session": r.get("session"), "at": r.get("at"), "message": m}
            for r in records
            for m in self._theirs(r, footprint)
        ]
        return Found(self.name, tuple(found))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        return Erased(self.name, removed=await asyncio.to_thread(self._rewrite, footprint))

    def _rewrite(self, footprint: Footprint) -> int:
        records, removed, kept = self._read(), 0, []
        for record in records:
            theirs = self._theirs(record, footprint)
            removed += len(theirs)
            rest = [m for m in record.get("messages") or [] if m not in theirs]
            if rest:
                kept.append({**record, "messages": rest})
        if removed:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8")
            os.replace(tmp, self.path)
        return removed


def protocol_parts(
    state: State, files: OutgoingFiles | None, spill: Path | None = None
) -> Sequence[PersonalData]:
    """The parts over the state protocols (the files first: they are found through the
    journal and the DLQ, which the later parts erase) and the spill file."""
    parts: list[PersonalData] = [] if files is None else [ReplyFiles(state, files)]
    parts += [DeadLetters(state), Pairing(state), ChatMarks(state)]
    return parts if spill is None else [*parts, SpilledLines(spill)]
