"""Building an Indexer from configuration and a deployment, for `make run` and `python -m indexer`."""

from __future__ import annotations

from collections.abc import Callable

import apsw

from core.config import Settings
from core.deployments import Deployment
from core.networks import network_for
from core.store.projections import FinalityHook, Subscriber
from indexer.rpc import RpcClient
from indexer.sync import Indexer


def build_indexer(
    settings: Settings,
    deployment: Deployment,
    conn: apsw.Connection,
    rpc: RpcClient,
    *,
    subscribers: dict[str, list[Subscriber]] | None = None,
    finality_hooks: list[FinalityHook] | None = None,
    progress: Callable[[str], None] | None = None,
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
        subscribers=subscribers,
        finality_hooks=finality_hooks,
        # A development chain's `finalized` tag is synthetic (anvil: head - 64): there, final means
        # `confirmations` blocks deep; on Base the tag is the real (L1) finality.
        use_finalized_tag=network.explorer is not None,
        progress=progress,
    )
