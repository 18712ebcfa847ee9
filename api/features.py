"""The service's features, in the order of /api/schema and of the MCP tools: the one list create_app
mounts and installs (api.app) and the indexer takes its followers from (indexer.service).

Adding a feature is one package under core/ (its rules and transactions), one under api/ (its rows and
their runs, exporting FEATURE: api.feature) and one line here (README "How a feature is shaped").
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from web3 import Web3

from api import (
    audit_routes,
    checkout,
    dashboard,
    decisions,
    hire,
    ipfs_gateway,
    marketplace,
    provider_orders,
    providers,
    verification,
    wallets,
)
from api.acp import add_acp_headers
from api.feature import Feature, Parts
from api.http import CHECKOUT, DELIVERABLES
from core.checkout.context import Checkout
from core.checkout.sweep import SWEEP_INTERVAL, sweep
from core.deliverables import PIN_INTERVAL, Deliverables
from core.hire import Hire
from core.hire import settle as hire_jobs
from core.jobs import Every, Job
from core.marketplace import Market, notices_for
from core.marketplace import sweep as drop_sweep
from core.services import Services

__all__ = ["FEATURES"]


# ---- moved into FEATURES by the checkout/hire/marketplace packages ---------------------------------
# Transitional: the wiring create_app did for api.checkout, api.providers, api.provider_orders,
# api.hire and api.marketplace, unchanged in behaviour. Their runs still read app keys (the app is
# services.legacy), and their followers are indexer.service's transitional list. The integrator
# replaces this block with the three packages' FEATURE entries (and operation_table's forms).


def _install_checkout(services: Services) -> Parts:
    app: Any = services.legacy
    ctx = Checkout(
        reads=services.reads,
        writer=services.writer,
        operator=services.operator,
        chain_id=services.chain_id,
        clock=services.clock,
        session_ttl=services.settings.checkout_session_ttl,
        allow_private_webhooks=services.allow_private,
    )
    deliverables = Deliverables(services.reads, services.writer, services.settings.ipfs_api_url, services.clock)
    app[DELIVERABLES], app[CHECKOUT] = deliverables, ctx
    app[provider_orders.UPLOAD_SLOTS] = provider_orders.UploadSlots()
    add_acp_headers(app)
    # at start too: sessions a crashed run left complete_in_progress are settled against the chain at once
    jobs = [Job("checkout-sweep", Every(SWEEP_INTERVAL), lambda: sweep(ctx), at_start=True)]
    if services.settings.ipfs_api_url:
        jobs.append(Job("ipfs-pin", Every(PIN_INTERVAL), deliverables.pin_unpinned))
    return Parts(tuple(jobs))


def _install_hire(services: Services) -> Parts:
    app: Any = services.legacy
    ctx = Hire(
        reads=services.reads,
        writer=services.writer,
        operator=services.operator,
        chain_id=services.chain_id,
        clock=services.clock,
        allow_private=services.allow_private,
        wake=services.wake,
    )
    app[hire.HIRE] = ctx
    started: list[asyncio.Task[Any]] = []

    async def start(_app: Any) -> None:  # before serving: settle what a crash left, then what is due
        await hire_jobs.recover(ctx)
        if ctx.has_escrow():
            started.append(asyncio.create_task(hire._settle_quietly(ctx)))

    async def stop(_app: Any) -> None:
        for task in started:
            task.cancel()
        await asyncio.gather(*started, return_exceptions=True)
        await ctx.close()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    jobs = [
        Job("hire-health", Every(hire_jobs.PROBE_INTERVAL), lambda: hire_jobs.probe_due(ctx)),
        Job("hire-reputation", Every(hire_jobs.SCORE_INTERVAL), lambda: hire_jobs.refresh_scores(ctx)),
    ]
    if "AgentEscrow" in services.deployment.contracts:
        jobs.append(Job("hire-settle", Every(hire_jobs.SETTLE_INTERVAL), lambda: hire_jobs.settle_due(ctx)))
    return Parts(tuple(jobs))


def _install_marketplace(services: Services) -> Parts:
    settings, contracts = services.settings, services.deployment.contracts
    notices = replace(
        notices_for(settings, services.chain_id, services.public_url), allow_private_webhooks=services.allow_private
    )
    market = Market(
        reads=services.reads,
        writer=services.writer,
        operator=services.operator,
        chain_id=services.chain_id,
        marketplace=Web3.to_checksum_address(contracts.get("AgentMarketplace", "0x" + "0" * 40)),
        notices=notices,
        clock=services.clock,
    )
    services.legacy[marketplace.MARKET] = market  # type: ignore[index]
    if "AgentMarketplace" not in contracts:
        return Parts()
    return Parts(
        (
            Job("drop-settle", Every(settings.drop_settle_interval), lambda: drop_sweep.settle_sweep(market)),
            Job("drop-expire", Every(settings.drop_expire_interval), lambda: drop_sweep.expire_sweep(market)),
            Job("drop-reconcile", Every(settings.drop_reconcile_interval), lambda: drop_sweep.reconcile(market)),
        )
    )


_CHECKOUT = Feature(
    "checkout", (*checkout.OPERATIONS, *providers.OPERATIONS, *provider_orders.OPERATIONS), _install_checkout
)
_HIRE = Feature("hire", tuple(hire.OPERATIONS), _install_hire)
_MARKETPLACE = Feature("marketplace", tuple(marketplace.OPERATIONS), _install_marketplace)
# ---- end of the transitional block -----------------------------------------------------------------


FEATURES: tuple[Feature, ...] = (
    wallets.FEATURE,
    decisions.FEATURE,
    audit_routes.FEATURE,
    _CHECKOUT,
    ipfs_gateway.FEATURE,
    _HIRE,
    verification.FEATURE,
    _MARKETPLACE,
    dashboard.FEATURE,
)
