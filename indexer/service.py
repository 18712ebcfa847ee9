"""The indexer as a service: built from configuration and a deployment, with every feature's
follower installed. `make run` and `python -m indexer` both build it here, so they index
identically (an order reaches released, and its webhook goes out, whichever process indexes)."""

from __future__ import annotations

import time
from collections.abc import Callable

from core import marketplace
from core.checkout import follower as checkout
from core.config import Settings
from core.deployments import Deployment
from core.followers import Follower
from core.hire import follower as hire
from core.networks import network_for
from core.services import Services
from core.store import Conn
from indexer.progress import Snapshot
from indexer.rpc import RpcClient
from indexer.sync import Indexer


def followers(services: Services) -> list[Follower]:
    """Every feature's follower of final events, but a feature's whose contract is not deployed."""
    # Transitional, until the FEATURES loop: the followers of checkout, hire and the drop.
    made = (follow(services) for follow in (checkout.follower, hire.follower, marketplace.follower))
    return [found for found in made if found is not None]


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
        followers=followers(Services(deployment, settings, rpc.url, clock)),
        # A development chain's `finalized` tag is synthetic (anvil: head - 64): there, final means
        # `confirmations` blocks deep; on Base the tag is the real (L1) finality.
        use_finalized_tag=network.explorer is not None,
        progress=progress,
        clock=clock,
    )
