"""mautrix's SQL crypto store (SQLite in state_dir) with its Megolm message index bounded like
the Redis store's (see replay.py)."""

from __future__ import annotations

from typing import Any

from mautrix.crypto import PgCryptoStore
from mautrix.types import EventID, IdentityKey, SessionID

from chatgate.channels.matrix.replay import ReplayWindow

_WHERE = 'WHERE sender_key=$1 AND session_id=$2 AND "index"=$3'
_ONE = f"SELECT event_id, timestamp FROM crypto_message_index {_WHERE}"
_ALL = 'SELECT sender_key, session_id, "index", timestamp FROM crypto_message_index'
_DROP = f"DELETE FROM crypto_message_index {_WHERE}"
_SPAN = "SELECT COUNT(*), MIN(timestamp), MAX(timestamp) FROM crypto_message_index"


class SqliteCryptoStore(PgCryptoStore):
    def __init__(
        self, account_id: str, pickle_key: str, db: Any, window: ReplayWindow | None = None
    ) -> None:
        super().__init__(account_id, pickle_key, db)
        self.window = window or ReplayWindow()

    async def open(self) -> None:
        """The window from the stored indices (call once the database started)."""
        row = await self.db.fetchrow(_SPAN)
        if row is not None:
            self.window.loaded(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))

    async def validate_message_index(
        self,
        sender_key: IdentityKey,
        session_id: SessionID,
        event_id: EventID,
        index: int,
        timestamp: int,
    ) -> bool:
        if self.window.refuses(timestamp):
            row = await self.db.fetchrow(_ONE, sender_key, session_id, index)
            # older than every index still kept: unknown, it may be a pruned one replayed
            return row is not None and (row["event_id"], row["timestamp"]) == (event_id, timestamp)
        valid = await super().validate_message_index(
            sender_key, session_id, event_id, index, timestamp
        )
        if self.window.added(timestamp):
            rows = await self.db.fetch(_ALL)
            drop = self.window.plan({(r[0], r[1], r[2]): int(r[3]) for r in rows})
            if drop:
                await self.db.executemany(_DROP, drop)
        return bool(valid)
