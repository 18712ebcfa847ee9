"""The outbox: deliveries written in the same transaction as the change they announce, sent at
least once by the dispatcher (core.outbox.dispatcher) through their channel.

Every channel (webhook now, e-mail in the marketplace) shares the retry schedule, dead letters,
the per-host circuit breaker and the operator commands (scripts.webhooks). A delivery keeps its
event id across retries. This module holds the rules; the SQL is core.store.outbox's.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from core.store import Conn
from core.store import outbox as store

__all__ = ["MAX_HOLD", "RETRY_DELAYS", "encode_body", "enqueue_webhook", "new_event_id", "next_delay"]

#: Delay before attempt n+1 after n failed attempts (seconds): immediately, +1 min, +5 min,
#: +15 min, +1 h, +4 h; a failure of the last attempt makes the delivery a dead letter.
RETRY_DELAYS: tuple[float, ...] = (0, 60, 300, 900, 3600, 14400)
#: The longest a row is held back by the breaker: the retry schedule's own length (5 h 21 min), so a
#: dead host's rows become dead letters on about the timeline they would have without the breaker.
MAX_HOLD = sum(RETRY_DELAYS)

WEBHOOK = "webhook"


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(16)


def next_delay(failed_attempts: int) -> float | None:
    """Seconds until the next attempt after `failed_attempts` failures; None: dead letter."""
    return RETRY_DELAYS[failed_attempts] if failed_attempts < len(RETRY_DELAYS) else None


def encode_body(payload: dict[str, Any]) -> bytes:
    """Compact JSON (UTF-8): the exact bytes that are stored, signed and sent."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def enqueue_webhook(
    conn: Conn, *, event: str, source: str, url: str, secret: str, payload: dict[str, Any], now: float
) -> str:
    """Queue one webhook, due at once; returns its event id. Call inside the transaction that makes
    the change it announces, and wake the dispatcher after that transaction committed."""
    event_id = new_event_id()
    store.enqueue(
        conn,
        channel=WEBHOOK,
        event_id=event_id,
        event=event,
        source=source,
        url=url,
        host=store.host_of(url),
        secret=secret,
        body=encode_body(payload),
        now=now,
    )
    return event_id
