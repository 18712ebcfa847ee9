"""The HTTP plumbing every route module shares: the app keys of the service's parts, JSON bodies,
the public base-URL policy, the chain-unavailable answer and the test seams.

Route modules import this module (and the other plumbing modules: errors, auth, idempotency,
models, operation, policy) and core; never each other. api.app fills these keys once per app.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import BodyPartReader, web

from api.errors import ApiError
from api.operation import Reply
from core import errors
from core.deliverables import MAX_DELIVERABLE_BYTES, Deliverables, too_large
from core.deployments import Deployment
from core.isotime import iso_utc
from core.jobs import JobRunner
from core.jsontext import RawJson, encode, usdc
from core.liveness import Liveness
from core.operator import Operator
from core.outbox.dispatcher import Dispatcher
from core.services import Services
from core.store.committer import GroupCommitter
from core.store.reads import Reads

__all__ = [
    "ANCHOR_ADDRESS",
    "CHAIN_ID",
    "CLOCK",
    "DELIVERABLES",
    "DEPLOYMENT",
    "DISPATCHER",
    "HOOKS",
    "JOBS",
    "LIVENESS",
    "MCP_INFO",
    "OPERATOR",
    "PUBLIC_URL",
    "READS",
    "RPC_URL",
    "SERVICES",
    "WRITER",
    "Hooks",
    "McpInfo",
    "RawJson",
    "base_url",
    "chain_unavailable",
    "encode",
    "iso",
    "json_response",
    "ok",
    "read_capped",
    "reply",
    "services_of",
    "usdc",
    "wake_outbox",
]

log = logging.getLogger("agentledger.api")

#: Where reads run (core.store.reads): `await app[READS].run(fn)`, off the loop on PostgreSQL; fn
#: sees committed data only. A handler never holds a connection of its own.
READS: web.AppKey[Reads] = web.AppKey("reads", Reads)
#: Every write goes through the group committer (its own connection, synchronous=FULL).
WRITER: web.AppKey[GroupCommitter] = web.AppKey("writer", GroupCommitter)
#: The clock (seconds since the epoch); tests inject their own.
CLOCK: web.AppKey[Callable[[], float]] = web.AppKey("clock", Callable[[], float])  # type: ignore[arg-type]
#: The service's transaction sender (core.operator), built once by the runtime.
OPERATOR: web.AppKey[Operator] = web.AppKey("operator", Operator)
#: The chain the service's contracts live on (the audit log's anchors among them).
CHAIN_ID: web.AppKey[int] = web.AppKey("chain_id", int)
#: The AuditAnchor contract's address, shown to auditors.
ANCHOR_ADDRESS: web.AppKey[str] = web.AppKey("anchor_address", str)
DEPLOYMENT: web.AppKey[Deployment] = web.AppKey("deployment", Deployment)
RPC_URL: web.AppKey[str] = web.AppKey("rpc_url", str)
#: AGENTLEDGER_PUBLIC_URL: the base of every published link (never the caller's Host header).
PUBLIC_URL: web.AppKey[str] = web.AppKey("public_url", str)
#: The outbox dispatcher, woken by writers right after they commit a delivery.
DISPATCHER: web.AppKey[Dispatcher] = web.AppKey("dispatcher", Dispatcher)
#: The background jobs of this process (sweeps, dispatcher, anchorer): their state is in /healthz.
JOBS: web.AppKey[JobRunner] = web.AppKey("jobs", JobRunner)
#: The long-lived parts of this process and their health (core.liveness), shown in /healthz.
LIVENESS: web.AppKey[Liveness] = web.AppKey("liveness", Liveness)
#: What every operation's run receives (core.services): the process's shared parts.
SERVICES: web.AppKey[Services] = web.AppKey("services", Services)


def services_of(app: web.Application) -> Any:
    """What `app`'s runs receive: its Services; an app put together without one (a test's partial app)
    hands over itself, whose keys the runs not yet moved to Services read."""
    found = app.get(SERVICES)
    return app if found is None else found


#: Deliverables stored by CID and pinned to a Kubo node when one is configured (core.deliverables).
DELIVERABLES: web.AppKey[Deliverables] = web.AppKey("deliverables", Deliverables)


@dataclass(frozen=True)
class McpInfo:
    """The MCP endpoint this app serves (set by api.mcp), for the discovery documents: its path, the
    protocol revisions it speaks and the tool of each operation (operation id -> tool names)."""

    path: str
    versions: tuple[str, ...]
    tools: Mapping[str, tuple[str, ...]]


MCP_INFO: web.AppKey[McpInfo] = web.AppKey("mcp_info", McpInfo)


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


HOOKS: web.AppKey[Hooks] = web.AppKey("hooks", Hooks)

#: The ISO 8601 UTC formatter of every response (…T08:00:00.000Z).
iso = iso_utc


def ok(payload: dict[str, Any], status: int = 200) -> tuple[int, bytes]:
    """A transactional answer: (status, JSON bytes), as idempotency.execute stores it."""
    return status, encode(payload).encode()


def reply(payload: dict[str, Any], status: int = 200) -> Reply:
    """An operation's JSON answer."""
    return Reply(status, encode(payload).encode())


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


def wake_outbox(where: web.Request | web.Application) -> None:
    """Wake the outbox dispatcher (no-op without one): a delivery was just committed. `where`: the
    request, or the app an operation runs in (a transport that is not HTTP)."""
    found = where.config_dict.get(DISPATCHER) if isinstance(where, web.Request) else where.get(DISPATCHER)
    if found is not None:
        found.wake()


async def read_capped(part: BodyPartReader, limit: int | None = None) -> bytes:
    """The bytes of one multipart part, refused with 413 as soon as they pass `limit` (default: the
    largest deliverable); the multipart reader streams, so aiohttp's client_max_size does not bound it."""
    cap = MAX_DELIVERABLE_BYTES if limit is None else limit
    out = bytearray()
    while True:
        chunk = await part.read_chunk(64 * 1024)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > cap:
            raise too_large(len(out))
