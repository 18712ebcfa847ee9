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

import asyncio
import logging
import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api import idempotency
from api.auth import Caller, agent_for
from api.errors import ApiError
from api.http import CLOCK, READS, WRITER, encode, ok
from api.models import Amount, Strict, UsdcOut, Wallet, parse_body, parse_query
from api.operation import Call, Operation, Quoted, Reply
from api.policy import mount
from core import egress
from core.errors import ServiceError
from core.hire import escrow, moves, registry, rules, services, standard
from core.hire.context import Hire
from core.hire.settle import recover, settle_due
from core.idempotency import body_digest
from core.money import AmountError, parse_usdc, usdc_text
from core.store import Conn
from core.store import hire as store
from core.store import wallets as wallet_store
from core.store.wallets import AgentRow

__all__ = ["HIRE", "OPERATIONS", "add_hire_routes"]

log = logging.getLogger("agentledger.hire")

#: What the hire use cases run with (core.hire.context), built once by api.app.
HIRE: web.AppKey[Hire] = web.AppKey("hire", Hire)
_STARTUP: web.AppKey[list[asyncio.Task[Any]]] = web.AppKey("hire_startup_tasks", list)

_SERVICE_TYPE = r"^[a-z0-9_]{1,40}$"
_HEX32 = r"^0x[0-9a-fA-F]{64}$"
_URL = Annotated[str, Field(min_length=1, max_length=2048)]
_SECRET = Annotated[str, Field(min_length=16, max_length=256)]
_TAGS = ("hire",)

# ---- request models -----------------------------------------------------------------------------


class Runner(Strict):
    type: Annotated[Literal["https", "a2a"], Field(description="https: a JSON endpoint; a2a: an A2A agent")]
    url: Annotated[_URL, Field(description="the HTTPS endpoint, or the A2A agent card's URL")]


class ServicePublishRequest(Strict):
    agentId: Annotated[Wallet | None, Field(description="the provider agent (required with an account key)")] = None
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE, description="a short token, e.g. keyword_research")]
    price: Annotated[Amount, Field(description="USDC per job (standard hire); escrow needs the on-chain price equal")]
    description: Annotated[str, Field(min_length=1, max_length=2000)]
    inputSchema: Annotated[dict[str, Any], Field(description="JSON Schema of the job's input")]
    outputSchema: Annotated[dict[str, Any], Field(description="JSON Schema the output must satisfy")]
    slaSeconds: Annotated[
        int, Field(ge=rules.MIN_SLA_SECONDS, le=rules.MAX_SLA_SECONDS, description="maximum response time")
    ] = rules.DEFAULT_SLA_SECONDS
    runner: Runner
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None
    rotateSecret: bool = False


class ServicesQuery(Strict):
    agentId: Wallet | None = None


class HireRequest(Strict):
    callerWallet: Wallet
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    input: Annotated[dict[str, Any], Field(description="the job's input (checked against the input schema)")]
    providerWallet: Annotated[Wallet | None, Field(description="else the best-scored healthy provider")] = None
    maxPrice: Annotated[Amount | None, Field(description="refuse a provider costing more (USDC)")] = None
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None


class EscrowRequest(Strict):
    escrowJobId: Annotated[str, Field(pattern=_HEX32, description="the bytes32 job id given to createJob")]
    txHash: Annotated[str, Field(pattern=_HEX32, description="the createJob transaction")]
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    input: dict[str, Any]
    providerWallet: Wallet
    timestamp: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Annotated[
        str, Field(pattern=r"^0x[0-9a-fA-F]{130}$", description="the caller's EIP-191 signature (see description)")
    ]
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None


class EscrowQuery(Strict):
    jobId: Annotated[str, Field(pattern=_HEX32)]


class RegistryQuery(Strict):
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)] | None = None
    wallet: Wallet | None = None
    maxPrice: Annotated[str, Field(pattern=r"^[0-9]{1,13}(\.[0-9]{1,6})?$", description="USDC")] | None = None
    minScore: Annotated[str, Field(pattern=r"^[0-9]{1,3}(\.[0-9]{1,4})?$", description="0-100")] | None = None
    escrow: Annotated[Literal["true", "false"], Field(description="only escrow-hirable services")] | None = None
    healthy: Annotated[Literal["true", "false"], Field(description="only healthy services")] | None = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None
    cursor: Annotated[str, Field(max_length=512)] | None = None


class ReputationQuery(Strict):
    wallet: Wallet
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None
    cursor: Annotated[str, Field(max_length=512)] | None = None


# ---- response models (OpenAPI) ------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class EarnSplit(_Out):
    ownerCut: UsdcOut
    agentCut: UsdcOut
    serviceCut: UsdcOut
    referralCut: UsdcOut


class HireResponse(_Out):
    success: bool
    jobId: str
    output: Annotated[str, Field(description="the output as RFC 8785 JSON text (SHA-256 = outputSha256)")]
    outputSha256: str
    outputCid: str
    providerWallet: str
    serviceType: str
    amountCharged: UsdcOut
    responseMs: int
    earnSplit: EarnSplit
    balance: UsdcOut
    auditId: int


class EscrowResponse(_Out):
    success: bool
    jobId: str
    status: str
    serviceType: str
    providerWallet: str | None
    amountUsdc: UsdcOut
    inputSha256: str
    responseMs: int | None
    settlement: Annotated[str, Field(description="released, refunded or pending (retried until mined)")]
    final: bool
    output: str | None = None
    outputSha256: str | None = None
    outputCid: str | None = None
    releaseTx: str | None = None
    earnSplit: EarnSplit | None = None
    error: str | None = None
    message: str | None = None
    refundTx: str | None = None
    auditId: Annotated[int, Field(description="the job's latest audit entry (GET /api/a2a/hire/{jobId}/audit)")]


class EscrowStatusResponse(_Out):
    jobId: str
    status: Annotated[str, Field(description="locked, released, refunded or not_found")]
    caller: str | None
    amountUsdc: UsdcOut
    released: bool
    refunded: bool


class AuditStreamEntry(_Out):
    auditId: int
    seq: int
    kind: str
    createdAt: str
    payload: dict[str, Any]
    canonicalPayload: Annotated[str, Field(description="the payload's RFC 8785 JSON: exactly the bytes hashed")]
    prevHash: str
    chainHash: str
    leafHash: Annotated[str, Field(description="its Merkle leaf hash, 0x hex")]
    verifyUrl: str
    proofUrl: str


class HireAuditResponse(_Out):
    jobId: str
    kind: Annotated[str, Field(description="standard or escrow")]
    status: str
    stream: Annotated[str, Field(description="hire:<jobId>")]
    entries: Annotated[list[AuditStreamEntry], Field(description="every move of the job, in order (seq 1, 2, ...)")]
    chainRule: str
    merkleRule: str
    methodologyUrl: str


class RegistryEntry(_Out):
    wallet: str
    serviceType: str
    priceUsdc: UsdcOut
    reputationScore: float
    successRate: float | None
    avgResponseMs: int | None
    healthy: bool
    escrow: dict[str, Any]


class RegistryResponse(_Out):
    providers: list[RegistryEntry]
    hasMore: bool
    nextCursor: str | None
    formula: str


class ReputationResponse(_Out):
    wallet: str
    serviceType: str
    reputationScore: float
    samples: list[dict[str, Any]]
    hasMore: bool
    nextCursor: str | None
    formula: str


class ServiceResponse(_Out):
    wallet: str
    serviceType: str
    priceUsdc: UsdcOut
    escrow: dict[str, Any]


class ServiceListResponse(_Out):
    services: list[ServiceResponse]


# ---- runs (the operations without HTTP) and their handlers ------------------------------------------


def _caller(call: Call) -> Caller:
    assert call.caller is not None, "an authenticated operation's call carries its caller"
    return call.caller


def _reply(payload: dict[str, Any], status: int = 200) -> Reply:
    return Reply(status, encode(payload).encode())


async def _check_webhook(hire: Hire, url: str | None, secret: str | None, *, need_secret: bool) -> None:
    if url is None:
        if secret is not None:
            raise ApiError(422, "invalid_field", "webhookSecret needs webhookUrl", param="webhookSecret")
        return
    if need_secret and secret is None:
        raise ApiError(
            422, "missing_field", "webhookUrl needs webhookSecret (16-256 characters)", param="webhookSecret"
        )
    try:
        await egress.check_url(url, hire.allow_private)
    except egress.WebhookURLError as exc:
        raise ApiError(422, "invalid_webhook_url", str(exc), param="webhookUrl") from exc


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
    paused = services.provider_paused(conn, s)
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


async def run_publish_service(app: web.Application, call: Call) -> Reply:
    hire = app[HIRE]
    req = parse_body(ServicePublishRequest, call.body)
    caller = _caller(call)
    agent = await app[READS].run(lambda db: _provider_agent(db, caller, req.agentId))
    p = services.Publish(
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
    services.validate(p)
    await services.check_targets(p, hire.allow_private)
    now = app[CLOCK]()
    existed = await app[READS].run(lambda db: store.get_service(db, agent.uuid, req.serviceType) is not None)

    def work(conn: Any) -> tuple[int, bytes]:
        row, secret = services.publish(conn, agent.uuid, agent.wallet, p, now)
        out = _service_json(conn, call.base_url, row)
        if secret is not None:
            out["signingSecret"] = egress.standard_secret(secret)
            out["signingSecretRaw"] = secret
        if req.webhookUrl is not None and req.webhookSecret is None and not existed:
            out["webhookSecret"] = row.webhook_secret
        out["created"] = not existed
        return ok(out)

    return await idempotency.execute_call(app[WRITER], call, owner=_caller(call).key_hash, now=now, work=work)


async def run_list_services(app: web.Application, call: Call) -> Reply:
    q = parse_query(ServicesQuery, dict(call.query))
    caller = _caller(call)

    def read(db: Conn) -> Reply:
        agent = _provider_agent(db, caller, q.agentId)
        rows = store.services_of(db, agent.uuid)
        return _reply({"services": [_service_json(db, call.base_url, s) for s in rows]})

    return await app[READS].run(read)


async def run_withdraw_service(app: web.Application, call: Call) -> Reply:
    q = parse_query(ServicesQuery, dict(call.query))
    caller = _caller(call)
    agent = await app[READS].run(lambda db: _provider_agent(db, caller, q.agentId))
    service_type = call.path["serviceType"]
    now = app[CLOCK]()
    done = await app[WRITER].run(lambda conn: store.deactivate_service(conn, agent.uuid, service_type, now))
    if not done:
        raise ApiError(404, "service_not_found", f"no active {service_type} service", param="serviceType")

    def read(db: Conn) -> Reply:
        row = store.get_service(db, agent.uuid, service_type)
        assert row is not None
        return _reply(_service_json(db, call.base_url, row))

    return await app[READS].run(read)


def _hire_request(req: HireRequest, agent: AgentRow) -> standard.HireRequest:
    return standard.HireRequest(
        caller=agent,
        service_type=req.serviceType,
        input=req.input,
        provider_wallet=req.providerWallet,
        max_price=req.maxPrice,
        webhook_url=req.webhookUrl,
        webhook_secret=req.webhookSecret,
    )


async def run_hire(app: web.Application, call: Call) -> Reply:
    """A standard hire; its own Idempotency-Key handling (core.hire.standard: the key is claimed in
    the reservation's transaction and never taken over while the job is reserved)."""
    hire = app[HIRE]
    caller = _caller(call)
    req = parse_body(HireRequest, call.body)
    agent = await app[READS].run(lambda db: agent_for(db, caller, req.callerWallet, param="callerWallet"))
    await _check_webhook(hire, req.webhookUrl, req.webhookSecret, need_secret=True)
    idem = None
    if call.idempotency_key is not None:
        scope = f"{caller.key_hash} {call.target}"  # as api.idempotency.execute_call scopes a key
        idem = standard.IdemKey(scope, call.idempotency_key, body_digest(call.body))
    answer = await standard.hire(hire, _hire_request(req, agent), idem)
    return Reply(answer.status, answer.body, answer.replayed)


async def quote_hire(app: web.Application, call: Call) -> Quoted:
    """What a standard hire would charge (nothing is reserved): the provider's price, from the caller's
    balance to the provider (the named one, else the one the automatic choice picks now); refused as
    things stand when the balance is short or the caller is paused (listed for sale)."""
    req = parse_body(HireRequest, call.body)
    caller = _caller(call)

    def read(db: Conn) -> Quoted:
        agent = agent_for(db, caller, req.callerWallet, param="callerWallet")
        service = standard.choose(db, _hire_request(req, agent))
        bal = wallet_store.get_balance(db, agent.uuid)
        refusal: ServiceError | None = None
        try:
            standard.check_caller(db, agent)
        except ServiceError as exc:
            refusal = exc
        if refusal is None and service.price > bal.balance:
            refusal = ApiError(
                422,
                "insufficient_balance",
                f"balance {usdc_text(bal.balance)} USDC cannot cover the hire's {usdc_text(service.price)} USDC",
                param="callerWallet",
            )
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
                "balance": usdc_text(bal.balance),
                "balanceAfter": usdc_text(max(0, bal.balance - service.price)),
            },
            refusal=refusal,
        )

    return await app[READS].run(read)


def _escrow_deployed(hire: Hire) -> None:
    if not hire.has_escrow():
        raise ApiError(404, "escrow_not_deployed", "this deployment has no AgentEscrow contract")


async def run_escrow(app: web.Application, call: Call) -> Reply:
    """Authenticated by the on-chain caller's signature (a key, when given, needs scope spend)."""
    hire = app[HIRE]
    _escrow_deployed(hire)
    req = parse_body(EscrowRequest, call.body)
    await _check_webhook(hire, req.webhookUrl, req.webhookSecret, need_secret=True)
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
        return _reply(await escrow.escrow_hire(hire, job))
    # With a key and an Idempotency-Key (an MCP execute always has both), the same call again replays
    # the first answer: the signature in it is spent, so without this a retry would be refused.
    done: list[dict[str, Any]] = []

    async def run_job() -> None:
        done.append(await escrow.escrow_hire(hire, job))

    return await idempotency.execute_call(
        app[WRITER], call, owner=call.caller.key_hash, now=app[CLOCK](), work=lambda _conn: ok(done[0]), before=run_job
    )


async def quote_escrow(app: web.Application, call: Call) -> Quoted:
    """What an escrow hire would release: the job's amount locked on-chain (AgentEscrow.getJob), from
    its on-chain caller to the named provider on success (refunded otherwise); refused as things
    stand when the job is not locked or hires another provider. Nothing is verified beyond that."""
    hire = app[HIRE]
    _escrow_deployed(hire)
    req = parse_body(EscrowRequest, call.body)
    job_id = req.escrowJobId.lower()
    locked = await escrow.locked_job(hire, job_id)
    refusal: ServiceError | None = None
    if not locked.locked:
        refusal = ApiError(409, "escrow_not_locked", "the escrow job is not locked on-chain", param="escrowJobId")
    elif locked.token_id != await app[READS].run(lambda db: escrow.provider_token(db, req.providerWallet)):
        refusal = ApiError(
            422,
            "provider_mismatch",
            f"the escrow job hires token {locked.token_id}, not {req.providerWallet}",
            param="providerWallet",
        )
    return Quoted(
        locked.amount,
        locked.caller,
        req.providerWallet,
        f"run {req.serviceType} at {req.providerWallet}: on success the {usdc_text(locked.amount)} USDC locked "
        f"by {locked.caller} in AgentEscrow are released to it (97/1/2 split), on failure refunded",
        {"escrowJobId": job_id, "providerTokenId": locked.token_id, "expiresAt": locked.expires_at},
        refusal=refusal,
    )


async def run_escrow_status(app: web.Application, call: Call) -> Reply:
    hire = app[HIRE]
    _escrow_deployed(hire)
    q = parse_query(EscrowQuery, dict(call.query))
    return _reply(await escrow.status(hire, q.jobId.lower()))


async def run_job_audit(app: web.Application, call: Call) -> Reply:
    """A hire job's audit stream (standard or escrow), public as each of its entries is at /verify."""
    job_id = call.path["jobId"]
    if not re.fullmatch(rules.JOB_ID_PATTERN, job_id):
        raise ApiError(400, "invalid_job_id", "jobId: hire_ + 24 hex, or an escrow job's 0x + 64 hex", param="jobId")
    job_id = job_id.lower()

    def read(db: Conn) -> Reply:
        job = store.get_job(db, job_id)
        if job is None:
            raise ApiError(404, "job_not_found", f"no hire job {job_id}", param="jobId")
        return _reply(moves.stream_json(db, job, call.base_url))

    return await app[READS].run(read)


def _price(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_usdc(Decimal(text), allow_zero=True)
    except (AmountError, InvalidOperation) as exc:
        raise ApiError(422, "invalid_amount", f"maxPrice: {exc}", param="maxPrice") from exc


async def run_registry(app: web.Application, call: Call) -> Reply:
    q = parse_query(RegistryQuery, dict(call.query))
    min_score = None if q.minScore is None else float(q.minScore)
    if min_score is not None and min_score > 100:
        raise ApiError(422, "invalid_field", "minScore must be 0-100", param="minScore")
    max_price = _price(q.maxPrice)
    limit = int(q.limit) if q.limit else 20
    page = await app[READS].run(
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
    hire = app[HIRE]
    if hire.has_escrow():
        page["escrowContract"] = {
            "chainId": hire.chain_id,
            "address": hire.escrow_address,
            "usdc": str(hire.operator.contract("USDC").address),
            "settlementGraceSeconds": 3600,
        }
    return _reply(page)


async def run_reputation(app: web.Application, call: Call) -> Reply:
    q = parse_query(ReputationQuery, dict(call.query))
    limit = int(q.limit) if q.limit else 50
    return await app[READS].run(
        lambda db: _reply(
            registry.evidence(
                db, base=call.base_url, wallet=q.wallet, service_type=q.serviceType, cursor=q.cursor, limit=limit
            )
        )
    )


# ---- the operation table ------------------------------------------------------------------------

_FAILURES = {
    502: (
        "provider_unreachable",
        "provider_error",
        "provider_invalid_output",
        "provider_response_too_large",
        "output_schema_mismatch",
        "provider_refused_target",
    ),
    503: ("hire_interrupted",),
    504: ("provider_timeout",),
}

OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        "/api/a2a/services",
        "publishHireService",
        "Publish (or replace) a service this provider agent offers for hire",
        ServiceResponse,
        request=ServicePublishRequest,
        idempotent=True,
        errors={
            422: ("invalid_schema", "invalid_url", "missing_agent_id", "invalid_service_type", "invalid_sla"),
            403: ("provider_not_linked",),
            404: ("agent_not_found",),
            413: ("schema_too_large",),
        },
        tags=_TAGS,
        description="`created`: a new service, or the agent's service of that type replaced. The runner's "
        "requests are signed with Standard Webhooks headers; `signingSecret` (whsec_ form) is shown once, "
        "when the service is created or `rotateSecret` is true. An escrow hire locks the on-chain "
        "AgentEscrow.priceOf: set it equal to `price` (`escrow.available` says whether it is).",
        run=run_publish_service,
        touches="agent",
        scope="admin",
        destructive=True,  # replaces the agent's service of that type
    ),
    Operation(
        "GET",
        "/api/a2a/services",
        "listHireServices",
        "The provider agent's own services, with health and escrow availability",
        ServiceListResponse,
        query=ServicesQuery,
        errors={422: ("missing_agent_id",), 404: ("agent_not_found",)},
        tags=_TAGS,
        run=run_list_services,
        touches="agent",
        scope="read",
    ),
    Operation(
        "DELETE",
        "/api/a2a/services/{serviceType}",
        "withdrawHireService",
        "Withdraw one of the provider agent's services (no longer hirable)",
        ServiceResponse,
        query=ServicesQuery,
        errors={422: ("missing_agent_id",), 404: ("agent_not_found", "service_not_found")},
        tags=_TAGS,
        path_params={"serviceType": "the service type to withdraw"},
        run=run_withdraw_service,
        touches="agent",
        scope="admin",
        destructive=True,
    ),
    Operation(
        "POST",
        "/api/a2a/hire",
        "hireAgent",
        "Standard hire: run a job at a provider, charged to the caller agent's balance",
        HireResponse,
        request=HireRequest,
        idempotent=True,
        errors={
            404: ("agent_not_found", "service_not_found", "no_provider_available"),
            409: ("provider_paused", "provider_cannot_be_paid", "agent_paused"),
            413: ("input_too_large",),
            422: (
                "insufficient_balance",
                "price_above_max",
                "self_hire",
                "input_schema_mismatch",
                "invalid_input",
                "invalid_webhook_url",
                "missing_field",
                "invalid_field",
            ),
            **_FAILURES,
        },
        tags=_TAGS,
        description="The price is reserved on the caller's balance, the provider is called within its SLA, then "
        "in one transaction the provider is paid through the earn split and the caller charged. A failed run "
        "(5xx with the error shape plus jobId, amountCharged 0) charges nothing. The same Idempotency-Key runs the "
        "job once and replays its answer, failures included. A caller listed for sale (paused) hires nobody "
        "(409 agent_paused); a paused provider is never chosen (409 provider_paused when named).",
        run=run_hire,
        touches="agent",
        scope="spend",
        quote=quote_hire,
        content_fields=("output",),  # the provider's output: an MCP result links to it (third-party input)
        open_world=True,  # calls the provider's endpoint
    ),
    Operation(
        "POST",
        "/api/a2a/escrow",
        "escrowHire",
        "Escrow hire: run the job locked by createJob; release on success, refund on failure",
        EscrowResponse,
        request=EscrowRequest,
        auth="optional",
        idempotent=True,  # with a key: the same Idempotency-Key replays the first answer
        errors={
            401: ("signature_expired", "signature_mismatch", "invalid_signature"),
            404: ("service_not_found", "escrow_not_deployed"),
            409: ("signature_replayed", "job_in_progress", "transaction_not_found", "escrow_not_locked"),
            413: ("input_too_large",),
            422: (
                "transaction_failed",
                "job_not_in_transaction",
                "provider_mismatch",
                "input_schema_mismatch",
                "invalid_input",
                "invalid_webhook_url",
                "missing_field",
                "invalid_field",
            ),
            503: ("chain_unavailable",),
        },
        tags=_TAGS,
        description="No API key: `signature` is the on-chain caller's EIP-191 signature of the lines "
        "'agentledger escrow hire', 'chain: <id>', 'escrow: <AgentEscrow address, EIP-55>', 'job: <escrowJobId, "
        "lowercase>', 'input: <SHA-256 hex of the input's RFC 8785 JSON>', 'timestamp: <unix s>' joined by "
        "'\\n' (+-300 s, used once). A job runs at most once; a later POST by its caller returns the stored "
        "result. `settlement` is pending while a release or refund is retried. No API key is needed (the "
        "signature authenticates); a key given needs scope spend, and its daily cap counts the locked amount.",
        run=run_escrow,
        touches="nothing",
        scope="spend",
        quote=quote_escrow,
        content_fields=("output",),  # the provider's output: an MCP result links to it (third-party input)
        open_world=True,  # the chain and the provider's endpoint
    ),
    Operation(
        "GET",
        "/api/a2a/escrow",
        "escrowStatus",
        "An escrow job's on-chain status (AgentEscrow.jobStatus)",
        EscrowStatusResponse,
        query=EscrowQuery,
        auth="none",
        errors={404: ("escrow_not_deployed",), 503: ("chain_unavailable",)},
        tags=_TAGS,
        run=run_escrow_status,
        scope="read",
        open_world=True,  # read from the chain
    ),
    Operation(
        "GET",
        "/api/a2a/hire/{jobId}/audit",
        "hireJobAudit",
        "A hire job's audit stream: every move, in order, with its chain and Merkle hashes (public)",
        HireAuditResponse,
        auth="none",
        errors={400: ("invalid_job_id",), 404: ("job_not_found",)},
        tags=_TAGS,
        description="Standard and escrow jobs alike (the stream hire:<jobId>). Check it without trusting this "
        "service: each chainHash is SHA-256(prevHash || canonicalPayload), each entry a leaf of the log anchored "
        "on-chain (proofUrl). Public, as every entry already is at /verify/{auditId}.",
        path_params={"jobId": "the job's id: jobId of a hire's answer (hire_...), or an escrow job's 0x id"},
        path_patterns={"jobId": rules.JOB_ID_PATTERN},
        run=run_job_audit,
        resource="agentledger://hire/jobs/{jobId}/audit",
    ),
    Operation(
        "GET",
        "/api/a2a/registry",
        "hireRegistry",
        "Services for hire, best reputation first (public)",
        RegistryResponse,
        query=RegistryQuery,
        auth="none",
        errors={422: ("invalid_cursor", "invalid_amount", "invalid_field")},
        tags=_TAGS,
        description="Filters: serviceType, wallet, maxPrice (USDC), minScore (0-100), escrow=true (escrow-hirable "
        "only), healthy=true; `limit` (1-100, default 20) and `cursor` page through. Ties go to the lower "
        "wallet id. `priceUsdc` is what a standard hire charges and, when escrow.available, exactly what "
        "createJob locks (with escrow.slaSeconds). Providers paused for a sale (listed in the drop) are not "
        "listed.",
        run=run_registry,
        scope="read",
        resource="agentledger://hire/registry",
    ),
    Operation(
        "GET",
        "/api/a2a/reputation",
        "hireReputation",
        "A service's reputation, its formula and the settled jobs (with audit entries) it came from",
        ReputationResponse,
        query=ReputationQuery,
        auth="none",
        errors={422: ("invalid_cursor",), 404: ("service_not_found",)},
        tags=_TAGS,
        run=run_reputation,
        scope="read",
    ),
]


def add_hire_routes(app: web.Application, hire: Hire) -> None:
    """Mount /api/a2a (needs READS, WRITER and CLOCK, as api.app sets them). At start-up, before
    serving, the recovery settles what a crash left; then escrow settlements due are sent."""
    app[HIRE] = hire
    app[_STARTUP] = []

    async def start(app: web.Application) -> None:
        await recover(hire)
        if hire.has_escrow():
            app[_STARTUP].append(asyncio.create_task(_settle_quietly(hire)))

    async def stop(app: web.Application) -> None:
        for task in app[_STARTUP]:
            task.cancel()
        await asyncio.gather(*app[_STARTUP], return_exceptions=True)
        await hire.close()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    mount(app, OPERATIONS)


async def _settle_quietly(hire: Hire) -> None:
    try:
        await settle_due(hire)
    except Exception as exc:  # the hire-settle job tries again
        log.warning("start-up settlement failed: %s", exc)
