"""The embedded default: every store in one SQLite database in the state directory (WAL, one
writer thread with group commit, so nothing blocks the event loop)."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from chatgate.config.models import GatewaySection
from chatgate.state.approvals import KV_NAME as APPROVALS
from chatgate.state.config_audit import KV_NAME as CONFIG_AUDIT
from chatgate.state.factory import Stores
from chatgate.state.local_lock import LocalLeases
from chatgate.state.sqlite.approvals import SqliteApprovals
from chatgate.state.sqlite.callbacks import SqliteCallbacks
from chatgate.state.sqlite.config_audit import SqliteConfigAudit
from chatgate.state.sqlite.db import Database
from chatgate.state.sqlite.dead_letters import SqliteDeadLetters, SqliteDeadTargets
from chatgate.state.sqlite.facts import SqliteFacts
from chatgate.state.sqlite.journal import SqliteJournal
from chatgate.state.sqlite.pairing import SqlitePairing
from chatgate.state.sqlite.pauses import SqlitePauses
from chatgate.state.sqlite.personal import SqlitePersonal
from chatgate.state.sqlite.sessions import SqliteSessionStore

DB_FILE = "chatgate.db"


def build_stores(gateway: GatewaySection, state_dir: Path) -> Stores:
    db = Database(state_dir / DB_FILE, synchronous=gateway.store.synchronous)
    dead_letters, dead_targets, pairing = (
        SqliteDeadLetters(db),
        SqliteDeadTargets(db),
        SqlitePairing(db),
    )

    async def open_all() -> None:
        await db.open()
        await asyncio.gather(dead_letters.load(), dead_targets.load(), pairing.load())

    return Stores(
        journal=SqliteJournal(db),
        dead_letters=dead_letters,
        dead_targets=dead_targets,
        pairing=pairing,
        callbacks=SqliteCallbacks(db),
        sessions=SqliteSessionStore(db),
        leases=LocalLeases(f"{socket.gethostname()}-{os.getpid()}"),
        facts=SqliteFacts(db),
        pauses=SqlitePauses(db),
        open=open_all,
        close=db.close,
        kv={APPROVALS: SqliteApprovals(db), CONFIG_AUDIT: SqliteConfigAudit(db)},
        personal=SqlitePersonal(db),
    )
