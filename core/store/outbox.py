"""SQL of the outbox (table outbox): deliveries of every channel (webhook, e-mail).

`enqueue` runs inside the caller's transaction, next to the state change it announces (the
transactional outbox): the delivery exists if and only if the change committed. The dispatcher
reads `due` rows and records each attempt; the operator lists and resets dead letters.

A row names its channel and its target (`url`: an http(s) URL, a mailto: address) and the key of
its breaker (`host`: for a webhook `host_of(url)`, "hostname:port" with the port made explicit).
The dispatcher's circuit breaker `hold_host`s a down host's pending rows (their next attempt moved
to the end of its cool-down, attempts unchanged, `held_since` set once) and `release_host`s them
when the host answers again; `hosts` is the operator's per-host view of what is pending. The
rules (retry schedule, event ids) are core.outbox's.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import apsw

#: A stored last_error is cut to this many characters.
MAX_ERROR = 500


class Delivery(NamedTuple):
    """A row as the dispatcher needs it (with the secret and body: never shown to anyone). A named
    tuple, not a dataclass: the dispatcher builds one per due row it reads, about four times cheaper."""

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
    channel: str = "webhook"
    host: str | None = None  # the breaker's key (None: queued before schema 7)


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


_DELIVERY_COLS = "id, event_id, event, source, url, secret, body, attempts, next_attempt_at, created_at, channel, host"
_STATUS_COLS = (
    "event_id, event, source, url, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at"
)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


def enqueue(
    conn: apsw.Connection,
    *,
    channel: str,
    event_id: str,
    event: str,
    source: str,
    url: str,
    host: str,
    secret: str,
    body: bytes,
    now: float,
) -> None:
    """Insert one delivery, due at once (core.outbox.enqueue_* call it inside the transaction that
    makes the change it announces)."""
    conn.execute(
        "INSERT INTO outbox (channel, event_id, event, source, url, host, secret, body, status, attempts,"
        " next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
        (channel, event_id, event, source, url, host, secret, body, now, now),
    )


#: Ids per `IN (...)` list: far below both databases' limits on bound parameters.
IN_LIST_MAX = 500


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i : i + IN_LIST_MAX] for i in range(0, len(ids), IN_LIST_MAX)]


def _delivery(row: Any) -> Delivery:
    return Delivery(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        bytes(row[6]),
        int(row[7]),
        float(row[8]),
        float(row[9]),
        row[10],
        row[11],
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


def due(conn: apsw.Connection, now: float, limit: int, after: tuple[float, int] | None = None) -> list[Delivery]:
    """Pending deliveries whose next attempt is due, oldest due first; `after` (next_attempt_at, id)
    of the last row of a previous page continues past it."""
    if after is None:
        rows = conn.execute(
            f"SELECT {_DELIVERY_COLS} FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?"  # noqa: S608
            " ORDER BY next_attempt_at, id LIMIT ?",
            (now, limit),
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_DELIVERY_COLS} FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?"  # noqa: S608
            " AND (next_attempt_at, id) > (?, ?) ORDER BY next_attempt_at, id LIMIT ?",
            (now, after[0], after[1], limit),
        ).fetchall()
    return [_delivery(r) for r in rows]


#: One attempt's outcome as record_attempts takes it: (row id, success, status, error text, time).
Outcome = tuple[int, bool, int | None, str | None, float]


def record_attempt(
    conn: apsw.Connection,
    id: int,
    *,
    ok: bool,
    status: int | None,
    error: str | None,
    now: float,
    delays: Sequence[float],
) -> str | None:
    """Record one attempt of a pending delivery; returns its new status (None: it was not pending).
    Success: delivered, the secret cleared. Failure: attempts + 1 and the next attempt scheduled
    `delays[attempts]` later, or dead_letter after the last one. Either way no longer held
    (held_since counts a hold from the row's last attempt)."""
    return record_attempts(conn, [(id, ok, status, error, now)], delays=delays).get(id)


def record_attempts(conn: apsw.Connection, outcomes: Sequence[Outcome], *, delays: Sequence[float]) -> dict[int, str]:
    """`record_attempt` for many attempts (of distinct rows) at once: one read of their attempt counts
    and one executemany per kind of outcome. Returns each recorded row's new status by id (a row that
    was not pending is left out)."""
    ids = [o[0] for o in outcomes]
    pending: dict[int, int] = {}
    for chunk in _chunks(ids):
        # a list of ids: one primary-key lookup each (both databases), never a walk of the pending rows
        found = _rows(
            conn,
            f"SELECT id, attempts FROM outbox WHERE id IN ({_marks(chunk)}) AND status = 'pending'",  # noqa: S608 (marks)
            tuple(chunk),
        )
        pending.update((int(i), int(n)) for i, n in found)
    delivered: list[tuple[int, int | None, float, int]] = []
    failed: list[tuple[str, int, float, int | None, str | None, int]] = []
    result: dict[int, str] = {}
    for id, ok, status, error, now in outcomes:
        if id not in pending:
            continue
        attempts = pending[id] + 1
        if ok:
            delivered.append((attempts, status, now, id))
            result[id] = "delivered"
            continue
        delay = delays[attempts] if attempts < len(delays) else None
        new_status = "pending" if delay is not None else "dead_letter"
        cut = None if error is None else error[:MAX_ERROR]
        failed.append((new_status, attempts, now + delay if delay is not None else now, status, cut, id))
        result[id] = new_status
    if delivered:
        conn.executemany(
            "UPDATE outbox SET status = 'delivered', secret = '', attempts = ?, last_status = ?,"
            " last_error = NULL, delivered_at = ?, held_since = NULL WHERE id = ?",
            delivered,
        )
    if failed:
        conn.executemany(
            "UPDATE outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?,"
            " last_error = ?, held_since = NULL WHERE id = ?",
            failed,
        )
    return result


def dead_letters(conn: apsw.Connection) -> list[DeliveryStatus]:
    rows = conn.execute(
        f"SELECT {_STATUS_COLS} FROM outbox WHERE status = 'dead_letter' ORDER BY id"  # noqa: S608
    ).fetchall()
    return [_status(r) for r in rows]


def reset_dead_letter(conn: apsw.Connection, event_id: str | None, now: float) -> int:
    """Put one dead letter (or all of them: event_id None) back to pending, attempts 0, due now,
    no longer held by the circuit breaker. Returns how many rows were reset."""
    sql = (
        "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, held_since = NULL"
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
        f"SELECT {_STATUS_COLS} FROM outbox WHERE source = ? ORDER BY id",  # noqa: S608
        (source,),
    ).fetchall()
    return [_status(r) for r in rows]


def get_status(conn: apsw.Connection, event_id: str) -> DeliveryStatus | None:
    rows = conn.execute(
        f"SELECT {_STATUS_COLS} FROM outbox WHERE event_id = ?",  # noqa: S608
        (event_id,),
    ).fetchall()
    return _status(rows[0]) if rows else None


# ---- per-host hold (the dispatcher's circuit breaker) and the operator's host view ---------------


def host_of(url: str) -> str:
    """The breaker's and the per-host cap's key: lower-case host name and port, the scheme's default
    port made explicit ("example.com:443", "[::1]:8080"). Two ports of one machine are two receivers
    (two services, often two tenants); one name on one port is one receiver whatever the path."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return url.lower()  # never a stored target (checked at enqueue), but must not raise inside SQL
    host = (parts.hostname or "").lower()
    if port is None:
        port = 443 if parts.scheme.lower() == "https" else 80
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def hold_host(
    conn: apsw.Connection,
    host: str,
    *,
    until: float,
    now: float,
    max_hold: float,
    error: str,
    in_flight: Sequence[int] = (),
) -> tuple[int, int]:
    """Hold the host's pending rows due before `until` back to `until` (attempts unchanged; a row's
    first hold is stamped in held_since), but never past held_since + max_hold: a row due whose hold
    has lasted max_hold becomes a dead letter with `error` instead, unless it is being attempted right
    now (`in_flight`: its outcome is recorded by the attempt). Returns (held, dead-lettered)."""
    skip = list(in_flight)
    conn.execute(
        "UPDATE outbox SET status = 'dead_letter', last_error = ? WHERE host = ? AND status = 'pending'"  # noqa: S608 (marks)
        " AND next_attempt_at <= ? AND held_since IS NOT NULL AND held_since + ? <= ?"
        + (f" AND id NOT IN ({_marks(skip)})" if skip else ""),
        (error[:MAX_ERROR], host, now, max_hold, now, *skip),
    )
    dead = int(conn.changes())
    # next_attempt_at = max(next_attempt_at, min(until, hold's start + max_hold)), written with CASE: two-
    # argument max/min are SQLite's (PostgreSQL's are GREATEST/LEAST)
    conn.execute(
        "UPDATE outbox SET held_since = COALESCE(held_since, :now), next_attempt_at = CASE"
        " WHEN next_attempt_at >= :until OR next_attempt_at >= COALESCE(held_since, :now) + :max_hold"
        " THEN next_attempt_at"
        " WHEN :until <= COALESCE(held_since, :now) + :max_hold THEN :until"
        " ELSE COALESCE(held_since, :now) + :max_hold END"
        " WHERE host = :host AND status = 'pending' AND next_attempt_at < :until",
        {"now": now, "until": until, "max_hold": max_hold, "host": host},
    )
    return int(conn.changes()), dead


def release_host(conn: apsw.Connection, host: str, *, now: float, held_until: float) -> int:
    """The host answers again: none of its rows is held any more (a later hold starts their max_hold
    afresh), and those waiting for a time up to `held_until` are due now. Returns how many were held."""
    conn.execute(
        "UPDATE outbox SET held_since = NULL, next_attempt_at = CASE WHEN next_attempt_at > :now"
        " AND next_attempt_at <= :held_until THEN :now ELSE next_attempt_at END"
        " WHERE host = :host AND status = 'pending' AND held_since IS NOT NULL",
        {"now": now, "held_until": held_until, "host": host},
    )
    return int(conn.changes())


@dataclass(frozen=True)
class HostBacklog:
    """Pending deliveries of one target host, for operators."""

    host: str
    pending: int
    held: int  # held back by the breaker now (held_since set, not yet due)
    oldest_created_at: float
    next_attempt_at: float


def hosts(conn: apsw.Connection, now: float) -> list[HostBacklog]:
    """Every host with pending rows, the one with the oldest pending row first."""
    rows = _rows(
        conn,
        "SELECT url, COUNT(*), COUNT(*) FILTER (WHERE held_since IS NOT NULL AND next_attempt_at > ?), MIN(created_at),"
        " MIN(next_attempt_at) FROM outbox WHERE status = 'pending' GROUP BY url",
        (now,),
    )
    merged: dict[str, list[float]] = {}
    for url, count, held, oldest, next_at in rows:
        m = merged.setdefault(host_of(url), [0, 0, float(oldest), float(next_at)])
        m[0] += int(count)
        m[1] += int(held)
        m[2] = min(m[2], float(oldest))
        m[3] = min(m[3], float(next_at))
    found = [HostBacklog(h, int(m[0]), int(m[1]), m[2], m[3]) for h, m in merged.items()]
    return sorted(found, key=lambda b: (b.oldest_created_at, b.host))
