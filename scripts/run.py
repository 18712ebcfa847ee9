"""`make run`: everything on the embedded default, in one process you stop with Ctrl-C.

With AGENTLEDGER_RPC_URL unset: start a local anvil on AGENTLEDGER_ANVIL_PORT (8545), deploy
every contract with anvil's development key (local only), write deployments/31337.json, and
serve the API on AGENTLEDGER_API_HOST:AGENTLEDGER_API_PORT (127.0.0.1:8080).
With AGENTLEDGER_RPC_URL set: use that node and the deployments/<chainId>.json already written
by `python -m scripts.deploy`; start and deploy nothing.
Ctrl-C (SIGINT) or SIGTERM stops the server and the anvil this command started.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time

from aiohttp import web
from eth_account import Account

from api.acp import OPERATOR
from api.app import create_app
from core import deployments
from core.anvil import Anvil
from core.chain import connect
from core.config import Settings
from core.store import connect as connect_db
from core.store import transaction
from core.store.orders import reset_chain_bound_orders
from core.store.projections import reset_chain_data
from indexer.order_follower import OrderFollower
from indexer.rpc import RpcClient
from indexer.service import build_indexer
from scripts.anchor import AnchorError, anchorer_for, run_anchorer, submit_via
from scripts.compile import compile_contracts
from scripts.deploy import ANVIL_DEV_KEY, Roles, deploy_system

log = logging.getLogger("agentledger.run")


async def serve(settings: Settings, dep: deployments.Deployment, rpc_url: str) -> None:
    """The API and (unless AGENTLEDGER_RUN_INDEXER=false) the indexer, as tasks of one loop."""
    api_db = connect_db(settings.database)
    app = create_app(dep, rpc_url, api_db, settings=settings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.api_host, settings.api_port)
    await site.start()
    log.info("API on http://%s:%d (GET /healthz)", settings.api_host, settings.api_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    indexer_db = connect_db(settings.database, durable=False)
    async with RpcClient(rpc_url) as rpc:
        task: asyncio.Task[None] | None = None
        if settings.run_indexer:
            ix = build_indexer(
                settings,
                dep,
                indexer_db,
                rpc,
                finality_hooks=[OrderFollower(dep.contracts, time.time)],
                progress=lambda line: log.info("backfill %s", line),
            )
            task = asyncio.create_task(ix.run(stop), name="indexer")
            task.add_done_callback(_report_indexer_end)
            log.info(
                "indexer following chain %d from block %d into %s", dep.chain_id, dep.deploy_block, settings.database
            )
        anchorer: asyncio.Task[None] | None = None
        try:
            submit = submit_via(app[OPERATOR], loop)  # the API's Operator: one nonce sequence for the key
            anchor = await asyncio.to_thread(anchorer_for, settings, dep, rpc_url, settings.database, submit)
        except AnchorError as exc:
            log.warning("audit anchoring is off: %s", exc)
        else:
            anchorer = asyncio.create_task(run_anchorer(anchor, at_utc=settings.anchor_time_utc, stop=stop))
            log.info(
                "audit log anchored daily at %s UTC (now: python -m scripts.anchor --once)", settings.anchor_time_utc
            )
        try:
            await stop.wait()
        finally:
            log.info("stopping")
            if task is not None:
                await task
            if anchorer is not None:
                await anchorer
            await runner.cleanup()
            indexer_db.close()
            api_db.close()


def _report_indexer_end(task: asyncio.Task[None]) -> None:
    """Say at once why the indexer stopped (only a reorg below finality ends it: it needs an
    operator); the API goes on serving, and /healthz shows the index falling behind."""
    if not task.cancelled() and task.exception() is not None:
        log.critical("the indexer stopped: %s; the API is serving a frozen index", task.exception())


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    settings = Settings.load()
    compile_contracts()
    anvil: Anvil | None = None
    try:
        if settings.rpc_url:
            rpc_url = settings.rpc_url
            w3 = connect(rpc_url)
            dep = deployments.load(w3.eth.chain_id, settings.deployments_dir)
        else:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            anvil = Anvil(settings.anvil_port, log_path=settings.data_dir / "anvil.log").start()
            rpc_url = anvil.rpc_url
            log.info("anvil on %s (log: %s)", rpc_url, settings.data_dir / "anvil.log")
            w3 = connect(rpc_url)
            deployer = Account.from_key(ANVIL_DEV_KEY)
            # A fresh chain: forget the old chain's indexed data and what points at its tokens and jobs
            # (providers, catalogue, sessions, orders); accounts, keys, ledgers and the audit log stay.
            db = connect_db(settings.database)
            with transaction(db):
                reset_chain_data(db)
                reset_chain_bound_orders(db)
            db.close()
            dep = deploy_system(w3, deployer, Roles.from_env(deployer.address))
            path = deployments.save(dep, settings.deployments_dir)
            log.info("deployed %d contracts from block %d: %s", len(dep.contracts), dep.deploy_block, path)
        asyncio.run(serve(settings, dep, rpc_url))
    except KeyboardInterrupt:
        pass
    finally:
        if anvil is not None:
            anvil.stop()
            log.info("anvil stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
