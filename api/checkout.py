"""The buyer side of escrow checkout under /api/acp (ACP 2026-04-17): checkout sessions and the
GET of an order, over HTTP. The rules, transactions and the funding saga are core.checkout's.

    POST /api/acp/checkout_sessions                 create (201; webhook_secret shown once)
    GET  /api/acp/checkout_sessions/{id}            retrieve
    POST /api/acp/checkout_sessions/{id}            update line_items / buyer while incomplete
    POST /api/acp/checkout_sessions/{id}/cancel     -> cancelled (405 once completed, cancelled or expired)
    POST /api/acp/checkout_sessions/{id}/complete   fund the gateway job -> completed + order
    GET  /api/acp/orders/{order_id}                 public / authenticated / funder views

Every /api/acp response echoes `Request-Id` and `Idempotency-Key` when the request carried them and
names the protocol version in `API-Version`; a request naming an API-Version other than
2026-04-17 gets 400 unsupported_api_version. Every POST honours Idempotency-Key (api.idempotency).
"""

from __future__ import annotations

import functools
import secrets
from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api import idempotency
from api.acp import acp_body, add_acp_headers
from api.errors import ApiError
from api.http import CHECKOUT, CLOCK, HOOKS, READS, WRITER, Hooks, encode, ok, wake_outbox
from api.operation import Call, Operation, Quoted, Reply
from api.policy import mount
from core import egress
from core.checkout import funding, rules, sessions, views
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.jsontext import decode_json
from core.keys import Caller
from core.money import usdc_text
from core.store import Conn
from core.store import checkout as store
from core.store import orders as order_store
from core.store.checkout import SessionRow

# ---- request models -----------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _absent(schema: dict[str, Any]) -> None:
    """An optional field that may be absent but not null: no `default: null` in its schema."""
    schema.pop("default", None)


class ItemRef(_Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")]


class LineItemRequest(_Strict):
    item: ItemRef
    quantity: Annotated[int, Field(ge=1, le=rules.MAX_QUANTITY)] = 1
    id: Annotated[str, Field(max_length=64)] | None = None  # an ACP line item id: ignored (ours are li_<n>)


#: rules.EMAIL_RE, its negated classes also free of control characters (the rule of every string).
_EMAIL_SCHEMA_PATTERN = "^" + rules.EMAIL_RE.pattern.replace(r"[^@\s]", r"[^@\s\x00-\x1f\x7f-\x9f]") + "$"


class BuyerRequest(_Strict):
    email: Annotated[str, Field(max_length=254, json_schema_extra={"pattern": _EMAIL_SCHEMA_PATTERN})] | None = None
    first_name: Annotated[str, Field(max_length=100)] | None = None
    last_name: Annotated[str, Field(max_length=100)] | None = None


class SessionCreateRequest(_Strict):
    line_items: Annotated[list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS)]
    buyer: BuyerRequest | None = None
    webhook_url: (
        Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": egress.URL_PATTERN})] | None
    ) = None
    currency: Annotated[str, Field(pattern=r"^usdc$")] | None = None
    capabilities: dict[str, Any] | None = None  # accepted (ACP), not used


class SessionUpdateRequest(_Strict):
    """At least one of the two (400 empty_update); neither may be null."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, json_schema_extra={"minProperties": 1})
    line_items: Annotated[
        list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS, json_schema_extra=_absent)
    ] = None  # type: ignore[assignment]
    buyer: Annotated[BuyerRequest, Field(json_schema_extra=_absent)] = None  # type: ignore[assignment]


class Credential(BaseModel):
    token: Annotated[
        str,
        Field(
            pattern=r"^0x[0-9a-fA-F]{40}$",
            description="the paying 0x address (it approved the gateway for the total)",
        ),
    ]
    signature: Annotated[
        str,
        Field(
            pattern=r"^0x[0-9a-fA-F]{130}$",
            description="EIP-712 signature by `token` of the session's Funding typed data (core.checkout.rules."
            "checkout_typed_data; the session's payment handler config gives it as typed_data, message.buyer to fill)",
        ),
    ]


class Instrument(BaseModel):
    credential: Credential


class PaymentData(BaseModel):
    handler_id: Literal["service-usdc-commerce-v1"]
    instrument: Instrument


class CompleteBuyer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: Annotated[str, Field(max_length=254)] | None = None
    first_name: Annotated[str, Field(max_length=254)] | None = None
    last_name: Annotated[str, Field(max_length=254)] | None = None


class SessionCompleteRequest(BaseModel):
    """Documentation of the complete body (it is validated by hand for the spec's exact error codes:
    core.checkout.funding.parse_payment)."""

    buyer: CompleteBuyer | None = None
    payment_data: PaymentData


class SessionResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    currency: str
    line_items: list[dict[str, Any]]
    totals: list[dict[str, Any]]
    messages: list[dict[str, Any]]


class AuditChainEntry(BaseModel):
    audit_id: int
    seq: int
    prev_hash: str
    chain_hash: str
    payload: dict[str, Any]


class AuditChain(BaseModel):
    """The order's audit trail in the spec's shape: {entries: [...]}, oldest first."""

    entries: list[AuditChainEntry]


class OrderResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    service_job_id: str
    settlement_tx_hash: str
    audit_chain: AuditChain


# ---- handlers -----------------------------------------------------------------------------------


def _lines(items: list[LineItemRequest]) -> list[sessions.LineRef]:
    return [sessions.LineRef(li.item.id, li.quantity) for li in items]


def _buyer(req: BuyerRequest | None) -> dict[str, Any] | None:
    return None if req is None else req.model_dump(exclude_none=True)


def _caller(call: Call) -> Caller:
    assert call.caller is not None, "an authenticated operation's call carries its caller"
    return call.caller


async def run_create_session(app: web.Application, call: Call) -> Reply:
    ctx = app[CHECKOUT]
    caller = _caller(call)
    body = call.body
    now = app[CLOCK]()
    base = call.base_url
    parsed: dict[str, SessionCreateRequest] = {}

    async def validate() -> None:  # before the transaction: the webhook URL check resolves DNS
        req = acp_body(SessionCreateRequest, body)
        if req.webhook_url is not None:
            await sessions.check_webhook_url(req.webhook_url, ctx.allow_private_webhooks)
        parsed["req"] = req

    made: list[tuple[dict[str, Any], str]] = []  # (the view, the webhook secret made for it)

    def work(conn: Conn) -> tuple[int, bytes]:
        req = parsed["req"]
        s, secret = sessions.create(
            conn,
            ctx,
            caller,
            line_items=_lines(req.line_items),
            buyer=_buyer(req.buyer),
            webhook_url=req.webhook_url,
            now=now,
        )
        view = views.session_json(ctx, conn, s, base=base)
        made[:] = [] if secret is None else [(view, secret)]
        return ok(view, 201)  # what an Idempotency-Key stores: never the secret

    reply = await idempotency.execute_call(
        app[WRITER], call, owner=caller.key_hash, now=now, work=work, before=validate
    )
    if reply.status == 201 and made and not reply.replayed:
        view, secret = made[0]
        reply = reply._replace(body=ok({**view, "webhook_secret": secret}, 201)[1])  # shown once: this answer only
    return reply


async def run_get_session(app: web.Application, call: Call) -> Reply:
    ctx = app[CHECKOUT]
    sid = call.path["session_id"]
    now = app[CLOCK]()
    caller = _caller(call)

    def answer(db: Conn, s: SessionRow) -> Reply:
        return Reply(200, encode(views.session_json(ctx, db, s, base=call.base_url)).encode())

    def read(db: Conn) -> Reply | SessionRow:
        s = sessions.find_owned(db, caller, sid)
        if rules.is_expired(s.status, s.expires_at, now):
            return s  # its expiry is persisted first
        return answer(db, s)

    first = await app[READS].run(read)
    if isinstance(first, Reply):
        return first
    # persist the expiry (once), then answer it
    await app[WRITER].run(lambda conn: store.expire_session(conn, sid, now))
    return await app[READS].run(lambda db: answer(db, store.get_session(db, sid) or first))


async def run_update_session(app: web.Application, call: Call) -> Reply:
    ctx = app[CHECKOUT]
    caller = _caller(call)
    body = call.body
    now = app[CLOCK]()
    sid = call.path["session_id"]
    base = call.base_url

    def work(conn: Conn) -> tuple[int, bytes]:
        req = acp_body(SessionUpdateRequest, body)
        lines = None if req.line_items is None else _lines(req.line_items)
        updated = sessions.update(conn, caller, sid, line_items=lines, buyer=_buyer(req.buyer), now=now)
        return ok(views.session_json(ctx, conn, updated, base=base))

    await sessions.persist_expiry(ctx, sid, now)
    return await idempotency.execute_call(app[WRITER], call, owner=caller.key_hash, now=now, work=work)


async def run_cancel_session(app: web.Application, call: Call) -> Reply:
    ctx = app[CHECKOUT]
    caller = _caller(call)
    now = app[CLOCK]()
    sid = call.path["session_id"]
    base = call.base_url

    def work(conn: Conn) -> tuple[int, bytes]:
        return ok(views.session_json(ctx, conn, sessions.cancel(conn, caller, sid, now), base=base))

    await sessions.persist_expiry(ctx, sid, now)
    return await idempotency.execute_call(app[WRITER], call, owner=caller.key_hash, now=now, work=work)


async def quote_complete(app: web.Application, call: Call) -> Quoted:
    """What completing the session would move (nothing is written): its total, from the paying
    address to the gateway escrow for the provider's token; 404 for another key's session; a session
    that can no longer be completed, its refusal."""
    sid = call.path["session_id"]
    payment = funding.parse_payment(decode_json(call.body))  # first, as the run refuses in this order
    caller = _caller(call)

    def read(db: Conn) -> tuple[SessionRow, int | None]:
        s = sessions.find_owned(db, caller, sid)
        provider = store.get_provider(db, s.provider_uuid)
        return s, None if provider is None else provider.token_id

    s, token = await app[READS].run(read)
    refusal = None
    try:
        sessions.require_incomplete(s)
    except ServiceError as exc:
        refusal = exc
    return Quoted(
        s.total,
        payment.payer,
        f"PaymentGateway escrow for provider token {token}",
        f"fund session {sid}: {usdc_text(s.total)} USDC from {payment.payer} into escrow, released to the provider "
        "on its signed delivery",
        {"session_id": sid, "provider_token_id": token},
        refusal=refusal,
    )


async def run_complete_session(app: web.Application, call: Call) -> Reply:
    """Fund the gateway job and create the order: core.checkout.funding's saga, its chain steps run
    after the Idempotency-Key is claimed and its order written with the stored answer."""
    ctx = app[CHECKOUT]
    caller = _caller(call)
    now = app[CLOCK]()
    sid = call.path["session_id"]
    base = call.base_url
    hooks = app[HOOKS]
    request = call.request
    completion = funding.Completion(
        ctx,
        caller,
        sid,
        call.body,
        now,
        funding.SagaHooks(
            before_funding=None
            if hooks.before_funding is None or request is None
            else functools.partial(hooks.before_funding, request),
            after_funding=hooks.after_funding,
            before_order=hooks.before_order,
        ),
    )

    def finish(conn: Conn) -> tuple[int, bytes]:
        order = completion.record(conn)
        done = store.get_session(conn, sid)
        assert done is not None and done.order_id == order.id
        return ok(views.session_json(ctx, conn, done, base=base))

    await sessions.persist_expiry(ctx, sid, now)
    try:
        reply = await idempotency.execute_call(
            app[WRITER], call, owner=caller.key_hash, now=now, work=finish, before=completion.fund
        )
    except Exception as exc:
        pending = completion.after_failure(exc)
        if pending is None:
            raise
        raise pending from exc
    if reply.status == 200:
        wake_outbox(app)
    return reply


async def run_get_order(app: web.Application, call: Call) -> Reply:
    caller = call.caller
    order_id = call.path["order_id"]

    def read(db: Conn) -> Reply:
        order = order_store.get_order(db, order_id)
        if order is None:
            raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
        visibility: views.Visibility = "public"
        if caller is not None:
            s = store.get_session(db, order.session_id)
            funder = s is not None and secrets.compare_digest(s.key_hash, caller.key_hash)
            visibility = "funder" if funder else "authenticated"
        view = views.order_view(db, order_id, visibility)
        if view is None:
            raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
        return Reply(200, encode(view).encode())

    return await app[READS].run(read)


# ---- wiring -------------------------------------------------------------------------------------

_SESSION_ERRORS = {
    401: ("session_key_mismatch",),
    404: ("session_not_found",),
    409: ("session_completed", "session_cancelled", "session_expired", "session_in_progress"),
}
_BASE = "/api/acp/checkout_sessions"

OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        _BASE,
        "createCheckoutSession",
        "Create a checkout session",
        SessionResponse,
        status=201,
        request=SessionCreateRequest,
        idempotent=True,
        errors={
            400: ("invalid_email", "invalid_webhook_url"),
            404: ("item_not_found",),
            422: ("multiple_providers", "provider_not_linked", "amount_too_large", "webhook_url_refused"),
        },
        tags=("checkout",),
        description="Amounts are integers of micro-USDC (currency usdc). With webhook_url, the 201 carries "
        "webhook_secret (HMAC key of the order webhooks) once: an Idempotency-Key replay of it omits the secret. "
        "Unpaid sessions expire after the configured TTL.",
        run=run_create_session,
        touches="key",
        scope="spend",
    ),
    Operation(
        "GET",
        _BASE + "/{session_id}",
        "getCheckoutSession",
        "Retrieve a checkout session",
        SessionResponse,
        errors={k: v for k, v in _SESSION_ERRORS.items() if k != 409},
        tags=("checkout",),
        run=run_get_session,
        touches="key",
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}",
        "updateCheckoutSession",
        "Update line items or buyer of an incomplete session",
        SessionResponse,
        request=SessionUpdateRequest,
        idempotent=True,
        errors={
            **_SESSION_ERRORS,
            400: ("invalid_email", "empty_update"),
            404: ("session_not_found", "item_not_found"),
            422: ("multiple_providers", "provider_not_linked", "amount_too_large"),
        },
        tags=("checkout",),
        run=run_update_session,
        touches="key",
        scope="spend",
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}/cancel",
        "cancelCheckoutSession",
        "Cancel a checkout session",
        SessionResponse,
        idempotent=True,
        errors={**_SESSION_ERRORS, 405: ("session_not_cancelable",), 409: ("session_in_progress",)},
        tags=("checkout",),
        run=run_cancel_session,
        touches="key",
        scope="spend",
        destructive=True,
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}/complete",
        "completeCheckoutSession",
        "Fund the escrow job from the buyer's approved USDC and create the order",
        SessionResponse,
        request=SessionCompleteRequest,
        idempotent=True,
        errors={
            **_SESSION_ERRORS,
            400: (
                "missing_email",
                "invalid_email",
                "missing_address",
                "invalid_address",
                "unsupported_payment_handler",
                "missing_payment_data",
                "missing_payment_signature",
                "invalid_payment_signature",
            ),
            401: ("session_key_mismatch", "payment_signature_mismatch"),
            409: (
                "session_completed",
                "session_cancelled",
                "session_expired",
                "session_in_progress",
                "session_changed",
                "provider_paused",
            ),
            422: ("insufficient_allowance", "insufficient_balance"),
            502: ("funding_failed",),
            503: ("order_pending", "funding_unconfirmed", "chain_unavailable", "indexer_halted"),
        },
        tags=("checkout",),
        description=f"payment_data.handler_id must be {rules.PAYMENT_HANDLER_ID}; "
        "payment_data.instrument.credential.token is the buyer's 0x address, which must have approved the "
        "PaymentGateway for the session total; payment_data.instrument.credential.signature is that address's "
        "EIP-712 signature of the session's Funding consent (core.checkout.rules.checkout_typed_data; the session's "
        "payment handler config carries it as typed_data, with message.buyer to set to that address): "
        "Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline), domain "
        f"{{name: {rules.FUNDING_DOMAIN_NAME!r}, version: {rules.FUNDING_DOMAIN_VERSION!r}, chainId, "
        "verifyingContract: the gateway}",
        run=run_complete_session,
        touches="key",
        scope="spend",
        quote=quote_complete,
        open_world=True,
    ),
    Operation(
        "GET",
        "/api/acp/orders/{order_id}",
        "getOrder",
        "An order: public fields; line items and totals for any key; buyer details for the funding key",
        OrderResponse,
        auth="optional",
        errors={404: ("order_not_found",)},
        tags=("checkout",),
        run=run_get_order,
        touches="key",
        resource="agentledger://orders/{order_id}",
        links={"deliverable_cid": "agentledger://ipfs/{deliverable_cid}"},
    ),
]


def add_checkout_routes(app: web.Application, ctx: Checkout) -> None:
    """Mount the buyer side (needs READS, WRITER and CLOCK, as api.app sets them). `ctx` is what
    the checkout use cases run with (operator, chain, session TTL, webhook rule); its sweep is a job
    (core.checkout.sweep) that api.app schedules."""
    app[CHECKOUT] = ctx
    if HOOKS not in app:
        app[HOOKS] = Hooks()
    add_acp_headers(app)
    mount(app, OPERATIONS)
