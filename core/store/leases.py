"""SQL of leases (table leases): one holder at a time for a named piece of work (a background job, a
service, the indexer of a chain), kept by renewing it before it expires.

A lease is taken over only when it has expired (or by compare-and-set from a holder known to be gone,
`take_over`); each takeover bumps `term`, so a holder that stalled past its expiry and wakes up finds
its (holder, term) gone: `fence`, run inside the holder's write transaction, refuses with LostLease
and the transaction rolls back. Times are the callers' (unix seconds), never the database's.
Portable SQL only: `?` placeholders, ON CONFLICT, CASE, RETURNING.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.store.types import Conn

#: expires_at of a released lease: in the past of any clock, so the next acquire takes it at once.
RELEASED = 0.0


class LostLease(RuntimeError):
    """The lease is no longer this holder's (taken over after it expired): the write must not happen."""


@dataclass(frozen=True)
class LeaseRow:
    name: str
    holder: str
    term: int
    expires_at: float


def acquire_or_renew(conn: Conn, name: str, holder: str, ttl: float, now: float) -> int | None:
    """Take `name` for `holder` until now + ttl: created if missing; renewed if `holder` has it (the
    term unchanged, even when it expired meanwhile: nobody else held it since); taken over when it has
    expired (the term bumped). The term held, or None while another holder's lease runs."""
    conn.execute(
        "INSERT INTO leases (name, holder, term, expires_at) VALUES (?, ?, 1, ?) ON CONFLICT (name) DO NOTHING",
        (name, holder, now + ttl),
    )
    rows = conn.execute(
        "UPDATE leases SET term = CASE WHEN holder = ? THEN term ELSE term + 1 END, holder = ?, expires_at = ?"
        " WHERE name = ? AND (holder = ? OR expires_at <= ?) RETURNING term",
        (holder, holder, now + ttl, name, holder, now),
    ).fetchall()
    return int(rows[0][0]) if rows else None  # type: ignore[arg-type]


def take_over(conn: Conn, name: str, holder: str, ttl: float, now: float, prior: LeaseRow) -> int | None:
    """Take `name` from `prior` (its holder is known to be gone) before it expires, if it is still
    exactly `prior` (holder and term); the new term, or None when it changed meanwhile."""
    rows = conn.execute(
        "UPDATE leases SET holder = ?, term = term + 1, expires_at = ? WHERE name = ? AND holder = ? AND term = ?"
        " RETURNING term",
        (holder, now + ttl, name, prior.holder, prior.term),
    ).fetchall()
    return int(rows[0][0]) if rows else None  # type: ignore[arg-type]


def release(conn: Conn, name: str, holder: str) -> bool:
    """Give `name` up (if `holder` has it): the next acquire by anyone takes it at once. The row and its
    term stay, so terms only ever grow."""
    rows = conn.execute(
        "UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ? RETURNING term", (RELEASED, name, holder)
    ).fetchall()
    return bool(rows)


def fence(conn: Conn, name: str, holder: str, term: int, now: float, ttl: float | None = None) -> None:
    """Inside a write transaction: raise LostLease unless `holder` still has `name` at `term`; with
    `ttl`, also extend it to now + ttl. A lease that expired but was not taken over still passes
    (nobody else has held it since: every takeover changes the holder or the term), so a step slower
    than the ttl on a lone process is not thrown away. The UPDATE locks the lease row until the
    transaction ends, so a takeover cannot commit between this check and the caller's COMMIT (and one
    waiting for the row sees the extended expiry)."""
    if ttl is None:
        sql = "UPDATE leases SET expires_at = expires_at"
        params: tuple[object, ...] = ()
    else:
        sql = "UPDATE leases SET expires_at = ?"
        params = (now + ttl,)
    rows = conn.execute(
        sql + " WHERE name = ? AND holder = ? AND term = ? RETURNING term", (*params, name, holder, term)
    ).fetchall()
    if not rows:
        raise LostLease(f"lease {name!r} is no longer held by {holder} at term {term}")


def get(conn: Conn, name: str) -> LeaseRow | None:
    """The lease row of `name` (expired or not), or None if it was never taken."""
    row = conn.execute("SELECT name, holder, term, expires_at FROM leases WHERE name = ?", (name,)).fetchone()
    return None if row is None else LeaseRow(str(row[0]), str(row[1]), int(row[2]), float(row[3]))  # type: ignore[arg-type]


def all_leases(conn: Conn) -> list[LeaseRow]:
    """Every lease row, by name (for /healthz)."""
    rows = conn.execute("SELECT name, holder, term, expires_at FROM leases ORDER BY name").fetchall()
    return [LeaseRow(str(r[0]), str(r[1]), int(r[2]), float(r[3])) for r in rows]  # type: ignore[arg-type]
