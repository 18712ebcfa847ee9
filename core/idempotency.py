"""Idempotency keys on value-moving calls (the ACP rules of DESIGN.md), for every transport.

A key is scoped to the caller (its API key hash) and the operation and kept 24 h. The first
request claims the key (`in_flight`, committed at once so concurrent requests see it); its
value-moving writes and its stored response commit in ONE transaction, so a crash can never
leave money moved without the response a retry will replay. Then:

- same key, same body, finished: the stored response again (`replayed`);
- same key, different body: 422 `idempotency_conflict` (checked first, even while in flight);
- same key, original still running: 409 `idempotency_in_flight` with `Retry-After`;
- 4xx refusals are stored (they wrote nothing and will answer the same), except refusals that
  only say "not now" (ServiceError.replayable False); those, 5xx and crashes release the key so
  a retry runs afresh. A claim names the process holding it (core.instance): once that process
  is gone (a crash, a restart) the claim may be taken over at once; a claim of a process this one
  cannot judge (another host) after STALE_AFTER_SECONDS. Should the original still finish later,
  its commit is refused because it no longer holds the key.
- A release that cannot be written (the database out of reach: the call itself answered 503) is
  written as soon as the database is back (`_release_later`, retried every RELEASE_RETRY seconds),
  and meanwhile the owner itself takes its dead claim over at once: a claim of this process whose
  attempt is no longer running here (`_running`) is abandoned. So a retry after an outage runs at
  once, on whichever process it lands, instead of waiting STALE_AFTER_SECONDS.

This holds with several processes on one database: a key is claimed by one insert that never
replaces a row, and of the writers that judge one claim abandoned, one takes it over (a
compare-and-set on the attempt seen; core.store.idempotency).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import NamedTuple

import rfc8785

from core import instance
from core.errors import ServiceError
from core.store import Conn
from core.store import idempotency as store
from core.store.committer import GroupCommitter
from core.store.types import unavailable

log = logging.getLogger("agentledger.idempotency")

HEADER = "Idempotency-Key"
RETENTION_SECONDS = 24 * 3600
#: A complete can wait on the operator lock and a receipt for well over a minute: a claim is
#: presumed abandoned only after this long.
STALE_AFTER_SECONDS = 300.0
RETRY_AFTER_SECONDS = 1
MAX_KEY_LEN = 255
#: Seconds between two attempts to write a release the database refused.
RELEASE_RETRY = 0.5

#: Attempts of this process between their claim and their end (finished or released): read in the
#: writer's transaction (a thread, on PostgreSQL) and changed on the loop, a set's add and discard each
#: being one step under the GIL.
_running: set[str] = set()
#: Releases waiting for the database (kept referenced until they are written).
_pending_releases: set[asyncio.Task[None]] = set()

#: The transactional part of a request: runs inside the writer's transaction (its own savepoint),
#: returns (status, body).
TxWork = Callable[[Conn], tuple[int, bytes]]


@dataclass(frozen=True)
class Claim:
    scope: str
    key: str
    attempt: str


class Answer(NamedTuple):
    """What a call answered: a status and its JSON body; `replayed` when it is a stored answer (a
    named tuple: one is made per value-moving request)."""

    status: int
    body: bytes
    replayed: bool = False


class InFlight(ServiceError):
    def __init__(self) -> None:
        super().__init__(
            409,
            "idempotency_in_flight",
            "a request with this Idempotency-Key is still being processed; retry later",
            param=HEADER,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )


def check_key(key: str) -> str:
    """`key` if it is 1-255 printable ASCII; 400 invalid_idempotency_key otherwise."""
    if not 1 <= len(key) <= MAX_KEY_LEN or not key.isprintable() or not key.isascii():
        raise ServiceError(
            400, "invalid_idempotency_key", f"{HEADER} must be 1-{MAX_KEY_LEN} printable ASCII", param=HEADER
        )
    return key


def body_digest(body: bytes) -> str:
    """What "the same body" means: SHA-256 of the body's RFC 8785 canonical JSON, so a re-serialised
    identical body (key order, whitespace, escapes, `1.50` for `1.5`) replays; of its bytes when it
    has no canonical form (not JSON: a multipart upload; integers past 2^53)."""
    try:
        return hashlib.sha256(rfc8785.dumps(json.loads(body.decode("utf-8")))).hexdigest()
    except (ValueError, RecursionError, TypeError):  # rfc8785's refusals are ValueErrors too
        return hashlib.sha256(body).hexdigest()


def _abandoned(row: store.IdemRow, now: float) -> bool:
    """Is the in_flight claim `row` dead: too old, its process gone, or this process's and no longer
    running here (its release was lost with the database)?"""
    if row.status != "in_flight":
        return False
    if row.created_at < now - STALE_AFTER_SECONDS or instance.is_gone(row.owner):
        return True
    return row.owner == instance.current() and row.attempt not in _running


async def _claim(writer: GroupCommitter, claim: Claim, digest: str, now: float) -> Claim | Answer:
    scope, key = claim.scope, claim.key

    def claim_tx(db: Conn) -> Claim | store.IdemRow:
        store.purge(db, now - RETENTION_SECONDS)
        me = instance.current()
        row = store.claim(db, scope, key, digest, claim.attempt, now, me)
        if row is None:
            return claim
        abandoned = _abandoned(row, now)
        # a compare-and-set on the attempt judged abandoned: of two writers judging it, one takes it
        if abandoned and store.take_over(db, scope, key, row.attempt, digest, claim.attempt, now, me):
            return claim
        if abandoned:  # another attempt took it over first: answer from what it made of the row
            row = store.get(db, scope, key)
            if row is None:
                raise InFlight()
        return row

    row = await writer.run(claim_tx)
    if isinstance(row, Claim):
        return row
    if row.body_sha256 != digest:
        raise ServiceError(
            422,
            "idempotency_conflict",
            "this Idempotency-Key was used with a different request body",
            param=HEADER,
        )
    if row.status == "in_flight":
        raise InFlight()
    return Answer(row.response_status or 200, row.response_body or b"", replayed=True)


def refusal_body(exc: ServiceError) -> bytes:
    """The stored bytes of a refusal: its error shape as JSON."""
    return json.dumps(exc.shape()).encode()


async def _store_error(writer: GroupCommitter, claim: Claim, exc: ServiceError) -> None:
    if exc.status >= 500 or isinstance(exc, InFlight) or not exc.replayable:
        await _release(writer, claim)
        return
    await writer.run(lambda db: store.finish(db, claim.scope, claim.key, claim.attempt, exc.status, refusal_body(exc)))


async def _release(writer: GroupCommitter, claim: Claim) -> None:
    """Forget `claim` so that a retry runs afresh; while the database cannot take it, later (module doc)."""
    try:
        await writer.run(lambda db: store.release(db, claim.scope, claim.key, claim.attempt))
    except Exception as exc:
        if not unavailable(exc):
            raise
        task = asyncio.create_task(_release_later(writer, claim))
        _pending_releases.add(task)
        task.add_done_callback(_pending_releases.discard)


async def _release_later(writer: GroupCommitter, claim: Claim) -> None:
    deadline = asyncio.get_running_loop().time() + STALE_AFTER_SECONDS  # past it, any process takes it over
    while asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(RELEASE_RETRY)
        try:
            await writer.run(lambda db: store.release(db, claim.scope, claim.key, claim.attempt))
        except Exception as exc:
            if not unavailable(exc):
                log.error("an Idempotency-Key claim could not be released", exc_info=exc)
                return
            continue
        log.info("an Idempotency-Key claim left by the database outage was released")
        return


async def execute(
    writer: GroupCommitter,
    *,
    scope: str,
    key: str | None,
    body: bytes,
    now: float,
    work: TxWork,
    before: Callable[[], Awaitable[None]] | None = None,
    savepoint: bool = True,
) -> Answer:
    """Run `work` in the writer's next group commit under `key` (None: no key) in `scope` (the
    caller and the operation). `before` is awaited after the key is claimed (the chain steps of a
    saga; tests hold requests there). The answer is returned only once `work` and the stored
    answer are committed. A refusal raises ServiceError (stored under the key when replayable).
    savepoint=False: `work` writes nothing when it raises (GroupCommitter.run); used without a
    key only, since storing the answer after `work` is a write that can still refuse."""
    if key is None:  # no key, nothing to claim or store: the work alone, in the next group commit
        if before is not None:
            await before()
        status, raw = await writer.run(work, savepoint=savepoint)
        return Answer(status, raw)
    claim: Claim | None = None
    mine = Claim(scope, key, secrets.token_hex(16))
    _running.add(mine.attempt)  # before its claim can commit: this process's own retry must not take it
    try:
        got = await _claim(writer, mine, body_digest(body), now)
        if isinstance(got, Answer):
            return got
        claim = got
        return await _run(writer, claim, work, before)
    except ServiceError as exc:
        if claim is not None:
            await _store_error(writer, claim, exc)
        raise
    except BaseException:
        if claim is not None:
            await _release(writer, claim)
        raise
    finally:
        _running.discard(mine.attempt)


async def _run(
    writer: GroupCommitter, claim: Claim, work: TxWork, before: Callable[[], Awaitable[None]] | None
) -> Answer:
    if before is not None:
        await before()

    def run_tx(db: Conn) -> tuple[int, bytes]:
        status, raw = work(db)
        if not store.finish(db, claim.scope, claim.key, claim.attempt, status, raw):
            raise InFlight()  # another attempt took the key over: roll this one back
        return status, raw

    status, raw = await writer.run(run_tx)
    return Answer(status, raw)
