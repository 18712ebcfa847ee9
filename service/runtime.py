"""Running the service: the API (with its background jobs) and, unless AGENTLEDGER_RUN_INDEXER is
false, the indexer, as tasks of one event loop, until SIGINT or SIGTERM.

The Operator (the service's transaction key) is built here once and handed to the API, whose
routes and jobs (checkout funding, provider mints, releases, the daily anchor) then share one
nonce sequence. With the indexer off, `python -m indexer` indexes the same way in its own process
(indexer.service installs every follower either way) and this process's outbox dispatcher sends
the webhooks it queues.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import signal
import sys

from aiohttp import web
from web3 import Web3

from api.app import create_app, make_runner
from api.dashboard import INDEXER_STATUS
from api.http import SERVICES
from api.metrics import METRICS
from core.config import Settings
from core.deployments import Deployment
from core.liveness import EXIT_UNHEALTHY, Liveness, answers_within, watch
from core.operator import Operator, operator_account
from core.store import Conn, ProcessLock
from indexer.metrics import IndexerCollector
from indexer.progress import ProgressReporter
from indexer.rpc import RpcClient
from indexer.service import build_indexer
from indexer.sync import Indexer

log = logging.getLogger("agentledger.run")


#: Net container allocations between two young-generation collections (CPython's default: 700).
#: Under load, the objects of the requests in flight (64 at -c64) keep the count above 700, so the
#: collector ran about every 20 requests and spent 25 us (earn) to 40 us (decision log) per request
#: scanning objects that were about to die anyway; at 10,000 it runs a few times per 20,000 requests.
YOUNG_GENERATION_THRESHOLD = 10_000


def settle_heap() -> None:
    """Once start-up is over: collect its garbage, move every object still alive (modules, web3's
    and py_ecc's tables: about 90,000) out of the collector's sight (a full collection otherwise
    walks them all: 50 ms on these machines, inside some request's latency), and collect the young
    generation less often (YOUNG_GENERATION_THRESHOLD). Cyclic garbage is still collected."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, older, oldest)


def build_operator(settings: Settings, dep: Deployment, rpc_url: str) -> Operator:
    """The one Operator of the process (no connection check: the API starts while the node is down)."""
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30}))
    account = operator_account(settings.operator_key, dep.chain_id)
    nonce = ProcessLock(settings.database, f"operator-{account.address}")
    return Operator(w3, account, dep.contracts, dep.usdc, send_lock=nonce.held)


async def serve(settings: Settings, dep: Deployment, rpc_url: str, stop: asyncio.Event | None = None) -> int:
    """Serve until `stop` is set (default: SIGINT or SIGTERM): 0. Or until a long-lived part of the process
    fails for longer than settings.unhealthy_exit_seconds while the database answers (core.liveness): the
    process's exit status EXIT_UNHEALTHY, for its supervisor to restart it."""
    api_db = settings.database.connect()
    indexer_db = settings.database.connect(durable=False)
    operator = build_operator(settings, dep, rpc_url)
    app = create_app(dep, rpc_url, api_db, settings=settings, operator=operator, anchor_log=True)
    async with RpcClient(rpc_url) as rpc:
        ix = None
        if settings.run_indexer:
            ix = build_indexer(settings, dep, indexer_db, rpc, progress=backfill_reporter(settings))
            app[INDEXER_STATUS] = ix.status  # the operator's view shows its head, halt and last error
            app[METRICS].registry.register(IndexerCollector(ix.status))  # type: ignore[arg-type]
        runner = make_runner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, settings.api_host, settings.api_port)
        await site.start()
        settle_heap()
        log.info("API on http://%s:%d (GET /healthz, /dashboard, /metrics)", settings.api_host, settings.api_port)
        if "AuditAnchor" in dep.contracts:
            when = (
                f"every {settings.anchor_interval:g} s"
                if settings.anchor_interval > 0
                else f"daily at {settings.anchor_time_utc} UTC"
            )
            log.info("audit log anchored %s (now: python -m scripts.anchor --once)", when)
        if stop is None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
        task: asyncio.Task[None] | None = None
        services = app[SERVICES]
        liveness = services.part(Liveness)
        if ix is not None:
            liveness.add("indexer", ix.health)
            task = asyncio.create_task(ix.run(stop), name="indexer")
            task.add_done_callback(functools.partial(_report_indexer_end, ix))
            log.info(
                "indexer following chain %d from block %d into %s",
                dep.chain_id,
                dep.deploy_block,
                settings.database.redacted,
            )
        reads = services.reads
        status = 0
        try:
            reason = await watch(
                liveness,
                lambda: answers_within(lambda: reads.run(database_answers), 2.0),
                stop,
                exit_after=settings.unhealthy_exit_seconds,
            )
            if reason is not None:
                status = EXIT_UNHEALTHY
                stop.set()
        finally:
            log.info("stopping")
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
            await runner.cleanup()
            (ix.conn if ix is not None else indexer_db).close()
            api_db.close()
        return status


def backfill_reporter(settings: Settings) -> ProgressReporter:
    """The first backfill's progress: a bar on a terminal (text logs), else log lines."""
    if settings.log_format == "text" and sys.stderr.isatty():
        return ProgressReporter(sys.stderr)
    return ProgressReporter(sys.stderr, tty=False, plain=lambda line: log.info("backfill %s", line))


def database_answers(conn: Conn) -> None:
    """The watchdog's probe of the database (through the process's reads)."""
    conn.execute("SELECT 1").fetchall()


def _report_indexer_end(ix: Indexer, task: asyncio.Task[None]) -> None:
    """Say at once why the indexer stopped (nothing should end it: a reorg below finality halts it in
    place until an operator acts). Its part fails from now on, so /healthz is degraded and the watchdog
    ends the process once the grace has passed (a new process follows the chain again)."""
    if not task.cancelled() and task.exception() is not None:
        log.critical("the indexer stopped: %s; the API is serving a frozen index", task.exception())
        ix.health.failed(f"the indexer's loop ended: {task.exception()}")
