"""Authenticating a request: `Authorization: Bearer aglk_<32 hex>` (the format is core.keys').

A key is shown once, when it is created; only its SHA-256 (hex) is stored. A request's key is
hashed, the row looked up by that hash, and the stored hash compared with hmac.compare_digest.
A key is scoped to an account (every agent of it) or to one agent. An agent the caller may not
act for answers 404 `agent_not_found`, exactly like a wallet that does not exist, so a key never
learns whether another account's wallet exists (or, scoped to one agent, its siblings). What else an
agent-scoped key reaches is core.keys.Caller.reach, applied by `reach` and, for a row touching the
account as a whole, by api.policy.authorize.

Both lookups are on every request's path, so both are cached:

- valid keys (never unknown ones, so a new key works at once): at most CACHE_SIZE entries, each
  trusted for KEY_CACHE_TTL seconds;
- agents, only as committed: agent_for notes what it read from the database in `fresh`, and its
  caller hands that to remember_agents() once its transaction has committed, so an agent whose
  registration rolled back is never served from the cache. An agent changes account only when it
  is sold (core.marketplace.handover), which advances the database's auth_epoch in the same
  transaction: a cache hit is served only at the epoch its entries were read at (one indexed read
  per hit), so a seller's key stops acting for a sold agent at the commit, in every process.

Both drop everything when this process writes api_keys (or, in future, changes an agent; see
core.store.wallets.auth_generation) and on clear_auth_caches(). A future revocation calls
clear_auth_caches() once its transaction has committed (a lookup between its write and its
commit still reads the old row); a key revoked by another process stops working within the TTL.
"""

from __future__ import annotations

import hmac
import threading
import time
import weakref

from aiohttp import web

from api.errors import ApiError
from api.http import base_url
from core.keys import KEY_RE, Caller, hash_api_key
from core.store import Conn
from core.store import wallets as store
from core.store.reads import Reads
from core.store.wallets import AgentRow

__all__ = [
    "AuthError",
    "Caller",
    "FreshAgents",
    "account_key_required",
    "agent_for",
    "authenticate",
    "authenticate_optional",
    "clear_auth_caches",
    "lookup_key",
    "reach",
    "remember_agents",
    "resource_metadata_url",
]


#: RFC 9728 protected-resource metadata of the REST API (the MCP endpoint's adds its own path).
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"


def resource_metadata_url(request: web.Request, resource_path: str = "") -> str:
    """Where the RFC 9728 metadata of the resource at `resource_path` ("" the API) is served."""
    return base_url(request) + PROTECTED_RESOURCE_PATH + resource_path


class AuthError(ApiError):
    """401 with a Bearer challenge naming the RFC 9728 metadata document when it is known."""

    def __init__(self, code: str, message: str, resource_metadata: str | None = None) -> None:
        challenge = 'Bearer realm="agentledger"'
        if resource_metadata is not None:
            challenge += f', resource_metadata="{resource_metadata}"'
        super().__init__(
            401,
            code,
            message,
            type_="invalid_request",
            param="Authorization",
            headers={"WWW-Authenticate": challenge},
        )


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not KEY_RE.fullmatch(token.strip()):
        raise AuthError(
            "malformed_api_key",
            "Authorization must be 'Bearer aglk_' followed by 32 lowercase hex",
            resource_metadata_url(request),
        )
    return token.strip()


CACHE_SIZE = 4096
KEY_CACHE_TTL = 30.0


class _Cache:
    """One connection's cached rows and the auth generation they were read at."""

    __slots__ = ("agents", "epoch", "generation", "keys")

    def __init__(self) -> None:
        self.keys: dict[str, tuple[Caller, float]] = {}  # key hash -> (caller, trusted until)
        self.agents: dict[str, AgentRow] = {}  # wallet -> agent
        self.generation = store.auth_generation()
        self.epoch: int | None = None  # the auth_epoch the cached agents were read at


#: Keyed by what the rows were read through: the process's Reads (keys) or the committer's
#: connection (agents, remembered after its commits). Only the loop and the committer's thread
#: create entries, under the lock.
_caches: weakref.WeakKeyDictionary[Reads | Conn, _Cache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache(owner: Reads | Conn) -> _Cache:
    with _caches_lock:
        cache = _caches.get(owner)
        if cache is None or cache.generation != store.auth_generation():
            cache = _caches[owner] = _Cache()
        return cache


def clear_auth_caches() -> None:
    """Forget every cached key and agent (call after committing a change to an existing one)."""
    with _caches_lock:
        _caches.clear()


async def _lookup(reads: Reads, digest: str) -> Caller | None:
    cache = _cache(reads).keys  # touched on the loop only: the read below is the one thing off it
    now = time.monotonic()
    hit = cache.pop(digest, None)
    if hit is not None and hit[1] > now:
        cache[digest] = hit  # back in, as the newest: the oldest is evicted first
        return hit[0]
    row = await reads.run(lambda db: store.get_api_key(db, digest))
    if row is None or not hmac.compare_digest(row.key_hash, digest):
        return None
    caller = Caller(
        row.key_hash,
        row.account_id,
        row.agent_id,
        None if row.scopes is None else frozenset(row.scopes.split()),
        row.daily_cap,
        row.mcp_toolsets,
    )
    if len(cache) >= CACHE_SIZE:
        del cache[next(iter(cache))]  # the least recently used
    cache[digest] = (caller, now + KEY_CACHE_TTL)
    return caller


async def authenticate_optional(reads: Reads, request: web.Request) -> Caller | None:
    """The caller of `request`, or None when it sent no Authorization header (a bad key is a 401)."""
    key = _bearer(request)
    if key is None:
        return None
    caller = await lookup_key(reads, key)
    if caller is None:
        raise AuthError("invalid_api_key", "the API key is not valid", resource_metadata_url(request))
    return caller


async def lookup_key(reads: Reads, key: str) -> Caller | None:
    """The caller of a well-formed key (`aglk_` + 32 hex), None for an unknown one (cached as above)."""
    return await _lookup(reads, hash_api_key(key))


async def authenticate(reads: Reads, request: web.Request) -> Caller:
    """The caller of `request`; 401 without a valid key."""
    caller = await authenticate_optional(reads, request)
    if caller is None:
        raise AuthError(
            "missing_api_key", "this endpoint needs 'Authorization: Bearer <api key>'", resource_metadata_url(request)
        )
    return caller


class FreshAgents(list[AgentRow]):
    """Agents agent_for read from the database in one transaction (for remember_agents), and the
    auth generation when it began: a change to auth rows in between keeps them out of the cache."""

    def __init__(self) -> None:
        super().__init__()
        self.generation = store.auth_generation()
        self.epoch: int | None = None  # auth_epoch, read before the first agent row


def agent_for(
    db: Conn, caller: Caller, wallet: str, param: str = "agentId", *, fresh: FreshAgents | None = None
) -> AgentRow:
    """The agent `wallet` if the caller may act for it; 404 otherwise (existence is not leaked).
    Served from the cache of committed agents when it is there; otherwise read from `db` and, when
    `fresh` is given, appended to it (for remember_agents() after the commit)."""
    cache = _caches.get(db)
    agent = None
    if cache is not None and cache.generation == store.auth_generation() and cache.agents:
        epoch = store.auth_epoch(db)
        if cache.epoch != epoch:  # an agent changed hands since these were read
            cache.agents.clear()
        agent = cache.agents.get(wallet)
    if agent is None:
        if fresh is not None and fresh.epoch is None:
            fresh.epoch = store.auth_epoch(db)  # before the row: a change in between only costs a miss
        agent = store.agent_by_wallet(db, wallet)
        if agent is not None and fresh is not None:
            fresh.append(agent)
    if agent is None or not caller.may_act_for(agent.account_id, agent.uuid):
        raise ApiError(404, "agent_not_found", f"no agent {wallet} for this API key", param=param)
    return agent


def remember_agents(db: Conn, agents: FreshAgents) -> None:
    """Cache `agents` for agent_for on `db`: only rows read in a transaction that has committed."""
    if not agents or agents.generation != store.auth_generation() or agents.epoch is None:
        return
    found = _cache(db)
    if found.epoch != agents.epoch:
        if found.epoch is not None and found.epoch > agents.epoch:
            return  # read before a later change of hands: not worth keeping
        found.agents.clear()
        found.epoch = agents.epoch
    cache = found.agents
    for agent in agents:
        if len(cache) >= CACHE_SIZE:
            del cache[next(iter(cache))]  # the oldest
        cache[agent.wallet] = agent


def account_key_required(what: str) -> ApiError:
    """403 for an agent-scoped key asking for something of its account as a whole (`what`)."""
    return ApiError(
        403,
        "account_key_required",
        f"{what} needs an account key: this API key is scoped to one agent",
        param="Authorization",
    )


def reach(caller: Caller, account_id: str, holder_agent: str | None, absent: ApiError, what: str) -> None:
    """Let `caller` reach a thing of account `account_id` held by its agent `holder_agent` (None: by the
    account) or refuse as core.keys.Caller.reach says: `absent` (a 404 naming the thing, the same answer
    as for one that does not exist) or 403 account_key_required (`what`: the thing, in words)."""
    found = caller.reach(account_id, holder_agent)
    if found == "absent":
        raise absent
    if found == "account_key_required":
        raise account_key_required(what)
