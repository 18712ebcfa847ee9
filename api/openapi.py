"""`GET /api/schema`: the OpenAPI 3.1 document of the API, generated, never written by hand.

Every operation is one row of OPERATIONS. Request bodies and query parameters come from the very
pydantic models that validate requests (api.models), responses from the response models below,
errors from the one error shape of api.errors. A test checks that every route registered on the
app has its row here, so an endpoint added later cannot be left out of the document.

The document served describes the routes the running app has actually registered (a wallet-less
app has no /api/agents paths; a wallet-only app has no /healthz).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import JsonSchemaMode, SkipJsonSchema

from api import (
    audit_routes,
    checkout,
    decisions,
    idempotency,
    ipfs_gateway,
    provider_orders,
    providers,
    verification,
)
from api.agent_card import AGENT_CARD_PATHS, AgentCard
from api.models import (
    WALLET_PATTERN,
    AgentQuery,
    BrainUpdateRequest,
    CompoundRequest,
    EarnBatchRequest,
    EarnRequest,
    KeyRequest,
    MemoryQuery,
    MemoryWriteRequest,
    RegisterRequest,
    RunRequest,
    SpendRequest,
)
from api.operation import Operation

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0.0"  # also the agent card's version (api.agent_card.VERSION)
SCHEMA_PATH = "/api/schema"
REF_TEMPLATE = "#/components/schemas/{model}"
BEARER = "bearerAuth"
KEY_PATTERN = r"^aglk_[0-9a-f]{32}$"

# ---- response models (responses are built by the handlers; these only describe them) ----------

#: USDC in JSON: a number with at most 6 decimals (Decimal inside the server, never a float).
USDC = Annotated[Decimal, WithJsonSchema({"type": "number", "description": "USDC, at most 6 decimals"})]
WalletId = Annotated[str, Field(pattern=WALLET_PATTERN, description="the agent's wallet id")]


def _no_default(schema: dict[str, Any]) -> None:
    """For an optional field that is absent rather than null: no `default: null` in its schema."""
    schema.pop("default", None)


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Error(_Response):
    """The one error shape of every failure (ACP's flat error)."""

    type: Annotated[str, Field(description="invalid_request or service_error", examples=["invalid_request"])]
    code: Annotated[str, Field(description="machine-readable code, e.g. insufficient_balance")]
    message: Annotated[str, Field(min_length=1, description="human-readable explanation")]
    param: Annotated[str | None, Field(description="the offending field, parameter or header, or null")]


class Agent(_Response):
    id: Annotated[str, Field(description="the agent's UUID", json_schema_extra={"format": "uuid"})]
    wallet: WalletId
    name: str
    specialty: str
    balance: USDC
    referral_code: Annotated[str, Field(min_length=8, max_length=8)]


class RegisterResponse(_Response):
    success: Literal[True]
    agent: Agent
    api_key: Annotated[
        str | SkipJsonSchema[None],
        Field(
            pattern=KEY_PATTERN,
            description="only when registering without a key: the new account's key, shown once",
            json_schema_extra=_no_default,
        ),
    ] = None


class EarnResponse(_Response):
    success: Literal[True]
    balance: USDC
    toll: Annotated[USDC, Field(description="the service's cut (same as serviceCut)")]
    net: Annotated[USDC, Field(description="what the agent was credited: ownerCut + agentCut")]
    ownerCut: USDC
    agentCut: USDC
    serviceCut: USDC
    referralCut: Annotated[USDC, Field(description="credited to the referrer's owner; 0 without a referrer")]
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: Annotated[int, Field(description="the ledger row of this earning")]
    message: str


class SpendResponse(_Response):
    success: Literal[True]
    spent: USDC
    destination: str
    balance: USDC
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: int


class BalanceResponse(_Response):
    balance: USDC
    ownerBalance: USDC
    agentSelfBalance: USDC
    reinvested: Annotated[USDC, Field(description="moved aside by POST /api/agents/compound")]
    totalEarned: Annotated[USDC, Field(description="reportedEarned + settledEarned")]
    reportedEarned: Annotated[USDC, Field(description="earnings reported with /earn, referral credits included")]
    settledEarned: Annotated[
        USDC, Field(description="escrow payouts settled on-chain to the agent as a provider (paid out, not in balance)")
    ]
    totalTransactions: Annotated[int, Field(ge=0)]
    memoryEntries: Annotated[int, Field(ge=0)]


class IdentityResponse(_Response):
    uuid: Annotated[str, Field(json_schema_extra={"format": "uuid"})]
    wallet: WalletId


class EarnBatchResponse(_Response):
    success: Literal[True]
    count: Annotated[int, Field(ge=1, le=100)]
    results: list[EarnResponse]


class CompoundResponse(_Response):
    success: Literal[True]
    balance: USDC
    reinvested: USDC
    moved: Annotated[USDC, Field(description="moved from the spendable balance into reinvested by this call")]
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: Annotated[int | None, Field(description="the ledger row; null when nothing moved")]


class Memory(_Response):
    key: str
    value: Annotated[Any, Field(description="any JSON value, as stored")]
    createdAt: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    updatedAt: Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class MemoryWriteResponse(_Response):
    success: Literal[True]
    memory: Memory


class MemoryListResponse(_Response):
    memories: list[Memory]
    nextCursor: Annotated[str | None, Field(description="pass as cursor for the next page; null on the last")]


class NicheStats(_Response):
    listed: Annotated[int, Field(ge=0)]
    sold: Annotated[int, Field(ge=0)]
    revenue: USDC
    winRate: Annotated[float, Field(ge=0, le=1)]


class TopProduct(_Response):
    niche: str
    revenue: USDC
    sold: Annotated[int, Field(ge=0)]


class Brain(_Response):
    niches: dict[str, NicheStats]
    prices: Annotated[dict[str, USDC], Field(description="average sold price per niche with sales")]
    topProducts: list[TopProduct]
    totalListed: Annotated[int, Field(ge=0)]
    totalSold: Annotated[int, Field(ge=0)]
    totalRevenue: USDC
    winRate: Annotated[float, Field(ge=0, le=1)]
    strategyNote: str
    lastUpdated: Annotated[str | None, Field(json_schema_extra={"format": "date-time"})]


class BrainResponse(_Response):
    brain: Brain
    weights: Annotated[dict[str, float], Field(description="smoothed win rates per niche, summing to 1")]


class BrainUpdateResponse(BrainResponse):
    success: Literal[True]


class RunCounts(_Response):
    success: Annotated[int, Field(ge=0)]
    failure: Annotated[int, Field(ge=0)]


class RunResponse(_Response):
    success: Literal[True]
    key: Annotated[str, Field(description="run:YYYY-MM-DD:<niche or general>")]
    runs: RunCounts


class NetworkResponse(_Response):
    totalAgents: Annotated[int, Field(ge=0)]
    totalEarned: USDC
    totalTolls: USDC


class KeyResponse(_Response):
    success: Literal[True]
    api_key: Annotated[str, Field(pattern=KEY_PATTERN, description="shown once; only its hash is stored")]
    accountId: Annotated[str, Field(json_schema_extra={"format": "uuid"})]
    email: str


class IndexerView(_Response):
    state: Literal["starting", "behind", "synced"]
    seen: int | None
    final: int | None
    behind: int | None


class HealthResponse(_Response):
    status: Literal["ok", "degraded"]
    chainId: int
    network: str
    latestBlock: int
    deployBlock: int
    usdc: str
    contracts: dict[str, str]
    indexer: Annotated[IndexerView | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None


class OpenApiDocument(BaseModel):
    """This document (described loosely: its own schema is OpenAPI 3.1's)."""

    model_config = ConfigDict(extra="allow")
    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]


# ---- the operation table ------------------------------------------------------------------------


_AGENT_ERRORS = {404: ("agent_not_found",)}

OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        "/api/agents/register",
        "registerAgent",
        "Register an agent",
        RegisterResponse,
        status=201,
        request=RegisterRequest,
        auth="optional",
        idempotent=True,
        errors={
            400: ("invalid_specialty", "unknown_referral_code", "idempotency_unsupported"),
            403: ("insufficient_scope",),
        },
        tags=("agents",),
        description="Without a key: creates an account and returns its API key once (Idempotency-Key is refused "
        "then: the key could not be replayed). With an account-scoped key: adds an agent to that account.",
    ),
    Operation(
        "POST",
        "/api/agents/earn",
        "earn",
        "Report an earning",
        EarnResponse,
        request=EarnRequest,
        idempotent=True,
        errors={**_AGENT_ERRORS, 422: ("balance_limit",)},
        tags=("wallet",),
        description="Credits the agent the net of the split (owner and agent cuts), the toll to the service and, "
        "when the agent was referred, the referral cut to the referrer's owner.",
    ),
    Operation(
        "POST",
        "/api/agents/spend",
        "spend",
        "Spend from the balance",
        SpendResponse,
        request=SpendRequest,
        idempotent=True,
        errors={**_AGENT_ERRORS, 422: ("insufficient_balance",)},
        tags=("wallet",),
        description="Debits the agent's self part first, then its owner part; more than the balance is refused.",
    ),
    Operation(
        "GET",
        "/api/agents/balance",
        "getBalance",
        "An agent's balance and totals",
        BalanceResponse,
        query=AgentQuery,
        errors=_AGENT_ERRORS,
        tags=("wallet",),
    ),
    Operation(
        "GET",
        "/api/agents/identity",
        "getIdentity",
        "The agent's UUID for a wallet",
        IdentityResponse,
        query=AgentQuery,
        errors=_AGENT_ERRORS,
        tags=("agents",),
    ),
    Operation(
        "POST",
        "/api/agents/earn/batch",
        "earnBatch",
        "Report several earnings at once, all or none",
        EarnBatchResponse,
        request=EarnBatchRequest,
        idempotent=True,
        errors={**_AGENT_ERRORS, 422: ("balance_limit",)},
        tags=("wallet",),
        description="One transaction: an invalid item (param payments[i].field) refuses the whole batch.",
    ),
    Operation(
        "POST",
        "/api/agents/compound",
        "compound",
        "Move a share of the balance into the reinvested bucket",
        CompoundResponse,
        request=CompoundRequest,
        idempotent=True,
        errors=_AGENT_ERRORS,
        tags=("wallet",),
    ),
    Operation(
        "POST",
        "/api/agents/memory",
        "writeMemory",
        "Store a key-value memory",
        MemoryWriteResponse,
        request=MemoryWriteRequest,
        idempotent=True,
        errors={
            **_AGENT_ERRORS,
            400: ("invalid_key", "reserved_key"),
            409: ("memory_full",),
            413: ("value_too_large",),
        },
        tags=("memory",),
    ),
    Operation(
        "GET",
        "/api/agents/memory",
        "listMemories",
        "Memories whose key contains query, by key, paginated",
        MemoryListResponse,
        query=MemoryQuery,
        errors=_AGENT_ERRORS,
        tags=("memory",),
    ),
    Operation(
        "GET",
        "/api/agents/brain",
        "getBrain",
        "The agent's brain and niche weights (shared with the network)",
        BrainResponse,
        query=AgentQuery,
        errors=_AGENT_ERRORS,
        tags=("brain",),
    ),
    Operation(
        "POST",
        "/api/agents/brain",
        "updateBrain",
        "Record a listing or a sale",
        BrainUpdateResponse,
        request=BrainUpdateRequest,
        idempotent=True,
        errors={**_AGENT_ERRORS, 400: ("invalid_action", "invalid_niche")},
        tags=("brain",),
    ),
    Operation(
        "POST",
        "/api/agents/runs",
        "recordRun",
        "Count a run (per agent, UTC day and niche)",
        RunResponse,
        request=RunRequest,
        idempotent=True,
        errors={**_AGENT_ERRORS, 400: ("invalid_niche",)},
        tags=("wallet",),
    ),
    Operation(
        "GET",
        "/api/agents/network",
        "getNetwork",
        "Network totals",
        NetworkResponse,
        auth="none",
        tags=("service",),
    ),
    Operation(
        "POST",
        "/api/keys",
        "createKey",
        "A self-serve API key, one per email, shown once",
        KeyResponse,
        status=201,
        request=KeyRequest,
        auth="none",
        errors={400: ("invalid_email", "idempotency_unsupported"), 409: ("email_has_key",)},
        tags=("agents",),
    ),
    Operation(
        "GET",
        "/healthz",
        "healthz",
        "Liveness and the chain view",
        HealthResponse,
        auth="none",
        errors={503: ("chain_unavailable", "chain_mismatch")},
        tags=("service",),
    ),
    Operation(
        "GET",
        SCHEMA_PATH,
        "getOpenApiSchema",
        "This OpenAPI 3.1 document",
        OpenApiDocument,
        auth="none",
        tags=("service",),
    ),
    *(
        Operation(
            "GET",
            path,
            op_id,
            "The A2A 1.0 agent card of the service",
            AgentCard,
            auth="none",
            tags=("service",),
            response_headers={"Cache-Control": "public, max-age=3600"},
        )
        for path, op_id in zip(AGENT_CARD_PATHS, ("getAgentCardLegacy", "getAgentCard"), strict=True)
    ),
]

# Later route modules declare their rows beside their handlers.
OPERATIONS += [
    *decisions.OPERATIONS,
    *audit_routes.OPERATIONS,
    *checkout.OPERATIONS,
    *providers.OPERATIONS,
    *provider_orders.OPERATIONS,
    *ipfs_gateway.OPERATIONS,
    *verification.OPERATIONS,
]


# ---- generation ---------------------------------------------------------------------------------

_AUTH_ERRORS = {401: ("missing_api_key", "malformed_api_key", "invalid_api_key")}
_OPTIONAL_AUTH_ERRORS = {401: ("malformed_api_key", "invalid_api_key")}
_AUTH_BY_KIND: dict[str, Mapping[int, tuple[str, ...]]] = {
    "required": _AUTH_ERRORS,
    "optional": _OPTIONAL_AUTH_ERRORS,
    "none": {},
}
_BODY_ERRORS = {
    400: ("invalid_json", "invalid_field", "missing_field", "unknown_field", "invalid_amount"),
    413: ("payload_too_large",),
}
_QUERY_ERRORS = {400: ("invalid_field", "missing_field", "unknown_field")}
_IDEM_ERRORS = {
    400: ("invalid_idempotency_key",),
    409: ("idempotency_in_flight",),
    422: ("idempotency_conflict",),
}
_ALWAYS_ERRORS = {500: ("internal_error",)}

_STATUS_TEXT = {
    400: "Invalid request",
    401: "Missing, malformed or unknown API key",
    403: "The key's scope does not allow this",
    404: "Not found (or not yours: existence is not disclosed)",
    409: "Conflict",
    413: "Request body too large",
    422: "Refused",
    500: "Internal error",
    503: "A dependency is unavailable",
}


def _merge(*tables: Mapping[int, tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for table in tables:
        for status, codes in table.items():
            bucket = out.setdefault(status, [])
            bucket.extend(c for c in codes if c not in bucket)
    return {s: tuple(out[s]) for s in sorted(out)}


def error_codes(op: Operation) -> dict[int, tuple[str, ...]]:
    """Every error status of `op` with its codes."""
    return _merge(
        _AUTH_BY_KIND[op.auth],
        _BODY_ERRORS if op.request is not None else {},
        _QUERY_ERRORS if op.query is not None else {},
        _IDEM_ERRORS if op.idempotent else {},
        op.errors,
        _ALWAYS_ERRORS,
    )


class _Components:
    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def add(self, model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, str]:
        """Put `model` (and its $defs) into components; return a $ref to it."""
        schema = model.model_json_schema(ref_template=REF_TEMPLATE, mode=mode)
        for name, sub in schema.pop("$defs", {}).items():
            self._put(name, sub)
        self._put(model.__name__, schema)
        return {"$ref": REF_TEMPLATE.format(model=model.__name__)}

    def _put(self, name: str, schema: dict[str, Any]) -> None:
        if self.schemas.get(name, schema) != schema:
            raise ValueError(f"two different schemas are named {name!r}")
        self.schemas[name] = schema


def _query_parameters(model: type[BaseModel], components: _Components) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template=REF_TEMPLATE)
    for name, sub in schema.pop("$defs", {}).items():
        components._put(name, sub)
    required = set(schema.get("required", ()))
    params = []
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required, "schema": prop}
        if "description" in prop:
            param["description"] = prop["description"]
        params.append(param)
    return params


_IDEMPOTENCY_PARAMETER = {
    "name": idempotency.HEADER,
    "in": "header",
    "required": False,
    "description": "Makes a retry safe: the same key with the same body replays the stored response (with "
    "`Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still "
    "running a 409. Scoped to the API key and the endpoint.",
    "schema": {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LEN, "pattern": "^[ -~]+$"},
}

_ECHO_HEADERS = {
    idempotency.HEADER: {
        "description": "The request's Idempotency-Key, echoed when one was sent",
        "schema": {"type": "string"},
    },
    idempotency.REPLAYED: {
        "description": "`true` when this is the stored response of an earlier request with the same key",
        "schema": {"type": "string", "enum": ["true"]},
    },
}


def _error_response(status: int, codes: tuple[str, ...], idempotent: bool) -> dict[str, Any]:
    text = _STATUS_TEXT.get(status, "Error")
    resp: dict[str, Any] = {
        "description": f"{text}. `code` is one of: {', '.join(codes)}",
        "content": {"application/json": {"schema": {"$ref": REF_TEMPLATE.format(model="Error")}}},
    }
    headers: dict[str, Any] = {}
    if status == 401:
        headers["WWW-Authenticate"] = {"description": "Bearer challenge", "schema": {"type": "string"}}
    if status == 409 and idempotent:
        headers["Retry-After"] = {"description": "seconds to wait", "schema": {"type": "integer"}}
    if idempotent:
        headers[idempotency.HEADER] = _ECHO_HEADERS[idempotency.HEADER]
    if headers:
        resp["headers"] = headers
    return resp


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _operation(op: Operation, components: _Components) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = list(op.tags)
    params: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "description": op.path_params.get(name, name),
            "schema": {"type": "string"},
        }
        for name in _PLACEHOLDER.findall(op.path)
    ]
    if op.query is not None:
        params.extend(_query_parameters(op.query, components))
    if op.idempotent:
        params.append(_IDEMPOTENCY_PARAMETER)
    if params:
        out["parameters"] = params
    if op.request is not None:
        out["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": components.add(op.request, "validation")}},
        }
    ok: dict[str, Any] = {
        "description": "Success",
        "content": {op.media_type: {"schema": components.add(op.response, "serialization")}},
    }
    headers: dict[str, Any] = {
        name: {"description": text, "schema": {"type": "string"}} for name, text in op.response_headers.items()
    }
    if op.idempotent:
        headers.update(_ECHO_HEADERS)
    if headers:
        ok["headers"] = headers
    responses: dict[str, Any] = {str(op.status): ok}
    for status, codes in error_codes(op).items():
        responses[str(status)] = _error_response(status, codes, op.idempotent)
    out["responses"] = responses
    if op.auth == "none":
        out["security"] = []
    elif op.auth == "optional":
        out["security"] = [{}, {BEARER: []}]
    return out


@functools.lru_cache(maxsize=16)
def document(routes: frozenset[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The OpenAPI document of the operations among `routes` ((METHOD, path) pairs; None: all).
    Callers must not mutate the (cached) result."""
    components = _Components()
    components.add(Error, "serialization")
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        if routes is not None and (op.method, op.path) not in routes:
            continue
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, components)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "agentledger API",
            "version": API_VERSION,
            "description": "Financial backend for autonomous software agents: wallets, USDC escrow, audit trail. "
            "Amounts are JSON numbers of USDC with at most 6 decimals; every error has the shape "
            "{type, code, message, param}.",
        },
        "tags": [
            {"name": "agents", "description": "Accounts, agents and identity"},
            {"name": "wallet", "description": "Earning, spending and balances"},
            {"name": "service", "description": "Health and machine-readable descriptions"},
            {"name": "decisions", "description": "Decision logging (hashes only) and its public verification"},
            {"name": "audit", "description": "The transparency log: checkpoints, inclusion and consistency proofs"},
            {"name": "checkout", "description": "Providers, catalogue and buyer-funded escrow checkout (ACP)"},
            {"name": "orders", "description": "Orders and the provider's signed calls"},
            {"name": "ipfs", "description": "Deliverables by CID"},
        ],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(components.schemas.items())),
            "securitySchemes": {
                BEARER: {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "aglk_ followed by 32 lowercase hex",
                    "description": "An API key from POST /api/agents/register (no key) or POST /api/keys.",
                }
            },
        },
        "security": [{BEARER: []}],
    }


def app_routes(app: web.Application) -> frozenset[tuple[str, str]]:
    """(METHOD, path) of every route of `app`, HEAD and OPTIONS aside."""
    out = set()
    for route in app.router.routes():
        if route.method in ("HEAD", "OPTIONS"):
            continue
        canonical = route.resource.canonical if route.resource is not None else ""
        out.add((route.method, canonical))
    return frozenset(out)


def documented_routes(ops: Iterable[Operation] | None = None) -> frozenset[tuple[str, str]]:
    return frozenset((op.method, op.path) for op in (OPERATIONS if ops is None else ops))


async def schema_handler(request: web.Request) -> web.Response:
    body = json.dumps(document(app_routes(request.app)))
    return web.Response(text=body, content_type="application/json")


def add_schema_routes(app: web.Application) -> None:
    app.router.add_get(SCHEMA_PATH, schema_handler)
