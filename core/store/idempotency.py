"""SQL of the Idempotency-Key rows (table idempotency_keys): claims, stored responses, purges.
The rules (scope, replay, conflict, abandoned claims) are core.idempotency's.

A key is claimed by inserting its row; an existing row is never replaced by an insert. Any number
of writers (processes on one PostgreSQL) may claim one key at once: exactly one insert wins, the
others read the row it wrote. Taking over an abandoned claim is a compare-and-set on the attempt
seen, so two writers judging one abandoned claim cannot both take it."""

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


_COLUMNS = "body_sha256, status, attempt, response_status, response_body, created_at, owner"
#: A claim gives up after this many rounds of "the insert met a row, the row was gone when read"
#: (a concurrent purge or release each time): never in practice.
_CLAIM_ROUNDS = 8


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def _row(values: tuple[Any, ...]) -> IdemRow:
    sha, status, attempt, rs, rb, created, owner = values
    return IdemRow(
        str(sha),
        str(status),
        str(attempt),
        None if rs is None else int(rs),
        None if rb is None else bytes(rb),
        float(created),
        None if owner is None else str(owner),
    )


def get(conn: apsw.Connection, scope: str, key: str) -> IdemRow | None:
    """The key's row."""
    rows = _rows(conn, f"SELECT {_COLUMNS} FROM idempotency_keys WHERE scope = ? AND idem_key = ?", (scope, key))  # noqa: S608
    return _row(rows[0]) if rows else None


def claim(
    conn: apsw.Connection, scope: str, key: str, body_sha256: str, attempt: str, now: float, owner: str | None = None
) -> IdemRow | None:
    """Claim the key for `attempt` (of process `owner`), in the caller's transaction. None when the
    claim is made; else the key's existing row, read FOR UPDATE (the caller may take it over with
    take_over, or answer from it), never changed."""
    for _ in range(_CLAIM_ROUNDS):
        made = _rows(
            conn,
            "INSERT INTO idempotency_keys (scope, idem_key, body_sha256, status, attempt, created_at, owner)"
            " VALUES (?, ?, ?, 'in_flight', ?, ?, ?) ON CONFLICT (scope, idem_key) DO NOTHING RETURNING attempt",
            (scope, key, body_sha256, attempt, now, owner),
        )
        if made:
            return None
        row = get(conn, scope, key)
        if row is not None:
            return row
        # the row that refused the insert was deleted (purged, released) before it could be read: again
    raise RuntimeError(f"idempotency key {key!r} could not be claimed nor read")


def take_over(
    conn: apsw.Connection,
    scope: str,
    key: str,
    seen_attempt: str,
    body_sha256: str,
    attempt: str,
    now: float,
    owner: str | None = None,
) -> bool:
    """Claim the key for `attempt` if its row still is the in_flight claim of `seen_attempt` (the one
    judged abandoned); False when another attempt moved it first."""
    conn.execute(
        "UPDATE idempotency_keys SET body_sha256 = ?, status = 'in_flight', attempt = ?, response_status = NULL,"
        " response_body = NULL, created_at = ?, owner = ?"
        " WHERE scope = ? AND idem_key = ? AND attempt = ? AND status = 'in_flight'",
        (body_sha256, attempt, now, owner, scope, key, seen_attempt),
    )
    return bool(conn.changes())


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
