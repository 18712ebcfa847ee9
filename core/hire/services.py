"""What a provider publishes: its services.

A provider is a wallet agent linked to an agent NFT (POST /api/acp/providers, the same link as
checkout's). Each service (one per service type) has a price (what a standard hire charges; an
escrow hire locks the provider's on-chain AgentEscrow.priceOf, and a service is escrow-hirable only
while that indexed price equals its price), a description, input and output JSON Schemas, an SLA
(maximum response time, the runner's timeout) and a runner: an HTTPS JSON endpoint or an A2A
agent's card URL. The signing secret of the runner's requests is made by the service and shown
once, when the service is first published (or rotated).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from core import egress
from core.errors import ServiceError
from core.hire import reputation, rules, schemas
from core.store import Conn
from core.store import checkout as checkout_store
from core.store import hire as store
from core.store import marketplace as market_store
from core.store.hire import ChainAgent, ServiceRow


@dataclass(frozen=True)
class Publish:
    service_type: str
    price: int
    description: str
    input_schema: Any
    output_schema: Any
    sla_seconds: int
    runner: str  # https | a2a
    endpoint: str
    webhook_url: str | None
    webhook_secret: str | None
    rotate_secret: bool = False


def new_signing_secret() -> str:
    """32 random bytes as hex; providers verify with core.egress.standard_secret's whsec_ form."""
    return secrets.token_hex(32)


def check_target(url: str, allow_private: bool, param: str) -> None:
    """The webhook URL rules for a runner endpoint or card URL (DNS checked again at every call).
    Production targets must be https."""
    try:
        egress.check_url_static(url, allow_private)
    except egress.WebhookURLError as exc:
        raise ServiceError(422, "invalid_url", str(exc), param=param) from exc
    if not allow_private and not url.lower().startswith("https://"):
        raise ServiceError(422, "invalid_url", f"{param} must be an https URL", param=param)


async def check_targets(p: Publish, allow_private: bool) -> None:
    check_target(p.endpoint, allow_private, "runner.url")
    if p.webhook_url is not None:
        check_target(p.webhook_url, allow_private, "webhookUrl")
    for url, param in ((p.endpoint, "runner.url"), (p.webhook_url, "webhookUrl")):
        if url is None:
            continue
        try:
            await egress.check_url(url, allow_private)
        except egress.WebhookURLError as exc:
            raise ServiceError(422, "invalid_url", str(exc), param=param) from exc


async def check_job_webhook(url: str | None, secret: str | None, allow_private: bool) -> None:
    """A hire's own webhook (its result is sent there): with its secret (16-256 characters), to a URL
    the SSRF rules allow; neither is needed without a URL, but a secret needs one."""
    if url is None:
        if secret is not None:
            raise ServiceError(422, "invalid_field", "webhookSecret needs webhookUrl", param="webhookSecret")
        return
    if secret is None:
        raise ServiceError(
            422, "missing_field", "webhookUrl needs webhookSecret (16-256 characters)", param="webhookSecret"
        )
    try:
        await egress.check_url(url, allow_private)
    except egress.WebhookURLError as exc:
        raise ServiceError(422, "invalid_webhook_url", str(exc), param="webhookUrl") from exc


def validate(p: Publish) -> tuple[str, str]:
    """The publish's checks that need no database: (input schema text, output schema text)."""
    if not rules.SERVICE_TYPE_RE.fullmatch(p.service_type):
        raise ServiceError(422, "invalid_service_type", "serviceType must be 1-40 of [a-z0-9_]", param="serviceType")
    if not rules.MIN_SLA_SECONDS <= p.sla_seconds <= rules.MAX_SLA_SECONDS:
        raise ServiceError(
            422,
            "invalid_sla",
            f"slaSeconds must be {rules.MIN_SLA_SECONDS}..{rules.MAX_SLA_SECONDS}",
            param="slaSeconds",
        )
    return schemas.compile_schema(p.input_schema, "inputSchema"), schemas.compile_schema(
        p.output_schema, "outputSchema"
    )


def publish(conn: Conn, agent_uuid: str, wallet: str, p: Publish, now: float) -> tuple[ServiceRow, str | None]:
    """Create or replace the agent's service of p.service_type, in the writer's transaction; returns
    the row and the signing secret when it is new (first publish or rotation), else None."""
    provider = checkout_store.get_provider(conn, agent_uuid)
    if provider is None or provider.token_id is None:
        raise ServiceError(
            403, "provider_not_linked", "the agent is not a linked provider: POST /api/acp/providers first"
        )
    input_text, output_text = validate(p)
    current = store.get_service(conn, agent_uuid, p.service_type)
    fresh = current is None or p.rotate_secret
    secret = new_signing_secret() if fresh or current is None else current.signing_secret
    webhook_secret = p.webhook_secret
    if p.webhook_url is not None and webhook_secret is None:
        webhook_secret = current.webhook_secret if current and current.webhook_url else egress.new_secret()
    row = ServiceRow(
        provider_uuid=agent_uuid,
        service_type=p.service_type,
        wallet=wallet,
        token_id=provider.token_id,
        price=p.price,
        description=p.description,
        input_schema=input_text,
        output_schema=output_text,
        sla_seconds=p.sla_seconds,
        runner=p.runner,
        endpoint=p.endpoint,
        signing_secret=secret,
        webhook_url=p.webhook_url,
        webhook_secret=webhook_secret if p.webhook_url is not None else None,
        active=True,
        consecutive_failures=0,
        last_checked_at=None,
        last_error=None,
        jobs=0,
        successes=0,
        score=0.0,
        success_rate=None,
        avg_ms=None,
        p95_ms=None,
        last_active_at=None,
        score_at=None,
        w_jobs=0.0,
        w_successes=0.0,
        ok_ms_total=0,
        created_at=now if current is None else current.created_at,
        updated_at=now,
    )
    store.put_service(conn, row)
    stored = store.get_service(conn, agent_uuid, p.service_type)
    assert stored is not None
    if current is not None and current.sla_seconds != p.sla_seconds:  # the latency term uses the SLA
        reputation.refresh(conn, agent_uuid, p.service_type, now)
        stored = store.get_service(conn, agent_uuid, p.service_type)
        assert stored is not None
    return stored, (secret if fresh else None)


def provider_paused(conn: Conn, service: ServiceRow) -> bool:
    """Whether the service's provider is paused for a sale (a live listing in the drop, or its NFT
    paused on-chain): the marketplace's one rule (core.wallets.check_not_paused). A paused agent
    still earns, but it is never chosen, cannot be hired by name, and hires nobody."""
    return market_store.sale_paused(conn, service.provider_uuid, service.wallet) is not None


def escrow_terms(service: ServiceRow, agent: ChainAgent | None, *, paused: bool = False) -> dict[str, Any]:
    """Whether an escrow hire of `service` can be made now, and why not: the indexed on-chain price
    must equal the service's price, with an SLA set, the agent unpaused (`paused`: listed in the
    drop, see provider_paused) and its self wallet set."""
    reason = None
    if agent is None:
        reason = "the provider's agent NFT is not indexed yet"
    elif agent.hire_price == 0:
        reason = "no on-chain price: the provider's owner or self wallet calls AgentEscrow.setPrice"
    elif agent.hire_price != service.price:
        reason = "the on-chain price (AgentEscrow.priceOf) differs from the service's price"
    elif agent.paused or paused:
        reason = "the agent is paused (listed for sale)"
    elif int(agent.self_wallet, 16) == 0:
        reason = "the agent has no self wallet (reset after a change of hands)"
    return {
        "available": reason is None,
        "onChainPrice": None if agent is None else agent.hire_price,
        "slaSeconds": None if agent is None or agent.hire_sla == 0 else agent.hire_sla,
        "reason": reason,
    }
