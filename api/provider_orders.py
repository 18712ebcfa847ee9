"""The provider side of an order: acknowledge, start, fail, recover, upload the deliverable, complete.

No Bearer key: each call carries an EIP-191 (personal_sign) signature of the provider's registered
self wallet over a documented message with a unix timestamp (core.orders: `{action}:{order_id}:{ts}`,
`deliver:{order_id}:{sha256}:{ts}`, `complete:{jobId}:{cid}:{ts}`). A timestamp more than
SIGNATURE_WINDOW_SECONDS away from the server's clock is refused, and a signed message is accepted
once (its EIP-191 hash is recorded until it could no longer pass the window): no replay.

Completion sends the gateway release (the same attestation the contract checks) and records
`completed` once the transaction is mined; `released` follows only from the final on-chain event
(indexer.order_follower). If the process dies between the mined release and our commit, the
follower records both moves from the chain.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any

import apsw
from aiohttp import BodyPartReader, web
from eth_account import Account
from eth_account.messages import encode_defunct
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from api import webhook_dispatcher
from api.acp import OPERATOR
from api.checkout import chain_unavailable
from api.errors import ApiError
from api.ipfs_gateway import IPFS_API_URL, pin, read_capped
from api.operation import Operation
from api.wallets import CLOCK, WALLET_DB, WRITER
from core import ipfs, orders
from core.audit import canonical
from core.operator import ChainUnavailable, ContractReverted, SendUncertain, TransactionFailed, tx_hash_of
from core.orders import InvalidTransition
from core.store import ipfs as ipfs_store
from core.store import orders as store

SIGNATURE_PATTERN = r"^0x[0-9a-fA-F]{130}$"
#: Deliverable uploads per order (each kept by CID, up to 32 MiB): bounds what one order can store.
MAX_DELIVERABLE_UPLOADS = 20
#: Deliverable uploads read at once (each up to MAX_DELIVERABLE_BYTES in memory).
UPLOAD_SLOTS: web.AppKey[asyncio.Semaphore] = web.AppKey("upload_slots", asyncio.Semaphore)

log = logging.getLogger(__name__)


class Signed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    timestamp: StrictInt = Field(description="unix seconds; within 300 s of the server's clock")
    signature: Annotated[StrictStr, Field(pattern=SIGNATURE_PATTERN, description="EIP-191 signature, 65 bytes hex")]


class FailRequest(Signed):
    reason: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None


class CompleteRequest(Signed):
    cid: Annotated[StrictStr, Field(min_length=1, max_length=200, description="the deliverable's CID")]


class DeliverableJson(Signed):
    content: dict[str, Any] = Field(description="stored as its RFC 8785 canonical JSON bytes")


class OrderMove(BaseModel):
    id: str
    status: str
    from_state: str
    audit_id: int


class DeliverableResponse(BaseModel):
    cid: str
    size: int
    url: str


class CompleteResponse(BaseModel):
    txHash: str
    jobId: str
    status: str


# ---- signatures ---------------------------------------------------------------------------------


def _clock(request: web.Request) -> float:
    clock: Callable[[], float] = request.app[CLOCK]
    return clock()


def _order(request: web.Request) -> store.OrderRow:
    order = store.get_order(request.app[WALLET_DB], request.match_info["order_id"])
    if order is None:
        raise ApiError(404, "order_not_found", "no such order", param="order_id")
    return order


def _check_signature(request: web.Request, order: store.OrderRow, message: str, signed: Signed) -> str:
    """A digest of the message if `signed` is the provider's fresh signature of it (401 otherwise)."""
    now = _clock(request)
    if abs(now - signed.timestamp) > orders.SIGNATURE_WINDOW_SECONDS:
        raise ApiError(
            401,
            "signature_expired",
            f"timestamp must be within {orders.SIGNATURE_WINDOW_SECONDS} s of the server's clock ({int(now)})",
            param="timestamp",
        )
    expected = store.signer_for(request.app[WALLET_DB], order)
    if expected is None:
        raise ApiError(
            409,
            "provider_not_linked",
            "the order's provider has no self wallet (none registered, or reset after the agent changed hands "
            "until its new owner sets one)",
        )
    message_obj = encode_defunct(text=message)
    try:
        signer = Account.recover_message(message_obj, signature=signed.signature)
    except Exception as exc:  # malformed signature bytes (bad v, s out of range, ...)
        raise ApiError(401, "invalid_signature", "the signature does not recover", param="signature") from exc
    if signer.lower() != expected.lower():
        raise ApiError(401, "invalid_signature", "the signature is not the provider's self wallet's", param="signature")
    return hashlib.sha256(message.encode()).hexdigest()  # the replay guard's key: one use per message


def _parse(model: type[Signed], raw: bytes) -> Any:
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        err = exc.errors()[0]
        param = ".".join(str(p) for p in err["loc"]) or None
        raise ApiError(400, "invalid_request", f"{param}: {err['msg']}" if param else err["msg"], param=param) from exc


def _invalid(exc: InvalidTransition) -> ApiError:
    return ApiError(409, "invalid_transition", str(exc), param="status")


async def _move(request: web.Request, order: store.OrderRow, digest: str, to_state: str, **kw: Any) -> web.Response:
    now = _clock(request)

    def work(conn: apsw.Connection) -> dict[str, Any]:
        if not store.use_signature(conn, digest, now + 2 * orders.SIGNATURE_WINDOW_SECONDS, now):
            raise ApiError(409, "signature_replayed", "this signed message was already used", param="signature")
        before = store.get_order(conn, order.id)
        moved = store.transition(conn, order.id, to_state, actor="provider", now=now, **kw)
        last = store.history(conn, order.id)[-1]
        assert before is not None
        return {"id": moved.id, "status": moved.status, "from_state": before.status, "audit_id": last.audit_id}

    try:
        body = await request.app[WRITER].run(work)
    except InvalidTransition as exc:
        raise _invalid(exc) from exc
    webhook_dispatcher.wake(request.app)
    return web.json_response(body)


# ---- handlers -----------------------------------------------------------------------------------


def _action_handler(action: str) -> Callable[[web.Request], Any]:
    to_state = orders.PROVIDER_ACTIONS[action]
    model: type[Signed] = FailRequest if action == "fail" else Signed

    async def handler(request: web.Request) -> web.Response:
        signed = _parse(model, await request.read())
        order = _order(request)
        digest = _check_signature(request, order, orders.provider_message(action, order.id, signed.timestamp), signed)
        if action == "recover" and store.escrow_status(request.app[WALLET_DB], order.job_id) not in (None, "funded"):
            raise ApiError(409, "escrow_closed", "the order's escrow is no longer funded on-chain: nothing to recover")
        reason = getattr(signed, "reason", None) or action
        return await _move(request, order, digest, to_state, reason=reason)

    return handler


async def upload_deliverable(request: web.Request) -> web.Response:
    """multipart/form-data (one `file` part plus `timestamp` and `signature` fields) or JSON
    {content: {...}, timestamp, signature} (at most 1 MiB); stores the bytes and answers their CID.
    The signature covers the bytes, so they are read first: only for an order that is in_progress,
    and at most UPLOAD_SLOTS uploads at a time, which bounds the memory anonymous callers can tie up."""
    order = _order(request)
    if order.status != "in_progress":
        raise ApiError(409, "invalid_transition", f"deliverables are uploaded while in_progress, not {order.status}")
    async with request.app[UPLOAD_SLOTS]:
        if request.content_type == "multipart/form-data":
            data, signed = await _read_multipart(request)
        elif request.content_type == "application/json":
            parsed: DeliverableJson = _parse(DeliverableJson, await request.read())  # client_max_size: 1 MiB
            try:
                data = canonical(parsed.content)
            except (TypeError, ValueError) as exc:  # floats, integers beyond 2**53: no canonical form
                raise ApiError(400, "invalid_content", f"content has no RFC 8785 form: {exc}", param="content") from exc
            signed = Signed(timestamp=parsed.timestamp, signature=parsed.signature)
        else:
            raise ApiError(415, "unsupported_media_type", "send multipart/form-data or application/json")
        sha = hashlib.sha256(data).hexdigest()
        digest = _check_signature(request, order, orders.deliverable_message(order.id, sha, signed.timestamp), signed)
        cid = await asyncio.to_thread(ipfs.cid_of, data) if len(data) > 1 << 20 else ipfs.cid_of(data)
    now = _clock(request)

    def work(conn: apsw.Connection) -> None:
        if not store.use_signature(conn, digest, now + 2 * orders.SIGNATURE_WINDOW_SECONDS, now):
            raise ApiError(409, "signature_replayed", "this signed message was already used", param="signature")
        current = store.get_order(conn, order.id)
        if current is None or current.status != "in_progress":
            raise ApiError(409, "invalid_transition", "the order is no longer in_progress")
        if not store.add_deliverable(conn, order.id, cid, now, MAX_DELIVERABLE_UPLOADS):
            raise ApiError(
                409,
                "deliverable_quota",
                f"an order takes at most {MAX_DELIVERABLE_UPLOADS} deliverable uploads; complete it with one of them",
            )
        ipfs_store.put(conn, cid, data, now)

    await request.app[WRITER].run(work)
    if request.app.get(IPFS_API_URL, ""):
        await pin(request.app, cid, data)  # stored either way; a failed pin is a 502 and a retry pins it
    return web.json_response({"cid": cid, "size": len(data), "url": f"/ipfs/{cid}"}, status=201)


def _malformed(exc: Exception) -> ApiError:
    return ApiError(400, "invalid_request", f"malformed multipart body ({type(exc).__name__})")


async def _read_multipart(request: web.Request) -> tuple[bytes, Signed]:
    # aiohttp raises KeyError (no boundary), ValueError or AssertionError (broken parts) on bad bodies
    try:
        reader = await request.multipart()
    except (KeyError, ValueError, AssertionError) as exc:
        raise _malformed(exc) from exc
    fields: dict[str, str] = {}
    data: bytes | None = None
    while True:
        try:
            part = await reader.next()
        except (KeyError, ValueError, AssertionError) as exc:
            raise _malformed(exc) from exc
        if part is None:
            break
        if not isinstance(part, BodyPartReader):
            raise ApiError(400, "invalid_request", "nested multipart is not accepted")
        if part.name == "file":
            if data is not None:
                raise ApiError(400, "invalid_request", "exactly one 'file' part", param="file")
            data = await read_capped(part)
        elif part.name in ("timestamp", "signature"):
            fields[part.name] = (await read_capped(part, 200)).decode(errors="replace")
        else:
            raise ApiError(400, "invalid_request", f"unexpected form field {part.name!r}", param=part.name)
    if data is None:
        raise ApiError(400, "invalid_request", "a 'file' part is required", param="file")
    try:
        timestamp = int(fields.get("timestamp", ""))
    except ValueError as exc:
        raise ApiError(400, "invalid_request", "timestamp must be an integer", param="timestamp") from exc
    signed = _parse(Signed, json.dumps({"timestamp": timestamp, "signature": fields.get("signature", "")}).encode())
    return data, signed


async def complete(request: web.Request) -> web.Response:
    body: CompleteRequest = _parse(CompleteRequest, await request.read())
    order = _order(request)
    cid = body.cid
    if not ipfs.is_cid(cid):
        raise ApiError(400, "invalid_cid", "cid is not a valid CID", param="cid")
    message = orders.completion_message(order.job_id, cid, body.timestamp)
    digest = _check_signature(request, order, message, body)
    if (
        order.status == "completed"
        and order.attestation == body.signature.lower()
        and order.release_tx is None
        and order.release_submitted_tx is None
    ):
        # The same attestation again: our release may not have gone out; sending it again is safe
        # (the gateway releases a job once).
        return await _send_release(request, order, cid, body, resend=True)
    if order.status != "in_progress":
        raise ApiError(409, "invalid_transition", f"an order in state {order.status} cannot be completed")
    if order.deliverable_cid != cid:
        raise ApiError(409, "deliverable_mismatch", "cid is not the deliverable uploaded for this order", param="cid")
    now = _clock(request)

    def claim(conn: apsw.Connection) -> None:
        if not store.use_signature(conn, digest, now + 2 * orders.SIGNATURE_WINDOW_SECONDS, now):
            raise ApiError(409, "signature_replayed", "this signed message was already used", param="signature")

    await request.app[WRITER].run(claim)
    return await _send_release(request, order, cid, body, resend=False, claimed=digest)


async def _send_release(
    request: web.Request,
    order: store.OrderRow,
    cid: str,
    body: CompleteRequest,
    *,
    resend: bool,
    claimed: str | None = None,
) -> web.Response:
    """Release the gateway job with the provider's attestation. `claimed`: the attestation's replay
    guard, given back when nothing was sent, so the same attestation can be retried."""
    operator = request.app[OPERATOR]
    signature = bytes.fromhex(body.signature[2:])
    try:
        receipt = await operator.transact(
            "PaymentGateway", "release", bytes.fromhex(order.job_id[2:]), cid, body.timestamp, signature
        )
    except (ContractReverted, ChainUnavailable) as exc:  # nothing was sent
        if claimed is not None:
            await request.app[WRITER].run(lambda conn: store.forget_signature(conn, claimed))
        if isinstance(exc, ChainUnavailable):
            raise chain_unavailable(exc) from exc
        if exc.error_name == "WrongStatus" and resend:
            raise ApiError(409, "already_released", "the gateway job is no longer funded") from exc
        raise ApiError(
            409 if exc.error_name in ("DeadlinePassed", "WrongStatus", "AgentPaused") else 422,
            "release_refused",
            f"the payment gateway refuses the release: {exc.error_name}",
        ) from exc
    except (SendUncertain, TransactionFailed) as exc:  # the text can carry the RPC URL: log only
        log.warning("release of order %s not confirmed: %s", order.id, exc)
        sent = f" (transaction {exc.tx_hash})" if exc.tx_hash else ""
        raise ApiError(
            503,
            "chain_unavailable",
            f"the release{sent} could not be confirmed: it may still be mined, and the order follows the"
            " chain; check the order before attesting again",
            type_="service_error",
        ) from exc
    tx = tx_hash_of(receipt)
    now = _clock(request)

    def record(conn: apsw.Connection) -> str:
        current = store.get_order(conn, order.id)
        assert current is not None
        if current.status == "in_progress":
            store.transition(
                conn,
                order.id,
                "completed",
                actor="provider",
                now=now,
                reason="attested",
                tx_hash=tx,
                extra={"cid": cid, "attested_at": body.timestamp},
                updates={
                    "attested_at": body.timestamp,
                    "attestation": body.signature.lower(),
                    "release_submitted_tx": tx,
                },
            )
        else:  # a resend, or the follower got there first
            store.update_order(conn, order.id, now, release_submitted_tx=tx)
        after = store.get_order(conn, order.id)
        assert after is not None
        return after.status

    try:
        status = await request.app[WRITER].run(record)
    except Exception as exc:  # the chain moved; the follower records it from the final event
        raise ApiError(
            503,
            "internal_step_failed",
            "the release is on-chain but recording it failed; it will be reconciled",
            type_="service_error",
        ) from exc
    webhook_dispatcher.wake(request.app)
    return web.json_response({"txHash": tx, "jobId": order.job_id, "status": status})


# ---- wiring -------------------------------------------------------------------------------------

_SIGNED_ERRORS = {
    401: ("signature_expired", "invalid_signature"),
    404: ("order_not_found",),
    409: ("invalid_transition", "signature_replayed", "provider_not_linked", "escrow_closed"),
}

OPERATIONS: list[Operation] = [
    *(
        Operation(
            "POST",
            f"/api/acp/orders/{{order_id}}/{action}",
            f"{action}Order",
            f"Provider: {action} an order",
            OrderMove,
            request=FailRequest if action == "fail" else Signed,
            auth="none",
            errors=_SIGNED_ERRORS,
            tags=("orders",),
            description=f"Signed by the provider's self wallet (EIP-191) over '{action}:{{order_id}}:{{timestamp}}'.",
        )
        for action in orders.PROVIDER_ACTIONS
    ),
    Operation(
        "POST",
        "/api/acp/orders/{order_id}/deliverables",
        "uploadDeliverable",
        "Provider: upload the deliverable",
        DeliverableResponse,
        status=201,
        request=DeliverableJson,
        auth="none",
        errors={
            **_SIGNED_ERRORS,
            400: ("invalid_content",),
            409: (*_SIGNED_ERRORS[409], "deliverable_quota"),
            413: ("payload_too_large",),
            415: ("unsupported_media_type",),
        },
        tags=("orders",),
        description="multipart/form-data (file, timestamp, signature) or JSON {content, timestamp, signature}; "
        "signed over 'deliver:{order_id}:{sha256 of the bytes}:{timestamp}'. Answers the bytes' CID (Kubo's "
        "`ipfs add --cid-version=1`), served at /ipfs/{cid}. At most 20 uploads per order; the last one is the "
        "order's deliverable.",
    ),
    Operation(
        "POST",
        "/api/acp/orders/{order_id}/complete",
        "completeOrder",
        "Provider: attest completion and release the escrow",
        CompleteResponse,
        request=CompleteRequest,
        auth="none",
        errors={
            **_SIGNED_ERRORS,
            400: ("invalid_cid",),
            409: (*_SIGNED_ERRORS[409], "deliverable_mismatch", "release_refused", "already_released"),
            422: ("release_refused",),
            503: ("chain_unavailable", "internal_step_failed"),
        },
        tags=("orders",),
        description="Signed over 'complete:{jobId}:{cid}:{timestamp}' (the gateway's attestationMessage); sends the "
        "gateway release and answers its transaction. The order becomes released when the release is final on-chain.",
    ),
]


def add_provider_order_routes(app: web.Application, upload_slots: int = 4) -> None:
    """Mount the provider-side order calls (needs the wallet routes' DB/WRITER/CLOCK and an OPERATOR)."""
    app[UPLOAD_SLOTS] = asyncio.Semaphore(upload_slots)
    for action in orders.PROVIDER_ACTIONS:
        app.router.add_post(f"/api/acp/orders/{{order_id}}/{action}", _action_handler(action))
    app.router.add_post("/api/acp/orders/{order_id}/deliverables", upload_deliverable)
    app.router.add_post("/api/acp/orders/{order_id}/complete", complete)
