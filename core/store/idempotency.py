"""SQL of the Idempotency-Key rows (table idempotency_keys): claims, stored responses, purges.
The rules (scope, replay, conflict, abandoned claims) are core.idempotency's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw


@dataclass(frozen=True)
class IdemRow:
    body_sha256: str
    status: str
    attempt: str
    response_status: int | None
    response_body: bytes | None
    created_at: float
    owner: str | None = None  # core.instance id of the process holding an in_flight claim


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def get(conn: apsw.Connection, scope: str, key: str) -> IdemRow | None:
    rows = _rows(
        conn,
        "SELECT body_sha256, status, attempt, response_status, response_body, created_at, owner"
        " FROM idempotency_keys WHERE scope = ? AND idem_key = ?",
        (scope, key),
    )
    if not rows:
        return None
    sha, status, attempt, rs, rb, created, owner = rows[0]
    return IdemRow(
        str(sha),
        str(status),
        str(attempt),
        None if rs is None else int(rs),
        None if rb is None else bytes(rb),
        float(created),
        None if owner is None else str(owner),
    )


def put_in_flight(
    conn: apsw.Connection, scope: str, key: str, body_sha256: str, attempt: str, now: float, owner: str | None = None
) -> None:
    """Claim (or re-claim, replacing an expired or abandoned row) a key for one attempt of `owner`."""
    conn.execute(
        "INSERT OR REPLACE INTO idempotency_keys (scope, idem_key, body_sha256, status, attempt, created_at, owner)"
        " VALUES (?, ?, ?, 'in_flight', ?, ?, ?)",
        (scope, key, body_sha256, attempt, now, owner),
    )


def finish(conn: apsw.Connection, scope: str, key: str, attempt: str, status: int, body: bytes) -> bool:
    """Store the response of the attempt still holding the key; False when another attempt took it."""
    conn.execute(
        "UPDATE idempotency_keys SET status = 'done', response_status = ?, response_body = ?"
        " WHERE scope = ? AND idem_key = ? AND attempt = ? AND status = 'in_flight'",
        (status, body, scope, key, attempt),
    )
    return bool(conn.changes())


def release(conn: apsw.Connection, scope: str, key: str, attempt: str) -> None:
    """Forget an attempt that produced no storable response (5xx, crash), so a retry may run."""
    conn.execute(
        "DELETE FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND attempt = ? AND status = 'in_flight'",
        (scope, key, attempt),
    )


def purge(conn: apsw.Connection, before: float) -> int:
    conn.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (before,))
    return int(conn.changes())
