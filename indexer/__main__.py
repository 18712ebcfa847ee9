"""Run the indexer on its own (it shares the SQLite file with the API).

    python -m indexer [--rpc URL] [--db PATH] [--until-head] [--metrics-port N]

Follows the chain until Ctrl-C; with --until-head, backfills to the current head and exits.
Backfill progress (blocks, blocks/s, events/s, ETA) goes to stderr: a bar redrawn in place on a
terminal, plain lines otherwise (or log lines with AGENTLEDGER_LOG_FORMAT=json). --metrics-port
serves this process's counters (events applied, reorgs, node up, halted) for Prometheus on
127.0.0.1:N/metrics.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from core import deployments, logs
from core.config import Settings
from core.store import open_database
from indexer.progress import ProgressReporter
from indexer.rpc import RpcClient
from indexer.service import build_indexer

log = logging.getLogger("agentledger.indexer")


def reporter(settings: Settings) -> ProgressReporter:
    """A bar on a terminal; plain lines on a pipe; log lines (JSON) when the logs are JSON."""
    if settings.log_format == "json":
        return ProgressReporter(sys.stderr, tty=False, plain=lambda line: log.info("backfill %s", line))
    return ProgressReporter(sys.stderr)


async def main_async(args: argparse.Namespace, settings: Settings) -> int:
    conn = open_database(args.db or settings.database).connect(durable=False)
    async with RpcClient(args.rpc) as rpc:
        chain_id = int(await rpc.call("eth_chainId", []), 16)
        dep = deployments.load(chain_id, settings.deployments_dir)
        ix = build_indexer(settings, dep, conn, rpc, progress=reporter(settings))
        if args.metrics_port is not None:
            from prometheus_client import CollectorRegistry, start_http_server  # only with --metrics-port

            from indexer.metrics import IndexerCollector

            registry = CollectorRegistry(auto_describe=True)
            registry.register(IndexerCollector(ix.status))  # type: ignore[arg-type]
            server, thread = start_http_server(args.metrics_port, addr="127.0.0.1", registry=registry)
        if args.until_head:
            head = int(await rpc.call("eth_blockNumber", []), 16)
            await ix.run_until(head, timeout=float("inf"))
            print(f"indexed to block {ix.status.seen} (final {ix.status.final})", file=sys.stderr)
        else:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            await ix.run(stop)
        if args.metrics_port is not None:
            server.shutdown()
            thread.join()
    conn.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    settings = Settings.load()
    parser = argparse.ArgumentParser(description="agentledger indexer: chain events into SQLite.")
    parser.add_argument("--rpc", default=settings.rpc_url or f"http://127.0.0.1:{settings.anvil_port}")
    parser.add_argument("--db", default="", help=f"SQLite file or database URL (default {settings.database.redacted})")
    parser.add_argument("--until-head", action="store_true", help="backfill to the current head, then exit")
    parser.add_argument("--metrics-port", type=int, help="serve this process's counters on 127.0.0.1:PORT/metrics")
    args = parser.parse_args(argv)
    logs.configure(settings.log_format)
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
