"""Agent-to-agent hire under /api/a2a: the HTTP adapter of core.hire.

Provider side (Bearer key of the provider agent or its account): POST /api/a2a/services publishes
(or replaces) a service, GET /api/a2a/services lists the agent's own, DELETE
/api/a2a/services/{serviceType} withdraws one. Caller side: POST /api/a2a/hire (Bearer key owning
callerWallet, Idempotency-Key honoured) runs a standard hire charged to the caller's balance;
POST /api/a2a/escrow (no key: the on-chain caller's EIP-191 signature) runs an escrow hire; GET
/api/a2a/escrow reads a job's on-chain status. Public: GET /api/a2a/registry, GET
/api/a2a/reputation (the samples behind a score) and GET /api/a2a/hire/{jobId}/audit (a job's audit
stream: each of its entries is public at /verify/{auditId} already).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from api import idempotency
from api.auth import Caller, agent_for
from api.errors import ApiError
from api.hire import models
from api.http import ok, reply
from api.models import parse_body, parse_query
from api.operation import Call, Quoted, Reply
from core import egress
from core.hire import escrow, moves, registry, rules, standard
from core.hire import services as published
from core.hire.context import Hire
from core.idempotency import body_digest
from core.money import AmountError, parse_usdc, usdc_text
from core.services import Services
from core.store import Conn
from core.store import hire as store
from core.store import wallets as wallet_store
from core.store.wallets import AgentRow

# ---- runs (the operations without HTTP) and their handlers ------------------------------------------


def _provider_agent(db: Conn, caller: Caller, agent_id: str | None) -> AgentRow:
    """The provider agent a provider call acts for: its agent-scoped key's, or `agentId`."""
    if agent_id is not None:
        return agent_for(db, caller, agent_id, param="agentId")
    if caller.agent_id is None:
        raise ApiError(
            422, "missing_agent_id", "an account-scoped key must name the provider's agentId", param="agentId"
        )
    agent = wallet_store.agent_by_uuid(db, caller.agent_id)
    if agent is None:
        raise ApiError(404, "agent_not_found", "the key's agent does not exist", param="agentId")
    return agent


def _service_json(conn: Conn, base: str, s: store.ServiceRow) -> dict[str, Any]:
    paused = published.provider_paused(conn, s)
    out = registry.service_json(s, store.chain_agent(conn, s.token_id), base=base, paused=paused)
    out.update(
        {
            "active": s.active,
            "paused": paused,
            "endpoint": s.endpoint,
            "webhookUrl": s.webhook_url,
            "lastError": s.last_error,
            "consecutiveFailures": s.consecutive_failures,
        }
    )
    return out


async def run_publish_service(services: Services, call: Call) -> Reply:
    hire = services.part(Hire)
    req = parse_body(models.ServicePublishRequest, call.body)
    caller = call.authenticated
    agent = await services.reads.run(lambda db: _provider_agent(db, caller, req.agentId))
    p = published.Publish(
        service_type=req.serviceType,
        price=req.price,
        description=req.description,
        input_schema=req.inputSchema,
        output_schema=req.outputSchema,
        sla_seconds=req.slaSeconds,
        runner=req.runner.type,
        endpoint=req.runner.url,
        webhook_url=req.webhookUrl,
        webhook_secret=req.webhookSecret,
        rotate_secret=req.rotateSecret,
    )
    published.validate(p)
    await published.check_targets(p, hire.services.allow_private)
    now = services.clock()
    existed = await services.reads.run(lambda db: store.get_service(db, agent.uuid, req.serviceType) is not None)

    def work(conn: Any) -> tuple[int, bytes]:
        row, secret = published.publish(conn, agent.uuid, agent.wallet, p, now)
        out = _service_json(conn, call.base_url, row)
        if secret is not None:
            out["signingSecret"] = egress.standard_secret(secret)
            out["signingSecretRaw"] = secret
        if req.webhookUrl is not None and req.webhookSecret is None and not existed:
            out["webhookSecret"] = row.webhook_secret
        out["created"] = not existed
        return ok(out)

    return await idempotency.execute_call(services.writer, call, owner=call.authenticated.key_hash, now=now, work=work)


async def run_list_services(services: Services, call: Call) -> Reply:
    q = parse_query(models.ServicesQuery, dict(call.query))
    caller = call.authenticated

    def read(db: Conn) -> Reply:
        agent = _provider_agent(db, caller, q.agentId)
        rows = store.services_of(db, agent.uuid)
        return reply({"services": [_service_json(db, call.base_url, s) for s in rows]})

    return await services.reads.run(read)


async def run_withdraw_service(services: Services, call: Call) -> Reply:
    q = parse_query(models.ServicesQuery, dict(call.query))
    caller = call.authenticated
    agent = await services.reads.run(lambda db: _provider_agent(db, caller, q.agentId))
    service_type = call.path["serviceType"]
    now = services.clock()
    done = await services.writer.run(lambda conn: store.deactivate_service(conn, agent.uuid, service_type, now))
    if not done:
        raise ApiError(404, "service_not_found", f"no active {service_type} service", param="serviceType")

    def read(db: Conn) -> Reply:
        row = store.get_service(db, agent.uuid, service_type)
        assert row is not None
        return reply(_service_json(db, call.base_url, row))

    return await services.reads.run(read)


def _hire_request(req: models.HireRequest, agent: AgentRow) -> standard.HireRequest:
    return standard.HireRequest(
        caller=agent,
        service_type=req.serviceType,
        input=req.input,
        provider_wallet=req.providerWallet,
        max_price=req.maxPrice,
        webhook_url=req.webhookUrl,
        webhook_secret=req.webhookSecret,
    )


async def run_hire(services: Services, call: Call) -> Reply:
    """A standard hire; its own Idempotency-Key handling (core.hire.standard: the key is claimed in
    the reservation's transaction and never taken over while the job is reserved)."""
    idem = None
    if call.idempotency_key is not None:
        scope = f"{call.authenticated.key_hash} {call.target}"  # as api.idempotency.execute_call scopes a key
        idem = standard.IdemKey(scope, call.idempotency_key, body_digest(call.body))
    return await hire_reply(services, call, idem)


async def hire_reply(
    services: Services,
    call: Call,
    idem: standard.IdemKey | None,
    *,
    record: standard.Record | None = None,
    started: standard.Started | None = None,
) -> Reply:
    """The hire `call.body` asks for (a HireRequest), under `idem`: the answer of POST /api/a2a/hire
    (the A2A endpoint's messages run it too, with the hooks of core.hire.standard.hire)."""
    hire = services.part(Hire)
    caller = call.authenticated
    req = parse_body(models.HireRequest, call.body)
    agent = await services.reads.run(lambda db: agent_for(db, caller, req.callerWallet, param="callerWallet"))
    await published.check_job_webhook(req.webhookUrl, req.webhookSecret, services.allow_private)
    answer = await standard.hire(hire, _hire_request(req, agent), idem, record=record, started=started)
    return Reply(answer.status, answer.body, answer.replayed)


async def quote_hire(services: Services, call: Call) -> Quoted:
    """What a standard hire would charge (nothing is reserved): core.hire.standard.price."""
    req = parse_body(models.HireRequest, call.body)
    caller = call.authenticated

    def read(db: Conn) -> Quoted:
        agent = agent_for(db, caller, req.callerWallet, param="callerWallet")
        priced = standard.price(db, _hire_request(req, agent))
        service, balance = priced.service, priced.balance
        return Quoted(
            service.price,
            agent.wallet,
            service.wallet,
            f"hire {service.service_type} from {service.wallet} for {usdc_text(service.price)} USDC, charged to "
            f"{agent.wallet} only if the job succeeds",
            {
                "serviceType": service.service_type,
                "providerWallet": service.wallet,
                "chosen": "named" if req.providerWallet is not None else "automatic",
                "slaSeconds": service.sla_seconds,
                "balance": usdc_text(balance),
                "balanceAfter": usdc_text(max(0, balance - service.price)),
            },
            refusal=priced.refusal,
        )

    return await services.reads.run(read)


async def run_escrow(services: Services, call: Call) -> Reply:
    """Authenticated by the on-chain caller's signature (a key, when given, needs scope spend)."""
    hire = services.part(Hire)
    escrow.require_deployed(hire)
    req = parse_body(models.EscrowRequest, call.body)
    await published.check_job_webhook(req.webhookUrl, req.webhookSecret, services.allow_private)
    job = escrow.EscrowRequest(
        job_id=req.escrowJobId.lower(),
        tx_hash=req.txHash.lower(),
        service_type=req.serviceType,
        input=req.input,
        provider_wallet=req.providerWallet,
        timestamp=req.timestamp,
        signature=req.signature,
        webhook_url=req.webhookUrl,
        webhook_secret=req.webhookSecret,
    )
    if call.caller is None or call.idempotency_key is None:
        return reply(await escrow.escrow_hire(hire, job))
    # With a key and an Idempotency-Key (an MCP execute always has both), the same call again replays
    # the first answer: the signature in it is spent, so without this a retry would be refused.
    done: list[dict[str, Any]] = []

    async def run_job() -> None:
        done.append(await escrow.escrow_hire(hire, job))

    return await idempotency.execute_call(
        services.writer,
        call,
        owner=call.caller.key_hash,
        now=services.clock(),
        work=lambda _conn: ok(done[0]),
        before=run_job,
    )


async def quote_escrow(services: Services, call: Call) -> Quoted:
    """What an escrow hire would release: the job's amount locked on-chain (AgentEscrow.getJob), from
    its on-chain caller to the named provider on success (refunded otherwise); refused as things
    stand when the job is not locked or hires another provider. Nothing is verified beyond that."""
    hire = services.part(Hire)
    escrow.require_deployed(hire)
    req = parse_body(models.EscrowRequest, call.body)
    job_id = req.escrowJobId.lower()
    locked, refusal = await escrow.quote(hire, job_id, req.providerWallet)
    return Quoted(
        locked.amount,
        locked.caller,
        req.providerWallet,
        f"run {req.serviceType} at {req.providerWallet}: on success the {usdc_text(locked.amount)} USDC locked "
        f"by {locked.caller} in AgentEscrow are released to it (97/1/2 split), on failure refunded",
        {"escrowJobId": job_id, "providerTokenId": locked.token_id, "expiresAt": locked.expires_at},
        refusal=refusal,
    )


async def run_escrow_status(services: Services, call: Call) -> Reply:
    hire = services.part(Hire)
    escrow.require_deployed(hire)
    q = parse_query(models.EscrowQuery, dict(call.query))
    return reply(await escrow.status(hire, q.jobId.lower()))


async def run_job_audit(services: Services, call: Call) -> Reply:
    """A hire job's audit stream (standard or escrow), public as each of its entries is at /verify."""
    job_id = call.path["jobId"]
    if not re.fullmatch(rules.JOB_ID_PATTERN, job_id):
        raise ApiError(400, "invalid_job_id", "jobId: hire_ + 24 hex, or an escrow job's 0x + 64 hex", param="jobId")
    job_id = job_id.lower()

    def read(db: Conn) -> Reply:
        job = store.get_job(db, job_id)
        if job is None:
            raise ApiError(404, "job_not_found", f"no hire job {job_id}", param="jobId")
        return reply(moves.stream_json(db, job, call.base_url))

    return await services.reads.run(read)


def _price(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_usdc(Decimal(text), allow_zero=True)
    except (AmountError, InvalidOperation) as exc:
        raise ApiError(422, "invalid_amount", f"maxPrice: {exc}", param="maxPrice") from exc


async def run_registry(services: Services, call: Call) -> Reply:
    q = parse_query(models.RegistryQuery, dict(call.query))
    min_score = None if q.minScore is None else float(q.minScore)
    if min_score is not None and min_score > 100:
        raise ApiError(422, "invalid_field", "minScore must be 0-100", param="minScore")
    max_price = _price(q.maxPrice)
    limit = int(q.limit) if q.limit else 20
    page = await services.reads.run(
        lambda db: registry.page(
            db,
            base=call.base_url,
            service_type=q.serviceType,
            wallet=q.wallet,
            max_price=max_price,
            min_score=min_score,
            escrow_only=q.escrow == "true",
            healthy_only=q.healthy == "true",
            cursor=q.cursor,
            limit=limit,
        )
    )
    contract = escrow.contract_json(services.part(Hire))
    if contract is not None:
        page["escrowContract"] = contract
    return reply(page)


async def run_reputation(services: Services, call: Call) -> Reply:
    q = parse_query(models.ReputationQuery, dict(call.query))
    limit = int(q.limit) if q.limit else 50
    return await services.reads.run(
        lambda db: reply(
            registry.evidence(
                db, base=call.base_url, wallet=q.wallet, service_type=q.serviceType, cursor=q.cursor, limit=limit
            )
        )
    )
