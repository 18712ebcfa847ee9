"""Shared by the API tests: an injectable clock, one JSON call over real HTTP, and a client of a base URL."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import aiohttp
from aiohttp import web

from api import checkout
from api.app import add_jobs, install
from api.http import DISPATCHER, SERVICES, Hooks, services_of
from core.checkout.context import Checkout
from core.config import Settings
from core.deployments import Deployment
from core.jobs import JobRunner
from core.operator import Operator
from core.outbox.dispatcher import Dispatcher


@dataclass
class Clock:
    """The app's clock, moved by the test."""

    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]
    raw: bytes


async def call(
    session: aiohttp.ClientSession,
    url: str,
    method: str,
    body: Any = None,
    *,
    key: str | None = None,
    idem: str | None = None,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> Reply:
    """`body` as given when bytes or str, else as JSON; numbers in the reply parsed as Decimal."""
    h = dict(headers or {})
    if key is not None:
        h["Authorization"] = f"Bearer {key}"
    if idem is not None:
        h["Idempotency-Key"] = idem
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    async with session.request(method, url, data=data, headers=h, params=params) as resp:
        raw = await resp.read()
        parsed = json.loads(raw, parse_float=Decimal) if raw else {}
        return Reply(resp.status, parsed, dict(resp.headers), raw)


@dataclass
class Client:
    """A server's base URL on a real HTTP session; test harnesses extend it with their own fields."""

    session: aiohttp.ClientSession
    base: str

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        idem: str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> Reply:
        return await call(
            self.session, self.base + path, method, body, key=key, idem=idem, headers=headers, params=params
        )


def install_checkout(
    app: web.Application,
    deployment: Deployment,
    operator: Operator,
    clock: Callable[[], float] = time.time,
    *,
    settings: Settings | None = None,
    hooks: Hooks | None = None,
) -> Checkout:
    """The checkout feature in a piecewise test app (over add_wallet_routes' Services, given the
    deployment and operator; webhooks may reach loopback), installed as create_app installs it; it wakes
    the app's outbox dispatcher when one is hosted (mount_dispatcher first)."""
    wallets = services_of(app)
    services = app[SERVICES] = replace(
        wallets,
        deployment=deployment,
        settings=settings or Settings(),
        clock=clock,
        operator_sender=operator,
        allow_private=True,
        hooks=hooks or wallets.hooks,
    )
    if DISPATCHER in app:
        services.wake = app[DISPATCHER].wake
    install(app, (checkout.FEATURE,))
    return services.part(Checkout)


def mount_dispatcher(app: web.Application, dispatcher: Dispatcher) -> Dispatcher:
    """Host an outbox dispatcher in a piecewise test app, as create_app hosts its jobs."""
    add_jobs(app, JobRunner(services=[dispatcher]))
    return dispatcher
