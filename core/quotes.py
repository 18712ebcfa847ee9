"""Quotes: the first of the two steps of every value-moving MCP tool (quote, then execute).

A quote records, for one API key, exactly which operation will run with which arguments and what
it will move (amount, from, to), and lives QUOTE_TTL_SECONDS. Executing it runs those stored
arguments, never new ones, under an Idempotency-Key derived from the quote id (`idempotency_key`),
so a retried execute (the client timed out, the connection dropped) replays the first answer and
moves money once. A quote is executed by the key that asked for it only (another key gets 404, as
for an unknown id); one never executed is refused once expired (409 quote_expired); one already
executed stays replayable while its idempotency answer is kept (24 h).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from core.errors import ServiceError
from core.idempotency import RETENTION_SECONDS
from core.keys import Caller
from core.store import Conn
from core.store import quotes as store

QUOTE_TTL_SECONDS = 120
QUOTE_ID_PATTERN = r"^q_[0-9a-f]{32}$"


@dataclass(frozen=True)
class Quote:
    id: str
    operation: str
    arguments: dict[str, Any]
    amount: int
    summary: dict[str, Any]
    expires_at: float
    executed: bool


def idempotency_key(quote_id: str) -> str:
    """The Idempotency-Key an execute of `quote_id` runs under (the same on every retry)."""
    return f"mcp-quote:{quote_id}"


def create(
    conn: Conn,
    caller: Caller,
    operation: str,
    arguments: dict[str, Any],
    amount: int,
    summary: dict[str, Any],
    now: float,
) -> Quote:
    """Inside a writer transaction: a new quote of `operation` with `arguments` for the caller's key."""
    store.purge(conn, now - RETENTION_SECONDS)
    row = store.QuoteRow(
        id="q_" + secrets.token_hex(16),
        key_hash=caller.key_hash,
        operation=operation,
        arguments=json.dumps(arguments, sort_keys=True, separators=(",", ":")),
        amount=amount,
        summary=json.dumps(summary, sort_keys=True),
        created_at=now,
        expires_at=now + QUOTE_TTL_SECONDS,
        executed_at=None,
    )
    store.insert(conn, row)
    return _quote(row)


def _quote(row: store.QuoteRow) -> Quote:
    return Quote(
        row.id,
        row.operation,
        json.loads(row.arguments),
        row.amount,
        json.loads(row.summary),
        row.expires_at,
        row.executed_at is not None,
    )


def not_found(quote_id: str) -> ServiceError:
    return ServiceError(404, "quote_not_found", f"no quote {quote_id} for this API key", param="quote_id")


def _check(row: store.QuoteRow | None, caller: Caller, quote_id: str, operation: str, now: float) -> store.QuoteRow:
    if row is None or not secrets.compare_digest(row.key_hash, caller.key_hash) or row.operation != operation:
        raise not_found(quote_id)
    if row.executed_at is None and now > row.expires_at:
        raise ServiceError(409, "quote_expired", f"quote {quote_id} expired; ask for a new one", param="quote_id")
    return row


def peek(conn: Conn, caller: Caller, quote_id: str, operation: str, now: float) -> Quote:
    """The quote as claim would find it (same refusals), read without writing: what to confirm."""
    return _quote(_check(store.get(conn, quote_id), caller, quote_id, operation, now))


def claim(conn: Conn, caller: Caller, quote_id: str, operation: str, now: float) -> Quote:
    """Inside a writer transaction: the quote to execute, marked executed; 404 quote_not_found for
    an unknown id, another key's or another operation's quote; 409 quote_expired for one that
    expired before its first execute. An executed quote is returned again (its execute replays)."""
    row = _check(store.get(conn, quote_id), caller, quote_id, operation, now)
    if row.executed_at is None:
        store.mark_executed(conn, quote_id, now)
    return _quote(row)


def keep_content(conn: Conn, quote_id: str, content: dict[str, str]) -> None:
    """Inside a writer transaction: the provider-produced fields an execute of `quote_id` answered,
    kept for the key to read as a resource (the tool result links to them, never inlines them).
    The first answer's stay: a replay answers the same."""
    store.set_content(conn, quote_id, json.dumps(content, sort_keys=True))


def content(conn: Conn, caller: Caller, quote_id: str, field: str) -> str:
    """The text of `field` an execute of the caller's quote answered; 404 quote_not_found for an
    unknown id or another key's quote, 404 content_not_found when that execute answered no such
    field (not executed, a refusal, a field that was null). Readable while the quote is kept (24 h
    past its expiry, as its replay)."""
    row = store.get(conn, quote_id)
    if row is None or not secrets.compare_digest(row.key_hash, caller.key_hash):
        raise not_found(quote_id)
    stored = store.get_content(conn, quote_id)
    found = None if stored is None else json.loads(stored).get(field)
    if not isinstance(found, str):
        raise ServiceError(404, "content_not_found", f"quote {quote_id} answered no {field}", param="field")
    return found
