"""SQL of the once-only guard of signed messages (table used_signatures): a message's digest, kept
until it could no longer pass the time window. The rule is core.signatures'.
"""

from __future__ import annotations

from core.store.types import Conn


def use(conn: Conn, digest: str, expires_at: float, now: float) -> bool:
    """Record a signed message's digest; False if it was already used (a replay). One insert that
    does nothing on a recorded digest: two writers racing with one signature cannot both see it unused."""
    conn.execute("DELETE FROM used_signatures WHERE expires_at < ?", (now,))
    conn.execute(
        "INSERT INTO used_signatures (digest, expires_at) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
        (digest, expires_at),
    )
    return bool(conn.changes())


def used(conn: Conn, digest: str, now: float) -> bool:
    """Whether a signed message's digest is recorded and not yet expired (a read, no write)."""
    rows = conn.execute("SELECT 1 FROM used_signatures WHERE digest = ? AND expires_at >= ?", (digest, now))
    return bool(rows.fetchall())


def forget(conn: Conn, digest: str) -> None:
    """Give a signature back: what it asked for did not happen (nothing was sent), so it may be retried."""
    conn.execute("DELETE FROM used_signatures WHERE digest = ?", (digest,))
