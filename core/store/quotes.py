"""SQL of the MCP server's quotes (table mcp_quotes). The rules are core.quotes'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import apsw


@dataclass(frozen=True)
class QuoteRow:
    id: str
    key_hash: str
    operation: str
    arguments: str
    amount: int
    summary: str
    created_at: float
    expires_at: float
    executed_at: float | None


_COLS = "id, key_hash, operation, arguments, amount, summary, created_at, expires_at, executed_at"


def insert(conn: apsw.Connection, q: QuoteRow) -> None:
    conn.execute(
        f"INSERT INTO mcp_quotes ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (q.id, q.key_hash, q.operation, q.arguments, q.amount, q.summary, q.created_at, q.expires_at, q.executed_at),
    )


def get(conn: apsw.Connection, quote_id: str) -> QuoteRow | None:
    rows = cast(
        list[tuple[Any, ...]],
        conn.execute(f"SELECT {_COLS} FROM mcp_quotes WHERE id = ?", (quote_id,)).fetchall(),  # noqa: S608
    )
    if not rows:
        return None
    i, k, op, args, amount, summary, created, expires, executed = rows[0]
    return QuoteRow(
        str(i), str(k), str(op), str(args), int(amount), str(summary), float(created), float(expires),
        None if executed is None else float(executed),
    )  # fmt: skip


def mark_executed(conn: apsw.Connection, quote_id: str, now: float) -> None:
    conn.execute("UPDATE mcp_quotes SET executed_at = ? WHERE id = ? AND executed_at IS NULL", (now, quote_id))


def set_content(conn: apsw.Connection, quote_id: str, content: str) -> None:
    """Record the content an execute answered (JSON text); the first one stays (a replay answers the same)."""
    conn.execute("UPDATE mcp_quotes SET content = ? WHERE id = ? AND content IS NULL", (content, quote_id))


def get_content(conn: apsw.Connection, quote_id: str) -> str | None:
    row = conn.execute("SELECT content FROM mcp_quotes WHERE id = ?", (quote_id,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def purge(conn: apsw.Connection, expired_before: float) -> None:
    conn.execute("DELETE FROM mcp_quotes WHERE expires_at < ?", (expired_before,))
