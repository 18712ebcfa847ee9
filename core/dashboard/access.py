"""Who is looking: dashboard sessions, CSRF tokens and the operator check.

A browser signs in with an API key once; the service answers a session cookie (`agls_` + 43
url-safe characters, 256 random bits) and stores only its SHA-256, bound to the key's hash, a
CSRF token and an expiry (SESSION_TTL). Every later request presents the cookie; the key itself
never travels again and never appears in a URL. The session follows its key: a revoked key ends
every session it opened (the key row is read on each request, uncached). Sign-out deletes the row.

Signing in needs the key's 'read' scope (the pages show what the API's reads show). The operator's
view needs an operator key: one the operator issued with `python -m scripts.issue_key --operator`
(api_keys.operator). That is a power apart from the key scope 'admin' (core.keys), which manages the
key's own account: every key issued before scopes existed has every scope, 'admin' included, and
must not open the service-wide view. `require_operator` is the one place that decides.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from core.errors import ServiceError
from core.keys import KEY_RE, Caller, hash_api_key
from core.store import Conn
from core.store import dashboard as store
from core.store import wallets as wallet_store

#: A session lasts this long after sign-in (seconds), whatever the activity: then sign in again.
SESSION_TTL = 12 * 3600.0
TOKEN_PREFIX = "agls_"  # noqa: S105 (a prefix, not a secret)
TOKEN_RE = re.compile(r"agls_[A-Za-z0-9_-]{43}")


@dataclass(frozen=True)
class Viewer:
    """A signed-in browser: the caller its key stands for, whether that key is an operator key, the
    session's CSRF token and when the session ends."""

    caller: Caller
    operator: bool
    csrf: str
    expires_at: float


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _caller(conn: Conn, key_hash: str) -> Caller | None:
    row = wallet_store.get_api_key(conn, key_hash)  # revoked keys are not found
    if row is None or not hmac.compare_digest(row.key_hash, key_hash):
        return None
    scopes = None if row.scopes is None else frozenset(row.scopes.split())
    return Caller(row.key_hash, row.account_id, row.agent_id, scopes, row.daily_cap)


def sign_in(conn: Conn, key: str, now: float) -> tuple[str, Viewer]:
    """Open a session for `key` (in the caller's write transaction): (cookie token, viewer).
    401 `invalid_api_key` for a malformed, unknown or revoked key, with nothing written."""
    key = key.strip()
    caller = _caller(conn, hash_api_key(key)) if KEY_RE.fullmatch(key) else None
    if caller is None:
        raise ServiceError(401, "invalid_api_key", "that API key is not valid", param="key")
    if not caller.has_scope("read"):
        raise ServiceError(403, "insufficient_scope", "the dashboard needs a key with the 'read' scope", param="key")
    store.prune_sessions(conn, now)
    token, csrf = new_token(), secrets.token_urlsafe(32)
    expires = now + SESSION_TTL
    store.insert_session(conn, token_hash(token), caller.key_hash, csrf, now, expires)
    return token, Viewer(caller, is_operator(conn, caller), csrf, expires)


def viewer(conn: Conn, token: str | None, now: float) -> Viewer | None:
    """The signed-in viewer of a session cookie; None when there is none, it expired, or its key
    was revoked."""
    if token is None or not TOKEN_RE.fullmatch(token):
        return None
    row = store.get_session(conn, token_hash(token))
    if row is None or row.expires_at <= now:
        return None
    caller = _caller(conn, row.key_hash)
    if caller is None:
        return None
    return Viewer(caller, is_operator(conn, caller), row.csrf, row.expires_at)


def sign_out(conn: Conn, token: str) -> None:
    if TOKEN_RE.fullmatch(token):
        store.delete_session(conn, token_hash(token))


def csrf_ok(expected: str, given: str | None) -> bool:
    """The form's token is the session's (constant-time)."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def is_operator(conn: Conn, caller: Caller) -> bool:
    """Whether `caller` may open the operator's view: a key issued with `issue_key --operator`
    (api_keys.operator), whatever its scopes."""
    return store.key_is_operator(conn, caller.key_hash)


def require_operator(conn: Conn, caller: Caller) -> None:
    """The one operator check: 403 `operator_key_required` otherwise (a key with every scope, 'admin'
    included, but no operator flag is refused)."""
    if not is_operator(conn, caller):
        raise ServiceError(
            403,
            "operator_key_required",
            "the operator's view needs an operator key (issue_key --operator)",
            param="key",
        )
