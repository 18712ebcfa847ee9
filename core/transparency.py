"""The transparency log as auditors read it: checkpoints anchored on-chain, RFC 9162 inclusion proofs
of entries and an entry's whole verification (its hashes recomputed, with the shell commands that
recompute them), as JSON-ready views (the SQL is core.store.audit's).

Merkle values (leaf hashes, roots, proof nodes) are 0x-prefixed lowercase hex (bytes32, as on
chain); chain and content hashes elsewhere are plain lowercase hex.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import merkle
from core import audit
from core.deployments import Deployment
from core.errors import ServiceError
from core.isotime import iso_utc
from core.networks import network_for
from core.store import Conn
from core.store import audit as audit_store


def anchor_address(deployment: Deployment) -> str | None:
    """The AuditAnchor contract the log's checkpoints are anchored in (shown to auditors), if deployed."""
    return deployment.contracts.get("AuditAnchor")


def hex32(b: bytes) -> str:
    return "0x" + b.hex()


def explorer_tx_url(chain_id: int, tx_hash: str) -> str | None:
    explorer = network_for(chain_id).explorer
    return f"{explorer}/tx/{tx_hash}" if explorer else None


def checkpoint_json(chain_id: int, a: audit_store.Anchor) -> dict[str, Any]:
    return {
        "index": a.idx,
        "tree_size": a.tree_size,
        "root": a.root,
        "anchorer": a.anchorer,
        "block_number": a.block_number,
        "tx_hash": a.tx_hash,
        "explorer_url": explorer_tx_url(chain_id, a.tx_hash),
    }


def entry_or_404(conn: Conn, raw_id: str) -> audit_store.AuditEntry:
    # isascii: "²".isdigit() is True but int("²") raises
    entry = audit_store.get(conn, int(raw_id)) if raw_id.isascii() and raw_id.isdigit() and len(raw_id) < 19 else None
    if entry is None:
        raise ServiceError(404, "entry_not_found", f"no audit entry {raw_id}", param="audit_id")
    return entry


def proof_json(conn: Conn, chain_id: int, entry: audit_store.AuditEntry, tree_size: int = 0) -> dict[str, Any]:
    """The inclusion proof of `entry` at `tree_size` (0: the latest anchor holding it, else the
    current tree). 422 invalid_tree_size when the tree is too small or larger than the log."""
    anchored = {a.tree_size: a for a in audit_store.anchors(conn, chain_id)}
    if tree_size == 0:
        covering = audit_store.anchor_covering(conn, chain_id, entry.id)
        tree_size = covering.tree_size if covering is not None else audit_store.size(conn)
    try:
        proof = audit_store.inclusion_proof(conn, entry.leaf_index, tree_size)
    except ValueError as exc:
        raise ServiceError(422, "invalid_tree_size", str(exc), param="tree_size") from exc
    anchor = anchored.get(tree_size)
    return {
        "audit_id": entry.id,
        "leaf_index": entry.leaf_index,
        "leaf_hash": hex32(entry.leaf_hash),
        "tree_size": tree_size,
        "root": hex32(audit_store.root(conn, tree_size)),
        "proof": [hex32(p) for p in proof],
        "anchored": anchor is not None,
        "anchor": None if anchor is None else checkpoint_json(chain_id, anchor),
    }


# ---- an entry's verification: what /verify shows, recomputed from the stored entry ------------------


def _q(text: str) -> str:
    return shlex.quote(text)


def commands(entry: audit_store.AuditEntry) -> dict[str, str]:
    """POSIX shell commands (printf, sha256sum) recomputing the entry's hashes from its fields."""
    payload = _q(entry.payload)
    out = {"payload_hash": f"printf '%s' {payload} | sha256sum"}
    if entry.stream.startswith("agent:"):
        agent_id = entry.stream.removeprefix("agent:")
        inner = f"printf '%s' {payload} | sha256sum | cut -d' ' -f1"
        out["chain_hash"] = f"printf '%s' \"{agent_id}:{entry.seq}:{entry.prev_hash}:$({inner})\" | sha256sum"
    else:
        out["chain_hash"] = f"printf '%s%s' {_q(entry.prev_hash)} {payload} | sha256sum"
    leaf = _q(audit.leaf_data(entry.id, entry.stream, entry.chain_hash).decode())
    out["leaf_hash"] = f"printf '\\000%s' {leaf} | sha256sum"
    return out


def recompute_chain_hash(entry: audit_store.AuditEntry) -> str:
    body = entry.payload.encode()
    if entry.stream.startswith("agent:"):
        agent_id = entry.stream.removeprefix("agent:")
        return audit.decision_chain_hash(agent_id, entry.seq, entry.prev_hash, audit.sha256_hex(body))
    return audit.order_chain_hash(entry.prev_hash, body)


def _previous(conn: Any, entry: audit_store.AuditEntry) -> dict[str, Any] | None:
    """The stream's previous entry, whose chain hash must equal this entry's prev_hash."""
    prev = audit_store.by_stream_seq(conn, entry.stream, entry.seq - 1) if entry.seq > 1 else None
    if prev is None:
        return None
    return {"audit_id": prev.id, "chain_hash": prev.chain_hash, "links": prev.chain_hash == entry.prev_hash}


def verification_json(conn: Conn, deployment: Deployment, base: str, entry: audit_store.AuditEntry) -> dict[str, Any]:
    chain_id = deployment.chain_id
    payload_hash = audit.sha256_hex(entry.payload.encode())
    decision = entry.stream.startswith("agent:")
    if decision:
        chain_input = f"{entry.stream.removeprefix('agent:')}:{entry.seq}:{entry.prev_hash}:{payload_hash}"
    else:
        chain_input = entry.prev_hash + entry.payload
    leaf = audit.leaf_data(entry.id, entry.stream, entry.chain_hash)
    inclusion = proof_json(conn, chain_id, entry)
    root = bytes.fromhex(inclusion["root"][2:])
    proof = [bytes.fromhex(p[2:]) for p in inclusion["proof"]]
    anchor = inclusion["anchor"]
    reason = merkle.inclusion_failure(entry.leaf_hash, entry.leaf_index, inclusion["tree_size"], proof, root)
    if reason is None and anchor is not None and anchor["root"] != inclusion["root"]:
        reason = f"root mismatch: the log's root {inclusion['root']} is not the anchored {anchor['root']}"
    return {
        "audit_id": entry.id,
        "stream": entry.stream,
        "seq": entry.seq,
        "kind": entry.kind,
        "created_at": iso_utc(entry.created_at),
        "payload": json.loads(entry.payload),
        "payload_canonical": entry.payload,
        "payload_hash": payload_hash,
        "prev_hash": entry.prev_hash,
        "chain_hash": entry.chain_hash,
        "chain_rule": "decision" if decision else "order",
        "chain_input": chain_input,
        "chain_hash_recomputed": recompute_chain_hash(entry),
        "leaf": {"index": entry.leaf_index, "data": leaf.decode(), "hash": "0x" + entry.leaf_hash.hex()},
        "commands": commands(entry),
        "inclusion": {
            "tree_size": inclusion["tree_size"],
            "root": inclusion["root"],
            "proof": inclusion["proof"],
            "anchored": inclusion["anchored"],
            "valid": reason is None,
            "reason": reason,
        },
        "anchor": None
        if anchor is None
        else {
            **anchor,
            "chain_id": chain_id,
            "network": network_for(chain_id).name,
            "contract": anchor_address(deployment),
        },
        "previous": _previous(conn, entry),
        "verify_command": f"verify {entry.id} --api {base} --rpc <JSON-RPC URL of chain {chain_id}>",
        "methodology_url": f"{base}/methodology",
    }
