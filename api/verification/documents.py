"""The published documents: the formulas (/methodology) and the decision logging discovery document."""

from __future__ import annotations

from typing import Any

from api.http import McpInfo
from core import decisions

METHODOLOGY: dict[str, Any] = {
    "version": 1,
    "hash": "SHA-256; every hash is written as lowercase hex (Merkle values as 0x-prefixed bytes32)",
    "canonical_json": "RFC 8785 (JSON Canonicalization Scheme): sorted keys, no whitespace, "
    "ECMAScript number form, UTF-8; payloads carry no floats",
    "streams": {
        "decision": {
            "stream": "agent:<agent_uuid>",
            "payload_hash": "SHA-256(RFC8785(entry))",
            "chain_hash": 'SHA-256(agent_id + ":" + seq + ":" + prev_hash + ":" + payload_hash)',
            "entry_fields": [
                "agent_id",
                "content_hash",
                "correlation_ref",
                "event_type",
                "evidence_manifest",
                "model_id",
                "model_version",
                "timestamp",
            ],
        },
        "order": {
            "stream": "order:<order_id>",
            "chain_hash": "SHA-256(prev_hash || RFC8785(action))",
        },
        "hire": {
            "stream": "hire:<job_id>",
            "chain_hash": "SHA-256(prev_hash || RFC8785(move))",
            "read": "GET /api/a2a/hire/{jobId}/audit",
        },
    },
    "prev_hash": 'the previous chain_hash of the same stream; the literal "genesis" for its first entry (seq 1)',
    "seq": "counts from 1 per stream, without gaps",
    "merkle_tree": {
        "spec": "RFC 9162 section 2.1 (Certificate Transparency v2)",
        "leaf_index": "audit_id - 1 (entries in append order, across every stream)",
        "leaf_data": '"<audit_id>:<stream>:<chain_hash>" (ASCII)',
        "leaf_hash": "SHA-256(0x00 || leaf_data)",
        "node_hash": "SHA-256(0x01 || left || right)",
        "tree_hash": "MTH(D[n]): split at k, the largest power of two smaller than n; MTH of no leaves is SHA-256('')",
        "inclusion_proof": "RFC 9162 2.1.3 (GET /api/audit/proof/{audit_id}?tree_size=)",
        "consistency_proof": "RFC 9162 2.1.4 (GET /api/audit/consistency?first=&second=)",
    },
    "anchoring": {
        "contract": "AuditAnchor.anchor(uint64 treeSize, bytes32 root), nightly (and on demand); "
        "checkpoint(i), checkpointCount(), rootAt(treeSize); verifyInclusion(index, treeSize, leaf, proof) "
        "checks a proof on-chain against the anchored root",
        "checkpoints": "GET /api/audit/checkpoints",
    },
    "verifier": "verify <audit_id> --api URL --rpc URL: recomputes every hash, checks the proof against the root "
    "read from the chain, and consistency between consecutive anchors",
}


def discovery(base: str, mcp: McpInfo | None = None) -> dict[str, Any]:
    doc = {
        "service": "agentledger decision logging",
        "version": 1,
        "endpoint": f"{base}/api/agents/{{agent_uuid}}/log",
        "method": "POST",
        "auth": "Authorization: Bearer <API key> scoped to the agent or its account",
        "idempotency": "Idempotency-Key header supported (24 h)",
        "tiers": {
            "routine": "everyday decisions",
            "high_stakes": "decisions with material consequences for a person or for money",
            "critical": "irreversible or safety- or money-critical decisions; an evidence_manifest of at least "
            "one item is required",
        },
        "fields": {
            "required": ["event_type", "content_hash", "model_id", "model_version"],
            "optional": ["evidence_manifest", "correlation_ref", "webhook_url", "webhook_secret"],
            "unknown_fields": "rejected (400 unknown_field)",
        },
        "evidence": {
            "accepted": "hashes only: evidence_manifest = [{type: pdf|json|text, sha256: 64 lowercase hex}]",
            "max_items": decisions.MAX_EVIDENCE_ITEMS,
            "raw_content": "rejected with 400 evidence_content_not_accepted",
        },
        "rate_limit": {
            "limit": decisions.RATE_LIMIT_PER_HOUR,
            "per": "API key",
            "window": "fixed, resets at the top of every UTC hour",
            "exceeded": "429 with Retry-After and retry_after_seconds",
        },
        "webhook": {
            "event": decisions.EVENT,
            "when": "webhook_url given; sent after the entry is committed, retried at least once per event id",
            "signature": "X-Service-Signature: sha256=HMAC-SHA256(webhook_secret, body) and Standard Webhooks "
            "headers; a random 32-byte hex secret when webhook_secret is absent",
            "payload": "{event, job_id (audit_id), status (tier), timestamp, metadata{audit_id, agent_uuid, tier, "
            "chain_hash, content_hash}}",
            "stored": "only the delivery itself",
            "secret": "when webhook_url is given without webhook_secret, the 201 returns the generated secret once "
            "as webhook_secret; it is kept only in the delivery row, and an Idempotency-Key replay omits it (send your "
            "own webhook_secret if you may retry)",
        },
        "verification": {
            "page": f"{base}/verify/{{audit_id}}",
            "checkpoints": f"{base}/api/audit/checkpoints",
            "inclusion_proof": f"{base}/api/audit/proof/{{audit_id}}?tree_size=",
            "consistency_proof": f"{base}/api/audit/consistency?first=&second=",
            "cli": "verify <audit_id> --api URL --rpc URL",
            "anchoring": "Merkle root anchored on-chain (AuditAnchor) nightly",
        },
        "methodology": f"{base}/methodology",
    }
    if mcp is not None:
        doc["mcp"] = {
            "endpoint": base + mcp.path,
            "protocol_versions": list(mcp.versions),
            "tools": [name for op in ("logDecision", "verifyEntry") for name in mcp.tools.get(op, ())],
            "resources": ["agentledger://audit/{audit_id}", "agentledger://methodology"],
        }
    return doc
