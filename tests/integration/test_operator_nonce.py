"""After a reorg dropped the operator's transactions, the chain's nonce is behind
the operator's; the next send finds the gap, resyncs and succeeds (it used to wait in the node's
queue behind the gap until the 120 s receipt timeout, and so did every later one, until a restart)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import operator
from core.anvil import Anvil
from core.chain import connect
from core.operator import USDC, Operator, tx_hash_of
from core.store import ProcessLock, open_database
from tests.integration.chainkit import System, deploy_dev_system
from tests.integration.indexer_kit import reorg


@pytest.fixture()
def own_chain() -> Iterator[System]:
    """A chain of its own: anvil_reorg on the session's node, after hundreds of snapshot reverts, once
    answered calls at `latest` with no contract code (seen in one full run); a fresh node never has."""
    with Anvil() as node:
        yield deploy_dev_system(connect(node.rpc_url))


def test_the_next_send_after_a_reorg_dropped_ours_succeeds(own_chain: System, monkeypatch: pytest.MonkeyPatch) -> None:
    system = own_chain
    monkeypatch.setattr(operator, "RECEIPT_TIMEOUT", 10.0)  # a send stuck behind a gap fails in 10 s, not 120
    dep = system.deployment
    op = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    who = system.users[6].address
    usdc = system.usdc.functions

    async def main() -> None:
        before = usdc.balanceOf(who).call()
        nonce = system.w3.eth.get_transaction_count(op.address, "pending")
        await op.transact(USDC, "mint", who, 1)
        await op.transact(USDC, "mint", who, 2)
        assert usdc.balanceOf(who).call() == before + 3
        reorg(system, 2)  # both blocks replaced by empty ones: the node forgets both transactions
        assert system.w3.eth.get_transaction_count(op.address, "pending") == nonce  # two behind the operator
        assert usdc.balanceOf(who).call() == before
        third = await asyncio.wait_for(op.transact(USDC, "mint", who, 4), 30)
        assert third["status"] == 1 and op.resyncs == 1
        assert system.w3.eth.get_transaction(tx_hash_of(third))["nonce"] == nonce  # the gap closed
        assert usdc.balanceOf(who).call() == before + 4
        # and the one after needs no resync
        await asyncio.wait_for(op.transact(USDC, "mint", who, 8), 30)
        assert op.resyncs == 1 and usdc.balanceOf(who).call() == before + 12

    asyncio.run(main())


def _operators_sharing_the_key(system: System, db: Path, locked: bool) -> list[Operator]:
    """Two operators on one key, as two API processes would have, each with its own lock handle."""
    dep = system.deployment
    database = open_database(db)
    return [
        Operator(
            system.w3,
            system.operator,
            dep.contracts,
            dep.usdc,
            send_lock=ProcessLock(database, f"operator-{system.operator.address}").held if locked else None,
        )
        for _ in range(2)
    ]


def test_processes_sharing_the_key_never_take_the_same_nonce(system: System, tmp_path: Path) -> None:
    """The send lock on the database spans processes; 2 x 8 concurrent sends all land, and
    no send is ever refused for its nonce (without the lock, both sign the node's pending count)."""
    ops = _operators_sharing_the_key(system, tmp_path / "ledger.db", locked=True)
    who = system.users[7].address
    usdc = system.usdc.functions

    async def main() -> None:
        before = usdc.balanceOf(who).call()
        receipts = await asyncio.gather(*(op.transact(USDC, "mint", who, 1) for op in ops for _ in range(8)))
        assert all(r["status"] == 1 for r in receipts)
        assert usdc.balanceOf(who).call() == before + 16
        assert [op.nonce_conflicts for op in ops] == [0, 0]
        nonces = {system.w3.eth.get_transaction(tx_hash_of(r))["nonce"] for r in receipts}
        assert len(nonces) == 16

    asyncio.run(main())
