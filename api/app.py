"""The aiohttp application factory: one place where the service's parts are put together.

create_app builds the Services once, installs each feature (api.feature: its context, its rows,
its jobs), mounts every route module, and hosts this process's background jobs (core.jobs: the outbox dispatcher, the
checkout sweep, the IPFS pin job, and the daily anchor when asked for) in one runner whose state
/healthz shows. The Operator is built once, by the caller (the runtime) or here, and handed to
the routes and the jobs alike, so every transaction of the operator key shares one nonce sequence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from aiohttp import web
from web3 import Web3

from api import checkout, hire, marketplace
from api.agent_card import add_agent_card_routes
from api.audit_routes import add_audit_routes
from api.dashboard import add_dashboard_routes
from api.decisions import add_decision_routes
from api.errors import ACCEPTS, ApiRequestHandler, error_middleware
from api.feature import Feature, Parts
from api.health import add_health_routes
from api.http import (
    DEPLOYMENT,
    DISPATCHER,
    HOOKS,
    JOBS,
    LIVENESS,
    OPERATOR,
    PUBLIC_URL,
    READS,
    RPC_URL,
    SERVICES,
    WRITER,
    Hooks,
)
from api.ipfs_gateway import add_ipfs_routes
from api.mcp import add_mcp_routes
from api.metrics import Metrics, add_metrics_routes, observer
from api.openapi import add_schema_routes
from api.operation import Operation
from api.operation_table import OPERATIONS
from api.policy import add_policy, mount
from api.verification import add_verification_routes
from api.wallets import add_wallet_routes
from core import anchoring
from core.checkout.sweep import SWEEP_INTERVAL
from core.config import Settings
from core.deployments import Deployment
from core.egress import allow_private_for
from core.jobs import DailyAt, Every, Job, JobRunner, Service
from core.liveness import Liveness
from core.networks import LOCAL_CHAIN_ID
from core.operator import Operator, operator_account
from core.outbox.dispatcher import Dispatcher
from core.outbox.email import channel_for
from core.services import Services
from core.store import Conn, ProcessLock, database_of

__all__ = ["accepts", "add_jobs", "create_app", "install_feature", "make_runner"]


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
    """Host `runner` in `app`: started with it, stopped before its connections close; its outbox
    dispatcher (if it has one) is what writers wake."""
    app[JOBS] = runner
    for service in runner.services:
        if isinstance(service, Dispatcher):
            app[DISPATCHER] = service

    async def start(_app: web.Application) -> None:
        await runner.start()

    async def stop(_app: web.Application) -> None:
        await runner.stop()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    return runner


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
    anchor_daily: bool = False,
    sweep_interval: float | None = SWEEP_INTERVAL,
) -> web.Application:
    """The service. Without `db`: health, schema, agent card and /metrics only. With it: wallets,
    decision logging and its verification, the audit log, escrow checkout and orders, deliverables,
    the dashboard, and the background jobs. `public_url` (default: settings.public_url, else the
    request's own scheme and host) makes published URLs absolute behind a proxy; `operator` defaults to one built from
    settings.operator_key (anvil's development key on a local chain only); `hooks` are test seams;
    `anchor_daily` schedules the daily anchor of the audit log (the runtime's choice); a
    `sweep_interval` of None leaves the checkout sweep to the caller (tests)."""
    settings = settings or Settings()
    public_url = public_url or settings.public_url or None
    if public_url is None and db is not None and deployment.chain_id != LOCAL_CHAIN_ID:
        # Published links (verification_url, /verify, discovery documents cached for an hour) would
        # otherwise come from the caller's Host header.
        raise ValueError(f"set AGENTLEDGER_PUBLIC_URL: it is required on chain {deployment.chain_id}")
    metrics = Metrics()
    app = web.Application(middlewares=[observer(metrics, access_log=settings.log_format == "json"), error_middleware])
    app[ACCEPTS] = accepts(OPERATIONS)
    add_metrics_routes(app, metrics, token=settings.metrics_token)
    app[DEPLOYMENT] = deployment
    app[RPC_URL] = rpc_url
    if public_url:
        app[PUBLIC_URL] = public_url
    services = app[SERVICES] = Services(
        deployment, settings, rpc_url, clock, public_url=public_url, hooks=hooks, legacy=app
    )
    add_health_routes(app)
    add_schema_routes(app, OPERATIONS)
    add_agent_card_routes(app)
    if db is None:
        return app
    chain_id = deployment.chain_id
    allow_private = allow_private_for(settings.webhook_allow_private, chain_id)
    add_wallet_routes(app, db, clock, hooks, read_pool_size=settings.read_pool_size)
    services.database_reads, services.database_writer, services.hooks = app[READS], app[WRITER], app[HOOKS]
    services.allow_private = allow_private
    add_decision_routes(app, allow_private_webhooks=allow_private)
    add_audit_routes(app, chain_id, deployment.contracts.get("AuditAnchor"))
    add_verification_routes(app)
    add_ipfs_routes(app)
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
    app[OPERATOR] = services.operator_sender = operator
    writer = app[WRITER]
    # Transitional, until the FEATURES loop: checkout, hire and the drop install themselves.
    features = (checkout.FEATURE, hire.FEATURE, marketplace.FEATURE)
    installed = {feature.name: install_feature(app, feature, services) for feature in features}
    metrics.watch(writer)
    add_dashboard_routes(app)
    add_mcp_routes(app, OPERATIONS)  # after every route module: the tools are the table's rows
    add_policy(app, OPERATIONS)  # the limits of keys (scopes, daily caps), for HTTP as for MCP
    jobs = _with_sweep(installed["checkout"].jobs, sweep_interval)
    if anchor_daily and "AuditAnchor" in deployment.contracts:
        jobs.append(
            Job("anchor", DailyAt(settings.anchor_time_utc), lambda: anchoring.anchor_once(operator, database_of(db)))
        )
    jobs += [*installed["hire"].jobs, *installed["marketplace"].jobs]
    mail = channel_for(
        settings.smtp_url, sender=settings.smtp_from, ca_file=settings.smtp_ca_file, data_dir=settings.data_dir
    )
    dispatcher = Dispatcher(database_of(db), clock, allow_private=allow_private, channels=[mail])
    services.wake = dispatcher.wake
    long_lived: list[Service] = [dispatcher]
    runner = add_jobs(app, JobRunner(jobs, long_lived, clock=clock, writer=writer))
    app[LIVENESS] = Liveness({"writer": writer.health, "outbox": dispatcher.health, "jobs": runner.health})
    return app


def install_feature(app: web.Application, feature: Feature, services: Services) -> Parts:
    """Transitional (folded into the FEATURES loop): mount `feature`'s rows and what its HTTP side adds,
    install it, and run what it starts and stops with the app."""
    mount(app, feature.operations)
    if feature.http is not None:
        feature.http(app)
    parts = Parts() if feature.install is None else feature.install(services)

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
    return parts


def _with_sweep(jobs: tuple[Job, ...], sweep_interval: float | None) -> list[Job]:
    """`jobs` with the checkout sweep at the caller's interval (None: left to the caller, as tests do)."""
    if sweep_interval is None:
        return [job for job in jobs if job.name != "checkout-sweep"]
    return [replace(job, schedule=Every(sweep_interval)) if job.name == "checkout-sweep" else job for job in jobs]
