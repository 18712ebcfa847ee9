"""The provider side of an order over HTTP: acknowledge, start, fail, recover, upload the
deliverable, complete. No Bearer key: each call carries the provider self wallet's EIP-191
signature; the rules and transactions are core.checkout.provider's."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any

from aiohttp import BodyPartReader, web
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from api.errors import ApiError
from api.http import CHECKOUT, CLOCK, DELIVERABLES, READ_DB, WRITER, read_capped, wake_outbox
from api.operation import Call, Operation, Reply, Run
from api.policy import respond, serve
from core import ipfs
from core.audit import canonical
from core.checkout import orders, provider

SIGNATURE_PATTERN = r"^0x[0-9a-fA-F]{130}$"
#: Deliverable uploads read at once (each up to MAX_DELIVERABLE_BYTES in memory).
UPLOAD_SLOTS: web.AppKey[asyncio.Semaphore] = web.AppKey("upload_slots", asyncio.Semaphore)


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


# ---- handlers -----------------------------------------------------------------------------------


def _parse(model: type[Signed], raw: bytes) -> Any:
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        err = exc.errors()[0]
        param = ".".join(str(p) for p in err["loc"]) or None
        raise ApiError(400, "invalid_request", f"{param}: {err['msg']}" if param else err["msg"], param=param) from exc


def _action_run(action: str) -> Run:
    to_state = orders.PROVIDER_ACTIONS[action]
    model: type[Signed] = FailRequest if action == "fail" else Signed

    async def run(app: web.Application, call: Call) -> Reply:
        signed = _parse(model, call.body)
        db, now = app[READ_DB], app[CLOCK]()
        order = provider.order_or_404(db, call.path["order_id"])
        message = orders.provider_message(action, order.id, signed.timestamp)
        digest = provider.check_signature(db, order, message, signed.timestamp, signed.signature, now)
        if action == "recover":
            provider.check_recoverable(db, order)
        reason = getattr(signed, "reason", None) or action
        body = await app[WRITER].run(lambda conn: provider.move(conn, order.id, digest, to_state, now, reason=reason))
        wake_outbox(app)
        return Reply(200, json.dumps(body).encode())

    run.__name__ = f"run_{action}"
    return run


#: The run of each provider action (acknowledge, start, fail, recover).
ACTION_RUNS: dict[str, Run] = {action: _action_run(action) for action in orders.PROVIDER_ACTIONS}


def _action_handler(action: str) -> Callable[[web.Request], Any]:
    run = ACTION_RUNS[action]

    async def handler(request: web.Request) -> web.Response:
        return await serve(request, run, "none")

    return handler


def _open_order(app: web.Application, order_id: str) -> Any:
    order = provider.order_or_404(app[READ_DB], order_id)
    if order.status != "in_progress":
        raise ApiError(409, "invalid_transition", f"deliverables are uploaded while in_progress, not {order.status}")
    return order


async def _store_upload(app: web.Application, order: Any, data: bytes, signed: Signed) -> Reply:
    """Check the provider's signature over the bytes, store them by CID (and pin them)."""
    sha = hashlib.sha256(data).hexdigest()
    message = orders.deliverable_message(order.id, sha, signed.timestamp)
    digest = provider.check_signature(app[READ_DB], order, message, signed.timestamp, signed.signature, app[CLOCK]())
    cid = await asyncio.to_thread(ipfs.cid_of, data) if len(data) > 1 << 20 else ipfs.cid_of(data)
    now = app[CLOCK]()
    await app[WRITER].run(lambda conn: provider.add_deliverable(conn, order.id, digest, cid, data, now))
    deliverables = app[DELIVERABLES]
    if deliverables.api_url:
        await deliverables.pin(cid, data)  # stored either way; a failed pin is a 502 and a retry pins it
    return Reply(201, json.dumps({"cid": cid, "size": len(data), "url": f"/ipfs/{cid}"}).encode())


async def run_upload_deliverable(app: web.Application, call: Call) -> Reply:
    """The JSON form of an upload: {content: {...}, timestamp, signature}, stored as the content's
    RFC 8785 bytes (at most 1 MiB)."""
    order = _open_order(app, call.path["order_id"])
    async with app[UPLOAD_SLOTS]:
        parsed: DeliverableJson = _parse(DeliverableJson, call.body)
        try:
            data = canonical(parsed.content)
        except (TypeError, ValueError) as exc:  # floats, integers beyond 2**53: no canonical form
            raise ApiError(400, "invalid_content", f"content has no RFC 8785 form: {exc}", param="content") from exc
        return await _store_upload(app, order, data, Signed(timestamp=parsed.timestamp, signature=parsed.signature))


async def upload_deliverable(request: web.Request) -> web.StreamResponse:
    """multipart/form-data (one `file` part plus `timestamp` and `signature` fields) or JSON
    {content: {...}, timestamp, signature} (at most 1 MiB); stores the bytes and answers their CID.
    The signature covers the bytes, so they are read first: only for an order that is in_progress,
    and at most UPLOAD_SLOTS uploads at a time, which bounds the memory anonymous callers can tie up."""
    app = request.app
    if request.content_type == "application/json":  # client_max_size: 1 MiB
        return await serve(request, run_upload_deliverable, "none")
    order = _open_order(app, request.match_info["order_id"])
    if request.content_type != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type", "send multipart/form-data or application/json")
    async with app[UPLOAD_SLOTS]:
        data, signed = await _read_multipart(request)
        reply = await _store_upload(app, order, data, signed)
    return respond(reply)


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


async def run_complete(app: web.Application, call: Call) -> Reply:
    body: CompleteRequest = _parse(CompleteRequest, call.body)
    db = app[READ_DB]
    order = provider.order_or_404(db, call.path["order_id"])
    cid = body.cid
    if not ipfs.is_cid(cid):
        raise ApiError(400, "invalid_cid", "cid is not a valid CID", param="cid")
    message = orders.completion_message(order.job_id, cid, body.timestamp)
    digest = provider.check_signature(db, order, message, body.timestamp, body.signature, app[CLOCK]())
    ctx = app[CHECKOUT]
    if (
        order.status == "completed"
        and order.attestation == body.signature.lower()
        and order.release_tx is None
        and order.release_submitted_tx is None
    ):
        # The same attestation again: our release may not have gone out; sending it again is safe
        # (the gateway releases a job once).
        answer = await provider.release(ctx, order, cid, body.timestamp, body.signature, resend=True)
    else:
        if order.status != "in_progress":
            raise ApiError(409, "invalid_transition", f"an order in state {order.status} cannot be completed")
        if order.deliverable_cid != cid:
            raise ApiError(
                409, "deliverable_mismatch", "cid is not the deliverable uploaded for this order", param="cid"
            )
        now = app[CLOCK]()
        await app[WRITER].run(lambda conn: provider.use_signature(conn, digest, now))
        answer = await provider.release(ctx, order, cid, body.timestamp, body.signature, resend=False, claimed=digest)
    wake_outbox(app)
    return Reply(200, json.dumps(answer).encode())


async def complete(request: web.Request) -> web.Response:
    return await serve(request, run_complete, "none")


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
            run=ACTION_RUNS[action],
            destructive=action == "fail",
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
        run=run_upload_deliverable,
        links={"cid": "agentledger://ipfs/{cid}"},
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
        run=run_complete,
        open_world=True,
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
