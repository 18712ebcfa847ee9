"""The anchorer: put the audit log's (tree size, root) on the AuditAnchor contract.

    python -m scripts.anchor --once     anchor now (if the log grew since the last checkpoint)
    python -m scripts.anchor            run the `anchor` job daily at AGENTLEDGER_ANCHOR_TIME_UTC

core.anchoring does the work; `make run` schedules the same daily job inside the service. The key is
Settings.operator_key (AGENTLEDGER_OPERATOR_KEY); when empty, anvil's development key, on the
local chain (31337) only.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from eth_account.signers.local import LocalAccount
from web3 import Web3

from core import deployments
from core.anchoring import AnchorError, anchor_once
from core.chain import connect
from core.config import Settings
from core.jobs import DailyAt, Job, JobRunner
from core.operator import Operator
from core.operator import operator_account as core_operator_account
from core.store import Database, ProcessLock, open_database


def operator_account(settings: Settings, chain_id: int) -> LocalAccount:
    """The anchoring key: Settings.operator_key, or anvil's development key on a local chain only."""
    try:
        return core_operator_account(settings.operator_key.strip(), chain_id)
    except ValueError as exc:
        raise AnchorError(str(exc)) from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.anchor", description=__doc__.split("\n")[0])
    parser.add_argument("--once", action="store_true", help="anchor now and exit")
    parser.add_argument("--rpc", help="JSON-RPC URL (default: AGENTLEDGER_RPC_URL or the local anvil)")
    parser.add_argument("--db", help="SQLite file or database URL (default: the service's)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    settings = Settings.load()
    rpc_url = args.rpc or settings.rpc_url or f"http://127.0.0.1:{settings.anvil_port}"
    w3: Web3 = connect(rpc_url)
    dep = deployments.load(w3.eth.chain_id, settings.deployments_dir)
    db_path = args.db or settings.database
    try:
        account = operator_account(settings, dep.chain_id)
        nonce = ProcessLock(open_database(db_path), f"operator-{account.address}")  # shared with the API's processes
        operator = Operator(w3, account, dep.contracts, dep.usdc, send_lock=nonce.held)
        if not args.once:
            asyncio.run(_daily(operator, db_path, settings.anchor_time_utc))
            return 0
        result = asyncio.run(anchor_once(operator, db_path))
    except AnchorError as exc:
        print(f"anchor: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    if result is None:
        print("nothing new to anchor")
    else:
        print(f"anchored tree size {result.tree_size} root 0x{result.root.hex()} tx {result.tx_hash}")
    return 0


async def _daily(operator: Operator, db_path: Database | str, at_utc: str) -> None:
    runner = JobRunner([Job("anchor", DailyAt(at_utc), lambda: anchor_once(operator, db_path))])
    await runner.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.stop()


if __name__ == "__main__":
    raise SystemExit(main())
