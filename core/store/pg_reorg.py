"""The reorg undo journal on PostgreSQL (core.store.reorg is the SQLite form; the same contract).

One PL/pgSQL trigger function journals every insert, update and delete of a tracked table while
reorg_context.block_number is set: the written row's key (its primary key, else its first unique
key: PostgreSQL has no rowid) in row_key, and for an update or delete the old row as JSON in old.
Rolling back replays the records newest first: an insert is deleted by its key, an updated row is
deleted by its new key and its old image inserted again, a deleted row is inserted again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.store.schema import TRACKED_TABLES

if TYPE_CHECKING:
    from core.store.pg import PostgresConnection


FUNCTION = """
CREATE OR REPLACE FUNCTION agentledger_reorg_undo() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    blk BIGINT;
    new_key JSONB;
BEGIN
    SELECT block_number INTO blk FROM reorg_context WHERE id = 1;
    IF blk IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        SELECT jsonb_object_agg(k, to_jsonb(NEW) -> k) INTO new_key FROM unnest(TG_ARGV) AS k;
    END IF;
    IF TG_OP = 'INSERT' THEN
        INSERT INTO reorg_undo (block_number, tbl, op, row_key) VALUES (blk, TG_TABLE_NAME, 'I', new_key);
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO reorg_undo (block_number, tbl, op, row_key, old)
        VALUES (blk, TG_TABLE_NAME, 'U', new_key, to_jsonb(OLD)::text);
    ELSE
        INSERT INTO reorg_undo (block_number, tbl, op, old) VALUES (blk, TG_TABLE_NAME, 'D', to_jsonb(OLD)::text);
    END IF;
    RETURN NULL;
END
$$
"""


def key_columns(conn: PostgresConnection, table: str) -> list[str]:
    """The columns naming a row of `table`: its primary key, else its first unique index."""
    rows = conn.execute(
        """
        SELECT i.indexrelid, a.attname, array_position(i.indkey::int2[], a.attnum) AS pos, i.indisprimary
        FROM pg_index i
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
        WHERE i.indrelid = to_regclass(?) AND i.indisunique AND i.indpred IS NULL
        ORDER BY i.indisprimary DESC, i.indexrelid, pos
        """,
        (table,),
    ).fetchall()
    if not rows:
        raise ValueError(f"{table} has no primary or unique key: its rows cannot be journaled")
    first = rows[0][0]
    return [str(r[1]) for r in rows if r[0] == first]


def install_triggers(conn: PostgresConnection) -> None:
    """(Re)create the journaling trigger of every tracked table (idempotent)."""
    conn.execute(FUNCTION)
    for table in TRACKED_TABLES:
        track(conn, table)


def track(conn: PostgresConnection, table: str) -> None:
    args = ", ".join("'" + c + "'" for c in key_columns(conn, table))
    conn.execute(f"DROP TRIGGER IF EXISTS {table}_undo ON {table}")
    conn.execute(
        f"CREATE TRIGGER {table}_undo AFTER INSERT OR UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION agentledger_reorg_undo({args})"
    )


def _where(key: dict[str, Any]) -> tuple[str, list[Any]]:
    names = sorted(key)
    return " AND ".join(f"{n} = ?" for n in names), [key[n] for n in names]


def undo(conn: PostgresConnection, ancestor: int) -> int:
    """Replay the journal above `ancestor`, newest first (inside the caller's transaction, with
    journaling off). Returns the number of undone writes."""
    rows = conn.execute(
        "SELECT tbl, op, row_key, old FROM reorg_undo WHERE block_number > ? ORDER BY seq DESC", (ancestor,)
    ).fetchall()
    for tbl, op, row_key, old in rows:
        table = str(tbl)
        if op in ("I", "U"):
            key = row_key if isinstance(row_key, dict) else json.loads(str(row_key))
            where, values = _where(key)
            conn.execute(f"DELETE FROM {table} WHERE {where}", values)
        if op in ("U", "D"):
            conn.execute(
                f"INSERT INTO {table} SELECT * FROM jsonb_populate_record(NULL::{table}, CAST(? AS jsonb))", (old,)
            )
    return len(rows)
