"""The ownership marketplace ("drop") under /api/a2a/drop, the HTTP side of core.marketplace: its
models, its runs (routes) and its rows (operations). `install` makes the drop's context and, with an
AgentMarketplace deployed, its settle, expire and reconcile jobs."""

from __future__ import annotations

from web3 import Web3

from api.feature import Feature, Parts
from api.marketplace.operations import OPERATIONS
from core.jobs import Every, Job
from core.marketplace import Market, follower, notices_for, sweep
from core.services import Services

__all__ = ["FEATURE", "OPERATIONS", "install"]


def install(services: Services) -> Parts:
    settings, contracts = services.settings, services.deployment.contracts
    market = services.provide(
        Market(
            services,
            marketplace=Web3.to_checksum_address(contracts.get("AgentMarketplace", "0x" + "0" * 40)),
            notices=notices_for(settings, services.chain_id, services.public_url),
        )
    )
    if "AgentMarketplace" not in contracts:
        return Parts()
    return Parts(
        jobs=(
            Job("drop-settle", Every(settings.drop_settle_interval), lambda: sweep.settle_sweep(market)),
            Job("drop-expire", Every(settings.drop_expire_interval), lambda: sweep.expire_sweep(market)),
            Job("drop-reconcile", Every(settings.drop_reconcile_interval), lambda: sweep.reconcile(market)),
        )
    )


FEATURE = Feature("marketplace", tuple(OPERATIONS), install=install, follower=follower, toolset="drop")
