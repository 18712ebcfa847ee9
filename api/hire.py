"""Agent-to-agent hire under /api/a2a: the HTTP adapter of core.hire.

Provider side (Bearer key of the provider agent or its account): POST /api/a2a/services publishes
(or replaces) a service, GET /api/a2a/services lists the agent's own, DELETE
/api/a2a/services/{serviceType} withdraws one. Caller side: POST /api/a2a/hire (Bearer key owning
callerWallet, Idempotency-Key honoured) runs a standard hire charged to the caller's balance;
POST /api/a2a/escrow (no key: the on-chain caller's EIP-191 signature) runs an escrow hire; GET
/api/a2a/escrow reads a job's on-chain status. Public: GET /api/a2a/registry and GET
/api/a2a/reputation (the samples behind a score).
"""

from __future__ import annotations

import asyncio
import logging
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api import idempotency
from api.auth import Caller, agent_for, authenticate
from api.errors import ApiError, error_response
from api.http import CLOCK, READ_DB, WRITER, base_url, json_response, ok
from api.models import Amount, Strict, Wallet, parse_body, parse_query
from api.operation import Operation
from core import webhooks
from core.hire import escrow, registry, rules, services, standard
from core.hire.context import Hire
from core.hire.settle import recover, settle_due
from core.idempotency import body_digest
from core.money import AmountError, parse_usdc
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
    ownerCut: Decimal
    agentCut: Decimal
    serviceCut: Decimal
    referralCut: Decimal


class HireResponse(_Out):
    success: bool
    jobId: str
    output: Annotated[str, Field(description="the output as RFC 8785 JSON text (SHA-256 = outputSha256)")]
    outputSha256: str
    outputCid: str
    providerWallet: str
    serviceType: str
    amountCharged: Decimal
    responseMs: int
    earnSplit: EarnSplit
    balance: Decimal
    auditId: int


class EscrowResponse(_Out):
    success: bool
    jobId: str
    status: str
    serviceType: str
    providerWallet: str | None
    amountUsdc: Decimal
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


class EscrowStatusResponse(_Out):
    jobId: str
    status: Annotated[str, Field(description="locked, released, refunded or not_found")]
    caller: str | None
    amountUsdc: Decimal
    released: bool
    refunded: bool


class RegistryEntry(_Out):
    wallet: str
    serviceType: str
    priceUsdc: Decimal
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
    priceUsdc: Decimal
    escrow: dict[str, Any]


class ServiceListResponse(_Out):
    services: list[ServiceResponse]


# ---- handlers -----------------------------------------------------------------------------------


def _ctx(request: web.Request) -> Hire:
    return request.app[HIRE]


async def _check_webhook(hire: Hire, url: str | None, secret: str | None, *, need_secret: bool) -> None:
    if url is None:
        if secret is not None:
            raise ApiError(400, "invalid_field", "webhookSecret needs webhookUrl", param="webhookSecret")
        return
    if need_secret and secret is None:
        raise ApiError(
            400, "missing_field", "webhookUrl needs webhookSecret (16-256 characters)", param="webhookSecret"
        )
    try:
        await webhooks.check_url_async(url, hire.allow_private)
    except webhooks.WebhookURLError as exc:
        raise ApiError(400, "invalid_webhook_url", str(exc), param="webhookUrl") from exc


def _provider_agent(request: web.Request, agent_id: str | None) -> tuple[Caller, AgentRow]:
    """The provider agent a provider call acts for: its agent-scoped key's, or `agentId`."""
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    if agent_id is not None:
        return caller, agent_for(db, caller, agent_id, param="agentId")
    if caller.agent_id is None:
        raise ApiError(
            400, "missing_agent_id", "an account-scoped key must name the provider's agentId", param="agentId"
        )
    agent = wallet_store.agent_by_uuid(db, caller.agent_id)
    if agent is None:
        raise ApiError(404, "agent_not_found", "the key's agent does not exist", param="agentId")
    return caller, agent


def _service_json(request: web.Request, s: store.ServiceRow) -> dict[str, Any]:
    out = registry.service_json(s, store.chain_agent(request.app[READ_DB], s.token_id), base=base_url(request))
    out.update(
        {
            "active": s.active,
            "endpoint": s.endpoint,
            "webhookUrl": s.webhook_url,
            "lastError": s.last_error,
            "consecutiveFailures": s.consecutive_failures,
        }
    )
    return out


async def publish_service(request: web.Request) -> web.Response:
    hire = _ctx(request)
    body = await request.read()
    req = parse_body(ServicePublishRequest, body)
    caller, agent = _provider_agent(request, req.agentId)
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
    now = request.app[CLOCK]()
    existed = store.get_service(request.app[READ_DB], agent.uuid, req.serviceType) is not None

    def work(conn: Any) -> tuple[int, bytes]:
        row, secret = services.publish(conn, agent.uuid, agent.wallet, p, now)
        out = _service_json(request, row)
        if secret is not None:
            out["signingSecret"] = webhooks.standard_secret(secret)
            out["signingSecretRaw"] = secret
        if req.webhookUrl is not None and req.webhookSecret is None and not existed:
            out["webhookSecret"] = row.webhook_secret
        out["created"] = not existed
        return ok(out)

    return await idempotency.execute(request, request.app[WRITER], owner=caller.key_hash, body=body, now=now, work=work)


async def list_services(request: web.Request) -> web.Response:
    q = parse_query(ServicesQuery, dict(request.query))
    _, agent = _provider_agent(request, q.agentId)
    rows = store.services_of(request.app[READ_DB], agent.uuid)
    return json_response({"services": [_service_json(request, s) for s in rows]})


async def withdraw_service(request: web.Request) -> web.Response:
    q = parse_query(ServicesQuery, dict(request.query))
    _, agent = _provider_agent(request, q.agentId)
    service_type = request.match_info["serviceType"]
    now = request.app[CLOCK]()
    done = await request.app[WRITER].run(lambda conn: store.deactivate_service(conn, agent.uuid, service_type, now))
    if not done:
        raise ApiError(404, "service_not_found", f"no active {service_type} service", param="serviceType")
    row = store.get_service(request.app[READ_DB], agent.uuid, service_type)
    assert row is not None
    return json_response(_service_json(request, row))


async def hire_handler(request: web.Request) -> web.Response:
    hire = _ctx(request)
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    key = idempotency.request_key(request)
    body = await request.read()
    try:
        req = parse_body(HireRequest, body)
        agent = agent_for(db, caller, req.callerWallet, param="callerWallet")
        await _check_webhook(hire, req.webhookUrl, req.webhookSecret, need_secret=True)
        idem = None
        if key is not None:
            idem = standard.IdemKey(idempotency.scope_of(caller.key_hash, request), key, body_digest(body))
        answer = await standard.hire(
            hire,
            standard.HireRequest(
                caller=agent,
                service_type=req.serviceType,
                input=req.input,
                provider_wallet=req.providerWallet,
                max_price=req.maxPrice,
                webhook_url=req.webhookUrl,
                webhook_secret=req.webhookSecret,
            ),
            idem,
        )
    except ApiError as exc:
        return _echo(error_response(exc), key)
    resp = web.Response(status=answer.status, body=answer.body, content_type="application/json")
    if answer.replayed:
        resp.headers[idempotency.REPLAYED] = "true"
    return _echo(resp, key)


def _echo(resp: web.Response, key: str | None) -> web.Response:
    if key is not None:
        resp.headers[idempotency.HEADER] = key
    return resp


def _escrow_deployed(hire: Hire) -> None:
    if not hire.has_escrow():
        raise ApiError(404, "escrow_not_deployed", "this deployment has no AgentEscrow contract")


async def escrow_post(request: web.Request) -> web.Response:
    hire = _ctx(request)
    _escrow_deployed(hire)
    req = parse_body(EscrowRequest, await request.read())
    await _check_webhook(hire, req.webhookUrl, req.webhookSecret, need_secret=True)
    answer = await escrow.escrow_hire(
        hire,
        escrow.EscrowRequest(
            job_id=req.escrowJobId.lower(),
            tx_hash=req.txHash.lower(),
            service_type=req.serviceType,
            input=req.input,
            provider_wallet=req.providerWallet,
            timestamp=req.timestamp,
            signature=req.signature,
            webhook_url=req.webhookUrl,
            webhook_secret=req.webhookSecret,
        ),
    )
    return json_response(answer)


async def escrow_get(request: web.Request) -> web.Response:
    _escrow_deployed(_ctx(request))
    q = parse_query(EscrowQuery, dict(request.query))
    return json_response(await escrow.status(_ctx(request), q.jobId.lower()))


def _price(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_usdc(Decimal(text), allow_zero=True)
    except (AmountError, InvalidOperation) as exc:
        raise ApiError(400, "invalid_amount", f"maxPrice: {exc}", param="maxPrice") from exc


async def registry_get(request: web.Request) -> web.Response:
    q = parse_query(RegistryQuery, dict(request.query))
    min_score = None if q.minScore is None else float(q.minScore)
    if min_score is not None and min_score > 100:
        raise ApiError(400, "invalid_field", "minScore must be 0-100", param="minScore")
    page = registry.page(
        request.app[READ_DB],
        base=base_url(request),
        service_type=q.serviceType,
        wallet=q.wallet,
        max_price=_price(q.maxPrice),
        min_score=min_score,
        escrow_only=q.escrow == "true",
        healthy_only=q.healthy == "true",
        cursor=q.cursor,
        limit=int(q.limit) if q.limit else 20,
    )
    hire = _ctx(request)
    if hire.has_escrow():
        page["escrowContract"] = {
            "chainId": hire.chain_id,
            "address": hire.escrow_address,
            "usdc": str(hire.operator.contract("USDC").address),
            "settlementGraceSeconds": 3600,
        }
    return json_response(page)


async def reputation_get(request: web.Request) -> web.Response:
    q = parse_query(ReputationQuery, dict(request.query))
    return json_response(
        registry.evidence(
            request.app[READ_DB],
            base=base_url(request),
            wallet=q.wallet,
            service_type=q.serviceType,
            cursor=q.cursor,
            limit=int(q.limit) if q.limit else 50,
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
            400: ("invalid_schema", "invalid_url", "missing_agent_id", "invalid_service_type", "invalid_sla"),
            403: ("provider_not_linked",),
            404: ("agent_not_found",),
            413: ("schema_too_large",),
        },
        tags=_TAGS,
        description="`created`: a new service, or the agent's service of that type replaced. The runner's "
        "requests are signed with Standard Webhooks headers; `signingSecret` (whsec_ form) is shown once, "
        "when the service is created or `rotateSecret` is true. An escrow hire locks the on-chain "
        "AgentEscrow.priceOf: set it equal to `price` (`escrow.available` says whether it is).",
    ),
    Operation(
        "GET",
        "/api/a2a/services",
        "listHireServices",
        "The provider agent's own services, with health and escrow availability",
        ServiceListResponse,
        query=ServicesQuery,
        errors={400: ("missing_agent_id",), 404: ("agent_not_found",)},
        tags=_TAGS,
    ),
    Operation(
        "DELETE",
        "/api/a2a/services/{serviceType}",
        "withdrawHireService",
        "Withdraw one of the provider agent's services (no longer hirable)",
        ServiceResponse,
        query=ServicesQuery,
        errors={400: ("missing_agent_id",), 404: ("agent_not_found", "service_not_found")},
        tags=_TAGS,
        path_params={"serviceType": "the service type to withdraw"},
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
            400: ("input_schema_mismatch", "invalid_input", "invalid_webhook_url"),
            404: ("agent_not_found", "service_not_found", "no_provider_available"),
            409: ("provider_paused", "provider_cannot_be_paid"),
            413: ("input_too_large",),
            422: ("insufficient_balance", "price_above_max", "self_hire"),
            **_FAILURES,
        },
        tags=_TAGS,
        description="The price is reserved on the caller's balance, the provider is called within its SLA, then "
        "in one transaction the provider is paid through the earn split and the caller charged. A failed run "
        "(5xx with the error shape plus jobId, amountCharged 0) charges nothing. The same Idempotency-Key runs the "
        "job once and replays its answer, failures included.",
    ),
    Operation(
        "POST",
        "/api/a2a/escrow",
        "escrowHire",
        "Escrow hire: run the job locked by createJob; release on success, refund on failure",
        EscrowResponse,
        request=EscrowRequest,
        auth="none",
        errors={
            400: ("invalid_signature", "input_schema_mismatch", "invalid_input", "invalid_webhook_url"),
            401: ("signature_expired", "signature_mismatch"),
            404: ("service_not_found", "escrow_not_deployed"),
            409: ("signature_replayed", "job_in_progress", "transaction_not_found", "escrow_not_locked"),
            413: ("input_too_large",),
            422: ("transaction_failed", "job_not_in_transaction", "provider_mismatch"),
            503: ("chain_unavailable",),
        },
        tags=_TAGS,
        description="No API key: `signature` is the on-chain caller's EIP-191 signature of the lines "
        "'agentledger escrow hire', 'chain: <id>', 'escrow: <AgentEscrow address, EIP-55>', 'job: <escrowJobId, "
        "lowercase>', 'input: <SHA-256 hex of the input's RFC 8785 JSON>', 'timestamp: <unix s>' joined by "
        "'\\n' (+-300 s, used once). A job runs at most once; a later POST by its caller returns the stored "
        "result. `settlement` is pending while a release or refund is retried.",
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
    ),
    Operation(
        "GET",
        "/api/a2a/registry",
        "hireRegistry",
        "Services for hire, best reputation first (public)",
        RegistryResponse,
        query=RegistryQuery,
        auth="none",
        errors={400: ("invalid_cursor", "invalid_amount")},
        tags=_TAGS,
        description="Filters: serviceType, wallet, maxPrice (USDC), minScore (0-100), escrow=true (escrow-hirable "
        "only), healthy=true; `limit` (1-100, default 20) and `cursor` page through. Ties go to the lower "
        "wallet id. `priceUsdc` is what a standard hire charges and, when escrow.available, exactly what "
        "createJob locks (with escrow.slaSeconds).",
    ),
    Operation(
        "GET",
        "/api/a2a/reputation",
        "hireReputation",
        "A service's reputation, its formula and the settled jobs (with audit entries) it came from",
        ReputationResponse,
        query=ReputationQuery,
        auth="none",
        errors={400: ("invalid_cursor",), 404: ("service_not_found",)},
        tags=_TAGS,
    ),
]


def add_hire_routes(app: web.Application, hire: Hire) -> None:
    """Mount /api/a2a (needs READ_DB, WRITER and CLOCK, as api.app sets them). At start-up, before
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
    app.router.add_post("/api/a2a/services", publish_service)
    app.router.add_get("/api/a2a/services", list_services)
    app.router.add_delete("/api/a2a/services/{serviceType}", withdraw_service)
    app.router.add_post("/api/a2a/hire", hire_handler)
    app.router.add_get("/api/a2a/registry", registry_get)
    app.router.add_get("/api/a2a/reputation", reputation_get)
    app.router.add_post("/api/a2a/escrow", escrow_post)
    app.router.add_get("/api/a2a/escrow", escrow_get)


async def _settle_quietly(hire: Hire) -> None:
    try:
        await settle_due(hire)
    except Exception as exc:  # the hire-settle job tries again
        log.warning("start-up settlement failed: %s", exc)
