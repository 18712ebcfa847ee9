"""Anchoring the audit log: put its (tree size, root) on the AuditAnchor contract.

The size and root are read from the SQLite log (core.store.audit, O(log n) reads); the last
anchored size is read from the chain, not from the indexer's table, so a lagging indexer never
causes a double anchor. Before anchoring, the log's root at the last anchored size must equal the
root on-chain: a log rewritten since (or a database that does not belong to this chain) is refused
instead of being anchored over. The transaction goes through the process's Operator, so it shares
one nonce sequence with every other transaction of the key. The `anchor` job runs it daily at
AGENTLEDGER_ANCHOR_TIME_UTC; `python -m scripts.anchor --once` runs it now.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from core.operator import Operator, tx_hash_of
from core.store import Conn, Database, open_database, read_snapshot
from core.store import audit as audit_store

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


def _log_head(db: Conn, last_size: int) -> tuple[int, bytes, bytes | None]:
    """(size, root, root at last_size) from one read snapshot of the log."""
    with read_snapshot(db):
        size = audit_store.size(db)
        root = audit_store.root(db, size)
        at_last = audit_store.root(db, last_size) if 0 < last_size <= size else None
    return size, root, at_last


async def anchor_once(operator: Operator, database: Database | Path | str) -> Anchored | None:
    """Anchor the log's current (size, root) unless the chain already has that size; None: nothing new."""
    last_size = int(await operator.call("AuditAnchor", "latestTreeSize"))
    db = open_database(database).connect(durable=False)
    try:
        size, root, at_last = _log_head(db, last_size)
    finally:
        db.close()
    if size <= last_size:
        if size < last_size:
            log.warning("the log has %d entries but %d are anchored: is this the right database?", size, last_size)
        return None
    if last_size > 0:
        onchain = bytes(await operator.call("AuditAnchor", "rootAt", last_size))
        if at_last != onchain:
            raise AnchorError(
                f"the log's root at the anchored size {last_size} is 0x{(at_last or b'').hex()}, the chain has "
                f"0x{onchain.hex()}: the log was rewritten (or is another log); refusing to anchor"
            )
    receipt = await operator.transact("AuditAnchor", "anchor", size, root)
    result = Anchored(size, root, tx_hash_of(receipt), receipt["blockNumber"], receipt["gasUsed"])
    log.info("anchored tree size %d root 0x%s in %s (gas %d)", size, root.hex(), result.tx_hash, result.gas_used)
    return result
