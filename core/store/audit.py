"""The append-only audit log and its RFC 9162 Merkle tree, in SQLite.

`insert` runs inside the caller's transaction (the change being audited, its audit entry and its
Merkle leaf commit together); core.audit.append computes the entry (canonical payload, chain hash,
leaf hash) and calls it. The tree is kept as the hashes of its complete subtrees
(`merkle_nodes`: level 0 = leaf hashes, level l = the aligned subtree of 2^l leaves); each append writes
the leaf and the subtrees it completes (two rows on average, never a rewrite). Any subtree hash is
then O(log n) point reads, so roots and proofs never rebuild the tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw

import merkle


@dataclass(frozen=True)
class AuditEntry:
    id: int  # the audit_id; its Merkle leaf index is id - 1
    stream: str
    seq: int
    kind: str
    payload: str  # canonical JSON, exactly the bytes hashed
    prev_hash: str
    chain_hash: str
    leaf_hash: bytes
    created_at: float

    @property
    def leaf_index(self) -> int:
        return self.id - 1


_COLUMNS = "id, stream, seq, kind, payload, prev_hash, chain_hash, leaf_hash, created_at"


def _entry(row: tuple[Any, ...]) -> AuditEntry:
    return AuditEntry(*row)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def stream_head(conn: apsw.Connection, stream: str) -> tuple[int, str] | None:
    """(seq, chain_hash) of the stream's last entry; None for a stream without entries."""
    last = _rows(conn, "SELECT seq, chain_hash FROM audit_log WHERE stream = ? ORDER BY seq DESC LIMIT 1", (stream,))
    return (int(last[0][0]), str(last[0][1])) if last else None


def insert(conn: apsw.Connection, entry: AuditEntry) -> None:
    """Write `entry` (its id must be size() + 1) and its Merkle leaf. Callers hold the write lock
    (a transaction), so seq and the leaf index have no gaps and no forks under concurrency."""
    e = entry  # a plain tuple: dataclasses.astuple deep-copies every field (on every decision's path)
    conn.execute(
        f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (e.id, e.stream, e.seq, e.kind, e.payload, e.prev_hash, e.chain_hash, e.leaf_hash, e.created_at),
    )
    _append_leaf(conn, entry.id - 1, entry.leaf_hash)


def _append_leaf(conn: apsw.Connection, index: int, leaf: bytes) -> None:
    rows = [(0, index, leaf)]
    level, idx, node = 0, index, leaf
    while idx & 1:  # a right child completes its parent
        left = _node(conn, level, idx - 1)
        node = merkle.node_hash(left, node)
        level, idx = level + 1, idx >> 1
        rows.append((level, idx, node))
    conn.executemany("INSERT INTO merkle_nodes (level, idx, hash) VALUES (?, ?, ?)", rows)


def _node(conn: apsw.Connection, level: int, idx: int) -> bytes:
    rows = _rows(conn, "SELECT hash FROM merkle_nodes WHERE level = ? AND idx = ?", (level, idx))
    if not rows:
        raise LookupError(f"merkle node ({level}, {idx}) missing: the tree is corrupt")
    return bytes(rows[0][0])


def size(conn: apsw.Connection) -> int:
    """Entries (= leaves) in the log."""
    value = _rows(conn, "SELECT max(id) FROM audit_log")[0][0]
    return int(value) if value is not None else 0


def get(conn: apsw.Connection, audit_id: int) -> AuditEntry | None:
    rows = _rows(conn, f"SELECT {_COLUMNS} FROM audit_log WHERE id = ?", (audit_id,))  # noqa: S608
    return _entry(rows[0]) if rows else None


def by_stream_seq(conn: apsw.Connection, stream: str, seq: int) -> AuditEntry | None:
    """Entry `seq` of `stream` (e.g. the predecessor whose chain hash an entry's prev_hash must be)."""
    rows = _rows(conn, f"SELECT {_COLUMNS} FROM audit_log WHERE stream = ? AND seq = ?", (stream, seq))  # noqa: S608
    return _entry(rows[0]) if rows else None


def last_entry_id(conn: apsw.Connection, stream: str) -> int | None:
    """The audit_id of the stream's latest entry; None for a stream without entries."""
    rows = _rows(conn, "SELECT id FROM audit_log WHERE stream = ? ORDER BY seq DESC LIMIT 1", (stream,))
    return int(rows[0][0]) if rows else None


def stream_entries(conn: apsw.Connection, stream: str) -> list[AuditEntry]:
    rows = _rows(conn, f"SELECT {_COLUMNS} FROM audit_log WHERE stream = ? ORDER BY seq", (stream,))  # noqa: S608
    return [_entry(r) for r in rows]


def subtree_hash(conn: apsw.Connection, lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) for lo < hi <= size: the aligned complete subtrees covering [lo, hi), folded
    from the right (RFC 9162: the left part of every split is the largest power of two)."""
    n = hi - lo
    if n & (n - 1) == 0 and lo % n == 0:
        return _node(conn, n.bit_length() - 1, lo // n)
    k = 1 << ((n - 1).bit_length() - 1)
    return merkle.node_hash(subtree_hash(conn, lo, lo + k), subtree_hash(conn, lo + k, hi))


def root(conn: apsw.Connection, tree_size: int) -> bytes:
    """The tree head of the first `tree_size` entries (any size up to the current one)."""
    _check_size(conn, tree_size)
    return merkle.EMPTY_ROOT if tree_size == 0 else subtree_hash(conn, 0, tree_size)


def inclusion_proof(conn: apsw.Connection, index: int, tree_size: int) -> list[bytes]:
    """The RFC 9162 audit path of leaf `index` in the tree of `tree_size` leaves."""
    _check_size(conn, tree_size)
    if not 0 <= index < tree_size:
        raise ValueError(f"leaf {index} is not in a tree of size {tree_size}")
    return merkle.inclusion_path(lambda lo, hi: subtree_hash(conn, lo, hi), index, tree_size)


def consistency_proof(conn: apsw.Connection, first: int, second: int) -> list[bytes]:
    """The RFC 9162 consistency proof between the trees of `first` and `second` leaves."""
    _check_size(conn, second)
    if not 0 <= first <= second:
        raise ValueError(f"first ({first}) must be between 0 and second ({second})")
    if first == second:
        return []
    return merkle.consistency_path(lambda lo, hi: subtree_hash(conn, lo, hi), first, second)


def _check_size(conn: apsw.Connection, tree_size: int) -> None:
    current = size(conn)
    if not 0 <= tree_size <= current:
        raise ValueError(f"tree size {tree_size} is not between 0 and the log's size {current}")


# ---- anchors (projected by the indexer from AuditAnchor.Anchored) ----------------------------------


@dataclass(frozen=True)
class Anchor:
    idx: int
    tree_size: int
    root: str  # 0x hex
    anchorer: str
    block_number: int
    tx_hash: str


_ANCHOR_COLUMNS = "idx, tree_size, root, anchorer, block_number, tx_hash"


def anchors(conn: apsw.Connection, chain_id: int) -> list[Anchor]:
    rows = _rows(conn, f"SELECT {_ANCHOR_COLUMNS} FROM anchors WHERE chain_id = ? ORDER BY idx", (chain_id,))  # noqa: S608
    return [Anchor(*r) for r in rows]


def anchor_covering(conn: apsw.Connection, chain_id: int, audit_id: int) -> Anchor | None:
    """The latest anchor whose tree contains entry `audit_id`."""
    sql = f"SELECT {_ANCHOR_COLUMNS} FROM anchors WHERE chain_id = ? AND tree_size >= ? ORDER BY idx DESC LIMIT 1"  # noqa: S608
    rows = _rows(conn, sql, (chain_id, audit_id))
    return Anchor(*rows[0]) if rows else None
