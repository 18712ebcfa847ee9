"""The indexer as a service: built from configuration and a deployment, with every feature's
follower installed. `make run` and `python -m indexer` both build it here, so they index
identically (an order reaches released, and its webhook goes out, whichever process indexes)."""

from __future__ import annotations

import time
from collections.abc import Callable

from core.checkout.follower import OrderFollower
from core.config import Settings
from core.deployments import Deployment
from core.followers import Follower
from core.hire import EscrowFollower
from core.marketplace import MarketFollower, Notices, notices_for
from core.networks import network_for
from core.store import Conn
from indexer.progress import Snapshot
from indexer.rpc import RpcClient
from indexer.sync import Indexer


def followers(clock: Callable[[], float] = time.time, notices: Notices | None = None) -> list[Follower]:
    """Every feature's follower of final events (a new feature adds its own here); the marketplace's
    when the deployment has one (`notices`: how its e-mails link back to the service)."""
    found: list[Follower] = [OrderFollower(clock), EscrowFollower(clock)]
    if notices is not None:
        found.append(MarketFollower(clock, notices))
    return found


def build_indexer(
    settings: Settings,
    deployment: Deployment,
    conn: Conn,
    rpc: RpcClient,
    *,
    progress: Callable[[Snapshot], None] | None = None,
    clock: Callable[[], float] = time.time,
) -> Indexer:
    network = network_for(deployment.chain_id)
    confirmations = settings.confirmations
    if confirmations < 0:
        confirmations = network.confirmations
    return Indexer(
        conn,
        rpc,
        chain_id=deployment.chain_id,
        addresses=deployment.contracts,
        start_block=deployment.deploy_block,
        confirmations=confirmations,
        poll_interval=settings.poll_interval,
        followers=followers(
            clock, notices_for(settings, deployment.chain_id) if "AgentMarketplace" in deployment.contracts else None
        ),
        # A development chain's `finalized` tag is synthetic (anvil: head - 64): there, final means
        # `confirmations` blocks deep; on Base the tag is the real (L1) finality.
        use_finalized_tag=network.explorer is not None,
        progress=progress,
        clock=clock,
    )
