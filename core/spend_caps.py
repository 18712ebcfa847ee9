"""Daily spend caps of API keys: a key may move at most `daily_cap` micro-USDC per UTC day, over
HTTP and MCP alike (api.policy holds the cap around every value-moving call of a capped key).

A call holds its amount BEFORE it runs, in one writer transaction that locks the key
(core.store.serialization), sums what the key holds today and refuses past the cap: two calls at once, in
one process or several, can never both slip under it. The hold is named by the call's
Idempotency-Key (scope and key): a retry of a call finds the hold of the first attempt and holds
nothing more, so a replayed answer is never counted twice nor refused by the cap the original used
up. The call that made a hold releases it when the call is refused (nothing moved); a process that
dies in between keeps it: a cap may count a call that moved nothing, never miss one that moved money.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from core.errors import ServiceError
from core.keys import Caller
from core.money import usdc_text
from core.store import Conn, lock
from core.store import spend_caps as store

#: Days of holds kept (older ones are purged when the key holds again).
KEEP_DAYS = 7


def cap_lock(key_hash: str) -> str:
    """The named lock of a key's holds."""
    return "cap:" + key_hash


def day_of(now: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(now))


@dataclass(frozen=True)
class Hold:
    key_hash: str
    ref: str
    amount: int
    #: This call made the hold (False: a retry found its first attempt's).
    made: bool


def hold_ref(idempotency_ref: str | None) -> str:
    """A hold's name: the call's Idempotency-Key scope and key, or a fresh one for a call without."""
    return idempotency_ref if idempotency_ref is not None else "call:" + secrets.token_hex(16)


def exceeded(cap: int, used: int, amount: int) -> ServiceError:
    return ServiceError(
        403,
        "daily_cap_exceeded",
        f"this key may move {usdc_text(cap)} USDC a day (UTC): {usdc_text(used)} USDC used today, "
        f"{usdc_text(amount)} USDC more would pass it",
        param="Authorization",
        replayable=False,
    )


def hold(conn: Conn, caller: Caller, ref: str, amount: int, now: float) -> Hold | None:
    """Inside a writer transaction: hold `amount` of the caller's cap for today under `ref`, or raise
    403 daily_cap_exceeded. None when the key has no cap."""
    cap = caller.daily_cap
    if cap is None:
        return None
    lock(conn, cap_lock(caller.key_hash))  # before any read: the sum below must see every other hold
    if store.exists(conn, caller.key_hash, ref):
        return Hold(caller.key_hash, ref, amount, made=False)
    day = day_of(now)
    used = store.used(conn, caller.key_hash, day)
    if used + amount > cap:
        raise exceeded(cap, used, amount)
    store.purge(conn, caller.key_hash, day_of(now - KEEP_DAYS * 86400))
    store.insert(conn, caller.key_hash, ref, day, amount)
    return Hold(caller.key_hash, ref, amount, made=True)


def release(conn: Conn, held: Hold) -> None:
    if held.made:
        store.delete(conn, held.key_hash, held.ref)
