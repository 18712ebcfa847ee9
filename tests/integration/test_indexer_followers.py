"""indexer.followers against a real anvil: features' followers get decoded FINAL events once each,
in chain order: held in memory while their block is not final, read back from the store only for
what this process never held (a restart, a follower added later), dropped when a reorg replaces
their block, and a follower's failure on one event skips that event, never the indexer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from core.anvil import Anvil
from core.chain import connect
from core.store import connect as db_connect
from core.store.events import Event
from indexer.rpc import RpcClient
from scripts.devchain import System, deploy_dev_system
from tests.integration.indexer_kit import make_indexer, mine, reorg, signed_tx


class Recorder:
    """A follower of AuditAnchor's final events that records what it was given."""

    contracts = frozenset({"AuditAnchor"})

    def __init__(self, name: str = "recorder", fail_on: int | None = None) -> None:
        self.name = name
        self.fail_on = fail_on
        self.seen: list[tuple[int, int]] = []  # (block, tree size)

    def apply(self, conn: apsw.Connection, chain_id: int, event: Event) -> None:
        if event.name != "Anchored":
            return
        size = int(event.args["treeSize"])
        if size == self.fail_on:
            conn.execute("INSERT INTO event_cursors (name, chain_id, block_number, log_index) VALUES ('x', 1, 1, 1)")
            raise ValueError("a value this follower cannot apply")  # its write above must be rolled back
        self.seen.append((event.block_number, size))


@pytest.fixture(scope="module")
def chain() -> Iterator[System]:
    with Anvil() as node:
        system = deploy_dev_system(connect(node.rpc_url))
        system.rpc_url = node.rpc_url  # type: ignore[attr-defined]
        yield system


@pytest.fixture()
def snap(chain: System) -> Iterator[System]:
    snap_id = chain.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    yield chain
    chain.w3.provider.make_request("evm_revert", [snap_id["result"]])  # type: ignore[arg-type]


def anchor(s: System, size: int) -> int:
    """One Anchored event in a block of its own; its block number."""
    receipt = s.tx(s.anchorer, s.anchor.functions.anchor(size, bytes([size]) * 32))
    return int(receipt["blockNumber"])


def run(s: System, db: Path, followers: list[Any], *, confirmations: int) -> None:
    async def go() -> None:
        conn = db_connect(db, durable=False)
        try:
            async with RpcClient(s.rpc_url) as rpc:  # type: ignore[attr-defined]
                ix = make_indexer(
                    conn, rpc, s, confirmations=confirmations, use_finalized_tag=False, followers=followers
                )
                await ix.run_until(s.w3.eth.block_number)
        finally:
            conn.close()

    asyncio.run(go())


def test_events_wait_until_final_and_a_restart_delivers_each_once(snap: System, tmp_path: Path) -> None:
    s, db = snap, tmp_path / "f.db"
    blocks = [anchor(s, n) for n in range(1, 6)]
    first = Recorder()
    run(s, db, [first], confirmations=2)  # the last two anchors are applied, not final
    assert first.seen == [(b, n) for b, n in zip(blocks[:3], range(1, 4), strict=True)]
    # the process "restarts": a new indexer and follower object, nothing in memory
    mine(s, 2)
    second = Recorder()
    run(s, db, [second], confirmations=2)
    assert second.seen == [(blocks[3], 4), (blocks[4], 5)]  # read back from the store, once
    more = anchor(s, 6)
    mine(s, 2)
    run(s, db, [second], confirmations=2)
    assert second.seen[-1] == (more, 6) and len(second.seen) == 3
    # a follower added to this database later gets every final event from the start (at the next block)
    late = Recorder("late")
    mine(s, 1)
    run(s, db, [second, late], confirmations=2)
    assert late.seen == first.seen + second.seen


def test_a_reorg_drops_held_events_of_the_replaced_blocks(snap: System, tmp_path: Path) -> None:
    s, db = snap, tmp_path / "r.db"
    anchor(s, 1)
    nonce = s.w3.eth.get_transaction_count(s.anchorer.address)
    gone = anchor(s, 2)  # above final when indexed: held, not delivered
    rec = Recorder()

    async def go() -> None:
        conn = db_connect(db, durable=False)
        try:
            async with RpcClient(s.rpc_url) as rpc:  # type: ignore[attr-defined]
                ix = make_indexer(conn, rpc, s, confirmations=3, use_finalized_tag=False, followers=[rec])
                await ix.run_until(s.w3.eth.block_number)
                assert rec.seen == []
                # the new fork anchors size 7 with the same nonce instead: size 2 never existed
                replacement = signed_tx(s, s.anchorer, s.anchor.functions.anchor(7, b"\x07" * 32), nonce)
                reorg(s, 1, [(replacement, 0)])
                mine(s, 4)
                await ix.run_until(s.w3.eth.block_number)
                assert ix.status.reorgs == 1
        finally:
            conn.close()

    asyncio.run(go())
    assert [size for _b, size in rec.seen] == [1, 7]
    assert all(block != gone or size == 7 for block, size in rec.seen)


def test_a_follower_failing_on_one_event_skips_it_and_keeps_the_rest(snap: System, tmp_path: Path) -> None:
    s, db = snap, tmp_path / "x.db"
    for n in range(1, 4):
        anchor(s, n)
    rec = Recorder(fail_on=2)
    run(s, db, [rec], confirmations=0)
    assert [size for _b, size in rec.seen] == [1, 3]
    conn = db_connect(db, durable=False)
    try:  # the failing event's write was rolled back with it; the cursor moved past it
        assert conn.execute("SELECT count(*) FROM event_cursors WHERE name = 'x'").fetchall() == [(0,)]
        cursor = conn.execute("SELECT block_number FROM event_cursors WHERE name = 'recorder'").fetchall()
        assert cursor == [(s.w3.eth.block_number,)]
    finally:
        conn.close()
