"""POST /api/agents/{agent_uuid}/log: tamper-evident decision logging.

Callers never send content, only SHA-256 hashes of it. A request is first validated by a strict
schema (DecisionLogRequest: unknown fields are refused, anything that looks like raw content is
refused with `evidence_content_not_accepted`) and its webhook URL checked (DNS included), outside
any transaction; then, in ONE writer transaction (under the Idempotency-Key when one is sent), the
agent is checked against the key, the key's hourly window is counted (core.store.ratelimit), the
entry is appended to the agent's decision stream and to the Merkle tree (core.store.audit), and the
optional webhook is put in the outbox. The 201 is sent once all of that is committed; a 429 writes
nothing and is not stored under the Idempotency-Key (a retry after the reset runs afresh).

Decisions taken where the issue is silent (published at /well-known/decisional-logging.json):
- Tiers: `routine`, `high_stakes`, and `critical`: irreversible or safety- or money-relevant
  decisions, which must carry evidence (an `evidence_manifest` of at least one item; 400
  `evidence_required` otherwise). Tiers are recorded and hashed; nothing else differs.
- `model_id` and `model_version` are required (a decision record that cannot say which model
  decided is not auditable); `correlation_ref` is optional.
- Identifiers admit only short tokens (no spaces, no `@`): free text and e-mail addresses cannot
  be smuggled into the public log through them.
- A hash slot (`content_hash`, an evidence item's `sha256`) holding hex digits of the wrong length
  or case (or with 0x) is a malformed hash (400 invalid_field); holding anything else (text,
  base64, an object or array) is content: 400 `evidence_content_not_accepted`. So is an evidence item given as a
  string, an evidence manifest given as an object or a string, or a field named like content
  (CONTENT_FIELDS) at the top level or inside an evidence item.
- The stored entry (hashed into payload_hash, RFC 8785; see decision_payload): agent_id,
  content_hash, correlation_ref (null when absent), event_type, evidence_manifest ([] when
  absent), model_id, model_version, timestamp (ISO 8601 UTC, ms). The webhook URL and secret are not part of it and
  are stored nowhere but in the delivery itself.
- When webhook_url comes without webhook_secret, the generated secret is returned once in the 201
  as `webhook_secret` (else receivers could not verify the signature). It is not part of what an
  Idempotency-Key stores, so a replay of that 201 omits it: callers that retry should send their
  own webhook_secret.
- The key's right to act for the agent is checked before the webhook URL is resolved: a stranger
  gets 404 without the service resolving names of its choosing.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import apsw
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api import idempotency, webhook_dispatcher
from api.agent_card import base_url
from api.auth import Caller, authenticate
from api.errors import ApiError
from api.models import decode_json, validation_error
from api.operation import Operation
from api.wallets import CLOCK, WALLET_DB, WRITER, encode
from core import audit, webhooks
from core.store import audit as audit_store
from core.store import ratelimit
from core.store import wallets as wallet_store
from core.store import webhooks as webhooks_store

TIERS = ("routine", "high_stakes", "critical")
#: Tiers whose entries must carry at least one evidence item.
EVIDENCE_REQUIRED_TIERS = frozenset({"critical"})
RATE_LIMIT_PER_HOUR = 1000
MAX_EVIDENCE_ITEMS = 64
EVENT = "decision_logged"
PATH = "/api/agents/{agent_uuid}/log"

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

Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256, 64 lowercase hex digits")]
_HEXISH = re.compile(r"(0x)?[0-9a-fA-F]*")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EvidenceItem(_Strict):
    type: Literal["pdf", "json", "text"]
    sha256: Hex64


class DecisionLogRequest(_Strict):
    """One decision, as hashes and non-identifying fields only (unknown fields are refused)."""

    event_type: Annotated[
        Literal["routine", "high_stakes", "critical"],
        Field(description="the tier; `critical` needs a non-empty evidence_manifest"),
    ]
    content_hash: Hex64
    model_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$")]
    model_version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")]
    evidence_manifest: Annotated[list[EvidenceItem], Field(max_length=MAX_EVIDENCE_ITEMS)] | None = None
    correlation_ref: (
        Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", description="an opaque id, e.g. a UUID")]
        | None
    ) = None
    webhook_url: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
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


class RateLimited(idempotency.InFlight):
    """429: the key's hourly window is full. An InFlight so that idempotency.execute releases the
    Idempotency-Key instead of storing the 429 (a retry after the reset must really run)."""

    def __init__(self, retry_after: int, limit: int) -> None:
        ApiError.__init__(
            self,
            429,
            "rate_limit_exceeded",
            f"at most {limit} decision events per hour per API key; the window resets in {retry_after} s",
            param=None,
        )
        self.retry_after = retry_after

    def response(self) -> web.Response:
        body = {
            "type": self.type,
            "code": self.code,
            "message": self.message,
            "param": self.param,
            "retry_after_seconds": self.retry_after,
        }
        resp = web.json_response(body, status=429)
        resp.headers["Retry-After"] = str(self.retry_after)
        return resp


# ---- validation ---------------------------------------------------------------------------------


def _content(param: str, what: str) -> ApiError:
    return ApiError(
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
    """Refuse anything that carries raw content (400 evidence_content_not_accepted)."""
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


def parse_decision(body: bytes) -> DecisionLogRequest:
    """The request of a log POST, or the ApiError (400) it deserves."""
    data = decode_json(body)
    check_no_content(data)
    try:
        req = DecisionLogRequest.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc
    if req.event_type in EVIDENCE_REQUIRED_TIERS and not req.evidence_manifest:
        raise ApiError(
            400,
            "evidence_required",
            f"a {req.event_type} decision must carry an evidence_manifest of at least one item",
            param="evidence_manifest",
        )
    return req


# ---- the entry ---------------------------------------------------------------------------------


def iso_utc(t: float) -> str:
    """ISO 8601 UTC with milliseconds and a Z."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def decision_payload(agent_uuid: str, req: DecisionLogRequest, timestamp: str) -> dict[str, Any]:
    """The stored entry; its RFC 8785 form is what payload_hash covers."""
    return {
        "agent_id": agent_uuid,
        "content_hash": req.content_hash,
        "correlation_ref": req.correlation_ref,
        "event_type": req.event_type,
        "evidence_manifest": [{"sha256": e.sha256, "type": e.type} for e in req.evidence_manifest or ()],
        "model_id": req.model_id,
        "model_version": req.model_version,
        "timestamp": timestamp,
    }


def decision_rule(agent_uuid: str) -> audit_store.ChainRule:
    """chain_hash = SHA-256(agent_id:seq:prev_hash:SHA-256(canonical payload))."""

    def rule(seq: int, prev_hash: str, payload: bytes) -> str:
        return audit.decision_chain_hash(agent_uuid, seq, prev_hash, audit.sha256_hex(payload))

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


# ---- handler -------------------------------------------------------------------------------------

#: Checks a webhook URL (raises ApiError 400); set by add_decision_routes.
URL_CHECK: web.AppKey[Callable[[str], Awaitable[None]]] = web.AppKey("decision_url_check", object)  # type: ignore[arg-type]
#: Decision events per API key per UTC hour; set by add_decision_routes.
RATE_LIMIT: web.AppKey[int] = web.AppKey("decision_rate_limit", int)


def _agent(conn: apsw.Connection, caller: Caller, agent_uuid: str) -> wallet_store.AgentRow:
    """The agent if the key may act for it; 404 otherwise (existence is not leaked)."""
    agent = wallet_store.agent_by_uuid(conn, agent_uuid) if _UUID.fullmatch(agent_uuid) else None
    if (
        agent is None
        or agent.account_id != caller.account_id
        or (caller.agent_id is not None and caller.agent_id != agent.uuid)
    ):
        raise ApiError(404, "agent_not_found", f"no agent {agent_uuid} for this API key", param="agent_uuid")
    return agent


async def log_decision(request: web.Request) -> web.Response:
    app = request.app
    agent_uuid = request.match_info["agent_uuid"]
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    # Validated before the transaction: a 400 writes nothing, and the URL check resolves DNS,
    # which must never run inside the one writer's transaction.
    req = parse_decision(body)
    if req.webhook_url is not None:
        # Ownership first (404 otherwise): resolving the URL for any caller would let a stranger
        # probe which internal names exist. The transaction checks the agent again.
        _agent(app[WALLET_DB], caller, agent_uuid)
        await app[URL_CHECK](req.webhook_url)
    now = app[CLOCK]()
    verify_base = base_url(request) + "/verify/"
    enqueued: list[str] = []
    generated: list[str] = []  # a webhook secret made here: shown once in the 201, stored only in the delivery
    answers: list[dict[str, Any]] = []
    limit = app[RATE_LIMIT]

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        agent = _agent(conn, caller, agent_uuid)
        hit = ratelimit.hit(conn, caller.key_hash, now, limit)
        if not hit.allowed:
            raise RateLimited(hit.retry_after(now), limit)
        ts = iso_utc(now)
        entry = audit_store.append(
            conn,
            stream=audit.agent_stream(agent.uuid),
            kind=audit.DECISION,
            payload=decision_payload(agent.uuid, req, ts),
            chain=decision_rule(agent.uuid),
            now=now,
        )
        if req.webhook_url is not None:
            secret = req.webhook_secret
            if secret is None:
                secret = webhooks.new_secret()
                generated[:] = [secret]
            enqueued.append(
                webhooks_store.enqueue(
                    conn,
                    event=EVENT,
                    source=f"audit:{entry.id}",
                    url=req.webhook_url,
                    secret=secret,
                    payload=webhook_payload(entry, agent.uuid, req.event_type, req.content_hash, ts),
                    now=now,
                )
            )
        answer = {
            "audit_id": entry.id,
            "chain_hash": entry.chain_hash,
            "content_hash": req.content_hash,
            "tier": req.event_type,
            "timestamp": ts,
            "verification_url": f"{verify_base}{entry.id}",
        }
        answers[:] = [answer]
        return 201, encode(answer).encode()  # what an Idempotency-Key stores: never the secret

    resp = await idempotency.execute(request, app[WRITER], owner=caller.key_hash, body=body, now=now, work=work)
    if resp.status == 201 and generated and answers and idempotency.REPLAYED not in resp.headers:
        resp.body = encode({**answers[0], "webhook_secret": generated[0]}).encode()
    if enqueued and resp.status == 201:
        webhook_dispatcher.wake(request)
    return resp


def url_checker(allow_private: bool) -> Callable[[str], Awaitable[None]]:
    """core.webhooks.check_url_async as a 400 invalid_webhook_url."""

    async def check(url: str) -> None:
        try:
            await webhooks.check_url_async(url, allow_private)
        except webhooks.WebhookURLError as exc:
            raise ApiError(400, "invalid_webhook_url", str(exc), param="webhook_url") from exc

    return check


def add_decision_routes(
    app: web.Application, *, allow_private_webhooks: bool = False, rate_limit: int = RATE_LIMIT_PER_HOUR
) -> None:
    """Mount POST /api/agents/{agent_uuid}/log on an app that has the wallet routes (WALLET_DB,
    WRITER, CLOCK); webhooks go out through api.webhook_dispatcher when one is mounted.
    `allow_private_webhooks`: core.webhooks.allow_private_for(Settings.webhook_allow_private, chain)."""
    app[URL_CHECK] = url_checker(allow_private_webhooks)
    app[RATE_LIMIT] = rate_limit
    app.router.add_post(PATH, log_decision)


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
            429: ("rate_limit_exceeded",),
        },
        tags=("decisions",),
        description=(
            "Chain rule: chain_hash = SHA-256(agent_id:seq:prev_hash:payload_hash), prev_hash of the first "
            "entry 'genesis', payload_hash = SHA-256(RFC 8785 JSON of the stored entry). Rate limit: "
            f"{RATE_LIMIT_PER_HOUR} per hour per key (fixed UTC hour; 429 with Retry-After). See /methodology."
        ),
    ),
]
