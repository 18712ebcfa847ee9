"""The provider side of an order over HTTP: acknowledge, start, fail, recover, upload the
deliverable, complete. No Bearer key: each call carries the provider self wallet's EIP-191
signature (an upload in its headers, so it is checked before the body is read); the rules and
transactions are core.checkout.provider_orders'."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import BaseModel, ValidationError

from api.checkout import models
from api.errors import ApiError
from api.http import services_of
from api.operation import Call, Reply, Run
from api.policy import respond
from core import ipfs, signatures
from core.audit import canonical
from core.checkout import orders, provider_orders
from core.checkout.context import Checkout
from core.deliverables import MAX_DELIVERABLE_BYTES, Deliverables, too_large
from core.services import Services
from core.store import Conn
from core.store.orders import OrderRow


async def read_capped(part: BodyPartReader, limit: int | None = None) -> bytes:
    """The bytes of one multipart part, refused with 413 as soon as they pass `limit` (default: the
    largest deliverable); the multipart reader streams, so aiohttp's client_max_size does not bound it."""
    cap = MAX_DELIVERABLE_BYTES if limit is None else limit
    out = bytearray()
    while True:
        chunk = await part.read_chunk(64 * 1024)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > cap:
            raise too_large(len(out))


def _parse(model: type[BaseModel], raw: bytes) -> Any:
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        err = exc.errors()[0]
        param = ".".join(str(p) for p in err["loc"]) or None
        raise ApiError(400, "invalid_request", f"{param}: {err['msg']}" if param else err["msg"], param=param) from exc


def _action_run(action: str) -> Run:
    to_state = orders.PROVIDER_ACTIONS[action]
    model: type[models.Signed] = models.FailRequest if action == "fail" else models.Signed

    async def run(services: Services, call: Call) -> Reply:
        signed = _parse(model, call.body)
        now = services.clock()
        given = getattr(signed, "reason", None)

        def check(db: Conn) -> tuple[OrderRow, str]:
            order = provider_orders.order_or_404(db, call.path["order_id"])
            if given is not None:
                provider_orders.check_reason(given)
            message = orders.provider_message(action, order.id, signed.timestamp, given)
            digest = provider_orders.check_signature(db, order, message, signed.timestamp, signed.signature, now)
            if action == "recover":
                provider_orders.check_recoverable(db, order)
            return order, digest

        order, digest = await services.reads.run(check)
        reason = given or action
        body = await services.writer.run(
            lambda conn: provider_orders.move(conn, order.id, digest, to_state, now, reason=reason)
        )
        services.wake()
        return Reply(200, json.dumps(body).encode())

    run.__name__ = f"run_{action}"
    return run


#: The run of each provider action (acknowledge, start, fail, recover).
ACTION_RUNS: dict[str, Run] = {action: _action_run(action) for action in orders.PROVIDER_ACTIONS}


class UploadSlots:
    """Who may have a deliverable body read at once. An upload is authenticated (its signature
    headers) before any body byte is read, so only a provider holds a slot, and only:
    one per order, `per_provider` per provider (409 / 429 at once past them, never a queue), and
    `total` bodies in memory (each up to 32 MiB) across providers. Waiting for a slot and reading the
    body must end within `read_deadline` seconds (408 after): a client sending 16 bytes a second
    holds its own slot that long, nobody else's."""

    def __init__(self, total: int = 8, per_provider: int = 2, read_deadline: float = 120.0) -> None:
        self.total = asyncio.Semaphore(total)
        self.per_provider = per_provider
        self.read_deadline = read_deadline
        self._orders: set[str] = set()
        self._providers: Counter[str] = Counter()

    @contextlib.contextmanager
    def hold(self, order_id: str, provider: str) -> Iterator[None]:
        if order_id in self._orders:
            raise ApiError(
                409,
                "upload_in_progress",
                "another upload to this order is being read; retry when it has ended",
                headers={"Retry-After": "5"},
                replayable=False,
            )
        if self._providers[provider] >= self.per_provider:
            raise ApiError(
                429,
                "upload_slots_busy",
                f"this provider already has {self.per_provider} uploads being read; retry when one has ended",
                headers={"Retry-After": "5"},
                replayable=False,
            )
        self._orders.add(order_id)
        self._providers[provider] += 1
        try:
            yield
        finally:
            self._orders.discard(order_id)
            self._providers[provider] -= 1
            if not self._providers[provider]:
                del self._providers[provider]


def _upload_headers(headers: Mapping[str, str]) -> tuple[int, str, str]:
    """(timestamp, signature, declared SHA-256) from the upload's signature headers (400 otherwise)."""
    values = {}
    for name in (models.TIMESTAMP_HEADER, models.SIGNATURE_HEADER, models.DIGEST_HEADER):
        value = headers.get(name)
        if not value:
            raise ApiError(
                401,
                "missing_signature",
                f"an upload is signed in its headers ({models.TIMESTAMP_HEADER}, {models.SIGNATURE_HEADER}, "
                f"{models.DIGEST_HEADER}), checked before the body is read",
                param=name,
            )
        values[name] = value.strip()
    raw_ts, signature, digest = (
        values[models.TIMESTAMP_HEADER],
        values[models.SIGNATURE_HEADER],
        values[models.DIGEST_HEADER].lower(),
    )
    if not re.fullmatch(r"[0-9]{1,12}", raw_ts):
        raise ApiError(
            400, "invalid_request", "the timestamp header must be unix seconds", param=models.TIMESTAMP_HEADER
        )
    if not re.fullmatch(models.SIGNATURE_PATTERN, signature):
        raise ApiError(
            400, "invalid_request", "the signature header must be 0x and 130 hex digits", param=models.SIGNATURE_HEADER
        )
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ApiError(
            400,
            "invalid_request",
            "the SHA-256 header must be 64 hex digits (of the exact bytes)",
            param=models.DIGEST_HEADER,
        )
    return int(raw_ts), signature, digest


async def upload_deliverable(request: web.Request) -> web.StreamResponse:
    """multipart/form-data (one `file` part) or JSON {content: {...}} (at most 1 MiB), signed in the
    headers over the declared SHA-256 of the bytes. Everything but the bytes is checked before the
    body is read (the order is in_progress, the signature is its provider's, fresh and unused);
    then the body is read within the slot and deadline rules of UploadSlots, and must hash to the
    declared SHA-256."""
    services = services_of(request.app)
    order_id, headers, now = request.match_info["order_id"], request.headers, services.clock()

    def check(db: Conn) -> tuple[OrderRow, str, str]:
        provider_orders.order_or_404(db, order_id)  # an unknown order is a 404 whatever the headers
        timestamp, signature, declared = _upload_headers(headers)
        order, digest = provider_orders.check_upload(db, order_id, declared, timestamp, signature, now)
        return order, digest, declared

    order, digest, declared = await services.reads.run(check)
    if request.content_length is not None and request.content_length > MAX_DELIVERABLE_BYTES + 64 * 1024:
        raise too_large(request.content_length, param=None)
    if request.content_type not in ("multipart/form-data", "application/json"):
        raise ApiError(415, "unsupported_media_type", "send multipart/form-data or application/json")
    slots = services.part(UploadSlots)
    with slots.hold(order.id, order.provider_uuid):
        try:
            async with asyncio.timeout(slots.read_deadline):
                async with slots.total:
                    data = await _read_body(request)
        except TimeoutError as exc:
            raise ApiError(
                408,
                "upload_timeout",
                f"the upload was not received within {slots.read_deadline:g} s; send it again",
                replayable=False,
            ) from exc
        sha = await asyncio.to_thread(_sha256, data) if len(data) > 1 << 20 else _sha256(data)
        if sha != declared:
            raise ApiError(
                400,
                "digest_mismatch",
                f"the bytes received hash to {sha}, not the signed SHA-256",
                param=models.DIGEST_HEADER,
            )
        reply = await _store(services, order, digest, data)
    return respond(reply)


async def _store(services: Services, order: Any, digest: str, data: bytes) -> Reply:
    """Store checked bytes by CID (and pin them); the signature's one use is recorded with them."""
    cid = await asyncio.to_thread(ipfs.cid_of, data) if len(data) > 1 << 20 else ipfs.cid_of(data)
    now = services.clock()
    await services.writer.run(lambda conn: provider_orders.add_deliverable(conn, order.id, digest, cid, data, now))
    deliverables = services.part(Deliverables)
    if deliverables.api_url:
        await deliverables.pin(cid, data)  # stored either way; a failed pin is a 502 and a retry pins it
    return Reply(201, json.dumps({"cid": cid, "size": len(data), "url": f"/ipfs/{cid}"}).encode())


async def run_upload_deliverable(services: Services, call: Call) -> Reply:
    """The upload without HTTP headers (an MCP tool): {content, timestamp, signature}, the signature over
    the SHA-256 of the content's RFC 8785 bytes, exactly as the headers would carry it. The arguments
    arrive whole (the transport bounds their size), so there is no slow body to guard against; the
    order's slot is still held so that two uploads to one order do not interleave."""
    order_id, now = call.path["order_id"], services.clock()

    def check(db: Conn) -> tuple[OrderRow, str, bytes]:
        provider_orders.order_or_404(db, order_id)  # as over HTTP: an unknown order first
        parsed: models.DeliverableJson = _parse(models.DeliverableJson, call.body)
        if parsed.timestamp is None or parsed.signature is None:
            raise ApiError(
                401,
                "missing_signature",
                "timestamp and signature (over the content's SHA-256) are required",
                param="signature",
            )
        data = _canonical_content(parsed)
        order, digest = provider_orders.check_upload(
            db, order_id, _sha256(data), parsed.timestamp, parsed.signature, now
        )
        return order, digest, data

    order, digest, data = await services.reads.run(check)
    with services.part(UploadSlots).hold(order.id, order.provider_uuid):
        return await _store(services, order, digest, data)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def _read_body(request: web.Request) -> bytes:
    """The deliverable's bytes: the multipart `file` part, or the RFC 8785 bytes of JSON `content`."""
    if request.content_type == "multipart/form-data":
        return await _read_multipart(request)
    parsed: models.DeliverableJson = _parse(models.DeliverableJson, await request.read())  # client_max_size: 1 MiB
    if parsed.timestamp is not None or parsed.signature is not None:
        raise ApiError(
            400,
            "invalid_request",
            f"over HTTP the signature goes in the {models.TIMESTAMP_HEADER} / {models.SIGNATURE_HEADER} headers",
            param="signature" if parsed.signature is not None else "timestamp",
        )
    return _canonical_content(parsed)


def _canonical_content(parsed: models.DeliverableJson) -> bytes:
    try:
        return canonical(parsed.content)
    except (TypeError, ValueError) as exc:  # floats, integers beyond 2**53: no canonical form
        raise ApiError(400, "invalid_content", f"content has no RFC 8785 form: {exc}", param="content") from exc


def _malformed(exc: Exception) -> ApiError:
    return ApiError(400, "invalid_request", f"malformed multipart body ({type(exc).__name__})")


#: What aiohttp's multipart reader raises on a broken body: KeyError (no boundary), ValueError or
#: AssertionError (broken parts), HttpProcessingError (InvalidHeader, BadHttpMessage: a part's headers).
_MULTIPART_ERRORS = (KeyError, ValueError, AssertionError, HttpProcessingError)


async def _read_multipart(request: web.Request) -> bytes:
    try:
        reader = await request.multipart()
        data: bytes | None = None
        while True:
            part = await reader.next()
            if part is None:
                break
            if not isinstance(part, BodyPartReader):
                raise ApiError(400, "invalid_request", "nested multipart is not accepted")
            if part.name in ("timestamp", "signature"):
                raise ApiError(
                    400,
                    "invalid_request",
                    f"{part.name} goes in the {models.TIMESTAMP_HEADER} / {models.SIGNATURE_HEADER} headers, checked "
                    "before the body",
                    param=part.name,
                )
            if part.name != "file":
                raise ApiError(400, "invalid_request", f"unexpected form field {part.name!r}", param=part.name)
            if data is not None:
                raise ApiError(400, "invalid_request", "exactly one 'file' part", param="file")
            data = await read_capped(part)
    except _MULTIPART_ERRORS as exc:
        raise _malformed(exc) from exc
    if data is None:
        raise ApiError(400, "invalid_request", "a 'file' part is required", param="file")
    return data


async def run_complete(services: Services, call: Call) -> Reply:
    body: models.CompleteRequest = _parse(models.CompleteRequest, call.body)
    cid, now = body.cid, services.clock()

    def check(db: Conn) -> tuple[OrderRow, str]:
        order = provider_orders.order_or_404(db, call.path["order_id"])
        if not ipfs.is_cid(cid):
            raise ApiError(400, "invalid_cid", "cid is not a valid CID", param="cid")
        message = orders.completion_message(order.job_id, cid, body.timestamp)
        digest = provider_orders.check_signature(db, order, message, body.timestamp, body.signature, now)
        return order, digest

    order, digest = await services.reads.run(check)
    ctx = services.part(Checkout)
    if (
        order.status == "completed"
        and order.attestation == body.signature.lower()
        and order.release_tx is None
        and order.release_submitted_tx is None
    ):
        # The same attestation again: our release may not have gone out; sending it again is safe
        # (the gateway releases a job once).
        answer = await provider_orders.release(ctx, order, cid, body.timestamp, body.signature, resend=True)
    else:
        if order.status != "in_progress":
            raise ApiError(409, "invalid_transition", f"an order in state {order.status} cannot be completed")
        if order.deliverable_cid != cid:
            raise ApiError(
                409, "deliverable_mismatch", "cid is not the deliverable uploaded for this order", param="cid"
            )
        now = services.clock()
        await services.writer.run(lambda conn: signatures.use_once(conn, digest, now))
        answer = await provider_orders.release(
            ctx, order, cid, body.timestamp, body.signature, resend=False, claimed=digest
        )
    services.wake()
    return Reply(200, json.dumps(answer).encode())
