"""Idempotency-Key on value-moving POSTs (the ACP rules of DESIGN.md).

A key is scoped to the caller (its API key hash) and the endpoint (method + path) and kept 24 h.
The first request claims the key (`in_flight`, committed at once so concurrent requests see it);
its value-moving writes and its stored response commit in ONE transaction, so a crash can never
leave money moved without the response a retry will replay. Then:

- same key, same body, finished: the stored response again, with `Idempotent-Replayed: true`;
- same key, different body: 422 `idempotency_conflict` (checked first, even while in flight);
- same key, original still running: 409 `idempotency_in_flight` with `Retry-After`;
- 4xx responses are stored (they wrote nothing and will answer the same), except refusals that
  only say "not now" (a concurrent request holds the session: ApiError.replayable False); those,
  5xx and crashes release the key so a retry runs afresh. A claim older than STALE_AFTER seconds whose request
  never finished (its process died: nothing it did committed) may be taken over; should the
  original still finish later, its commit is refused because it no longer holds the key.

Every response to a request that carried the header echoes `Idempotency-Key`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import apsw
from aiohttp import web

from api.errors import ApiError
from core.store import wallets as store
from core.store.committer import GroupCommitter

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
RETENTION_SECONDS = 24 * 3600
#: A complete can wait on the operator lock and a receipt for well over a minute: a claim is
#: presumed abandoned only after this long.
STALE_AFTER_SECONDS = 300.0
RETRY_AFTER_SECONDS = 1
MAX_KEY_LEN = 255

#: The transactional part of a request: runs inside the writer's transaction (its own savepoint),
#: returns (status, body).
TxWork = Callable[[apsw.Connection], tuple[int, bytes]]


@dataclass(frozen=True)
class Claim:
    scope: str
    key: str
    attempt: str


class InFlight(ApiError):
    def __init__(self) -> None:
        super().__init__(
            409,
            "idempotency_in_flight",
            "a request with this Idempotency-Key is still being processed; retry later",
            param=HEADER,
        )

    def response(self) -> web.Response:
        resp = super().response()
        resp.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return resp


def request_key(request: web.Request) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LEN or not key.isprintable() or not key.isascii():
        raise ApiError(
            400, "invalid_idempotency_key", f"{HEADER} must be 1-{MAX_KEY_LEN} printable ASCII", param=HEADER
        )
    return key


async def _claim(writer: GroupCommitter, scope: str, key: str, body_sha: str, now: float) -> Claim | web.Response:
    def claim_tx(db: apsw.Connection) -> Claim | store.IdemRow:
        store.purge_idem(db, now - RETENTION_SECONDS)
        row = store.get_idem(db, scope, key)
        abandoned = row is not None and row.status == "in_flight" and row.created_at < now - STALE_AFTER_SECONDS
        if row is None or abandoned:
            claim = Claim(scope, key, secrets.token_hex(16))
            store.put_idem_in_flight(db, scope, key, body_sha, claim.attempt, now)
            return claim
        return row

    row = await writer.run(claim_tx)
    if isinstance(row, Claim):
        return row
    if row.body_sha256 != body_sha:
        raise ApiError(
            422,
            "idempotency_conflict",
            "this Idempotency-Key was used with a different request body",
            param=HEADER,
        )
    if row.status == "in_flight":
        raise InFlight()
    resp = web.Response(
        status=row.response_status or 200, body=row.response_body or b"", content_type="application/json"
    )
    resp.headers[REPLAYED] = "true"
    return resp


async def _store_error(writer: GroupCommitter, claim: Claim, exc: ApiError) -> None:
    def store_tx(db: apsw.Connection) -> None:
        if exc.status >= 500 or isinstance(exc, InFlight) or not exc.replayable:
            store.release_idem(db, claim.scope, claim.key, claim.attempt)
        else:
            store.finish_idem(db, claim.scope, claim.key, claim.attempt, exc.status, bytes(exc.response().body))  # type: ignore[arg-type]

    await writer.run(store_tx)


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
    """Run `work` in the writer's next group commit under the request's Idempotency-Key (if any);
    `owner` is the caller's key hash. `before` is awaited after the key is claimed (tests hold
    requests there). The response is sent only once `work` and the stored response are committed.
    savepoint=False: `work` writes nothing when it raises (GroupCommitter.run); used without a
    key only, since storing the response after `work` is a write that can still refuse."""
    key = request_key(request)
    if key is None:  # no key, nothing to claim or store: the work alone, in the next group commit
        try:
            if before is not None:
                await before()
            status, raw = await writer.run(work, savepoint=savepoint)
        except ApiError as exc:
            return exc.response()
        return web.Response(status=status, body=raw, content_type="application/json")
    claim: Claim | None = None
    try:
        scope = f"{owner} {request.method} {request.path}"
        got = await _claim(writer, scope, key, hashlib.sha256(body).hexdigest(), now)
        if isinstance(got, web.Response):
            return _echo(got, key)
        claim = got
        resp = await _run(writer, claim, work, before)
    except ApiError as exc:
        if claim is not None:
            await _store_error(writer, claim, exc)
        return _echo(exc.response(), key)
    except BaseException:
        if claim is not None:
            held = claim
            await writer.run(lambda db: store.release_idem(db, held.scope, held.key, held.attempt))
        raise
    return _echo(resp, key)


async def _run(
    writer: GroupCommitter, claim: Claim | None, work: TxWork, before: Callable[[], Awaitable[None]] | None
) -> web.Response:
    if before is not None:
        await before()

    def run_tx(db: apsw.Connection) -> tuple[int, bytes]:
        status, raw = work(db)
        if claim is not None and not store.finish_idem(db, claim.scope, claim.key, claim.attempt, status, raw):
            raise InFlight()  # another attempt took the key over: roll this one back
        return status, raw

    status, raw = await writer.run(run_tx)
    return web.Response(status=status, body=raw, content_type="application/json")


def _echo(resp: web.Response, key: str | None) -> web.Response:
    if key is not None:
        resp.headers[HEADER] = key
    return resp
