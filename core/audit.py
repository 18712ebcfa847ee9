"""The audit log's formulas: the two stream chain rules and the Merkle leaf (published at /methodology).

Every audit entry belongs to a stream and carries that stream's chain hash:
- a decision log (stream "agent:<uuid>"):
  chain_hash = SHA-256(agent_id + ":" + seq + ":" + prev_hash + ":" + payload_hash),
  payload_hash = SHA-256(canonical JSON of the stored entry);
- an order (stream "order:<order id>"): chain_hash = SHA-256(prev_hash || canonical JSON of the action).
prev_hash is the stream's previous chain hash (lowercase hex), or the literal "genesis" for its first
entry; seq counts from 1 per stream; canonical JSON is RFC 8785 (JCS). All hashes are lowercase hex.

Every entry is also leaf `audit_id - 1` of one RFC 9162 Merkle tree, whose leaf data is the ASCII string
"<audit_id>:<stream>:<chain_hash>" (so a leaf binds the entry's position, stream and content).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import rfc8785

import merkle
from core.store import Conn, lock
from core.store import audit as store
from core.store.audit import AuditEntry

#: chain(seq, prev_hash, canonical_payload) -> the entry's chain hash (a stream's rule).
ChainRule = Callable[[int, str, bytes], str]

GENESIS = "genesis"
#: The named lock every append takes first (one log, one tree: appends run one at a time).
AUDIT_LOCK = "audit"
DECISION = "decision"
ORDER_TRANSITION = "order_transition"


def canonical(obj: Any) -> bytes:
    """RFC 8785 canonical JSON. Floats are refused: amounts are integers or decimal strings.

    Payloads made of ASCII-keyed objects, arrays, strings, booleans, null and integers within
    +-(2**53 - 1) take a fast path: for them RFC 8785 is exactly sorted-key, compact, non-ASCII-
    preserving JSON (keys sort the same by UTF-16 units and by code points when ASCII; the escapes
    agree). Anything else goes through the rfc8785 library (a property test holds the two equal)."""
    if _plain(obj):
        try:
            return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate: let the library refuse it
            pass
    return rfc8785.dumps(_no_floats(obj))


_MAX_SAFE = 2**53 - 1


def _no_floats(obj: Any) -> Any:
    if isinstance(obj, float):
        raise TypeError("floats are not allowed in audit payloads (use integers or strings)")
    if isinstance(obj, dict):
        for v in obj.values():
            _no_floats(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _no_floats(v)
    return obj


def _plain(obj: Any) -> bool:
    t = type(obj)
    if t is str or t is bool or obj is None:
        return True
    if t is int:
        return bool(-_MAX_SAFE <= obj <= _MAX_SAFE)
    if t is dict:
        return all(type(k) is str and k.isascii() and _plain(v) for k, v in obj.items())
    if t is list:
        return all(_plain(v) for v in obj)
    return False


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decision_chain_hash(agent_id: str, seq: int, prev_hash: str, payload_hash: str) -> str:
    return sha256_hex(f"{agent_id}:{seq}:{prev_hash}:{payload_hash}".encode())


def order_chain_hash(prev_hash: str, payload: bytes) -> str:
    return sha256_hex(prev_hash.encode("ascii") + payload)


def agent_stream(agent_uuid: str) -> str:
    return f"agent:{agent_uuid}"


def order_stream(order_id: str) -> str:
    return f"order:{order_id}"


def leaf_data(audit_id: int, stream: str, chain_hash: str) -> bytes:
    return f"{audit_id}:{stream}:{chain_hash}".encode()


def leaf_hash(audit_id: int, stream: str, chain_hash: str) -> bytes:
    return merkle.leaf_hash(leaf_data(audit_id, stream, chain_hash))


def lock_log(conn: Conn) -> None:
    """Take the log's one lock now (held to the end of the transaction; taking it again is free).
    A transaction that locks rows before appending takes it first, so every process takes the log's
    lock before any row lock and two groups cannot each hold what the other waits for (on PostgreSQL
    a decision's rate-limit row taken before the log's lock deadlocked several processes)."""
    lock(conn, AUDIT_LOCK)


def append(conn: Conn, *, stream: str, kind: str, payload: dict[str, Any], chain: ChainRule, now: float) -> AuditEntry:
    """Append one entry to `stream` and one leaf to the tree, in the caller's transaction: the
    payload in canonical JSON, the stream's chain rule over it, the leaf over (id, stream, hash).

    First the one lock of the log (core.store.serialization): the id, the stream's seq and the Merkle
    siblings are then read after every earlier append committed, so no two writers (processes on
    one PostgreSQL) compute the same id or seq, or hash a sibling that is not there yet."""
    lock_log(conn)
    head = store.stream_head(conn, stream)
    seq, prev = (head[0] + 1, head[1]) if head is not None else (1, GENESIS)
    body = canonical(payload)
    chain_hash = chain(seq, prev, body)
    audit_id = store.size(conn) + 1
    entry = AuditEntry(
        audit_id, stream, seq, kind, body.decode(), prev, chain_hash, leaf_hash(audit_id, stream, chain_hash), now
    )
    store.insert(conn, entry)
    return entry


def order_rule(seq: int, prev_hash: str, body: bytes) -> str:
    """The order stream's chain rule as a ChainRule (seq is not part of it)."""
    return order_chain_hash(prev_hash, body)
