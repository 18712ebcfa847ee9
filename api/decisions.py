"""POST /api/agents/{agent_uuid}/log: tamper-evident decision logging over HTTP.

The rules, the stored entry and its transaction are core.decisions'. A request is first validated
by a strict schema (DecisionLogRequest: unknown fields are refused, anything that looks like raw
content is refused with `evidence_content_not_accepted`) and its webhook URL checked (DNS
included), outside any transaction; then core.decisions.log_decision runs in ONE writer
transaction (under the Idempotency-Key when one is sent). The 201 is sent once all of that is
committed; a 429 writes nothing and is not stored under the Idempotency-Key (a retry after the
reset runs afresh). A webhook secret the service generated is shown in that first 201 only.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api import idempotency
from api.errors import JSON_BODY
from api.feature import Feature, Parts
from api.http import encode
from api.models import decode_json, validation_error
from api.operation import Call, Operation, Reply
from core import decisions, egress
from core.services import Services
from core.store import Conn

PATH = "/api/agents/{agent_uuid}/log"

Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256, 64 lowercase hex digits")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EvidenceItem(_Strict):
    type: Literal["pdf", "json", "text"]
    sha256: Hex64


class DecisionLogRequest(_Strict):
    """One decision, as hashes and non-identifying fields only (unknown fields are refused)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={  # what check_evidence refuses with 400 evidence_required
            "if": {"properties": {"event_type": {"const": "critical"}}, "required": ["event_type"]},
            "then": {
                "required": ["evidence_manifest"],
                "properties": {"evidence_manifest": {"type": "array", "minItems": 1}},
            },
        },
    )

    event_type: Annotated[
        Literal["routine", "high_stakes", "critical"],
        Field(description="the tier; `critical` needs a non-empty evidence_manifest"),
    ]
    content_hash: Hex64
    model_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$")]
    model_version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")]
    evidence_manifest: Annotated[list[EvidenceItem], Field(max_length=decisions.MAX_EVIDENCE_ITEMS)] | None = None
    correlation_ref: (
        Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", description="an opaque id, e.g. a UUID")]
        | None
    ) = None
    webhook_url: (
        Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": egress.URL_PATTERN})] | None
    ) = None
    webhook_secret: (
        Annotated[str, Field(pattern=r"^[\x21-\x7e]{16,256}$", description="HMAC key; a random one when absent")] | None
    ) = None


class DecisionLogResponse(_Strict):
    audit_id: int
    chain_hash: Hex64
    content_hash: Hex64
    tier: Literal["routine", "high_stakes", "critical"]
    timestamp: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    verification_url: str
    webhook_secret: (
        Annotated[
            str,
            Field(
                description="only when webhook_url was given without webhook_secret: the generated HMAC key, "
                "shown this once (an Idempotency-Key replay omits it; it is kept only in the delivery)"
            ),
        ]
        | None
    ) = None


# ---- parsing -------------------------------------------------------------------------------------


def parse_decision(body: bytes, decoded: Any = None) -> tuple[DecisionLogRequest, decisions.Decision]:
    """The request of a log POST and its decision, or the 400 it deserves; `decoded`: the body as
    api.errors already decoded it (HTTP)."""
    data = decode_json(body) if decoded is None else decoded
    decisions.check_no_content(data)
    try:
        req = DecisionLogRequest.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc
    decision = as_decision(req)
    decisions.check_evidence(decision)
    return req, decision


def as_decision(req: DecisionLogRequest) -> decisions.Decision:
    return decisions.Decision(
        event_type=req.event_type,
        content_hash=req.content_hash,
        model_id=req.model_id,
        model_version=req.model_version,
        evidence=tuple((e.type, e.sha256) for e in req.evidence_manifest or ()),
        correlation_ref=req.correlation_ref,
    )


# ---- handler -------------------------------------------------------------------------------------


async def run_log_decision(services: Services, call: Call) -> Reply:
    caller = call.caller
    assert caller is not None
    agent_uuid = call.path["agent_uuid"]
    body = call.body
    # Validated before the transaction: a 400 writes nothing, and the URL check resolves DNS,
    # which must never run inside the one writer's transaction.
    # The body api.errors already decoded (HTTP); a call that did not come through HTTP (an MCP tool)
    # is decoded here under the same rule.
    req, decision = parse_decision(body, call.request.get(JSON_BODY) if call.request is not None else None)
    if req.webhook_url is not None:
        # Ownership first (404 otherwise): resolving the URL for any caller would let a stranger
        # probe which internal names exist. The transaction checks the agent again.
        await services.reads.run(lambda db: decisions.agent_for(db, caller, agent_uuid))
        await egress.check_webhook_url(req.webhook_url, services.allow_private, "webhook_url")
    now = services.clock()
    rate_limit = services.part(decisions.DecisionLog).rate_limit
    verify_base = call.base_url
    generated = None  # a webhook secret made here: shown once in the 201, stored only in the delivery
    webhook = None
    if req.webhook_url is not None:
        secret = req.webhook_secret
        if secret is None:
            secret = generated = egress.new_secret()
        webhook = (req.webhook_url, secret)
    logged: list[decisions.Logged] = []

    def work(conn: Conn) -> tuple[int, bytes]:
        done = decisions.log_decision(
            conn,
            caller,
            agent_uuid,
            decision,
            webhook=webhook,
            verify_base=verify_base,
            rate_limit=rate_limit,
            now=now,
        )
        logged[:] = [done]
        return 201, encode(done.answer).encode()  # what an Idempotency-Key stores: never the secret

    # Every refusal of log_decision (the agent, the rate limit) comes before its first write: no
    # savepoint of its own (GroupCommitter.run; the committer checks the promise). Under a key the
    # stored answer is a write after the work, and idempotency.execute keeps the savepoint then.
    reply = await idempotency.execute_call(
        services.writer, call, owner=caller.key_hash, now=now, work=work, savepoint=False
    )
    if reply.status == 201 and logged and not reply.replayed:
        if generated is not None:
            reply = reply._replace(body=encode({**logged[0].answer, "webhook_secret": generated}).encode())
        if logged[0].webhook_event_id is not None:
            services.wake()
    return reply


def install(services: Services) -> Parts:
    services.provide(decisions.DecisionLog())
    return Parts()


OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        PATH,
        "logDecision",
        "Log a decision (hashes only) to the agent's tamper-evident decision log",
        DecisionLogResponse,
        status=201,
        request=DecisionLogRequest,
        idempotent=True,
        errors={
            400: ("evidence_content_not_accepted", "evidence_required", "invalid_webhook_url"),
            404: ("agent_not_found",),
            422: ("webhook_url_refused",),
            429: ("rate_limit_exceeded",),
        },
        tags=("decisions",),
        mcp_default=True,
        mcp_output_schema=True,
        run=run_log_decision,
        touches="agent",
        scope="log",
        description=(
            "Chain rule: chain_hash = SHA-256(agent_id:seq:prev_hash:payload_hash), prev_hash of the first "
            "entry 'genesis', payload_hash = SHA-256(RFC 8785 JSON of the stored entry). Rate limit: "
            f"{decisions.RATE_LIMIT_PER_HOUR} per hour per key (fixed UTC hour; 429 with Retry-After). "
            "See /methodology."
        ),
    ),
]

FEATURE = Feature("decisions", tuple(OPERATIONS), install, toolset="decisions")
