"""The transparency log as auditors read it: checkpoints anchored on-chain and RFC 9162 inclusion
proofs of entries, as JSON-ready views (the SQL is core.store.audit's).

Merkle values (leaf hashes, roots, proof nodes) are 0x-prefixed lowercase hex (bytes32, as on
chain); chain and content hashes elsewhere are plain lowercase hex.
"""

from __future__ import annotations

from typing import Any

from core.deployments import Deployment
from core.errors import ServiceError
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
