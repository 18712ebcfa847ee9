"""The registry: what callers see of published services, and the evidence behind each score.

Rows are active services of unpaused providers, best reputation first; ties go to the lower wallet
id, then the lower service type (deterministic). `priceUsdc` is both what a standard hire charges
and, when `escrow.available`, exactly what an escrow hire locks (the provider's on-chain
AgentEscrow.priceOf as indexed equals it; `escrow.slaSeconds` is the SLA createJob must name).
Pages are keyed by the last row's (score, wallet, service type): an opaque cursor.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from core.errors import ServiceError
from core.hire import reputation, schemas
from core.hire.services import escrow_terms
from core.isotime import iso_utc
from core.jsontext import usdc
from core.store import Conn
from core.store import hire as store
from core.store.hire import ChainAgent, ServiceRow

MAX_LIMIT = 100


def encode_cursor(score: float, wallet: str, service_type: str) -> str:
    raw = json.dumps([score, wallet, service_type], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str) -> tuple[float, str, str]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        score, wallet, service_type = json.loads(raw)
        if not isinstance(wallet, str) or not isinstance(service_type, str):
            raise ValueError("cursor fields")
        return float(score), wallet, service_type
    except (ValueError, TypeError) as exc:
        raise ServiceError(422, "invalid_cursor", "cursor is not one this API returned", param="cursor") from exc


def service_json(
    s: ServiceRow, agent: ChainAgent | None, *, base: str, schemas_too: bool = True, paused: bool = False
) -> dict[str, Any]:
    """One registry entry (`paused`: its provider is listed for sale; the registry lists none such)."""
    terms = escrow_terms(s, agent, paused=paused)
    out: dict[str, Any] = {
        "wallet": s.wallet,
        "tokenId": s.token_id,
        "serviceType": s.service_type,
        "description": s.description,
        "priceUsdc": usdc(s.price),
        "slaSeconds": s.sla_seconds,
        "runner": s.runner,
        "reputationScore": s.score,
        "successRate": s.success_rate,
        "avgResponseMs": s.avg_ms,
        "p95ResponseMs": s.p95_ms,
        "jobs": s.jobs,
        "lastActiveAt": None if s.last_active_at is None else iso_utc(s.last_active_at),
        "healthy": s.healthy,
        "escrow": {
            "available": terms["available"],
            "slaSeconds": terms["slaSeconds"],
            "onChainPriceUsdc": None if terms["onChainPrice"] is None else usdc(terms["onChainPrice"]),
            "reason": terms["reason"],
        },
        "reputationUrl": f"{base}/api/a2a/reputation?wallet={s.wallet}&serviceType={s.service_type}",
    }
    if schemas_too:
        out["inputSchema"] = schemas.load(s.input_schema)
        out["outputSchema"] = schemas.load(s.output_schema)
    return out


def page(
    conn: Conn,
    *,
    base: str,
    service_type: str | None,
    wallet: str | None,
    max_price: int | None,
    min_score: float | None,
    escrow_only: bool,
    healthy_only: bool,
    cursor: str | None,
    limit: int,
) -> dict[str, Any]:
    limit = max(1, min(limit, MAX_LIMIT))
    rows = store.registry_page(
        conn,
        service_type=service_type,
        wallet=wallet,
        max_price=max_price,
        min_score=min_score,
        escrow_only=escrow_only,
        healthy_only=healthy_only,
        after=None if cursor is None else decode_cursor(cursor),
        limit=limit + 1,
    )
    entries = []
    for s, _paused, _price, _sla in rows[:limit]:
        entries.append(service_json(s, store.chain_agent(conn, s.token_id), base=base))
    last = rows[limit - 1][0] if len(rows) > limit else None
    return {
        "providers": entries,
        "hasMore": last is not None,
        "nextCursor": None if last is None else encode_cursor(last.score, last.wallet, last.service_type),
        "formula": reputation.SCORE_FORMULA,
    }


def evidence(
    conn: Conn, *, base: str, wallet: str, service_type: str, cursor: str | None, limit: int
) -> dict[str, Any]:
    """GET /api/a2a/reputation: a service's score, the formula, and the samples (newest first) with
    the audit entry each came from (its /verify link)."""
    s = store.service_by_wallet(conn, wallet, service_type)
    if s is None:
        raise ServiceError(404, "service_not_found", f"{wallet} offers no {service_type} service", param="wallet")
    before = None
    if cursor is not None:
        try:
            at, job_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            before = (float(at), str(job_id))
        except (ValueError, TypeError) as exc:
            raise ServiceError(422, "invalid_cursor", "cursor is not one this API returned", param="cursor") from exc
    limit = max(1, min(limit, MAX_LIMIT))
    rows = store.samples(conn, s.provider_uuid, service_type, before=before, limit=limit + 1)
    items = [
        {
            "jobId": r.job_id,
            "success": r.success,
            "responseMs": r.response_ms,
            "settledAt": iso_utc(r.settled_at),
            "auditId": r.audit_id,
            "verifyUrl": f"{base}/verify/{r.audit_id}",
        }
        for r in rows[:limit]
    ]
    more = len(rows) > limit
    next_cursor = None
    if more:
        last = rows[limit - 1]
        next_cursor = base64.urlsafe_b64encode(json.dumps([last.settled_at, last.job_id]).encode()).decode().rstrip("=")
    return {
        "wallet": s.wallet,
        "serviceType": s.service_type,
        "reputationScore": s.score,
        "successRate": s.success_rate,
        "avgResponseMs": s.avg_ms,
        "p95ResponseMs": s.p95_ms,
        "jobs": s.jobs,
        "successes": s.successes,
        "lastActiveAt": None if s.last_active_at is None else iso_utc(s.last_active_at),
        "scoreAsOf": None if s.score_at is None else iso_utc(s.score_at),
        "formula": reputation.SCORE_FORMULA,
        "samples": items,
        "hasMore": more,
        "nextCursor": next_cursor,
    }
