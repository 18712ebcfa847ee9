"""API keys: `Authorization: Bearer aglk_<32 hex>`.

A key is shown once, when it is created; only its SHA-256 (hex) is stored. A request's key is
hashed, the row looked up by that hash, and the stored hash compared with hmac.compare_digest.
A key is scoped to an account (every agent of it) or to one agent. An agent the caller may not
act for answers 404 `agent_not_found`, exactly like a wallet that does not exist, so a key never
learns whether another account's wallet exists.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

import apsw
from aiohttp import web

from api.errors import ApiError
from core.store import wallets as store
from core.store.wallets import AgentRow

KEY_PREFIX = "aglk_"
_KEY_RE = re.compile(r"aglk_[0-9a-f]{32}")


@dataclass(frozen=True)
class Caller:
    key_hash: str
    account_id: str
    agent_id: str | None  # None: the key acts for every agent of the account


class AuthError(ApiError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(401, code, message, type_="invalid_request", param="Authorization")

    def response(self) -> web.Response:
        resp = super().response()
        resp.headers["WWW-Authenticate"] = 'Bearer realm="agentledger"'
        return resp


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_hex(16)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not _KEY_RE.fullmatch(token.strip()):
        raise AuthError("malformed_api_key", "Authorization must be 'Bearer aglk_' followed by 32 lowercase hex")
    return token.strip()


def authenticate_optional(db: apsw.Connection, request: web.Request) -> Caller | None:
    """The caller of `request`, or None when it sent no Authorization header (a bad key is a 401)."""
    key = _bearer(request)
    if key is None:
        return None
    digest = hash_api_key(key)
    row = store.get_api_key(db, digest)
    if row is None or not hmac.compare_digest(row.key_hash, digest):
        raise AuthError("invalid_api_key", "the API key is not valid")
    return Caller(row.key_hash, row.account_id, row.agent_id)


def authenticate(db: apsw.Connection, request: web.Request) -> Caller:
    """The caller of `request`; 401 without a valid key."""
    caller = authenticate_optional(db, request)
    if caller is None:
        raise AuthError("missing_api_key", "this endpoint needs 'Authorization: Bearer <api key>'")
    return caller


def agent_for(db: apsw.Connection, caller: Caller, wallet: str, param: str = "agentId") -> AgentRow:
    """The agent `wallet` if the caller may act for it; 404 otherwise (existence is not leaked)."""
    agent = store.agent_by_wallet(db, wallet)
    allowed = (
        agent is not None
        and agent.account_id == caller.account_id
        and (caller.agent_id is None or caller.agent_id == agent.uuid)
    )
    if agent is None or not allowed:
        raise ApiError(404, "agent_not_found", f"no agent {wallet} for this API key", param=param)
    return agent


def require_account_scope(caller: Caller) -> None:
    if caller.agent_id is not None:
        raise ApiError(
            403, "insufficient_scope", "an agent-scoped API key cannot register agents", param="Authorization"
        )
