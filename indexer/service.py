"""Building an Indexer from configuration and a deployment, for `make run` and `python -m indexer`."""

from __future__ import annotations

from collections.abc import Callable

import apsw

from core.config import Settings
from core.deployments import Deployment
from core.networks import network_for
from core.store.projections import Subscriber
from indexer.rpc import RpcClient
from indexer.sync import Indexer


def build_indexer(
    settings: Settings,
    deployment: Deployment,
    conn: apsw.Connection,
    rpc: RpcClient,
    *,
    subscribers: dict[str, list[Subscriber]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Indexer:
    confirmations = settings.confirmations
    if confirmations < 0:
        confirmations = network_for(deployment.chain_id).confirmations
    return Indexer(
        conn,
        rpc,
        chain_id=deployment.chain_id,
        addresses=deployment.contracts,
        start_block=deployment.deploy_block,
        confirmations=confirmations,
        poll_interval=settings.poll_interval,
        subscribers=subscribers,
        progress=progress,
    )
