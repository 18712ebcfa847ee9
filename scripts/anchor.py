"""The anchorer: put the audit log's (tree size, root) on the AuditAnchor contract.

    python -m scripts.anchor --once     anchor now (if the log grew since the last checkpoint)
    python -m scripts.anchor            run nightly at AGENTLEDGER_ANCHOR_TIME_UTC (HH:MM, default 00:00)

The size and root are read from the SQLite log (core.store.audit, O(log n) reads); the last
anchored size is read from the chain, not from the indexer's table, so a lagging indexer never
causes a double anchor. Before anchoring, the log's root at the last anchored size must equal the
root on-chain: a log rewritten since (or a database that does not belong to this chain) is refused
instead of being anchored over. The key is Settings.operator_key (AGENTLEDGER_OPERATOR_KEY); when
empty, anvil's development key, on the local chain (31337) only.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract

from core import deployments
from core.chain import connect, contract_at, send
from core.config import Settings
from core.operator import Operator, tx_hash_of
from core.operator import operator_account as core_operator_account
from core.store import audit as audit_store
from core.store import connect as connect_db

log = logging.getLogger("agentledger.anchor")


class AnchorError(RuntimeError):
    """The log cannot be anchored (it disagrees with the chain, or no key may anchor)."""


@dataclass(frozen=True)
class Anchored:
    tree_size: int
    root: bytes
    tx_hash: str
    block_number: int
    gas_used: int


def operator_account(settings: Settings, chain_id: int) -> LocalAccount:
    """The anchoring key: Settings.operator_key, or anvil's development key on a local chain only."""
    try:
        return core_operator_account(settings.operator_key.strip(), chain_id)
    except ValueError as exc:
        raise AnchorError(str(exc)) from exc


def _log_head(db: apsw.Connection, last_size: int) -> tuple[int, bytes, bytes | None]:
    """(size, root, root at last_size) from one read snapshot of the log."""
    db.execute("BEGIN")
    try:
        size = audit_store.size(db)
        root = audit_store.root(db, size)
        at_last = audit_store.root(db, last_size) if 0 < last_size <= size else None
    finally:
        db.execute("COMMIT")
    return size, root, at_last


#: Sends anchor(size, root) and returns its receipt once mined (raises if it reverted).
Submit = Callable[[int, bytes], Mapping[str, Any]]


def submit_via(operator: Operator, loop: asyncio.AbstractEventLoop) -> Submit:
    """Anchor through the process's Operator (from the anchoring thread): when the anchorer and the
    service share the operator key, one nonce sequence serves both, so a daily anchor can never
    race a checkout's transaction for the same nonce (and lose a day)."""

    def submit(size: int, root: bytes) -> Mapping[str, Any]:
        return asyncio.run_coroutine_threadsafe(operator.transact("AuditAnchor", "anchor", size, root), loop).result()

    return submit


def anchor_once(
    w3: Web3, contract: Contract, account: LocalAccount, db: apsw.Connection, submit: Submit | None = None
) -> Anchored | None:
    """Anchor the log's current (size, root) unless the chain already has that size; None: nothing new.
    `submit` sends the transaction (default: signed with `account` here)."""
    last_size = int(contract.functions.latestTreeSize().call())
    size, root, at_last = _log_head(db, last_size)
    if size <= last_size:
        if size < last_size:
            log.warning("the log has %d entries but %d are anchored: is this the right database?", size, last_size)
        return None
    if last_size > 0:
        onchain = bytes(contract.functions.rootAt(last_size).call())
        if at_last != onchain:
            raise AnchorError(
                f"the log's root at the anchored size {last_size} is 0x{(at_last or b'').hex()}, the chain has "
                f"0x{onchain.hex()}: the log was rewritten (or is another log); refusing to anchor"
            )
    if submit is None:
        receipt: Mapping[str, Any] = send(w3, account, contract.functions.anchor(size, root))
    else:
        receipt = submit(size, root)
    result = Anchored(size, root, tx_hash_of(receipt), receipt["blockNumber"], receipt["gasUsed"])
    log.info("anchored tree size %d root 0x%s in %s (gas %d)", size, root.hex(), result.tx_hash, result.gas_used)
    return result


def next_run(now: float, at_utc: str) -> float:
    """Unix time of the next HH:MM (UTC) strictly after `now`."""
    hours, minutes = (int(x) for x in at_utc.split(":"))
    if not (0 <= hours < 24 and 0 <= minutes < 60):
        raise ValueError(f"anchor time must be HH:MM (UTC), not {at_utc!r}")
    current = datetime.fromtimestamp(now, UTC)
    target = current.replace(hour=hours, minute=minutes, second=0, microsecond=0)
    if target.timestamp() <= now:
        target += timedelta(days=1)
    return target.timestamp()


async def run_anchorer(
    anchor: Callable[[], Anchored | None],
    *,
    at_utc: str = "00:00",
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    stop: asyncio.Event | None = None,
    max_wait: float = 60.0,
) -> None:
    """Call `anchor` (in a thread: it waits for a receipt) every day at `at_utc`, until `stop` is set.
    Sleeps in steps of at most `max_wait` seconds re-reading `clock`, so an injected clock (tests)
    or a suspended machine is caught up with; a failed run is logged and retried the next day."""
    stop = stop or asyncio.Event()
    due = next_run(clock(), at_utc)
    while not stop.is_set():
        now = clock()
        if now < due:
            waiter = asyncio.ensure_future(stop.wait())
            sleeper = asyncio.ensure_future(sleep(min(max_wait, due - now)))
            try:
                await asyncio.wait([waiter, sleeper], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                sleeper.cancel()
            continue
        try:
            await asyncio.to_thread(anchor)
        except Exception:
            log.exception("anchoring failed; next attempt at the next scheduled time")
        due = next_run(max(clock(), due), at_utc)


def anchorer_for(
    settings: Settings, dep: deployments.Deployment, rpc_url: str, db_path: Path | str, submit: Submit | None = None
) -> Callable[[], Anchored | None]:
    """A zero-argument anchor_once bound to this service's chain, contract, key and database (for
    run_anchorer inside `make run`, which passes `submit_via` its Operator)."""
    w3 = connect(rpc_url)
    contract = contract_at(w3, "AuditAnchor", dep.address("AuditAnchor"))
    account = operator_account(settings, dep.chain_id)

    def run() -> Anchored | None:
        db = connect_db(db_path, durable=False)
        try:
            return anchor_once(w3, contract, account, db, submit)
        finally:
            db.close()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.anchor", description=__doc__.split("\n")[0])
    parser.add_argument("--once", action="store_true", help="anchor now and exit")
    parser.add_argument("--rpc", help="JSON-RPC URL (default: AGENTLEDGER_RPC_URL or the local anvil)")
    parser.add_argument("--db", help="SQLite file (default: the service's)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    settings = Settings.load()
    rpc_url = args.rpc or settings.rpc_url or f"http://127.0.0.1:{settings.anvil_port}"
    w3 = connect(rpc_url)
    dep = deployments.load(w3.eth.chain_id, settings.deployments_dir)
    anchor = anchorer_for(settings, dep, rpc_url, args.db or settings.database)
    try:
        if args.once:
            result = anchor()
            if result is None:
                print("nothing new to anchor")
            else:
                print(f"anchored tree size {result.tree_size} root 0x{result.root.hex()} tx {result.tx_hash}")
            return 0
        asyncio.run(run_anchorer(anchor, at_utc=settings.anchor_time_utc))
    except AnchorError as exc:
        print(f"anchor: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
