"""Run the indexer on its own (it shares the SQLite file with the API).

    python -m indexer [--rpc URL] [--db PATH] [--until-head]

Follows the chain until Ctrl-C; with --until-head, backfills to the current head and exits.
Backfill progress (blocks/s, events/s, ETA) goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from core import deployments
from core.config import Settings
from core.store import connect
from indexer.rpc import RpcClient
from indexer.service import build_indexer


async def main_async(args: argparse.Namespace, settings: Settings) -> int:
    conn = connect(args.db or settings.database, durable=False)
    async with RpcClient(args.rpc) as rpc:
        chain_id = int(await rpc.call("eth_chainId", []), 16)
        dep = deployments.load(chain_id, settings.deployments_dir)
        ix = build_indexer(settings, dep, conn, rpc, progress=lambda line: print(line, file=sys.stderr, flush=True))
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
    conn.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    settings = Settings.load()
    parser = argparse.ArgumentParser(description="agentledger indexer: chain events into SQLite.")
    parser.add_argument("--rpc", default=settings.rpc_url or f"http://127.0.0.1:{settings.anvil_port}")
    parser.add_argument("--db", default="", help=f"SQLite file (default {settings.database})")
    parser.add_argument("--until-head", action="store_true", help="backfill to the current head, then exit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    return asyncio.run(main_async(args, settings))


if __name__ == "__main__":
    raise SystemExit(main())
