"""Reorg rollback by an undo journal kept by SQLite triggers.

While the indexer applies block N it sets reorg_context.block_number = N; triggers on every
tracked table then record how to undo each insert, update and delete. Rolling back to an
ancestor replays those records newest first, so every projection row and every derived effect
(anything a subscriber writes to a tracked table in the same transaction) returns to exactly
its state at the ancestor. Records at or below the finalized block are pruned.
"""

from __future__ import annotations

import json

import apsw

from core.store import pg_reorg
from core.store.pg import PostgresConnection

#: Tables whose writes are journaled. Later features add their derived tables here.
TRACKED_TABLES: list[str] = [
    "agents",
    "payouts",
    "gateway_jobs",
    "escrow_jobs",
    "listings",
    "credits",
    "anchors",
]

_CTX = "(SELECT block_number FROM reorg_context WHERE id = 1)"


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def install_triggers(conn: apsw.Connection) -> None:
    """(Re)create the journaling triggers of every tracked table whose stored text differs from
    today's (idempotent; an unchanged trigger is left alone, so no schema change)."""
    for table in TRACKED_TABLES:
        _install(conn, table)


def triggers_current(conn: apsw.Connection) -> bool:
    """Does the file hold today's journaling trigger of every tracked table? (A read: opening a
    connection needs no write lock when it does.)"""
    return all(_stored(conn, name) == sql for table in TRACKED_TABLES for name, sql in _triggers(conn, table))


def track(conn: apsw.Connection, table: str) -> None:
    """Journal another table's writes from now on (the triggers persist in the file). Features
    add their derived tables to TRACKED_TABLES instead; this is for ad-hoc and test tables.
    Rows must keep their rowid (no WITHOUT ROWID tables, no INTEGER PRIMARY KEY updates); on
    PostgreSQL the table needs a primary or unique key instead (core.store.pg_reorg)."""
    if isinstance(conn, PostgresConnection):
        pg_reorg.track(conn, table)
        return
    _install(conn, table)


def _install(conn: apsw.Connection, table: str) -> None:
    for name, sql in _triggers(conn, table):
        if _stored(conn, name) != sql:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            conn.execute(sql)


def _triggers(conn: apsw.Connection, table: str) -> list[tuple[str, str]]:
    """(name, CREATE TRIGGER text) of the insert, update and delete journaling triggers of `table`."""
    cols = _columns(conn, table)
    old = "json_array(" + ", ".join(f"OLD.{c}" for c in cols) + ")"
    return [
        (
            f"{table}_undo_{op}",
            f"CREATE TRIGGER {table}_undo_{op} AFTER {when} ON {table} WHEN {_CTX} IS NOT NULL BEGIN "
            f"INSERT INTO reorg_undo (block_number, tbl, op, row_id, old) "
            f"VALUES ({_CTX}, '{table}', '{op}', {row}, {image}); END",
        )
        for op, when, row, image in (
            ("I", "INSERT", "NEW.rowid", "NULL"),
            ("U", "UPDATE", "OLD.rowid", old),
            ("D", "DELETE", "OLD.rowid", old),
        )
    ]


def _stored(conn: apsw.Connection, trigger: str) -> str | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    return None if row is None else str(row[0])


def set_block(conn: apsw.Connection, block_number: int | None) -> None:
    """Journal the following writes under `block_number` (None: stop journaling)."""
    conn.execute("UPDATE reorg_context SET block_number = ? WHERE id = 1", (block_number,))


def rollback_to(conn: apsw.Connection, chain_id: int, ancestor: int) -> int:
    """Undo every journaled write above `ancestor` and drop events/blocks above it.
    Call inside a transaction. Returns the number of undone writes."""
    set_block(conn, None)
    undone = pg_reorg.undo(conn, ancestor) if isinstance(conn, PostgresConnection) else _undo(conn, ancestor)
    conn.execute("DELETE FROM reorg_undo WHERE block_number > ?", (ancestor,))
    conn.execute("DELETE FROM events WHERE chain_id = ? AND block_number > ?", (chain_id, ancestor))
    conn.execute("DELETE FROM blocks WHERE chain_id = ? AND number > ?", (chain_id, ancestor))
    return undone


def _undo(conn: apsw.Connection, ancestor: int) -> int:
    undone = 0
    columns: dict[str, list[str]] = {}
    rows = conn.execute(
        "SELECT seq, tbl, op, row_id, old FROM reorg_undo WHERE block_number > ? ORDER BY seq DESC", (ancestor,)
    ).fetchall()
    for _seq, tbl, op, row_id, old in rows:
        table = str(tbl)
        if table not in columns:
            columns[table] = _columns(conn, table)
        cols = columns[table]
        if op == "I":
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (row_id,))
        else:
            values = json.loads(str(old))
            if op == "U":
                assignments = ", ".join(f"{c} = ?" for c in cols)
                conn.execute(f"UPDATE {table} SET {assignments} WHERE rowid = ?", (*values, row_id))
            else:
                placeholders = ", ".join("?" for _ in range(len(cols) + 1))
                conn.execute(
                    f"INSERT INTO {table} (rowid, {', '.join(cols)}) VALUES ({placeholders})", (row_id, *values)
                )
        undone += 1
    return undone


def prune(conn: apsw.Connection, chain_id: int, finalized: int) -> None:
    """Forget undo records and block hashes that can no longer be reorged away (keep the
    finalized block itself as the anchor of the hash chain)."""
    conn.execute("DELETE FROM reorg_undo WHERE block_number <= ?", (finalized,))
    conn.execute("DELETE FROM blocks WHERE chain_id = ? AND number < ?", (chain_id, finalized))
