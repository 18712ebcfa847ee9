"""The agent wallet API under /api/agents (routes), its models and its operation rows."""

from __future__ import annotations

import time
from collections.abc import Callable

from aiohttp import web

from api.errors import error_middleware
from api.feature import Feature
from api.http import Hooks, standalone_services
from api.policy import add_policy, mount
from api.wallets.operations import OPERATIONS
from core.store import Conn
from core.store.reads import READ_POOL_SIZE

__all__ = ["FEATURE", "add_wallet_routes", "create_wallet_app"]

#: Every feature's neighbour: its runs need only the shared services (reads, writer, clock, hooks).
FEATURE = Feature("wallets", tuple(OPERATIONS), toolset="wallet")


def add_wallet_routes(
    app: web.Application,
    db: Conn,
    clock: Callable[[], float] = time.time,
    hooks: Hooks | None = None,
    *,
    read_pool_size: int = READ_POOL_SIZE,
) -> None:
    """A partial app's wallet API (tests, benchmarks): its Services on `db` (api.http.standalone_services)
    and the wallet rows. `hooks`: test seams (api.http.Hooks). The service's app is create_app's."""
    standalone_services(app, db, clock, hooks, read_pool_size=read_pool_size)
    mount(app, OPERATIONS)


def create_wallet_app(db: Conn, clock: Callable[[], float] = time.time, hooks: Hooks | None = None) -> web.Application:
    """The wallet routes alone (no chain), for tests: without the metrics observer, with the key policy
    (an agent-scoped key's limits, scopes, daily caps) over these routes as api.app.create_app mounts
    it over every route. Nothing deployable serves this app; the benchmarks serve create_app
    (benchmarks._kit.API_SERVER)."""
    app = web.Application(middlewares=[error_middleware])
    add_wallet_routes(app, db, clock, hooks)
    add_policy(app, OPERATIONS)
    return app
