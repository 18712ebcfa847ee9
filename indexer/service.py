"""The indexer as a service: built from configuration and a deployment, with every feature's
follower installed (api.features.FEATURES, the features' one list). `make run` and `python -m indexer`
both build it here, so they index identically (an order reaches released, and its webhook goes out,
whichever process indexes)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from api.feature import Feature
from api.features import FEATURES
from core.config import Settings
from core.deployments import Deployment
from core.followers import Follower
from core.networks import network_for
from core.services import Services
from core.store import Conn
from indexer.progress import Snapshot
from indexer.rpc import RpcClient
from indexer.sync import Indexer


def feature_followers(services: Services, features: Sequence[Feature] = FEATURES) -> list[Follower]:
    """Every feature's follower of final events, made from the indexer's `services` (its deployment,
    settings, node and clock: no API reads or writer); none for a feature whose contract is not deployed."""
    made = (feature.follower(services) for feature in features if feature.follower is not None)
    return [follower for follower in made if follower is not None]


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
        followers=feature_followers(Services(deployment, settings, rpc.url, clock)),
        # A development chain's `finalized` tag is synthetic (anvil: head - 64): there, final means
        # `confirmations` blocks deep; on Base the tag is the real (L1) finality.
        use_finalized_tag=network.explorer is not None,
        progress=progress,
        clock=clock,
    )
