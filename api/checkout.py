"""The buyer side of escrow checkout under /api/acp (ACP 2026-04-17): checkout sessions and the
GET of an order.

    POST /api/acp/checkout_sessions                 create (201; webhook_secret shown once)
    GET  /api/acp/checkout_sessions/{id}            retrieve
    POST /api/acp/checkout_sessions/{id}            update line_items / buyer while incomplete
    POST /api/acp/checkout_sessions/{id}/cancel     -> cancelled (405 once completed, cancelled or expired)
    POST /api/acp/checkout_sessions/{id}/complete   fund the gateway job -> completed + order
    GET  /api/acp/orders/{order_id}                 public / authenticated / funder views

Sessions belong to the API key that created them (another key: 401). Amounts in sessions are
integers of micro-USDC (ACP minor units; currency "usdc"). One session buys from ONE provider (the
gateway job pays one provider token). An unpaid session expires `Settings.checkout_session_ttl`
seconds (default 1 h) after creation: applied when it is next read or written, and by a sweep.

Complete, step by step (each step's failure leaves a state a retry or the follower can finish):
0. the payer's consent: payment_data.instrument.credential.signature must be the token address's
   EIP-712 signature of core.checkout.checkout_typed_data (the gateway's Funding struct: job id,
   buyer, provider token, total in micro-USDC, work deadline; domain chain id + gateway), else 400
   missing/invalid_payment_signature or 401 payment_signature_mismatch, nothing written. The
   gateway checks the same signature on-chain, so the operator key alone cannot move anyone's
   allowance;
1. one writer transaction: incomplete -> complete_in_progress, job id = core.checkout.job_id_for
   (a concurrent complete gets 409 session_in_progress);
2. USDC balanceOf(buyer) and allowance(buyer, gateway) >= total, else 422 and the session goes
   back to incomplete;
3. PaymentGateway.fund(jobId, buyer, providerToken, total, deadline, signature) with the operator
   key, deadline = core.checkout.work_deadline (the session's expiry + the longest tier's hours, the
   value the buyer signed); right before it one read re-checks that
   the session is still complete_in_progress with this job id and payer (else 409 session_changed),
   and from step 1 until the send's outcome is known the job id is in app[FUNDING], which the
   stuck-session sweep skips;
4. one writer transaction: core.store.orders.create_order (session completed, history, audit,
   webhook). If this fails after step 3 succeeded the answer is 503 order_pending and the order
   follower creates the order from the final JobFunded event (exactly once: the job id is unique).

Test-only fault injection: AGENTLEDGER_FAULT=exit_after_fund ends the process (os._exit(1)) right
after the funding receipt; AGENTLEDGER_FAULT=error_after_fund makes step 4 fail. Never set them in
production.

Every /api/acp response echoes `Request-Id` and `Idempotency-Key` when the request carried them and
names the protocol version in `API-Version`; a request naming an API-Version other than
2026-04-17 gets 400 unsupported_api_version. Every POST honours Idempotency-Key (api.idempotency).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

import apsw
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from web3 import Web3

from api import idempotency
from api.acp import OPERATOR, acp_body, add_acp_headers, json_response, ok
from api.agent_card import base_url
from api.auth import Caller, authenticate, authenticate_optional
from api.errors import ApiError
from api.models import decode_json
from api.operation import Operation
from api.wallets import CLOCK, WALLET_DB, WRITER
from api.webhook_dispatcher import wake
from core import checkout as rules
from core.money import usdc_text
from core.operator import (
    USDC,
    ChainUnavailable,
    ContractReverted,
    Operator,
    SendUncertain,
    TransactionFailed,
    tx_hash_of,
)
from core.store import checkout as store
from core.store import orders as order_store
from core.store.checkout import ProviderRow, SessionRow
from core.webhooks import WebhookURLError, check_url_async, new_secret

log = logging.getLogger("agentledger.checkout")

SESSION_TTL: web.AppKey[float] = web.AppKey("checkout_session_ttl", float)
ALLOW_PRIVATE_WEBHOOKS: web.AppKey[bool] = web.AppKey("checkout_allow_private_webhooks", bool)
#: Job ids whose funding this process is sending (from complete_in_progress until the send's
#: outcome is known): the stuck-session sweep never resets those.
FUNDING: web.AppKey[set[str]] = web.AppKey("checkout_funding", set)

SWEEP_INTERVAL = 30.0
#: A session left complete_in_progress this long (a crash, an unanswered node) is checked against
#: the chain: no job there -> back to incomplete (safe: a later fund of the same job id reverts).
STUCK_AFTER = 600.0
FAULT_ENV = "AGENTLEDGER_FAULT"
SIGNATURE_PARAM = "$.payment_data.instrument.credential.signature"

# ---- request models -----------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ItemRef(_Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")]


class LineItemRequest(_Strict):
    item: ItemRef
    quantity: Annotated[int, Field(ge=1, le=rules.MAX_QUANTITY)] = 1
    id: Annotated[str, Field(max_length=64)] | None = None  # an ACP line item id: ignored (ours are li_<n>)


class BuyerRequest(_Strict):
    email: Annotated[str, Field(max_length=254)] | None = None
    first_name: Annotated[str, Field(max_length=100)] | None = None
    last_name: Annotated[str, Field(max_length=100)] | None = None


class SessionCreateRequest(_Strict):
    line_items: Annotated[list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS)]
    buyer: BuyerRequest | None = None
    webhook_url: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    currency: Annotated[str, Field(pattern=r"^usdc$")] | None = None
    capabilities: dict[str, Any] | None = None  # accepted (ACP), not used


class SessionUpdateRequest(_Strict):
    line_items: Annotated[list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS)] | None = None
    buyer: BuyerRequest | None = None


class Credential(BaseModel):
    token: Annotated[str, Field(description="the paying 0x address (it approved the gateway for the total)")]
    signature: Annotated[
        str,
        Field(
            pattern=r"^0x[0-9a-fA-F]{130}$",
            description="EIP-712 signature by `token` of the session's Funding typed data (core.checkout."
            "checkout_typed_data; the session's payment handler config gives it as typed_data, message.buyer to fill)",
        ),
    ]


class Instrument(BaseModel):
    credential: Credential


class PaymentData(BaseModel):
    handler_id: str
    instrument: Instrument


class SessionCompleteRequest(BaseModel):
    """Documentation of the complete body (it is validated by hand for the spec's exact error codes)."""

    buyer: BuyerRequest | None = None
    payment_data: PaymentData


class SessionResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    currency: str
    line_items: list[dict[str, Any]]
    totals: list[dict[str, Any]]
    messages: list[dict[str, Any]]


class OrderResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    service_job_id: str
    settlement_tx_hash: str


# ---- views --------------------------------------------------------------------------------------


def _payment_config(op: Operator, s: SessionRow, provider_token_id: int | None, chain_id: int) -> dict[str, Any]:
    gateway = op.contract("PaymentGateway").address
    typed = rules.checkout_typed_data(
        chain_id=chain_id,
        gateway=gateway,
        session_id=s.id,
        buyer=gateway,  # a placeholder, replaced below: the payer is named only at complete
        provider_token_id=provider_token_id or 0,
        amount=s.total,
        deadline=rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items]),
    )
    typed["message"]["buyer"] = "{payer}"
    return {
        "id": rules.PAYMENT_HANDLER_ID,
        "name": "dev.agentledger.usdc_escrow",
        "display_name": "USDC escrow (PaymentGateway)",
        "version": rules.SUPPORTED_API_VERSIONS[0],
        "requires_delegate_payment": False,
        "requires_pci_compliance": False,
        "psp": "agentledger",
        "config": {
            "chain_id": chain_id,
            "token": op.contract(USDC).address,
            "spender": gateway,
            "amount": s.total,
            "decimals": 6,
            "signature_scheme": "eip712",
            "typed_data": typed,
            "instructions": "approve `amount` of `token` to `spender` from the paying address, set typed_data.message"
            ".buyer to that address and sign typed_data (EIP-712, eth_signTypedData_v4): the gateway pulls only this "
            "amount, for this job, provider and deadline (you may reclaim after it); then complete with "
            "payment_data.instrument.credential.token = that address and .signature = the signature",
        },
    }


def session_json(
    request: web.Request, conn: apsw.Connection, s: SessionRow, *, secret: str | None = None
) -> dict[str, Any]:
    app = request.app
    op = app[OPERATOR]
    provider = store.get_provider(conn, s.provider_uuid)
    chain_id = app[_CHAIN_ID]
    body: dict[str, Any] = {
        "id": s.id,
        "status": s.status,
        "currency": rules.CURRENCY,
        "protocol": {"version": rules.SUPPORTED_API_VERSIONS[0]},
        "capabilities": {
            "payment": {"handlers": [_payment_config(op, s, provider.token_id if provider else None, chain_id)]}
        },
        "line_items": s.line_items,
        "totals": rules.totals_json(s.total),
        "fulfillment_options": [],
        "messages": _messages(s, op, chain_id),
        "links": [],
        "provider": {
            "agent_id": provider.wallet if provider else None,
            "token_id": provider.token_id if provider else None,
        },
        "created_at": order_store.iso(s.created_at),
        "updated_at": order_store.iso(s.updated_at),
        "expires_at": order_store.iso(s.expires_at),
    }
    if s.buyer:
        body["buyer"] = s.buyer
    if s.webhook_url:
        body["webhook_url"] = s.webhook_url
    if secret is not None:
        body["webhook_secret"] = secret
    if s.job_id is not None:
        body["service_job_id"] = s.job_id
    if s.order_id is not None:
        order = order_store.get_order(conn, s.order_id)
        if order is not None:
            body["order"] = _order_ref(request, order)
    return body


def _order_ref(request: web.Request, order: order_store.OrderRow) -> dict[str, Any]:
    return {
        "id": order.id,
        "checkout_session_id": order.session_id,
        "permalink_url": f"{base_url(request)}/api/acp/orders/{order.id}",  # AGENTLEDGER_PUBLIC_URL, not Host
        "settlement_tx_hash": order.funding_tx,
        "service_job_id": order.job_id,
        "status": order.status,
    }


def _messages(s: SessionRow, op: Operator, chain_id: int) -> list[dict[str, Any]]:
    if s.status == "incomplete":
        text = (
            f"Approve {usdc_text(s.total)} USDC ({s.total} units) of {op.contract(USDC).address} to the gateway "
            f"{op.contract('PaymentGateway').address} on chain {chain_id}, then complete the session."
        )
        return [{"type": "info", "content_type": "plain", "content": text}]
    if s.status == "expired":
        return [
            {
                "type": "error",
                "code": "expired",
                "content_type": "plain",
                "content": "this checkout session expired unpaid; create a new one",
            }
        ]
    return []


# ---- session rules inside a transaction ---------------------------------------------------------

_STATUS_CONFLICT = {
    "completed": ("session_completed", "the checkout session is already completed"),
    "cancelled": ("session_cancelled", "the checkout session was cancelled"),
    "expired": ("session_expired", "the checkout session expired"),
    "complete_in_progress": ("session_in_progress", "the checkout session is being completed"),
}


def _find_owned(conn: apsw.Connection, caller: Caller, session_id: str) -> SessionRow:
    """The caller's session: 404 when there is none, 401 when another API key created it."""
    s = store.get_session(conn, session_id)
    if s is None:
        raise ApiError(404, "session_not_found", f"no checkout session {session_id}", param="checkout_session_id")
    if not secrets.compare_digest(s.key_hash, caller.key_hash):
        raise ApiError(
            401, "session_key_mismatch", "this checkout session belongs to another API key", param="Authorization"
        )
    return s


def _owned_session(conn: apsw.Connection, caller: Caller, session_id: str, now: float) -> SessionRow:
    """The caller's session inside a write, expired first if its time is up."""
    s = _find_owned(conn, caller, session_id)
    if rules.is_expired(s.status, s.expires_at, now) and store.expire_session(conn, session_id, now):
        return _find_owned(conn, caller, session_id)
    return s


def _require_incomplete(s: SessionRow) -> None:
    if s.status != "incomplete":
        code, message = _STATUS_CONFLICT[s.status]
        # "being completed" is a passing state: a retry with the same Idempotency-Key must run again
        raise ApiError(409, code, message, replayable=s.status != "complete_in_progress")


def _priced(conn: apsw.Connection, line_items: list[LineItemRequest]) -> tuple[list[rules.PricedLine], ProviderRow]:
    """Price the cart from the catalogue; every item must exist and share one linked provider."""
    items = store.items_by_ids(conn, [li.item.id for li in line_items])
    lines: list[rules.PricedLine] = []
    providers: set[str] = set()
    for i, li in enumerate(line_items):
        item = items.get(li.item.id)
        if item is None:
            raise ApiError(400, "item_not_found", f"no catalogue item {li.item.id}", param=f"$.line_items[{i}].item.id")
        providers.add(item.provider_uuid)
        lines.append(rules.PricedLine(item.item_id, item.title, item.tier, li.quantity, item.price))
    if len(providers) > 1:
        raise ApiError(
            400,
            "multiple_providers",
            "all line items of a session must come from one provider (one escrow job pays one provider)",
            param="$.line_items",
        )
    provider = store.get_provider(conn, providers.pop())
    if provider is None or provider.token_id is None:
        raise ApiError(400, "provider_not_linked", "the items' provider is not linked", param="$.line_items")
    try:
        rules.session_total(lines)
    except rules.TotalTooLarge as exc:
        raise ApiError(400, "amount_too_large", str(exc), param="$.line_items") from exc
    return lines, provider


def _buyer(req: BuyerRequest | None, base: dict[str, Any] | None = None) -> dict[str, Any]:
    out = dict(base or {})
    if req is not None:
        given = req.model_dump(exclude_none=True)
        if "email" in given and not rules.valid_email(given["email"]):
            raise ApiError(400, "invalid_email", "buyer.email is not a valid e-mail address", param="$.buyer.email")
        out.update(given)
    return out


# ---- handlers -----------------------------------------------------------------------------------


async def create_session(request: web.Request) -> web.Response:
    app = request.app
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    now = app[CLOCK]()
    parsed: dict[str, SessionCreateRequest] = {}

    async def validate() -> None:  # before the transaction: the webhook URL check resolves DNS
        req = acp_body(SessionCreateRequest, body)
        if req.webhook_url is not None:
            try:
                await check_url_async(req.webhook_url, app[ALLOW_PRIVATE_WEBHOOKS])
            except WebhookURLError as exc:
                raise ApiError(400, "invalid_webhook_url", str(exc), param="$.webhook_url") from exc
        parsed["req"] = req

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        req = parsed["req"]
        lines, provider = _priced(conn, req.line_items)
        secret = new_secret() if req.webhook_url else None
        s = SessionRow(
            id="cs_" + secrets.token_hex(12),
            key_hash=caller.key_hash,
            status="incomplete",
            line_items=rules.line_items_json(lines),
            buyer=_buyer(req.buyer),
            provider_uuid=provider.agent_uuid,
            total=rules.session_total(lines),
            webhook_url=req.webhook_url,
            webhook_secret=secret,
            job_id=None,
            buyer_address=None,
            funding_tx=None,
            order_id=None,
            expires_at=rules.session_expires_at(now, app[SESSION_TTL]),
            created_at=now,
            updated_at=now,
        )
        store.insert_session(conn, s)
        return ok(session_json(request, conn, s, secret=secret), 201)

    return await idempotency.execute(
        request, app[WRITER], owner=caller.key_hash, body=body, now=now, work=work, before=validate
    )


async def get_session(request: web.Request) -> web.Response:
    app = request.app
    db = app[WALLET_DB]
    caller = authenticate(db, request)
    sid = request.match_info["session_id"]
    now = app[CLOCK]()
    s = _find_owned(db, caller, sid)
    if rules.is_expired(s.status, s.expires_at, now):  # persist the expiry (once), then answer it
        await app[WRITER].run(lambda conn: store.expire_session(conn, sid, now))
        s = store.get_session(db, sid) or s
    return json_response(session_json(request, db, s))


async def update_session(request: web.Request) -> web.Response:
    app = request.app
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    now = app[CLOCK]()
    sid = request.match_info["session_id"]

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        req = acp_body(SessionUpdateRequest, body)
        s = _owned_session(conn, caller, sid, now)
        _require_incomplete(s)
        if req.line_items is None and req.buyer is None:
            raise ApiError(400, "empty_update", "give line_items and/or buyer", param="$")
        line_items, provider_uuid, total = s.line_items, s.provider_uuid, s.total
        if req.line_items is not None:
            lines, provider = _priced(conn, req.line_items)
            line_items, provider_uuid, total = (
                rules.line_items_json(lines),
                provider.agent_uuid,
                rules.session_total(lines),
            )
        buyer = _buyer(req.buyer, s.buyer)
        store.update_session_contents(
            conn, sid, line_items=line_items, buyer=buyer, provider_uuid=provider_uuid, total=total, now=now
        )
        updated = store.get_session(conn, sid)
        assert updated is not None
        return ok(session_json(request, conn, updated))

    return await _with_expiry_committed(request, caller, body, now, work)


async def cancel_session(request: web.Request) -> web.Response:
    app = request.app
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    now = app[CLOCK]()
    sid = request.match_info["session_id"]

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        s = _owned_session(conn, caller, sid, now)
        if s.status in ("completed", "cancelled", "expired"):
            raise ApiError(405, "session_not_cancelable", f"a {s.status} checkout session cannot be cancelled")
        _require_incomplete(s)  # complete_in_progress: 409
        store.transition(conn, sid, "incomplete", "cancelled", now)
        updated = store.get_session(conn, sid)
        assert updated is not None
        return ok(session_json(request, conn, updated))

    return await _with_expiry_committed(request, caller, body, now, work)


async def _with_expiry_committed(
    request: web.Request, caller: Caller, body: bytes, now: float, work: idempotency.TxWork
) -> web.Response:
    """Run `work` under the Idempotency-Key; a lazy expiry it found is committed even when `work`
    then refuses the request (its 4xx rolls its own savepoint back)."""
    app = request.app
    await _persist_expiry(request, now)
    return await idempotency.execute(request, app[WRITER], owner=caller.key_hash, body=body, now=now, work=work)


async def _persist_expiry(request: web.Request, now: float) -> None:
    app = request.app
    sid = request.match_info["session_id"]
    s = store.get_session(app[WALLET_DB], sid)
    if s is not None and rules.is_expired(s.status, s.expires_at, now):
        await app[WRITER].run(lambda conn: store.expire_session(conn, sid, now))


# ---- complete -----------------------------------------------------------------------------------


def _complete_fields(body: bytes) -> tuple[dict[str, Any] | None, str, str]:
    """(buyer fields given, buyer address, payment signature) of a complete body; 400 with the
    spec's codes (and ours for the signature)."""
    data = decode_json(body)
    buyer = data.get("buyer")
    if buyer is not None and not isinstance(buyer, dict):
        raise ApiError(400, "invalid_field", "buyer must be an object", param="$.buyer")
    payment = data.get("payment_data")
    if not isinstance(payment, dict):
        raise ApiError(400, "missing_payment_data", "payment_data is required", param="$.payment_data")
    handler = payment.get("handler_id")
    if handler != rules.PAYMENT_HANDLER_ID:
        raise ApiError(
            400,
            "unsupported_payment_handler",
            f"payment_data.handler_id must be {rules.PAYMENT_HANDLER_ID!r}",
            param="$.payment_data.handler_id",
        )
    instrument = payment.get("instrument")
    credential = instrument.get("credential") if isinstance(instrument, dict) else None
    token = credential.get("token") if isinstance(credential, dict) else None
    param = "$.payment_data.instrument.credential.token"
    if token is None or token == "":
        raise ApiError(
            400, "missing_address", "the buyer's 0x address is required as the credential token", param=param
        )
    if not isinstance(token, str) or not rules.valid_address(token):
        raise ApiError(400, "invalid_address", "the credential token must be 0x followed by 40 hex digits", param=param)
    signature = credential.get("signature") if isinstance(credential, dict) else None
    if signature is None or signature == "":
        raise ApiError(
            400,
            "missing_payment_signature",
            "the payer's EIP-712 signature of the session's typed_data (its Funding consent) is required",
            param=SIGNATURE_PARAM,
        )
    if not isinstance(signature, str) or not rules.valid_signature(signature):
        raise ApiError(
            400,
            "invalid_payment_signature",
            "the payment signature must be 0x followed by 130 hex digits (65 bytes)",
            param=SIGNATURE_PARAM,
        )
    if buyer is not None:
        extra = set(buyer) - {"email", "first_name", "last_name"}
        if extra:
            raise ApiError(400, "invalid_field", f"unknown buyer field {sorted(extra)[0]}", param="$.buyer")
        for k, v in buyer.items():
            if v is not None and (not isinstance(v, str) or len(v) > 254):
                raise ApiError(400, "invalid_field", f"buyer.{k} must be a short string", param=f"$.buyer.{k}")
    return buyer, Web3.to_checksum_address(token), signature


def _check_payer(app: web.Application, s: SessionRow, address: str, signature: str) -> None:
    """401 unless `address` signed (EIP-712) this session's Funding consent as it stands: job id,
    provider token, total and work deadline. The gateway checks the same signature, so the service
    can pull no USDC from anyone who approved the gateway without their consent to this job."""
    provider = store.get_provider(app[WALLET_DB], s.provider_uuid)
    typed = rules.checkout_typed_data(
        chain_id=app[_CHAIN_ID],
        gateway=app[OPERATOR].contract("PaymentGateway").address,
        session_id=s.id,
        buyer=address,
        provider_token_id=provider.token_id if provider and provider.token_id is not None else 0,
        amount=s.total,
        deadline=rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items]),
    )
    signer = rules.recover_typed_signer(typed, signature)
    if signer is None:
        raise ApiError(
            400, "invalid_payment_signature", "the payment signature cannot be recovered", param=SIGNATURE_PARAM
        )
    if signer != address:
        raise ApiError(
            401,
            "payment_signature_mismatch",
            "the signature is not the credential token's EIP-712 signature of this session's Funding consent "
            "(job id, provider, total and deadline; see the payment handler's config.typed_data)",
            param=SIGNATURE_PARAM,
        )


class _Funded:
    """What step 3 produced, for step 4 (and the 503 decision)."""

    def __init__(self) -> None:
        self.session: SessionRow | None = None
        self.provider: ProviderRow | None = None
        self.buyer_address = ""
        self.deadline = 0
        self.funding_tx: str | None = None


async def complete_session(request: web.Request) -> web.Response:
    app = request.app
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    now = app[CLOCK]()
    sid = request.match_info["session_id"]
    op, writer = app[OPERATOR], app[WRITER]
    funded = _Funded()
    hook = app.get(COMPLETE_HOOK)

    signed_total: list[int] = []  # the total the signature was checked against, before the transaction

    def begin(conn: apsw.Connection) -> tuple[SessionRow, ProviderRow]:
        buyer_given, address, signature = _complete_fields(body)
        s = _owned_session(conn, caller, sid, now)
        _require_incomplete(s)
        if signed_total != [s.total]:  # not checked yet, or the cart changed since: check here
            _check_payer(app, s, address, signature)
        buyer = dict(s.buyer)
        buyer.update({k: v for k, v in (buyer_given or {}).items() if v is not None})
        email = buyer.get("email")
        if not email:
            raise ApiError(400, "missing_email", "buyer.email is required to complete", param="$.buyer.email")
        if not rules.valid_email(email):
            raise ApiError(400, "invalid_email", "buyer.email is not a valid e-mail address", param="$.buyer.email")
        provider = store.get_provider(conn, s.provider_uuid)
        assert provider is not None and provider.token_id is not None
        job_id = rules.job_id_for(sid)
        if not store.begin_complete(conn, sid, job_id=job_id, buyer_address=address, buyer=buyer, now=now):
            raise ApiError(409, "session_in_progress", "the checkout session is being completed", replayable=False)
        started = store.get_session(conn, sid)
        assert started is not None
        return started, provider

    async def abort(error: ApiError) -> ApiError:
        await writer.run(lambda conn: store.abort_complete(conn, sid, app[CLOCK]()))
        return error

    async def fund() -> None:
        # The signature check (a few ms of ECDSA recovery) runs here, outside the writer's
        # transaction; begin re-checks only if the total it finds differs.
        _, address, signature = _complete_fields(body)
        pre = store.get_session(app[WALLET_DB], sid)
        if (
            pre is not None
            and secrets.compare_digest(pre.key_hash, caller.key_hash)
            and pre.status == "incomplete"
            and not rules.is_expired(pre.status, pre.expires_at, now)
        ):
            _check_payer(app, pre, address, signature)
            signed_total.append(pre.total)
        s, provider = await writer.run(begin)
        funded.session, funded.provider, funded.buyer_address = s, provider, s.buyer_address or ""
        assert s.job_id is not None
        funding = app[FUNDING]
        funding.add(s.job_id)  # the sweep leaves this session alone until the send is over
        try:
            await _fund_job(s, provider)
        finally:
            funding.discard(s.job_id)

    async def _fund_job(s: SessionRow, provider: ProviderRow) -> None:
        if hook is not None:
            await hook(request)
        assert s.job_id is not None and provider.token_id is not None
        try:
            balance = int(await op.call(USDC, "balanceOf", funded.buyer_address))
            allowance = int(
                await op.call(USDC, "allowance", funded.buyer_address, op.contract("PaymentGateway").address)
            )
        except (ChainUnavailable, ContractReverted) as exc:
            raise await abort(chain_unavailable(exc)) from exc
        if balance < s.total:
            raise await abort(_short("insufficient_balance", "balance", balance, s.total))
        if allowance < s.total:
            raise await abort(_short("insufficient_allowance", "allowance to the gateway", allowance, s.total))
        funded.deadline = rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items])  # as signed
        current = store.get_session(app[WALLET_DB], sid)  # still ours? (a sweep elsewhere may have reset it)
        if current is None or (current.status, current.job_id, current.buyer_address) != (
            "complete_in_progress",
            s.job_id,
            s.buyer_address,
        ):
            raise ApiError(409, "session_changed", "the checkout session changed while being completed; GET it")
        try:
            receipt = await op.transact(
                "PaymentGateway",
                "fund",
                bytes.fromhex(s.job_id[2:]),
                funded.buyer_address,
                provider.token_id,
                s.total,
                funded.deadline,
                bytes.fromhex(_complete_fields(body)[2][2:]),  # the buyer's consent, checked again on-chain
            )
        except ContractReverted as exc:
            if exc.error_name == "BadBuyerSignature":  # the session changed after the signature was checked
                raise await abort(
                    ApiError(
                        401,
                        "payment_signature_mismatch",
                        "the session changed since it was signed: sign its typed_data again",
                        param=SIGNATURE_PARAM,
                    )
                ) from exc
            if exc.error_name == "JobExists":  # funded by an earlier attempt: the follower records it
                raise ApiError(
                    503,
                    "order_pending",
                    "the job is already funded; the order is being recorded",
                    type_="service_error",
                ) from exc
            raise await abort(_fund_error(exc)) from exc
        except (ChainUnavailable, TransactionFailed) as exc:
            raise await abort(chain_unavailable(exc)) from exc
        except SendUncertain as exc:  # may be mined: stay in progress; the follower or the sweep settles it
            log.warning("session %s: funding outcome unknown: %s", sid, exc)
            raise ApiError(
                503,
                "funding_unconfirmed",
                "the funding transaction's outcome is unknown; GET the session again shortly",
                type_="service_error",
            ) from exc
        funded.funding_tx = tx_hash_of(receipt)
        fault = os.environ.get(FAULT_ENV, "")
        if fault == "exit_after_fund":  # test-only: a crash between the chain and the database
            os._exit(1)

    def finish(conn: apsw.Connection) -> tuple[int, bytes]:
        s, provider = funded.session, funded.provider
        assert s is not None and provider is not None and funded.funding_tx is not None and s.job_id is not None
        assert provider.token_id is not None
        try:
            if os.environ.get(FAULT_ENV, "") == "error_after_fund":
                raise RuntimeError("injected fault: error_after_fund")
            order = order_store.create_order(
                conn,
                session_id=sid,
                job_id=s.job_id,
                provider_uuid=provider.agent_uuid,
                provider_token_id=provider.token_id,
                buyer_address=funded.buyer_address,
                amount=s.total,
                deadline=funded.deadline,
                funding_tx=funded.funding_tx,
                now=now,
            )
        except Exception as exc:
            log.exception("session %s: funded in %s but the order was not recorded", sid, funded.funding_tx)
            raise _order_pending(funded.funding_tx) from exc
        done = store.get_session(conn, sid)
        assert done is not None
        assert done.order_id == order.id
        return ok(session_json(request, conn, done))

    await _persist_expiry(request, now)
    try:
        resp = await idempotency.execute(
            request, writer, owner=caller.key_hash, body=body, now=now, work=finish, before=fund
        )
    except Exception:
        if funded.funding_tx is None:
            raise
        log.exception("session %s: funded in %s, commit failed", sid, funded.funding_tx)
        resp = _order_pending(funded.funding_tx).response()
    if resp.status == 200:
        wake(request)
    return resp


def _order_pending(tx: str | None) -> ApiError:
    return ApiError(
        503,
        "order_pending",
        f"the job was funded on-chain ({tx}) but the order could not be recorded yet; it will be created from the "
        "funding event: GET the session again shortly",
        type_="service_error",
    )


def chain_unavailable(exc: BaseException) -> ApiError:
    """503 with a fixed message: the exception's text can carry the RPC URL (with its API key) or
    internal host names, so it goes to the log only."""
    log.warning("chain node unavailable: %s", exc)
    return ApiError(503, "chain_unavailable", "the chain node does not answer; retry later", type_="service_error")


def _short(code: str, what: str, have: int, need: int) -> ApiError:
    return ApiError(
        422,
        code,
        f"the buyer's USDC {what} is {usdc_text(have)}, the session needs {usdc_text(need)}; "
        "fix it and complete again, with a new Idempotency-Key if you sent one (the session is still incomplete)",
        param="$.payment_data.instrument.credential.token",
    )


def _fund_error(exc: ContractReverted) -> ApiError:
    if exc.error_name in ("ERC20InsufficientAllowance", "ERC20InsufficientBalance"):
        code = "insufficient_allowance" if "Allowance" in exc.error_name else "insufficient_balance"
        return ApiError(
            422,
            code,
            f"the gateway could not pull the USDC ({exc.error_name}); fix it and complete again, with a new"
            " Idempotency-Key if you sent one",
            param="$.payment_data",
        )
    if exc.error_name == "AgentPaused":
        return ApiError(
            409,
            "provider_paused",
            "the provider's agent is paused (listed for sale); try later, with a new Idempotency-Key if you sent one",
        )
    log.warning("gateway refused fund: %s", exc)
    return ApiError(
        502, "funding_failed", f"the gateway refused to fund the job ({exc.error_name})", type_="service_error"
    )


# ---- orders -------------------------------------------------------------------------------------


async def get_order(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate_optional(db, request)
    order_id = request.match_info["order_id"]
    order = order_store.get_order(db, order_id)
    if order is None:
        raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
    visibility: order_store.Visibility = "public"
    if caller is not None:
        s = store.get_session(db, order.session_id)
        funder = s is not None and secrets.compare_digest(s.key_hash, caller.key_hash)
        visibility = "funder" if funder else "authenticated"
    view = order_store.order_view(db, order_id, visibility)
    if view is None:
        raise ApiError(404, "order_not_found", f"no order {order_id}", param="order_id")
    return json_response(view)


# ---- sweeps -------------------------------------------------------------------------------------


async def sweep(app: web.Application) -> tuple[int, int]:
    """Expire unpaid sessions past their time; settle sessions stuck complete_in_progress whose job
    is not on-chain (back to incomplete). Returns (expired, recovered)."""
    now = app[CLOCK]()
    expired = await app[WRITER].run(lambda conn: store.expire_due(conn, now))
    recovered = 0
    funding = app[FUNDING]
    for s in store.stuck_completions(app[WALLET_DB], now - STUCK_AFTER):
        if s.job_id is None or s.job_id in funding:  # this process is still sending its funding
            continue
        try:
            job = await app[OPERATOR].call("PaymentGateway", "getJob", bytes.fromhex(s.job_id[2:]))
        except (ChainUnavailable, ContractReverted):
            continue
        if int(job[2]) == 0 and s.job_id not in funding:  # Status.None: never funded (and no send began meanwhile)
            recovered += int(await app[WRITER].run(_aborter(s.id, now)))
    return expired, recovered


def _aborter(session_id: str, now: float) -> Callable[[apsw.Connection], bool]:
    return lambda conn: store.abort_complete(conn, session_id, now)


def _sweeper(interval: float) -> Callable[[web.Application], AsyncIterator[None]]:
    async def ctx(app: web.Application) -> AsyncIterator[None]:
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                try:
                    await sweep(app)
                except Exception:
                    log.exception("checkout sweep failed")

        task = asyncio.create_task(loop(), name="checkout-sweep")
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return ctx


# ---- wiring -------------------------------------------------------------------------------------

_CHAIN_ID: web.AppKey[int] = web.AppKey("checkout_chain_id", int)
#: Awaited by complete after step 1 (the session is complete_in_progress), before the chain
#: checks: tests hold a complete there to race another one. None in production.
COMPLETE_HOOK: web.AppKey[Callable[[web.Request], Awaitable[None]] | None] = web.AppKey("complete_hook", object)  # type: ignore[arg-type]

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
            400: ("item_not_found", "multiple_providers", "invalid_email", "invalid_webhook_url", "amount_too_large")
        },
        tags=("checkout",),
        description="Amounts are integers of micro-USDC (currency usdc). With webhook_url, the 201 carries "
        "webhook_secret (HMAC key of the order webhooks) once. Unpaid sessions expire after the configured TTL.",
    ),
    Operation(
        "GET",
        _BASE + "/{session_id}",
        "getCheckoutSession",
        "Retrieve a checkout session",
        SessionResponse,
        errors={k: v for k, v in _SESSION_ERRORS.items() if k != 409},
        tags=("checkout",),
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}",
        "updateCheckoutSession",
        "Update line items or buyer of an incomplete session",
        SessionResponse,
        request=SessionUpdateRequest,
        idempotent=True,
        errors={**_SESSION_ERRORS, 400: ("item_not_found", "multiple_providers", "invalid_email", "empty_update")},
        tags=("checkout",),
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
            503: ("order_pending", "funding_unconfirmed", "chain_unavailable"),
        },
        tags=("checkout",),
        description=f"payment_data.handler_id must be {rules.PAYMENT_HANDLER_ID}; "
        "payment_data.instrument.credential.token is the buyer's 0x address, which must have approved the "
        "PaymentGateway for the session total; payment_data.instrument.credential.signature is that address's "
        "EIP-712 signature of the session's Funding consent (core.checkout.checkout_typed_data; the session's payment "
        "handler config carries it as typed_data, with message.buyer to set to that address): "
        "Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline), domain "
        f"{{name: {rules.FUNDING_DOMAIN_NAME!r}, version: {rules.FUNDING_DOMAIN_VERSION!r}, chainId, "
        "verifyingContract: the gateway}",
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
    ),
]


def add_checkout_routes(
    app: web.Application,
    operator: Operator,
    *,
    chain_id: int,
    session_ttl: float = 3600.0,
    allow_private_webhooks: bool = False,
    sweep_interval: float | None = SWEEP_INTERVAL,
) -> None:
    """Mount the buyer side (needs add_wallet_routes first: WALLET_DB, WRITER, CLOCK). `chain_id` is
    the operator's chain (sessions tell buyers where to approve). sweep_interval=None: no
    background sweep (tests call `sweep`)."""
    app[OPERATOR] = operator
    app[_CHAIN_ID] = chain_id
    app[SESSION_TTL] = session_ttl
    app[ALLOW_PRIVATE_WEBHOOKS] = allow_private_webhooks
    app[COMPLETE_HOOK] = None
    app[FUNDING] = set()
    add_acp_headers(app)
    if sweep_interval is not None:
        app.cleanup_ctx.append(_sweeper(sweep_interval))
    app.router.add_post(_BASE, create_session)
    app.router.add_get(_BASE + "/{session_id}", get_session)
    app.router.add_post(_BASE + "/{session_id}", update_session)
    app.router.add_post(_BASE + "/{session_id}/cancel", cancel_session)
    app.router.add_post(_BASE + "/{session_id}/complete", complete_session)
    app.router.add_get("/api/acp/orders/{order_id}", get_order)
