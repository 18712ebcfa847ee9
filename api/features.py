"""The service's features, in the order of /api/schema and of the MCP tools: the one list create_app
mounts and installs (api.app) and the indexer takes its followers from (indexer.service).

Adding a feature is one package under core/ (its rules and transactions), one under api/ (its rows and
their runs, exporting FEATURE: api.feature) and one line here (README "How a feature is shaped").
"""

from __future__ import annotations

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
from api.checkout import add_checkout_routes
from api.feature import Feature, Parts
from api.hire import add_hire_routes
from api.http import DELIVERABLES
from api.marketplace import add_marketplace_routes
from api.operation import Operation
from api.provider_orders import add_provider_order_routes
from api.providers import add_provider_routes
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
# api.hire and api.marketplace, unchanged: each install mounts its modules' routes itself (their
# add_*_routes, on the app: services.legacy), so these entries declare no rows; the table takes theirs
# from TRANSITIONAL_ROWS. Their followers are indexer.service's transitional list. The integrator
# replaces this block with the three packages' FEATURE entries.


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
    deliverables = app[DELIVERABLES] = Deliverables(
        services.reads, services.writer, services.settings.ipfs_api_url, services.clock
    )
    add_provider_routes(app, ctx)
    add_checkout_routes(app, ctx)
    add_provider_order_routes(app)
    # at start too: sessions a crashed run left complete_in_progress are settled against the chain at once
    jobs = [Job("checkout-sweep", Every(SWEEP_INTERVAL), lambda: sweep(ctx), at_start=True)]
    if services.settings.ipfs_api_url:
        jobs.append(Job("ipfs-pin", Every(PIN_INTERVAL), deliverables.pin_unpinned))
    return Parts(tuple(jobs))


def _install_hire(services: Services) -> Parts:
    ctx = Hire(
        reads=services.reads,
        writer=services.writer,
        operator=services.operator,
        chain_id=services.chain_id,
        clock=services.clock,
        allow_private=services.allow_private,
        wake=services.wake,
    )
    add_hire_routes(services.legacy, ctx)  # type: ignore[arg-type]
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
    add_marketplace_routes(services.legacy, market)  # type: ignore[arg-type]
    if "AgentMarketplace" not in contracts:
        return Parts()
    return Parts(
        (
            Job("drop-settle", Every(settings.drop_settle_interval), lambda: drop_sweep.settle_sweep(market)),
            Job("drop-expire", Every(settings.drop_expire_interval), lambda: drop_sweep.expire_sweep(market)),
            Job("drop-reconcile", Every(settings.drop_reconcile_interval), lambda: drop_sweep.reconcile(market)),
        )
    )


#: The rows of the transitional entries, by feature name (api.operation_table.table).
TRANSITIONAL_ROWS: dict[str, tuple[Operation, ...]] = {
    "checkout": (*checkout.OPERATIONS, *providers.OPERATIONS, *provider_orders.OPERATIONS),
    "hire": tuple(hire.OPERATIONS),
    "marketplace": tuple(marketplace.OPERATIONS),
}
_CHECKOUT = Feature("checkout", install=_install_checkout)
_HIRE = Feature("hire", install=_install_hire)
_MARKETPLACE = Feature("marketplace", install=_install_marketplace)
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
