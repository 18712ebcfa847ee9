"""SQL of stored deliverables (table ipfs_objects): content addressed by its CIDv1 base32 text.

Callers compute the CID (core.ipfs.cid_of) and own the transaction; a CID names one content for
ever, so storing it again is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import apsw


@dataclass(frozen=True)
class ObjectInfo:
    cid: str
    size: int
    pinned: bool
    created_at: float


def put(conn: apsw.Connection, cid: str, content: bytes, now: float) -> bool:
    """Store `content` under `cid`; True when it was new, False when the CID was already stored."""
    conn.execute(
        "INSERT INTO ipfs_objects (cid, size, content, pinned, created_at) VALUES (?, ?, ?, 0, ?)"
        " ON CONFLICT (cid) DO NOTHING",
        (cid, len(content), content, now),
    )
    return conn.changes() > 0


def get(conn: apsw.Connection, cid: str) -> bytes | None:
    row = conn.execute("SELECT content FROM ipfs_objects WHERE cid = ?", (cid,)).fetchone()
    return None if row is None else bytes(cast(bytes, row[0]))


def info(conn: apsw.Connection, cid: str) -> ObjectInfo | None:
    """Everything but the bytes (HEAD requests, pin state) without reading the blob."""
    row = conn.execute("SELECT cid, size, pinned, created_at FROM ipfs_objects WHERE cid = ?", (cid,)).fetchone()
    if row is None:
        return None
    return ObjectInfo(str(row[0]), cast(int, row[1]), bool(row[2]), cast(float, row[3]))


def mark_pinned(conn: apsw.Connection, cid: str) -> bool:
    """Record that an IPFS node pinned `cid`; False when no such object is stored."""
    conn.execute("UPDATE ipfs_objects SET pinned = 1 WHERE cid = ?", (cid,))
    return conn.changes() > 0


def unpinned(conn: apsw.Connection, limit: int = 100) -> list[str]:
    """CIDs stored but not yet pinned (a pin that failed, or no IPFS node configured then), oldest first."""
    rows = conn.execute(
        "SELECT cid FROM ipfs_objects WHERE pinned = 0 ORDER BY created_at, cid LIMIT ?", (limit,)
    ).fetchall()
    return [str(r[0]) for r in rows]
