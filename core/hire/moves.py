"""The one way a hire job's state change is recorded: an audit entry on the job's stream and a signed
webhook to the caller and to the provider, in the transaction that makes the change.

Stream `hire:<job id>`, kind `hire_transition`, the order streams' chain rule:
chain_hash = SHA-256(prev_hash || RFC 8785 JSON of the move) (core.audit). A move's payload names
the job, its kind, the states, the time and what the move adds (amount, output SHA-256 and CID,
error code, transaction). The output's digest is committed by its own move (`output_committed`)
before any payment moves.
"""

from __future__ import annotations

import json
from typing import Any

from core import audit, outbox
from core.hire.rules import WEBHOOK_EVENT
from core.isotime import iso_utc
from core.store import Conn
from core.store import audit as audit_store
from core.store import hire as store
from core.store.audit import AuditEntry
from core.store.hire import JobRow

KIND = "hire_transition"


def stream(job_id: str) -> str:
    return f"hire:{job_id}"


def record(
    conn: Conn,
    job: JobRow,
    from_state: str | None,
    to_state: str,
    now: float,
    extra: dict[str, Any] | None = None,
    *,
    notify_provider: bool = True,
) -> AuditEntry:
    """Audit entry + webhooks of one move of `job` (whose row the caller writes)."""
    payload: dict[str, Any] = {
        "job_id": job.id,
        "kind": job.kind,
        "service_type": job.service_type,
        "provider_token_id": job.provider_token_id,
        "from_state": from_state,
        "to_state": to_state,
        "at": iso_utc(now),
    }
    if extra:
        payload.update({k: v for k, v in extra.items() if v is not None})
    entry = audit.append(conn, stream=stream(job.id), kind=KIND, payload=payload, chain=audit.order_rule, now=now)
    body = {
        "event": WEBHOOK_EVENT,
        "jobId": job.id,
        "kind": job.kind,
        "serviceType": job.service_type,
        "status": to_state,
        "fromStatus": from_state,
        "auditId": entry.id,
        "timestamp": iso_utc(now),
    }
    for key in ("output_sha256", "output_cid", "error_code", "tx_hash"):
        if extra and extra.get(key) is not None:
            body[_camel(key)] = extra[key]
    targets: list[tuple[str, str]] = []
    if job.caller_webhook_url and job.caller_webhook_secret:
        targets.append((job.caller_webhook_url, job.caller_webhook_secret))
    if notify_provider:
        service = store.get_service(conn, job.provider_uuid, job.service_type)
        if service is not None and service.webhook_url and service.webhook_secret:
            targets.append((service.webhook_url, service.webhook_secret))
    for url, secret in targets:
        outbox.enqueue_webhook(
            conn, event=WEBHOOK_EVENT, source=f"hire:{job.id}", url=url, secret=secret, payload=body, now=now
        )
    return entry


#: How a reader checks a job's stream (GET /api/a2a/hire/{jobId}/audit), in its answer's words.
CHAIN_RULE = (
    "chainHash = SHA-256(prevHash || canonicalPayload), UTF-8, lowercase hex: canonicalPayload is the payload's "
    'RFC 8785 JSON, exactly the bytes hashed; prevHash is the previous entry\'s chainHash, "genesis" for seq 1'
)
MERKLE_RULE = (
    "each entry is leaf auditId - 1 of the log's RFC 9162 Merkle tree (leafHash = SHA-256(0x00 || "
    '"<auditId>:<stream>:<chainHash>")): proofUrl proves it against an anchored root (GET /api/audit/checkpoints); '
    "verifyUrl shows every step"
)


def stream_json(conn: Conn, job: JobRow, base: str) -> dict[str, Any]:
    """The job's audit stream, every entry in order with its hashes and where to check them."""
    entries = audit_store.stream_entries(conn, stream(job.id))
    return {
        "jobId": job.id,
        "kind": job.kind,
        "status": job.status,
        "stream": stream(job.id),
        "entries": [
            {
                "auditId": e.id,
                "seq": e.seq,
                "kind": e.kind,
                "createdAt": iso_utc(e.created_at),
                "payload": json.loads(e.payload),
                "canonicalPayload": e.payload,
                "prevHash": e.prev_hash,
                "chainHash": e.chain_hash,
                "leafHash": "0x" + e.leaf_hash.hex(),
                "verifyUrl": f"{base}/verify/{e.id}",
                "proofUrl": f"{base}/api/audit/proof/{e.id}",
            }
            for e in entries
        ],
        "chainRule": CHAIN_RULE,
        "merkleRule": MERKLE_RULE,
        "methodologyUrl": f"{base}/methodology",
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
