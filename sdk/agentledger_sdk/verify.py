"""Checking the audit log here, trusting nothing but SHA-256: the formulas the service publishes at
/methodology, recomputed client-side. Pure functions, no network.

- A decision entry (stream ``agent:<uuid>``): payload_hash = SHA-256(RFC 8785 JSON of the entry);
  chain_hash = SHA-256(agent_id + ":" + seq + ":" + prev_hash + ":" + payload_hash).
- An order or hire entry (``order:<id>``, ``hire:<job id>``): chain_hash = SHA-256(prev_hash || RFC 8785
  JSON of the move).
- prev_hash is the stream's previous chain_hash, "genesis" for its first entry (seq 1).
- Every entry is leaf ``audit_id - 1`` of one RFC 9162 Merkle tree: leaf_hash = SHA-256(0x00 ||
  "<audit_id>:<stream>:<chain_hash>"), node = SHA-256(0x01 || left || right); an inclusion proof leads
  from the leaf to the root of a tree size (RFC 9162 2.1.3.2), whose checkpoints are anchored on-chain.

``entry_problems(v)`` runs every check over the JSON of GET /verify/{audit_id} and says what fails.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

from agentledger_sdk._escrow import jcs

__all__ = [
    "GENESIS",
    "canonical_json",
    "decision_chain_hash",
    "entry_problems",
    "leaf_hash",
    "order_chain_hash",
    "root_from_inclusion_proof",
    "sha256_hex",
]

GENESIS = "genesis"


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) JSON of an audit payload (integers, strings, booleans, null, objects, arrays)."""
    return jcs(value).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decision_chain_hash(agent_id: str, seq: int, prev_hash: str, payload_hash: str) -> str:
    return sha256_hex(f"{agent_id}:{seq}:{prev_hash}:{payload_hash}".encode())


def order_chain_hash(prev_hash: str, canonical_payload: bytes) -> str:
    return sha256_hex(prev_hash.encode("ascii") + canonical_payload)


def leaf_hash(audit_id: int, stream: str, chain_hash: str) -> bytes:
    return hashlib.sha256(b"\x00" + f"{audit_id}:{stream}:{chain_hash}".encode()).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion_proof(leaf: bytes, index: int, tree_size: int, proof: Sequence[bytes]) -> bytes:
    """The root an inclusion proof of ``leaf`` at ``index`` leads to (RFC 9162 2.1.3.2); ValueError
    when the proof's length does not fit (index, tree_size)."""
    if not 0 <= index < tree_size:
        raise ValueError(f"index {index} out of range for tree size {tree_size}")
    fn, sn, r = index, tree_size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ValueError("proof is too long")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not (fn & 1 or fn == 0):
                fn >>= 1
                sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ValueError("proof is too short")
    return r


def _hex32(value: Any) -> bytes:
    text = str(value)
    raw = bytes.fromhex(text[2:] if text.startswith("0x") else text)
    if len(raw) != 32:
        raise ValueError(f"{text!r} is not a 32-byte hash")
    return raw


def entry_problems(v: Mapping[str, Any]) -> list[str]:
    """What does not hold in a verification (the JSON of GET /verify/{audit_id}); empty when all holds:
    the canonical payload is the payload's RFC 8785 form, the payload and chain hashes recompute by the
    stream's rule, the leaf binds (audit_id, stream, chain_hash), the inclusion proof leads to the
    stated root, and an anchored checkpoint of that size has that root."""
    problems: list[str] = []
    audit_id, stream, seq = int(v["audit_id"]), str(v["stream"]), int(v["seq"])
    prev, chain = str(v["prev_hash"]), str(v["chain_hash"])
    canonical = str(v["payload_canonical"]).encode("utf-8")
    if canonical_json(v["payload"]) != canonical:
        problems.append("payload_canonical is not the RFC 8785 form of payload")
    payload_hash = sha256_hex(canonical)
    if v.get("payload_hash") not in (None, payload_hash):
        problems.append(f"payload_hash is not SHA-256 of the canonical payload ({payload_hash})")
    if (seq == 1) != (prev == GENESIS):
        problems.append(f"prev_hash {prev!r} does not fit seq {seq} (only seq 1 follows 'genesis')")
    if stream.startswith("agent:"):
        recomputed = decision_chain_hash(stream.removeprefix("agent:"), seq, prev, payload_hash)
    else:
        recomputed = order_chain_hash(prev, canonical)
    if not hmac.compare_digest(recomputed, chain):
        problems.append(f"chain_hash does not recompute: {recomputed} by the {stream.split(':')[0]} stream's rule")
    leaf = leaf_hash(audit_id, stream, chain)
    stated_leaf = (v.get("leaf") or {}).get("hash")
    if stated_leaf is not None and _hex32(stated_leaf) != leaf:
        problems.append("the leaf hash is not SHA-256(0x00 || audit_id:stream:chain_hash)")
    inclusion = v.get("inclusion") or {}
    try:
        root = root_from_inclusion_proof(
            leaf, audit_id - 1, int(inclusion["tree_size"]), [_hex32(p) for p in inclusion.get("proof", ())]
        )
        if not hmac.compare_digest(root, _hex32(inclusion["root"])):
            problems.append(f"the inclusion proof leads to 0x{root.hex()}, not to the root {inclusion['root']}")
    except (KeyError, ValueError) as exc:
        problems.append(f"the inclusion proof does not verify: {exc}")
    anchor = v.get("anchor")
    if anchor is not None and anchor.get("root") != inclusion.get("root"):
        problems.append(f"the anchored root {anchor.get('root')} is not the proof's root {inclusion.get('root')}")
    return problems
