"""The aiohttp application factory: one place where the service's parts are put together.

create_app builds the plumbing once (metrics, the service's own documents, the database's reads and
its one group committer, the Services every run receives, the Operator, the outbox dispatcher), then
loops over the features (api.features.FEATURES): mounts each one's rows, calls its install, and hosts
the jobs they answer in one runner whose state /healthz shows. The Operator is built once, by the
caller (the runtime) or here, and handed to the runs and the jobs alike, so every transaction of the
operator key shares one nonce sequence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from aiohttp import web
from web3 import Web3

from api.agent_card import add_agent_card_routes
from api.errors import ACCEPTS, ApiRequestHandler, error_middleware
from api.feature import Feature, Parts
from api.features import FEATURES
from api.health import add_health_routes
from api.http import DISPATCHER, JOBS, PUBLIC_URL, SERVICES, Hooks, attach_database, services_of
from api.mcp import add_mcp_routes
from api.metrics import Metrics, add_metrics_routes, observer
from api.openapi import add_schema_routes
from api.operation import Operation
from api.operation_table import table
from api.policy import add_policy, mount
from core import anchoring
from core.config import Settings
from core.deployments import Deployment
from core.egress import allow_private_for
from core.jobs import DailyAt, Every, Job, JobRunner
from core.liveness import Liveness
from core.networks import LOCAL_CHAIN_ID
from core.operator import Operator, operator_account
from core.outbox.dispatcher import Dispatcher
from core.outbox.email import channel_for
from core.services import Services
from core.store import Conn, ProcessLock, database_of

__all__ = ["accepts", "add_jobs", "create_app", "install", "make_runner"]


def accepts(table: tuple[Operation, ...]) -> dict[tuple[str, str], tuple[str, ...]]:
    """The request media types of every route of `table` (api.errors.ACCEPTS): JSON, and the forms a
    row names."""
    return {(op.method, op.path): ("application/json", *op.request_forms) for op in table}


class _Server(web.Server):
    def __call__(self) -> web.RequestHandler:
        return ApiRequestHandler(self, loop=self._loop, **self._kwargs)


class ApiRunner(web.AppRunner):
    """web.AppRunner whose connections answer HTTP the parser refuses in the error shape
    (api.errors.ApiRequestHandler) instead of aiohttp's plain text."""

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return _Server(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )


def make_runner(app: web.Application, **kwargs: Any) -> web.AppRunner:
    """The runner to serve `app` with (the runtime's and the tests'): web.AppRunner's arguments."""
    return ApiRunner(app, **kwargs)


def add_jobs(app: web.Application, runner: JobRunner) -> JobRunner:
    """Host `runner` in `app`: started with it, stopped before its connections close, a part of the app's
    Services (/healthz shows it); its outbox dispatcher (if it has one) is what writers wake."""
    app[JOBS] = runner
    services = app.get(SERVICES)
    if services is not None:
        services.provide(runner)
    for service in runner.services:
        if isinstance(service, Dispatcher):
            app[DISPATCHER] = service
            if services is not None:
                services.wake = service.wake

    async def start(_app: web.Application) -> None:
        await runner.start()

    async def stop(_app: web.Application) -> None:
        await runner.stop()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    return runner


def install(app: web.Application, features: tuple[Feature, ...]) -> list[Parts]:
    """Mount each feature's rows and what its HTTP side adds on `app` and call its install with the app's Services; what
    each install answered (its jobs, its start and stop), in the features' order."""
    services = services_of(app)
    installed = []
    for feature in features:
        mount(app, feature.operations)
        if feature.http is not None:
            feature.http(app)
        parts = Parts() if feature.install is None else feature.install(services)
        _start_and_stop(app, parts)
        installed.append(parts)
    return installed


def _start_and_stop(app: web.Application, parts: Parts) -> None:
    """Await what a feature starts and stops with the app (in its order) when the app does."""

    async def start(_app: web.Application) -> None:
        for step in parts.starting:
            await step()

    async def stop(_app: web.Application) -> None:
        for step in parts.stopping:
            await step()

    if parts.starting:
        app.on_startup.append(start)
    if parts.stopping:
        app.on_shutdown.append(stop)


def create_app(
    deployment: Deployment,
    rpc_url: str,
    db: Conn | None = None,
    *,
    public_url: str | None = None,
    settings: Settings | None = None,
    clock: Callable[[], float] = time.time,
    operator: Operator | None = None,
    hooks: Hooks | None = None,
    anchor_log: bool = False,
    sweep_interval: float | Literal["declared"] | None = "declared",
    features: tuple[Feature, ...] = FEATURES,
) -> web.Application:
    """The service. Without `db`: health, schema, agent card and /metrics only. With it: every feature of
    `features` (api.features.FEATURES: wallets, decision logging and its verification, the audit log,
    escrow checkout and orders, deliverables, hire, the drop, the dashboard), the MCP endpoint over all
    their rows, and the background jobs. `public_url` (default: settings.public_url, else the request's
    own scheme and host) makes published URLs absolute behind a proxy; `operator` defaults to one built
    from settings.operator_key (anvil's development key on a local chain only); `hooks` are test seams;
    `anchor_log` schedules the anchor of the audit log (daily, or every settings.anchor_interval: the
    runtime's choice); a `sweep_interval` of None leaves the checkout sweep to the caller (tests), a
    number overrides its declared interval."""
    settings = settings or Settings()
    public_url = public_url or settings.public_url or None
    if public_url is None and db is not None and deployment.chain_id != LOCAL_CHAIN_ID:
        # Published links (verification_url, /verify, discovery documents cached for an hour) would
        # otherwise come from the caller's Host header.
        raise ValueError(f"set AGENTLEDGER_PUBLIC_URL: it is required on chain {deployment.chain_id}")
    rows = table(features)
    metrics = Metrics()
    app = web.Application(middlewares=[observer(metrics, access_log=settings.log_format == "json"), error_middleware])
    app[ACCEPTS] = accepts(rows)
    add_metrics_routes(app, metrics, token=settings.metrics_token)
    if public_url:
        app[PUBLIC_URL] = public_url
    services = app[SERVICES] = Services(deployment, settings, rpc_url, clock, public_url=public_url, hooks=hooks)
    add_health_routes(app)
    add_schema_routes(app, rows)
    add_agent_card_routes(app)
    if db is None:
        return app
    chain_id = deployment.chain_id
    attach_database(app, services, db, settings.read_pool_size)
    services.allow_private = allow_private = allow_private_for(settings.webhook_allow_private, chain_id)
    if operator is None:
        account = operator_account(settings.operator_key, chain_id)
        operator = Operator(
            # No connection check: the API starts while the node is down (healthz and 503s tell).
            Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30})),
            account,
            deployment.contracts,
            deployment.usdc,
            send_lock=ProcessLock(database_of(db), f"operator-{account.address}").held,
        )
    services.operator_sender = operator
    writer = services.writer
    metrics.watch(writer)
    mail = channel_for(
        settings.smtp_url, sender=settings.smtp_from, ca_file=settings.smtp_ca_file, data_dir=settings.data_dir
    )
    dispatcher = Dispatcher(database_of(db), clock, allow_private=allow_private, channels=[mail])
    services.wake = dispatcher.wake
    installed = install(app, features)
    add_mcp_routes(app, rows)  # after every feature: the tools are the table's rows
    add_policy(app, rows)  # the limits of keys (scopes, daily caps), for HTTP as for MCP
    jobs = _chosen([job for parts in installed for job in parts.jobs], sweep_interval)
    if anchor_log and "AuditAnchor" in deployment.contracts:
        every = Every(settings.anchor_interval) if settings.anchor_interval > 0 else DailyAt(settings.anchor_time_utc)
        jobs.append(Job("anchor", every, lambda: anchoring.anchor_once(operator, database_of(db))))
    runner = add_jobs(app, JobRunner(jobs, [dispatcher], clock=clock, writer=writer))
    services.provide(Liveness({"writer": writer.health, "outbox": dispatcher.health, "jobs": runner.health}))
    return app


def _chosen(jobs: list[Job], sweep_interval: float | Literal["declared"] | None) -> list[Job]:
    """The features' jobs as the caller chose: tests leave the checkout sweep to themselves (None) or
    time it (a number); every other job as its feature declared it."""
    if sweep_interval == "declared":
        return jobs
    if sweep_interval is None:
        return [job for job in jobs if job.name != "checkout-sweep"]
    return [replace(job, schedule=Every(sweep_interval)) if job.name == "checkout-sweep" else job for job in jobs]
