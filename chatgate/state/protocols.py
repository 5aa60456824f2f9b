"""The state a gateway keeps, as protocols: one implementation per backend (SQLite, Redis).

The runtime, the operator API and the CLI only see these; `factory.build_state` picks the
implementations from `gateway.store.backend` and `gateway.turn_lock.backend`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from chatgate.model.chat import ChatMessage
from chatgate.model.frozen import record
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.reasons import SendErrorKind
from chatgate.policies.pairing import ApprovalDecision, IssueDecision
from chatgate.policies.takeover import Pause
from chatgate.state.records import (
    Approved,
    DeadLetter,
    JournalEntry,
    JournalMark,
    LeaseToken,
    PendingRequest,
    SessionInfo,
    StoredSession,
    TranscriptLine,
)


class Journal(Protocol):
    """Durable ingress journal with dedupe and each message's decision trail.

    A message is recorded before the platform is acked; its entry moves pending → answered
    (reply stored: a crash before delivery re-sends instead of re-running the agent) → done, or
    straight to dropped with the stage and reason that stopped it.
    """

    # Whether `record` keeps each session's open messages (a shared turn lock waits for them):
    # only then does intake route a message before journaling it.
    indexes_sessions: bool

    async def record(
        self, msg: InboundMessage, now: float, window_s: float, session: str = ""
    ) -> tuple[bool, JournalEntry | None]:
        """Append ``msg`` durably; (False, existing) when it is a duplicate within the window.
        ``session``: where a turn lock is shared, the message is among its session's open ones
        (a later turn of the session waits for it) until it settles."""
        ...

    async def settle(self, key: str, mark: JournalMark) -> None:
        """Write ``mark`` to ``key`` durably."""
        ...

    async def restore(self, msg: InboundMessage, now: float, session: str = "") -> bool:
        """Journal ``msg`` again as this process's, after the store lost its data (it still
        holds the message): True when recorded, or taken over from another replica's intake
        that took the message in again after the loss (a platform re-delivery, still pending),
        so only this process answers it; False when already there otherwise."""
        ...

    def turn_writer(self) -> TurnWriter | None:
        """The one-write path for a turn where the backend keeps the session store in the same
        database; None where the journal and the transcript are written side by side."""
        ...

    async def finish(
        self,
        key: str,
        now: float,
        *,
        stage: str,
        reason: str,
        delivery: str,
        delivery_ids: list[str],
    ) -> None:
        """The final DONE mark after delivery. Nothing reads it on the hot path, so a backend may
        write it behind, but ordered after every earlier write for the same key."""
        ...

    async def unfinished(self) -> list[JournalEntry]:
        """Entries accepted but not finished (by a previous process), oldest first."""
        ...

    async def orphaned(self, channels: Collection[str]) -> list[JournalEntry]:
        """Unfinished entries of another process that has died, on one of ``channels`` (those
        this process can answer on), now handed to this one (each to exactly one caller), oldest
        first; always empty where one process owns the journal."""
        ...

    async def hand_off(self, key: str) -> bool:
        """Give up ``key``, answered here for a channel another replica now holds, so that one
        sends the stored answer; False (keep it) where one process owns the journal."""
        ...

    async def watch_hand_offs(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` whenever another replica hands an answer over, until cancelled (returns
        at once where one process owns the journal)."""
        ...

    async def unclaimed(self, keys: Collection[str]) -> set[str]:
        """Of ``keys`` this process handed off, those no replica has claimed yet (or gone with
        the store's data): the handing process still answers for them; empty where one process
        owns the journal."""
        ...

    async def generation(self) -> str:
        """Names the store's data: it changes when the store lost its data (a Redis restarted
        without persistence), so each process re-journals what it still holds; constant where
        the journal is a local file."""
        ...

    async def owns(self, key: str) -> bool:
        """Whether this process may still answer ``key`` (no other replica adopted it while
        this one stalled); always True where one process owns the journal."""
        ...

    async def claim_send(self, key: str) -> bool:
        """Right before the answer's first chunk: ``owns``, and marks the answer as being sent
        by this process. An adopted answer that its stalled previous owner began sending waits
        for that one to record the send (bounded); False when it did. Always True where one
        process owns the journal."""
        ...

    async def get(self, key: str) -> JournalEntry | None: ...

    async def find(
        self,
        channel: str,
        *,
        message_id: str | None = None,
        sender_id: str | None = None,
        limit: int = 10,
    ) -> list[JournalEntry]:
        """A message by its platform id (or journal key), or a sender's latest messages."""
        ...

    async def purge(self, older_than: float) -> int:
        """Drop settled entries received before ``older_than``; returns how many."""
        ...


@record  # built every turn: frozen by type (model/frozen.py)
class TranscriptAppend:
    """Transcript lines for one session (what `SessionStore.append` takes)."""

    key: str
    epoch: int
    messages: Sequence[ChatMessage]


class TurnWriter(Protocol):
    """A turn's journal marks and its transcript lines in one write (one round trip, one
    commit), for a backend that keeps both in the same database (`Journal.turn_writer`)."""

    async def settle_turn(
        self, keys: Sequence[str], mark: JournalMark, transcript: TranscriptAppend | None
    ) -> BaseException | None:
        """`settle` every key alike (raises when that fails) and append ``transcript``; a failed
        append is returned, not raised, and does not undo the journal marks."""
        ...


class DeadLetterStore(Protocol):
    """Replies that could not be delivered (`chatgate dlq`)."""

    async def add(
        self,
        target: Target,
        message: dict[str, Any],
        kind: SendErrorKind | str,
        error: str,
        attempts: int,
        now: float,
        *,
        inbound_key: str | None = None,
        session: str | None = None,
    ) -> int: ...

    async def list(self, limit: int = 100) -> list[DeadLetter]: ...

    async def get(self, entry_id: int) -> DeadLetter | None:
        """One entry, left in place."""
        ...

    async def take(self, entry_id: int) -> DeadLetter | None:
        """Remove and return one entry (for replay; a failed replay re-enters the DLQ)."""
        ...

    async def drop(self, entry_id: int) -> bool: ...

    async def count(self) -> int: ...


class DeadTargetStore(Protocol):
    """Targets that answered forbidden/not-found: later sends skip straight to the DLQ until the
    chat writes to us again."""

    async def kind(self, target: Target) -> str | None: ...

    async def mark(self, target: Target, kind: SendErrorKind, error: str, now: float) -> None: ...

    async def revive(self, address: str) -> bool: ...

    async def all(self) -> dict[str, str]:
        """Address → send error kind of every dead target."""
        ...


class PairingStore(Protocol):
    """DM pairing: codes for unknown senders and the operator's approvals (see policies.pairing)."""

    async def is_approved(self, channel: str, sender_id: str) -> bool: ...

    async def request(
        self, channel: str, sender_id: str, sender_name: str, chat_id: str, now: float
    ) -> IssueDecision: ...

    async def approve(self, channel: str, code: str, now: float) -> ApprovalDecision: ...

    async def deny(self, channel: str, code: str) -> bool: ...

    async def revoke(self, channel: str, sender_id: str) -> bool: ...

    async def pending(self, now: float) -> list[PendingRequest]: ...

    async def approved(self, channel: str | None = None) -> list[Approved]: ...

    async def take_unnotified(self) -> list[Approved]:
        """Approvals not yet announced to their user (each is handed out once)."""
        ...


class CallbackStore(Protocol):
    """Button payloads too long for a platform, referenced by a short id."""

    def put(self, value: str) -> str:
        """The short reference for ``value`` (sync: presentation is pure; stored behind)."""
        ...

    async def resolve(self, data: str) -> str | None: ...

    async def flush(self) -> None:
        """Wait until every reference handed out is stored."""
        ...


class ChannelFacts(Protocol):
    """Small JSON facts a channel keeps about its users and sent messages (when a user last
    wrote, a message's delivery receipt), shared by replicas and kept across restarts until
    they expire. Keys are the caller's, unique within one channel."""

    async def put(
        self, channel: str, key: str, value: dict[str, Any], now: float, ttl_s: float
    ) -> None: ...

    async def get_many(
        self, channel: str, keys: Sequence[str], now: float
    ) -> dict[str, dict[str, Any]]:
        """The unexpired facts among ``keys`` (missing ones are left out)."""
        ...


class PauseStore(Protocol):
    """Chats a human took over (`policies/takeover.py`), shared by replicas and kept across
    restarts. A pause that ran out stays stored until someone resumes or reads it out."""

    async def put(self, pause: Pause) -> None: ...

    async def get(self, chat: str) -> Pause | None: ...

    async def delete(self, chat: str, since: float | None = None) -> bool:
        """Remove the chat's pause (with ``since``: only the pause taken then, so a replica
        ending a pause that ran out never removes a newer one); False when none was removed."""
        ...

    async def all(self) -> list[Pause]: ...


class SessionStore(Protocol):
    """Session transcripts. Appends are idempotent per (session, epoch, source, role); `/new`
    bumps the epoch instead of deleting."""

    async def load(self, key: str, limit: int) -> StoredSession: ...

    async def append(
        self, key: str, epoch: int, messages: Sequence[ChatMessage], now: float
    ) -> None: ...

    async def reset(self, key: str, now: float) -> int:
        """Start a fresh transcript; returns the new epoch."""
        ...

    async def recent(self, limit: int = 100) -> list[SessionInfo]:
        """The most recently active sessions first."""
        ...

    async def transcript(self, key: str) -> list[TranscriptLine] | None:
        """The current epoch's messages with their times; None when there is no such session."""
        ...

    async def flush(self) -> None:
        """Wait until every append handed in is durable."""
        ...

    async def revision(self, key: str) -> int | None:
        """A counter every append/reset of ``key`` bumps, so a warm copy can tell that another
        process (replica) wrote the session; None when this process is the only writer."""
        ...


class ChannelLeases(Protocol):
    """Which replica holds each exclusive channel connection (a polling token, a gateway
    shard set). The holder renews its lease by heartbeat; another replica takes over after the
    lease TTL when the holder dies. With one process per state every lease is granted."""

    replica: str
    shared: bool  # False: one process per state, every lease granted and never lost

    async def acquire(self, name: str, ttl: float, fence: float = 0.0) -> bool:
        """Take ``name`` for this replica unless another live replica holds it, or the state
        lost its data less than ``fence`` seconds ago (an old holder may still trust it)."""
        ...

    async def renew(self, name: str, ttl: float) -> bool:
        """Extend this replica's lease; False when it was lost."""
        ...

    async def release(self, name: str) -> None: ...

    async def holders(self) -> dict[str, str]:
        """Lease name → holding replica, for every held lease."""
        ...

    async def peers(self) -> list[str]:
        """Every live replica (this one included)."""
        ...


class TurnLock(Protocol):
    """One turn at a time per session. A holder renews its lease while the turn runs; a dead
    holder's lease expires after ``ttl``. ``release`` and ``renew`` are identity-checked: a stale
    token never frees or extends a lease a later holder owns."""

    async def acquire(self, key: str, *, owner: str, ttl: float) -> LeaseToken: ...

    async def renew(self, token: LeaseToken, ttl: float) -> bool:
        """Extend the lease; False when it was lost (expired and taken by another holder)."""
        ...

    async def release(self, token: LeaseToken) -> None: ...

    async def aclose(self) -> None:
        """Let go of what the lock holds open (connections); called once, at shutdown."""
        ...

    async def release_leftovers(self) -> int:
        """At start: free the locks an earlier process of this replica id left (it was killed
        mid-turn); the count freed. Nothing to do where the lock lives in this process."""
        ...

    def hold(
        self,
        key: str,
        *,
        owner: str,
        ttl: float,
        after: str | None = None,
        give_way: Callable[[], bool] | None = None,
        from_dead: bool = False,
        batch: Sequence[str] = (),
    ) -> AbstractAsyncContextManager[LeaseToken]:
        """Acquire, keep the lease while the block runs (renewing it where leases can lapse
        behind a live holder's back), release on exit. ``after``: the message whose answer this
        holder sends (or whose turn it runs again) for a replica that handed it off; it takes
        over the lock passed on with it, and with ``from_dead`` one held by a replica whose
        liveness ran out (only to send an answer already made: a stalled holder may still be
        at the model). ``give_way``: asked while waiting; True stops the wait with `GaveWay`.
        ``batch``: the turn's messages (``after`` first); where the lock is shared, a free lock
        waits for an earlier open message of the session (at most ``ttl``)."""
        ...

    async def restore(self, handed: Mapping[str, str], ttl: float) -> int:
        """After the shared store lost its data: take again every lock this process holds (its
        turns and sends, with their tokens), and for each session in ``handed`` (session → the
        oldest message of it this process handed off and nobody claimed) the lock passed on
        with it, so no later turn of those sessions runs first; the count taken. A no-op where
        one process holds every lock."""
        ...

    def strand(self, session: str, message_key: str, token: LeaseToken | None, ttl: float) -> None:
        """``message_key``'s turn failed on the state (the journal keeps it for its resumed
        turn): the session's lock, held by ``token`` or not taken at all, is passed on to that
        resumed turn (`hold`'s ``after``) instead of freed, as soon as the store answers, so no
        later message of the session answers first; it runs out after ``ttl``. A no-op where
        one process holds every lock (the resumed message goes first in its queue)."""
        ...

    async def retry_pending(self) -> None:
        """Pass on or free the locks the store could not take while it was away; raises
        `StateUnavailable` while it still cannot."""
        ...

    def pass_on(self, token: LeaseToken, message_key: str) -> None:
        """On leaving ``token``'s hold, pass the lock on to the sender of ``message_key``'s
        handed-off answer (`hold`'s ``after``) instead of freeing it, so no later turn of the
        session answers first; it runs out after the TTL if nobody takes it. A no-op where one
        process holds every lock (nothing is handed off)."""
        ...
