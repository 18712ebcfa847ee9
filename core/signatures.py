"""Requests signed by a wallet instead of a Bearer key (a provider's order moves, an escrow hire's
caller, a provider link, a mint on demand, a buyer's claim, a payer's funding consent, an offer):
who signed, how fresh the signed timestamp must be, and the guard that takes a signed message once.

- Recovery: EIP-191 (personal_sign) of a text, or EIP-712 typed data. A malformed signature (bad v,
  s out of range, ...) recovers to nobody: None, never an exception.
- The time window: a signed timestamp within WINDOW_SECONDS of the server's clock, either side, so a
  signature cannot be kept and sent much later.
- Once only: a message that moves something (an order's state, a deliverable, an escrow job) is
  taken once. Its SHA-256 is recorded (core.store.signatures) for as long as the window could still
  accept it, so a captured request cannot be sent again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data

from core.errors import ServiceError
from core.store import Conn
from core.store import signatures as store

#: A signed timestamp is accepted this many seconds either side of the server's clock.
WINDOW_SECONDS = 300
#: How long a used message's digest is kept: it was used at `now` >= timestamp - WINDOW_SECONDS and
#: passes the window until timestamp + WINDOW_SECONDS, so never after now + 2 * WINDOW_SECONDS.
KEPT_SECONDS = 2 * WINDOW_SECONDS


# ---- recovery -----------------------------------------------------------------------------------


def signer(message: str, signature: str) -> str | None:
    """The EIP-55 address whose EIP-191 (personal_sign) signature of `message` is `signature`, or None
    for a malformed signature."""
    try:
        return str(Account.recover_message(encode_defunct(text=message), signature=signature))
    except Exception:  # malformed signature (bad v, s out of range, ...)
        return None


def typed_signer(typed_data: dict[str, Any], signature: str) -> str | None:
    """The EIP-55 address whose EIP-712 signature of `typed_data` is `signature` (an EOA's, as the
    contracts check it; a contract wallet's ERC-1271 signature is checked on-chain), or None when it
    cannot be recovered (bad length, v, r or s)."""
    try:
        return str(Account.recover_message(encode_typed_data(full_message=typed_data), signature=signature))
    except Exception:  # eth_keys raises BadSignature / ValueError for malformed values
        return None


def recovered(message: str, signature: str) -> str:
    """signer(), or 401 invalid_signature when the signature recovers to nobody."""
    found = signer(message, signature)
    if found is None:
        raise ServiceError(401, "invalid_signature", "the signature does not recover", param="signature")
    return found


def require_signer(
    message: str, signature: str, expected: str, *, param: str = "signature", named: str | None = None
) -> None:
    """401 signature_mismatch unless `expected` (EIP-55) signed `message`; the refusal names the signer
    found and `named` (default: the expected address)."""
    found = signer(message, signature)
    if found != expected:  # None: a well-formed signature of nobody (no key recovers from it)
        raise ServiceError(
            401,
            "signature_mismatch",
            f"the signature recovers to {found or 'no address'}, not to {named or expected}",
            param=param,
        )


# ---- the time window ----------------------------------------------------------------------------


def within_window(timestamp: int, now: float) -> bool:
    return abs(now - timestamp) <= WINDOW_SECONDS


# The same rule answers with two codes: the signed order moves and escrow hires have always said
# signature_expired, the link, mint and claim timestamp_out_of_window; clients branch on both.


def require_fresh(timestamp: int, now: float) -> None:
    """401 signature_expired unless `timestamp` is within the window."""
    if not within_window(timestamp, now):
        raise ServiceError(
            401,
            "signature_expired",
            f"timestamp must be within {WINDOW_SECONDS} s of the server's clock ({int(now)})",
            param="timestamp",
        )


def require_in_window(timestamp: int, now: float, *, param: str = "timestamp") -> None:
    """401 timestamp_out_of_window unless `timestamp` is within the window."""
    if not within_window(timestamp, now):
        raise ServiceError(
            401,
            "timestamp_out_of_window",
            f"timestamp must be within {WINDOW_SECONDS} s of the server clock ({int(now)})",
            param=param,
        )


# ---- once only ----------------------------------------------------------------------------------


def digest(message: str) -> str:
    """The once-only guard's key of a signed message: its SHA-256 hex."""
    return hashlib.sha256(message.encode()).hexdigest()


def _replayed() -> ServiceError:
    return ServiceError(409, "signature_replayed", "this signed message was already used", param="signature")


def use_once(conn: Conn, digest: str, now: float) -> None:
    """Record the signed message's one use, in the caller's write transaction (409 signature_replayed
    on a second)."""
    if not store.use(conn, digest, now + KEPT_SECONDS, now):
        raise _replayed()


def refuse_used(conn: Conn, digest: str, now: float) -> None:
    """409 signature_replayed when the message was used already (a read: nothing is recorded)."""
    if store.used(conn, digest, now):
        raise _replayed()


def give_back(conn: Conn, digest: str) -> None:
    """Forget a use: what the message asked for did not happen (nothing was sent), so it may be sent again."""
    store.forget(conn, digest)
