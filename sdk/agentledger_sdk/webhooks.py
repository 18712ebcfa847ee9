"""Checking the signatures agentledger puts on what it sends you: webhooks (order, job, decision and
listing events) and the hire jobs it POSTs to a provider's endpoint. No network, no dependencies.

Every signed request carries two signatures over the same exact body bytes, keyed with the secret's
UTF-8 bytes (the ``webhook_secret`` / ``signingSecret`` the service showed you once):

- ``X-Service-Signature: sha256=<hex HMAC-SHA256 of the body>``: ``verify_service``;
- Standard Webhooks (https://www.standardwebhooks.com): ``webhook-id`` (the event id, the same on
  every retry: deduplicate on it), ``webhook-timestamp`` (unix seconds of this attempt) and
  ``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``: ``verify_standard``,
  which also refuses a timestamp more than ``tolerance`` seconds from now (a replay).

Both take the secret as the service showed it: plain, or in Standard Webhooks' "whsec_<base64>" form
(a hire service's ``signingSecret``).

Check the raw body bytes as received, before parsing them.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import time
from collections.abc import Mapping

__all__ = ["DEFAULT_TOLERANCE", "verify_service", "verify_standard"]

#: Seconds a Standard Webhooks timestamp may be away from now (the specification's default).
DEFAULT_TOLERANCE = 300


def _keys(secret: str) -> list[bytes]:
    """The HMAC keys `secret` may stand for: its UTF-8 bytes, and what a "whsec_" form decodes to."""
    keys = [secret.encode("utf-8")]
    if secret.startswith("whsec_"):
        with contextlib.suppress(ValueError):
            keys.insert(0, base64.b64decode(secret.removeprefix("whsec_"), validate=True))
    return keys


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def verify_service(body: bytes, secret: str, header: str) -> bool:
    """True when ``header`` (the X-Service-Signature value) is "sha256=" + the hex HMAC-SHA256 of ``body``."""
    got = header.encode("utf-8", "replace")
    return any(hmac.compare_digest(("sha256=" + _hmac(k, body).hex()).encode(), got) for k in _keys(secret))


def verify_standard(
    body: bytes,
    secret: str,
    headers: Mapping[str, str],
    *,
    now: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> bool:
    """True when the three Standard Webhooks headers are present (names in any case), the timestamp
    is within ``tolerance`` seconds of ``now`` (default: the clock) and one of the space-separated v1
    signatures matches. ``secret`` is the service's secret as shown, or its "whsec_" form."""
    lower = {k.lower(): v for k, v in headers.items()}
    event_id, ts, sigs = lower.get("webhook-id"), lower.get("webhook-timestamp"), lower.get("webhook-signature")
    if not event_id or not ts or not sigs or not ts.isascii() or not ts.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(ts)) > tolerance:
        return False
    signed = f"{event_id}.{ts}.".encode() + body
    given = [s.encode("utf-8", "replace") for s in sigs.split(" ") if s]
    for key in _keys(secret):
        expected = ("v1," + base64.b64encode(_hmac(key, signed)).decode()).encode()
        if any(hmac.compare_digest(expected, s) for s in given):
            return True
    return False
