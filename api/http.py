"""The HTTP plumbing every feature shares: where an app keeps its Services (services_of, the one seam
runs and quotes receive them through), JSON bodies, the public base-URL policy, the chain-unavailable
answer and the test seams.

Features import this module (and the other plumbing modules: errors, auth, idempotency, models,
operation, policy, feature) and core; never each other but the wallets. api.app fills the app once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from api.errors import ApiError
from api.operation import Reply
from core import errors
from core.config import Settings
from core.deployments import Deployment
from core.isotime import iso_utc
from core.jobs import JobRunner
from core.jsontext import RawJson, encode, usdc
from core.networks import LOCAL_CHAIN_ID
from core.outbox.dispatcher import Dispatcher
from core.services import Services
from core.store import Conn, database_of
from core.store.backend import reads_beside
from core.store.committer import GroupCommitter
from core.store.reads import READ_POOL_SIZE

__all__ = [
    "DISPATCHER",
    "JOBS",
    "NO_DEPLOYMENT",
    "PUBLIC_URL",
    "SERVICES",
    "A2aInfo",
    "Hooks",
    "McpInfo",
    "RawJson",
    "attach_database",
    "base_url",
    "chain_unavailable",
    "encode",
    "iso",
    "json_response",
    "ok",
    "reply",
    "services_of",
    "standalone_services",
    "usdc",
]

log = logging.getLogger("agentledger.api")

#: AGENTLEDGER_PUBLIC_URL: the base of every published link (never the caller's Host header).
PUBLIC_URL: web.AppKey[str] = web.AppKey("public_url", str)
#: The outbox dispatcher, woken by writers right after they commit a delivery.
DISPATCHER: web.AppKey[Dispatcher] = web.AppKey("dispatcher", Dispatcher)
#: The background jobs of this process (sweeps, dispatcher, anchorer): their state is in /healthz.
JOBS: web.AppKey[JobRunner] = web.AppKey("jobs", JobRunner)
#: What every operation's run receives (core.services): the process's shared parts.
SERVICES: web.AppKey[Services] = web.AppKey("services", Services)


def services_of(app: web.Application) -> Services:
    """What `app`'s runs and quotes receive: its Services (create_app's, or a partial app's:
    standalone_services)."""
    return app[SERVICES]


#: A partial app's deployment (the tests' wallet-only apps): the local chain, no contracts.
NO_DEPLOYMENT = Deployment(LOCAL_CHAIN_ID, "anvil", 0, "", "", True, {})


def attach_database(app: web.Application, services: Services, db: Conn, read_pool_size: int) -> None:
    """Give `services` the process's reads (on `db`, or a pool of `read_pool_size` beside it on
    PostgreSQL) and its one group committer (its own connection, synchronous=FULL), both closed with
    `app`."""
    reads = services.database_reads = reads_beside(db, size=read_pool_size)
    writer = services.database_writer = GroupCommitter(database_of(db))

    async def close(_app: web.Application) -> None:
        await writer.close()
        reads.close()

    app.on_cleanup.append(close)
    services.hooks = services.hooks or Hooks()


def standalone_services(
    app: web.Application,
    db: Conn,
    clock: Callable[[], float] = time.time,
    hooks: Hooks | None = None,
    *,
    read_pool_size: int = READ_POOL_SIZE,
) -> Services:
    """The Services of a partial app (tests put a few features together without create_app): the
    database's parts on `db`, the local chain without contracts; registered in `app`."""
    services = app[SERVICES] = Services(NO_DEPLOYMENT, Settings(), "", clock, hooks=hooks)
    attach_database(app, services, db, read_pool_size)
    return services


@dataclass(frozen=True)
class McpInfo:
    """The MCP endpoint this app serves (a part of its Services, provided by api.mcp), for the discovery
    documents: its path, the protocol revisions it speaks and the tool of each operation (operation id
    -> tool names)."""

    path: str
    versions: tuple[str, ...]
    tools: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class A2aInfo:
    """The A2A endpoint this app serves (a part of its Services, provided by api.hire.a2a), for the agent
    cards: the URL paths of its two bindings."""

    jsonrpc_path: str
    http_json_path: str


@dataclass
class Hooks:
    """Test seams, given to create_app; every field is None in production. Tests hold requests at
    these points (to race another one) or fail them there (a crash between two steps)."""

    #: Awaited by value-moving wallet POSTs once the Idempotency-Key is claimed, before the transaction.
    before_write: Callable[[web.Request], Awaitable[None]] | None = None
    #: Awaited by checkout complete once the session is complete_in_progress, before the chain checks.
    before_funding: Callable[[web.Request], Awaitable[None]] | None = None
    #: Called by checkout complete right after the funding receipt (a crash test exits the process here).
    after_funding: Callable[[], None] | None = None
    #: Called inside the order's transaction before it is written (a test raises here).
    before_order: Callable[[], None] | None = None


#: The ISO 8601 UTC formatter of every response (…T08:00:00.000Z).
iso = iso_utc


def ok(payload: dict[str, Any], status: int = 200) -> tuple[int, bytes]:
    """A transactional answer: (status, JSON bytes), as idempotency.execute stores it."""
    return status, encode(payload).encode()


def json_response(payload: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(status=status, body=encode(payload).encode(), content_type="application/json")


def base_url(request: web.Request) -> str:
    """The base of published links: AGENTLEDGER_PUBLIC_URL when set (required off a local chain),
    else the request's own scheme and host (local development only)."""
    configured = request.app.get(PUBLIC_URL)
    if configured:
        return configured.rstrip("/")
    return f"{request.scheme}://{request.host}"


def chain_unavailable(exc: BaseException) -> ApiError:
    """503 with a fixed message; the exception (it can carry the RPC URL with its API key, or
    internal host names) goes to the log only."""
    log.warning("chain node unavailable: %s", exc)
    return errors.chain_unavailable()


def reply(payload: dict[str, Any], status: int = 200) -> Reply:
    """An operation's JSON answer."""
    return Reply(status, encode(payload).encode())
