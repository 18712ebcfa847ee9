"""SQL of the webhook outbox (table webhook_deliveries).

`enqueue` runs inside the caller's transaction, next to the state change it announces (the
transactional outbox): the delivery exists if and only if the change committed. The dispatcher
reads `due` rows and records each attempt; the operator lists and resets dead letters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import apsw

from core.webhooks import new_event_id, next_delay

#: A stored last_error is cut to this many characters.
MAX_ERROR = 500


@dataclass(frozen=True)
class Delivery:
    """A row as the dispatcher needs it (with the secret and body: never shown to anyone)."""

    id: int
    event_id: str
    event: str
    source: str
    url: str
    secret: str
    body: bytes
    attempts: int
    next_attempt_at: float
    created_at: float


@dataclass(frozen=True)
class DeliveryStatus:
    """A row as operators and order views see it: no secret, no body."""

    event_id: str
    event: str
    source: str
    url: str
    status: str  # pending, delivered, dead_letter
    attempts: int
    next_attempt_at: float
    last_status: int | None
    last_error: str | None
    created_at: float
    delivered_at: float | None


_DELIVERY_COLS = "id, event_id, event, source, url, secret, body, attempts, next_attempt_at, created_at"
_STATUS_COLS = (
    "event_id, event, source, url, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at"
)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


def encode_body(payload: dict[str, Any]) -> bytes:
    """Compact JSON (UTF-8): the exact bytes that are stored, signed and sent."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def enqueue(
    conn: apsw.Connection, *, event: str, source: str, url: str, secret: str, payload: dict[str, Any], now: float
) -> str:
    """Queue one delivery, due at once; returns its event id. Call inside the transaction that makes
    the change it announces, and wake the dispatcher after that transaction committed."""
    event_id = new_event_id()
    conn.execute(
        "INSERT INTO webhook_deliveries (event_id, event, source, url, secret, body, status, attempts,"
        " next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
        (event_id, event, source, url, secret, encode_body(payload), now, now),
    )
    return event_id


def _delivery(row: Any) -> Delivery:
    return Delivery(
        int(row[0]), row[1], row[2], row[3], row[4], row[5], bytes(row[6]), int(row[7]), float(row[8]), float(row[9])
    )


def _status(row: Any) -> DeliveryStatus:
    return DeliveryStatus(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        int(row[5]),
        float(row[6]),
        None if row[7] is None else int(row[7]),
        row[8],
        float(row[9]),
        None if row[10] is None else float(row[10]),
    )


def due(conn: apsw.Connection, now: float, limit: int) -> list[Delivery]:
    """Pending deliveries whose next attempt is due, oldest due first."""
    rows = conn.execute(
        f"SELECT {_DELIVERY_COLS} FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?"  # noqa: S608
        " ORDER BY next_attempt_at, id LIMIT ?",
        (now, limit),
    ).fetchall()
    return [_delivery(r) for r in rows]


def next_due_at(conn: apsw.Connection) -> float | None:
    """When the earliest pending delivery is due (None: nothing pending)."""
    row = _rows(conn, "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'")
    return None if row[0][0] is None else float(row[0][0])


def record_attempt(
    conn: apsw.Connection, id: int, *, ok: bool, status: int | None, error: str | None, now: float
) -> str | None:
    """Record one attempt of a pending delivery; returns its new status (None: it was not pending).
    Success: delivered, the secret cleared. Failure: attempts + 1 and the next attempt scheduled
    from RETRY_DELAYS, or dead_letter after the last one."""
    row = _rows(conn, "SELECT attempts FROM webhook_deliveries WHERE id = ? AND status = 'pending'", (id,))
    if not row:
        return None
    attempts = int(row[0][0]) + 1
    cut = None if error is None else error[:MAX_ERROR]
    if ok:
        conn.execute(
            "UPDATE webhook_deliveries SET status = 'delivered', secret = '', attempts = ?, last_status = ?,"
            " last_error = NULL, delivered_at = ? WHERE id = ?",
            (attempts, status, now, id),
        )
        return "delivered"
    delay = next_delay(attempts)
    new_status = "pending" if delay is not None else "dead_letter"
    conn.execute(
        "UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?,"
        " last_error = ? WHERE id = ?",
        (new_status, attempts, now + delay if delay is not None else now, status, cut, id),
    )
    return new_status


def dead_letters(conn: apsw.Connection) -> list[DeliveryStatus]:
    rows = conn.execute(
        f"SELECT {_STATUS_COLS} FROM webhook_deliveries WHERE status = 'dead_letter' ORDER BY id"  # noqa: S608
    ).fetchall()
    return [_status(r) for r in rows]


def reset_dead_letter(conn: apsw.Connection, event_id: str | None, now: float) -> int:
    """Put one dead letter (or all of them: event_id None) back to pending, attempts 0, due now.
    Returns how many rows were reset."""
    sql = (
        "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?"
        " WHERE status = 'dead_letter'"
    )
    if event_id is None:
        conn.execute(sql, (now,))
    else:
        conn.execute(sql + " AND event_id = ?", (now, event_id))
    return int(conn.changes())


def deliveries_for(conn: apsw.Connection, source: str) -> list[DeliveryStatus]:
    """Every delivery of one source (e.g. "order:<id>"), in the order they were queued."""
    rows = conn.execute(
        f"SELECT {_STATUS_COLS} FROM webhook_deliveries WHERE source = ? ORDER BY id",  # noqa: S608
        (source,),
    ).fetchall()
    return [_status(r) for r in rows]


def get_status(conn: apsw.Connection, event_id: str) -> DeliveryStatus | None:
    rows = conn.execute(
        f"SELECT {_STATUS_COLS} FROM webhook_deliveries WHERE event_id = ?",  # noqa: S608
        (event_id,),
    ).fetchall()
    return _status(rows[0]) if rows else None
