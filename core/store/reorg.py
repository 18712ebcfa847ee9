"""Reorg rollback by an undo journal.

While the indexer applies block N it sets reorg_context.block_number = N; each backend then journals how
to undo every insert, update and delete of a tracked table (core.store.schema.TRACKED_TABLES): SQLite by
triggers, PostgreSQL by one trigger function (core.store.pg_reorg). Rolling back to an ancestor replays
those records newest first, so every projection row returns to exactly its state at the ancestor.
Records at or below the finalized block are pruned.
"""

from __future__ import annotations

from core.store.backend import backend_of
from core.store.types import Conn


def track(conn: Conn, table: str) -> None:
    """Journal another table's writes from now on (the journal persists in the database). Features
    add their derived tables to TRACKED_TABLES instead; this is for ad-hoc and test tables.
    SQLite: rows must keep their rowid (no WITHOUT ROWID tables, no INTEGER PRIMARY KEY updates);
    PostgreSQL: the table needs a primary or unique key (core.store.pg_reorg)."""
    backend_of(conn).track(conn, table)


def set_block(conn: Conn, block_number: int | None) -> None:
    """Journal the following writes under `block_number` (None: stop journaling)."""
    conn.execute("UPDATE reorg_context SET block_number = ? WHERE id = 1", (block_number,))


def rollback_to(conn: Conn, chain_id: int, ancestor: int) -> int:
    """Undo every journaled write above `ancestor` and drop events/blocks above it.
    Call inside a transaction. Returns the number of undone writes."""
    set_block(conn, None)
    undone = backend_of(conn).undo(conn, ancestor)
    conn.execute("DELETE FROM reorg_undo WHERE block_number > ?", (ancestor,))
    conn.execute("DELETE FROM events WHERE chain_id = ? AND block_number > ?", (chain_id, ancestor))
    conn.execute("DELETE FROM blocks WHERE chain_id = ? AND number > ?", (chain_id, ancestor))
    return undone


def prune(conn: Conn, chain_id: int, finalized: int) -> None:
    """Forget undo records and block hashes that can no longer be reorged away (keep the
    finalized block itself as the anchor of the hash chain)."""
    conn.execute("DELETE FROM reorg_undo WHERE block_number <= ?", (finalized,))
    conn.execute("DELETE FROM blocks WHERE chain_id = ? AND number < ?", (chain_id, finalized))
