"""What a feature is to the process that hosts it: its operation rows, and what it installs.

A feature is one package under core/ (its rules, transactions, jobs and chain follower) and one under
api/ (its request models, its rows and their runs); the process loops over one list of them
(api.features.FEATURES): create_app mounts every feature's rows and starts what its install answers,
the indexer hands its follower the final events. Adding a feature is that package pair and one line
in the list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from api.operation import Operation, Toolset
from core.followers import Follower
from core.jobs import Job
from core.services import Services

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["Feature", "Parts"]


@dataclass(frozen=True)
class Parts:
    """What a feature's install made for this process, beside the context it registered in Services
    (services.provide): its background jobs (run by the process's JobRunner) and its start and stop."""

    jobs: tuple[Job, ...] = ()
    #: Awaited in this order when the app starts, before it serves (hire: settle what a crash left).
    starting: tuple[Callable[[], Awaitable[None]], ...] = ()
    #: Awaited in this order when the app shuts down (what `starting` began, the feature's clients).
    stopping: tuple[Callable[[], Awaitable[None]], ...] = ()


@dataclass(frozen=True)
class Feature:
    #: Its name (unique): the key of its parts in logs and in the layering rules.
    name: str
    #: Its rows of the operation table: routes, /api/schema, MCP tools and the SDKs come from them.
    operations: tuple[Operation, ...] = ()
    #: Makes the feature's context from the shared services (registered with services.provide, so runs
    #: find it by type) and answers what this process must run for it. Called once per API process.
    install: Callable[[Services], Parts] | None = None
    #: Its follower of final chain events, if it has one (None when the deployment lacks its contract).
    #: Called by the indexer with the indexer's services (no API reads or writer there).
    follower: Callable[[Services], Follower | None] | None = None
    #: What its HTTP side adds to the app beyond its rows, once: pages for people that are not operations
    #: (the dashboard's HTML, forms and assets: in no schema, no MCP tool; their handlers find the
    #: Services with api.http.services_of), middleware (checkout: the ACP version check and header echo
    #: on every /api/acp/ path, unknown ones included).
    http: Callable[[web.Application], None] | None = None
    #: The MCP toolset of its rows that name none themselves (Operation.toolset).
    toolset: Toolset | None = None
