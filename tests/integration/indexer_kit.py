"""Helpers for indexer tests: index a live anvil into a fresh SQLite file, compare databases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
from eth_account.signers.local import LocalAccount
from web3.contract.contract import ContractFunction

from core.store import connect
from core.store.projections import dump
from indexer.fetch import RangeSizer
from indexer.rpc import RetryPolicy, RpcClient
from indexer.sync import Indexer
from scripts.devchain import System


def make_indexer(
    conn: apsw.Connection, rpc: RpcClient, system: System, sizer: RangeSizer | None = None, **kw: Any
) -> Indexer:
    """An indexer of `system`'s contracts; `sizer`: its eth_getLogs ranges sized by this one from the start."""
    dep = system.deployment
    ix = Indexer(conn, rpc, chain_id=dep.chain_id, addresses=dep.contracts, start_block=dep.deploy_block, **kw)
    if sizer is not None:  # each phase holds the sizer it was built with: replacing ix.sizer alone reaches neither
        ix.sizer = ix.historical.sizer = ix.realtime.sizer = sizer
    return ix


async def index_to_head(db: Path, rpc_url: str, system: System, **kw: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Index from the deploy block to the current head into `db`; return every projection row."""
    conn = connect(db, durable=False)
    try:
        async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc:
            ix = make_indexer(conn, rpc, system, **kw)
            await ix.run_until(system.w3.eth.block_number)
        return dump(conn)
    finally:
        conn.close()


def mine(system: System, n: int = 1) -> None:
    for _ in range(n):
        system.w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]


def reorg(system: System, depth: int, replacements: list[tuple[str, int]] | None = None) -> None:
    """Replace the last `depth` blocks (anvil_reorg). Their transactions return to the pool and
    are mined again later, as on a real chain, unless `replacements` ((raw signed tx, block offset)
    pairs) spend the same nonces."""
    result = system.w3.provider.make_request("anvil_reorg", [depth, replacements or []])  # type: ignore[arg-type]
    assert "error" not in result, result


def signed_tx(system: System, account: LocalAccount, fn: ContractFunction, nonce: int) -> str:
    """A raw signed transaction of `fn` with an explicit nonce (to replace one in a reorg)."""
    tx = fn.build_transaction({"from": account.address, "nonce": nonce, "gas": 500_000})  # type: ignore[arg-type]
    return "0x" + bytes(account.sign_transaction(dict(tx)).raw_transaction).hex()
