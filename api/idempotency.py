"""Idempotency-Key over HTTP: the header, the echo, and core.idempotency's answer as a response.

Every response to a request that carried the header echoes `Idempotency-Key`; a stored answer
comes back with `Idempotent-Replayed: true`. The rules are core.idempotency's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from api.errors import ApiError, error_response
from api.operation import Call, Reply
from core import idempotency
from core.idempotency import HEADER, MAX_KEY_LEN, InFlight, TxWork
from core.store.committer import GroupCommitter

__all__ = [
    "HEADER",
    "MAX_KEY_LEN",
    "REPLAYED",
    "InFlight",
    "TxWork",
    "execute",
    "execute_call",
    "request_key",
    "scope_of",
]

REPLAYED = "Idempotent-Replayed"


def request_key(request: web.Request) -> str | None:
    key = request.headers.get(HEADER)
    return None if key is None else idempotency.check_key(key)


def scope_of(owner: str, request: web.Request) -> str:
    """A key's scope: the caller (its key hash, or "anonymous") and the endpoint."""
    return f"{owner} {request.method} {request.path}"


async def execute(
    request: web.Request,
    writer: GroupCommitter,
    *,
    owner: str,
    body: bytes,
    now: float,
    work: TxWork,
    before: Callable[[], Awaitable[None]] | None = None,
    savepoint: bool = True,
) -> web.Response:
    """core.idempotency.execute for `request` (its Idempotency-Key, scoped to `owner` and the
    endpoint), answered as a response; a refusal is answered in the error shape."""
    key = request_key(request)
    if key is None:  # the hot path (most earns): nothing to claim or store, no scope to build
        try:
            if before is not None:
                await before()
            status, raw = await writer.run(work, savepoint=savepoint)
        except ApiError as exc:
            return error_response(exc)
        return web.Response(status=status, body=raw, content_type="application/json")
    try:
        answer = await idempotency.execute(
            writer,
            scope=scope_of(owner, request),
            key=key,
            body=body,
            now=now,
            work=work,
            before=before,
            savepoint=savepoint,
        )
    except ApiError as exc:
        return _echo(error_response(exc), key)
    resp = web.Response(status=answer.status, body=answer.body, content_type="application/json")
    if answer.replayed:
        resp.headers[REPLAYED] = "true"
    return _echo(resp, key)


def _echo(resp: web.Response, key: str | None) -> web.Response:
    if key is not None:
        resp.headers[HEADER] = key
    return resp


async def execute_call(
    writer: GroupCommitter,
    call: Call,
    *,
    owner: str,
    now: float,
    work: TxWork,
    before: Callable[[], Awaitable[None]] | None = None,
    savepoint: bool = True,
) -> Reply:
    """core.idempotency.execute for a Call (any transport): its Idempotency-Key scoped to `owner` and
    the call's target, exactly as scope_of scopes an HTTP request's. A refusal raises ServiceError."""
    answer = await idempotency.execute(
        writer,
        scope=f"{owner} {call.target}",
        key=call.idempotency_key,
        body=call.body,
        now=now,
        work=work,
        before=before,
        savepoint=savepoint,
    )
    return Reply(answer.status, answer.body, answer.replayed)
