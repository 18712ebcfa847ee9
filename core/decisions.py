"""Tamper-evident decision logging: the rules, the stored entry, its chain rule, and the one
transaction that appends it (rate limit, audit entry, Merkle leaf, webhook).

Callers never send content, only SHA-256 hashes of it. Decisions taken where the spec is silent
(published at /.well-known/decisional-logging.json):
- Tiers: `routine`, `high_stakes`, and `critical`: irreversible or safety- or money-relevant
  decisions, which must carry evidence (an `evidence_manifest` of at least one item; 400
  `evidence_required` otherwise). Tiers are recorded and hashed; nothing else differs.
- `model_id` and `model_version` are required (a decision record that cannot say which model
  decided is not auditable); `correlation_ref` is optional.
- Identifiers admit only short tokens (no spaces, no `@`): free text and e-mail addresses cannot
  be smuggled into the public log through them.
- A hash slot (`content_hash`, an evidence item's `sha256`) holding hex digits of the wrong length
  or case (or with 0x) is a malformed hash (400 invalid_field); holding anything else (text,
  base64, an object or array) is content: 400 `evidence_content_not_accepted`. So is an evidence
  item given as a string, an evidence manifest given as an object or a string, or a field named
  like content (CONTENT_FIELDS) at the top level or inside an evidence item.
- The stored entry (hashed into payload_hash, RFC 8785; see `payload`): agent_id, content_hash,
  correlation_ref (null when absent), event_type, evidence_manifest ([] when absent), model_id,
  model_version, timestamp (ISO 8601 UTC, ms). The webhook URL and secret are not part of it and
  are stored nowhere but in the delivery itself.
- When webhook_url comes without webhook_secret, the generated secret is returned once (else
  receivers could not verify the signature); it is not part of what an Idempotency-Key stores.
- The key's right to act for the agent is checked before the webhook URL is resolved: a stranger
  gets 404 without the service resolving names of its choosing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core import audit, outbox
from core.errors import ServiceError
from core.isotime import iso_utc
from core.keys import Caller
from core.store import Conn, ratelimit
from core.store import audit as audit_store
from core.store import wallets as wallet_store

TIERS = ("routine", "high_stakes", "critical")
#: Tiers whose entries must carry at least one evidence item.
EVIDENCE_REQUIRED_TIERS = frozenset({"critical"})
RATE_LIMIT_PER_HOUR = 1000
MAX_EVIDENCE_ITEMS = 64
EVENT = "decision_logged"


@dataclass(frozen=True)
class DecisionLog:
    """What the decision log runs with in this process (a part of its Services)."""

    #: Decision events per API key per UTC hour.
    rate_limit: int = RATE_LIMIT_PER_HOUR


#: Names that only raw content would use: refused as `evidence_content_not_accepted`, not merely unknown.
CONTENT_FIELDS = frozenset(
    {
        "attachment",
        "attachments",
        "base64",
        "body",
        "completion",
        "content",
        "data",
        "document",
        "evidence",
        "evidence_content",
        "file",
        "files",
        "input",
        "message",
        "messages",
        "output",
        "prompt",
        "raw",
        "reasoning",
        "text",
    }
)

_HEXISH = re.compile(r"(0x)?[0-9a-fA-F]*")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Decision:
    """One decision as the caller describes it: hashes and short identifiers only."""

    event_type: str
    content_hash: str
    model_id: str
    model_version: str
    evidence: tuple[tuple[str, str], ...] = ()  # (type, sha256) of each evidence item
    correlation_ref: str | None = None


@dataclass(frozen=True)
class Logged:
    """The appended entry and the answer of the call (without the webhook secret)."""

    entry: audit_store.AuditEntry
    answer: dict[str, Any]
    webhook_event_id: str | None


class RateLimited(ServiceError):
    """429: the key's hourly window is full. Not replayable: a retry with the same Idempotency-Key
    after the reset must really run."""

    def __init__(self, retry_after: int, limit: int) -> None:
        super().__init__(
            429,
            "rate_limit_exceeded",
            f"at most {limit} decision events per hour per API key; the window resets in {retry_after} s",
            param=None,
            replayable=False,
            headers={"Retry-After": str(retry_after)},
            extra={"retry_after_seconds": retry_after},
        )
        self.retry_after = retry_after


# ---- content rules ----------------------------------------------------------------------------------


def _content(param: str, what: str) -> ServiceError:
    return ServiceError(
        400,
        "evidence_content_not_accepted",
        f"{param}: {what}; send only SHA-256 hashes of content, never the content itself",
        param=param,
    )


def _check_hash_slot(value: Any, param: str) -> None:
    """Text, base64 or a structure where a hash belongs is content; wrong-length hex is left to the
    schema (a malformed hash)."""
    if isinstance(value, (dict, list)):
        raise _content(param, "an object or array where a hash belongs")
    if isinstance(value, str) and not _HEXISH.fullmatch(value):
        raise _content(param, "text where a 64-hex-digit hash belongs")


def check_no_content(data: dict[str, Any]) -> None:
    """Refuse a decoded request that carries raw content (400 evidence_content_not_accepted)."""
    for key in data:
        if key in CONTENT_FIELDS:
            raise _content(key, "raw content fields are not accepted")
    if "content_hash" in data:
        _check_hash_slot(data["content_hash"], "content_hash")
    manifest = data.get("evidence_manifest")
    if isinstance(manifest, (dict, str)):
        raise _content("evidence_manifest", "must be an array of {type, sha256} items, not content")
    if not isinstance(manifest, list):
        return
    for i, item in enumerate(manifest):
        param = f"evidence_manifest[{i}]"
        if isinstance(item, (str, list)):
            raise _content(param, "an evidence item must be {type, sha256}, not content")
        if not isinstance(item, dict):
            continue
        for key in item:
            if key in CONTENT_FIELDS:
                raise _content(f"{param}.{key}", "raw content fields are not accepted")
        if "sha256" in item:
            _check_hash_slot(item["sha256"], f"{param}.sha256")


def check_evidence(d: Decision) -> None:
    """A tier that needs evidence without it: 400 evidence_required."""
    if d.event_type in EVIDENCE_REQUIRED_TIERS and not d.evidence:
        raise ServiceError(
            400,
            "evidence_required",
            f"a {d.event_type} decision must carry an evidence_manifest of at least one item",
            param="evidence_manifest",
        )


# ---- the entry ----------------------------------------------------------------------------------------


def payload(agent_uuid: str, d: Decision, timestamp: str) -> dict[str, Any]:
    """The stored entry; its RFC 8785 form is what payload_hash covers."""
    return {
        "agent_id": agent_uuid,
        "content_hash": d.content_hash,
        "correlation_ref": d.correlation_ref,
        "event_type": d.event_type,
        "evidence_manifest": [{"sha256": sha, "type": kind} for kind, sha in d.evidence],
        "model_id": d.model_id,
        "model_version": d.model_version,
        "timestamp": timestamp,
    }


def chain_rule(agent_uuid: str) -> audit.ChainRule:
    """chain_hash = SHA-256(agent_id:seq:prev_hash:SHA-256(canonical payload))."""

    def rule(seq: int, prev_hash: str, body: bytes) -> str:
        return audit.decision_chain_hash(agent_uuid, seq, prev_hash, audit.sha256_hex(body))

    return rule


def webhook_payload(
    entry: audit_store.AuditEntry, agent_uuid: str, tier: str, content_hash: str, ts: str
) -> dict[str, Any]:
    return {
        "event": EVENT,
        "job_id": entry.id,
        "status": tier,
        "timestamp": ts,
        "metadata": {
            "audit_id": entry.id,
            "agent_uuid": agent_uuid,
            "tier": tier,
            "chain_hash": entry.chain_hash,
            "content_hash": content_hash,
        },
    }


def agent_for(conn: Conn, caller: Caller, agent_uuid: str) -> wallet_store.AgentRow:
    """The agent if the key may act for it; 404 otherwise (existence is not leaked)."""
    agent = wallet_store.agent_by_uuid(conn, agent_uuid) if _UUID.fullmatch(agent_uuid) else None
    if agent is None or not caller.may_act_for(agent.account_id, agent.uuid):
        raise ServiceError(404, "agent_not_found", f"no agent {agent_uuid} for this API key", param="agent_uuid")
    return agent


def log_decision(
    conn: Conn,
    caller: Caller,
    agent_uuid: str,
    d: Decision,
    *,
    webhook: tuple[str, str] | None,
    verify_base: str,
    rate_limit: int,
    now: float,
) -> Logged:
    """In the writer's transaction: check the agent against the key, count the key's hourly window,
    append the entry to the agent's stream and the Merkle tree, and queue the webhook (url, secret)
    when one was asked for. `verify_base` is the public base of verification links."""
    agent = agent_for(conn, caller, agent_uuid)
    audit.lock_log(conn)  # before the rate-limit row: one lock order for every process
    hit = ratelimit.hit(conn, caller.key_hash, now, rate_limit)
    if not hit.allowed:
        raise RateLimited(hit.retry_after(now), rate_limit)
    ts = iso_utc(now)
    entry = audit.append(
        conn,
        stream=audit.agent_stream(agent.uuid),
        kind=audit.DECISION,
        payload=payload(agent.uuid, d, ts),
        chain=chain_rule(agent.uuid),
        now=now,
    )
    event_id = None
    if webhook is not None:
        url, secret = webhook
        event_id = outbox.enqueue_webhook(
            conn,
            event=EVENT,
            source=f"audit:{entry.id}",
            url=url,
            secret=secret,
            payload=webhook_payload(entry, agent.uuid, d.event_type, d.content_hash, ts),
            now=now,
        )
    answer = {
        "audit_id": entry.id,
        "chain_hash": entry.chain_hash,
        "content_hash": d.content_hash,
        "tier": d.event_type,
        "timestamp": ts,
        "verification_url": f"{verify_base}/verify/{entry.id}",
    }
    return Logged(entry, answer, event_id)
