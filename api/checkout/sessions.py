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
from typing import Any

from api import idempotency
from api.checkout import models
from api.checkout.acp import acp_body
from api.errors import ApiError
from api.http import Hooks, encode, ok
from api.operation import Call, Quoted, Reply
from core import egress
from core.checkout import funding, rules, sessions, views
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.jsontext import decode_json
from core.money import usdc_text
from core.services import Services
from core.store import Conn
from core.store import checkout as store
from core.store import orders as order_store
from core.store.checkout import SessionRow


def _lines(items: list[models.LineItemRequest]) -> list[sessions.LineRef]:
    return [sessions.LineRef(li.item.id, li.quantity) for li in items]


def _buyer(req: models.BuyerRequest | None) -> dict[str, Any] | None:
    return None if req is None else req.model_dump(exclude_none=True)


async def run_create_session(services: Services, call: Call) -> Reply:
    ctx = services.part(Checkout)
    caller = call.authenticated
    body = call.body
    now = services.clock()
    base = call.base_url
    parsed: dict[str, models.SessionCreateRequest] = {}

    async def validate() -> None:  # before the transaction: the webhook URL check resolves DNS
        req = acp_body(models.SessionCreateRequest, body)
        if req.webhook_url is not None:
            await egress.check_webhook_url(req.webhook_url, ctx.services.allow_private, "$.webhook_url")
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
        services.writer, call, owner=caller.key_hash, now=now, work=work, before=validate
    )
    if reply.status == 201 and made and not reply.replayed:
        view, secret = made[0]
        reply = reply._replace(body=ok({**view, "webhook_secret": secret}, 201)[1])  # shown once: this answer only
    return reply


async def run_get_session(services: Services, call: Call) -> Reply:
    ctx = services.part(Checkout)
    sid = call.path["session_id"]
    now = services.clock()
    caller = call.authenticated

    def answer(db: Conn, s: SessionRow) -> Reply:
        return Reply(200, encode(views.session_json(ctx, db, s, base=call.base_url)).encode())

    def read(db: Conn) -> Reply | SessionRow:
        s = sessions.find_owned(db, caller, sid)
        if rules.is_expired(s.status, s.expires_at, now):
            return s  # its expiry is persisted first
        return answer(db, s)

    first = await services.reads.run(read)
    if isinstance(first, Reply):
        return first
    # persist the expiry (once), then answer it
    await services.writer.run(lambda conn: store.expire_session(conn, sid, now))
    return await services.reads.run(lambda db: answer(db, store.get_session(db, sid) or first))


async def run_update_session(services: Services, call: Call) -> Reply:
    ctx = services.part(Checkout)
    caller = call.authenticated
    body = call.body
    now = services.clock()
    sid = call.path["session_id"]
    base = call.base_url

    def work(conn: Conn) -> tuple[int, bytes]:
        req = acp_body(models.SessionUpdateRequest, body)
        lines = None if req.line_items is None else _lines(req.line_items)
        updated = sessions.update(conn, caller, sid, line_items=lines, buyer=_buyer(req.buyer), now=now)
        return ok(views.session_json(ctx, conn, updated, base=base))

    await sessions.persist_expiry(ctx, sid, now)
    return await idempotency.execute_call(services.writer, call, owner=caller.key_hash, now=now, work=work)


async def run_cancel_session(services: Services, call: Call) -> Reply:
    ctx = services.part(Checkout)
    caller = call.authenticated
    now = services.clock()
    sid = call.path["session_id"]
    base = call.base_url

    def work(conn: Conn) -> tuple[int, bytes]:
        return ok(views.session_json(ctx, conn, sessions.cancel(conn, caller, sid, now), base=base))

    await sessions.persist_expiry(ctx, sid, now)
    return await idempotency.execute_call(services.writer, call, owner=caller.key_hash, now=now, work=work)


async def quote_complete(services: Services, call: Call) -> Quoted:
    """What completing the session would move (nothing is written): its total, from the paying
    address to the gateway escrow for the provider's token; 404 for another key's session; a session
    that can no longer be completed, its refusal."""
    sid = call.path["session_id"]
    payment = funding.parse_payment(decode_json(call.body))  # first, as the run refuses in this order
    caller = call.authenticated

    def read(db: Conn) -> tuple[SessionRow, int | None]:
        s = sessions.find_owned(db, caller, sid)
        provider = store.get_provider(db, s.provider_uuid)
        return s, None if provider is None else provider.token_id

    s, token = await services.reads.run(read)
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


async def run_complete_session(services: Services, call: Call) -> Reply:
    """Fund the gateway job and create the order: core.checkout.funding's saga, its chain steps run
    after the Idempotency-Key is claimed and its order written with the stored answer."""
    ctx = services.part(Checkout)
    caller = call.authenticated
    now = services.clock()
    sid = call.path["session_id"]
    base = call.base_url
    hooks: Hooks = services.hooks or Hooks()
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
            services.writer, call, owner=caller.key_hash, now=now, work=finish, before=completion.fund
        )
    except Exception as exc:
        pending = completion.after_failure(exc)
        if pending is None:
            raise
        raise pending from exc
    if reply.status == 200:
        services.wake()
    return reply


async def run_get_order(services: Services, call: Call) -> Reply:
    caller = call.caller
    order_id = call.path["order_id"]

    def read(db: Conn) -> Reply:
        order = order_store.get_order(db, order_id)
        if order is None:
            raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
        view = views.order_view(db, order_id, views.visibility_of(db, order, caller))
        if view is None:
            raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
        return Reply(200, encode(view).encode())

    return await services.reads.run(read)
