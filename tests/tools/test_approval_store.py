"""The SQLite approval store keeps the contract (tests/tools/approval_store_contract.py)."""

from __future__ import annotations

from pathlib import Path

from chatgate.state.sqlite.approvals import SqliteApprovals
from chatgate.state.sqlite.db import Database
from tests.tools.approval_store_contract import check_contract


async def test_sqlite_approvals_keep_the_contract(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    await db.open()
    try:
        await check_contract(SqliteApprovals(db), SqliteApprovals(db))
    finally:
        await db.close()
