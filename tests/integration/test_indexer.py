"""The indexer against a real anvil: projections, reorgs of depth 1..64, resumption."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.anvil import Anvil
from core.chain import connect
from core.money import split
from core.store import Conn, Database, open_database
from core.store import connect as db_connect
from core.store.events import Event
from core.store.projections import dump
from indexer.fetch import RangeSizer
from indexer.rebuild import rebuild_from_events
from indexer.rpc import RpcClient
from scripts.devchain import USDC, System, deploy_dev_system, run_scenario
from tests.integration.indexer_kit import index_to_head, make_indexer, mine, reorg, signed_tx


@pytest.fixture(scope="module")
def chain() -> Iterator[System]:
    with Anvil() as node:
        system = deploy_dev_system(connect(node.rpc_url))
        system.rpc_url = node.rpc_url  # type: ignore[attr-defined]
        run_scenario(system)
        yield system


@pytest.fixture()
def snap(chain: System) -> Iterator[System]:
    snap_id = chain.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    yield chain
    chain.w3.provider.make_request("evm_revert", [snap_id["result"]])  # type: ignore[arg-type]


def url(system: System) -> str:
    return str(system.rpc_url)  # type: ignore[attr-defined]


def test_projections_follow_every_contract(snap: System, tmp_path: Path) -> None:
    rows = asyncio.run(index_to_head(tmp_path / "a.db", url(snap), snap))
    agents = {r[1]: r for r in rows["agents"]}
    # token 1 was sold on the marketplace to users[4]; token 2 is referred by token 1
    reg = snap.registry.functions
    for token_id, row in agents.items():
        assert row[3] == reg.ownerOf(token_id).call()
        assert row[4] == reg.selfWalletOf(token_id).call()
        assert row[8] == reg.lifetimeEarningsOf(token_id).call()
        assert bool(row[6]) == reg.isAgentPaused(token_id).call()
    assert agents[2][5] == 1  # referrer token
    assert agents[1][9] == snap.escrow.functions.priceOf(1).call()
    # every payout's parts match the split rule and sum to the amount
    assert len(rows["payouts"]) >= 6
    for p in rows["payouts"]:
        parts = split(p[7], p[14] is not None)
        assert (p[8], p[9], p[10], p[11]) == (parts.owner_cut, parts.agent_cut, parts.service_cut, parts.referral_cut)
    statuses = sorted(r[6] for r in rows["gateway_jobs"])
    assert statuses == ["refunded", "released", "resolved", "resolved"]
    assert sorted(r[6] for r in rows["escrow_jobs"]) == ["refunded", "refunded", "released"]
    assert sorted(r[8] for r in rows["listings"]) == ["cancelled", "committed", "expired", "settled"]
    assert [r[2] for r in rows["anchors"]] == [2**20]
    # the credit of the blacklisted owner was withdrawn again: outstanding 0
    assert all(r[3] == 0 for r in rows["credits"]) and rows["credits"]
    # events are unique per (chain, tx, log index) and cover every block's logs
    keys = [(r[0], r[3], r[4]) for r in rows["events"]]
    assert len(keys) == len(set(keys))
    logs = snap.w3.eth.get_logs(
        {
            "fromBlock": snap.deployment.deploy_block,
            "toBlock": "latest",
            "address": [a for n, a in snap.deployment.contracts.items() if n != "MockUSDC"],
        }
    )
    assert len(rows["events"]) == len(logs)


def test_backfill_reports_progress_and_everything_below_final_is_not_journaled(snap: System, tmp_path: Path) -> None:
    lines: list[str] = []
    head = snap.w3.eth.block_number
    rows = asyncio.run(
        index_to_head(
            tmp_path / "p.db", url(snap), snap, use_finalized_tag=False, progress=lambda s: lines.append(s.line())
        )
    )
    assert rows["events"]
    assert lines and all(
        re.fullmatch(r"block \d+/\d+ \(\d+%\) [\d,]+ blocks/s [\d,]+ events/s ETA [\d,]+s", ln) for ln in lines
    )
    assert lines[-1].startswith(f"block {head}/{head} (100%)")
    conn = db_connect(tmp_path / "p.db", durable=False)
    assert conn.execute("SELECT count(*) FROM reorg_undo").fetchone()[0] == 0  # all final: no journal
    conn.close()


@pytest.mark.parametrize("depth", [1, 2, 5, 17, 64])
def test_reorg_rolls_back_to_the_ancestor_and_equals_a_clean_reindex(snap: System, tmp_path: Path, depth: int) -> None:
    _reorg_equals_a_clean_reindex(snap, tmp_path, open_database(tmp_path / "live.db"), depth)


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
@pytest.mark.parametrize("depth", [2, 17])
def test_on_postgresql_a_reorg_rolls_back_to_what_a_clean_sqlite_index_holds(
    snap: System, tmp_path: Path, database: Database, depth: int
) -> None:
    """The same reorg on PostgreSQL (its undo journal is PL/pgSQL triggers): the rolled-back index
    equals a clean index of the new fork on SQLite, row by row."""
    _reorg_equals_a_clean_reindex(snap, tmp_path, database, depth)


def _reorg_equals_a_clean_reindex(s: System, tmp_path: Path, database: Database, depth: int) -> None:
    mine(s, 70)  # history deeper than any reorg below

    async def scenario() -> None:
        conn = database.connect(durable=False)
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s)  # anvil: final = head - 64 (its finalized tag)
            # events in the blocks that the reorg will replace: a hire, a release, a price change
            owner, buyer = s.users[2], s.users[1]
            s.mint_usdc(buyer.address, 1000 * USDC)
            s.approve(buyer, s.escrow.address, 1000 * USDC)
            s.tx(owner, s.escrow.functions.setPrice(2, 10 * USDC, 0))
            s.tx(buyer, s.escrow.functions.createJob(b"\x42" * 32, "agl_00000000000b", 10 * USDC, 7 * 86_400))
            await ix.run_until(s.w3.eth.block_number)
            nonce = s.w3.eth.get_transaction_count(s.operator.address)
            s.tx(s.operator, s.escrow.functions.release(b"\x42" * 32))  # the escrow release
            mine(s, max(0, depth - 1))
            await ix.run_until(s.w3.eth.block_number)
            before = dump(conn)
            assert any(r[6] == "released" for r in before["escrow_jobs"])
            # The new fork refunds the job instead, with the release's nonce: the release is gone for good.
            reorg(s, depth, [(signed_tx(s, s.operator, s.escrow.functions.refund(b"\x42" * 32), nonce), 0)])
            mine(s, 2)
            await ix.run_until(s.w3.eth.block_number)
            assert ix.status.reorgs == 1
            assert ix.status.last_reorg_depth == depth
        after = dump(conn)
        conn.close()
        clean = await index_to_head(tmp_path / "clean.db", url(s), s)
        assert after == clean  # row by row, every projection table
        job = next(r for r in after["escrow_jobs"] if r[1] == "0x" + "42" * 32)
        assert job[6] == "refunded"  # the release is gone, the refund of the new fork is in

    asyncio.run(scenario())


def test_restart_resumes_from_the_checkpoint_without_duplicates(snap: System, tmp_path: Path) -> None:
    s = snap

    async def scenario() -> None:
        db = tmp_path / "resume.db"
        conn = db_connect(db, durable=False)
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s)
            await ix.run_until(s.deployment.deploy_block + 20)
        conn.close()
        s.tx(s.users[2], s.escrow.functions.setPrice(2, 77 * USDC, 0))
        rows = await index_to_head(db, url(s), s)  # a new process: picks up at the checkpoint
        assert rows == await index_to_head(tmp_path / "clean.db", url(s), s)
        assert any(r[9] == 77 * USDC for r in rows["agents"])

    asyncio.run(scenario())


def test_reorg_while_the_indexer_was_down_is_detected_on_restart(snap: System, tmp_path: Path) -> None:
    s = snap

    async def scenario() -> None:
        db = tmp_path / "down.db"
        nonce = s.w3.eth.get_transaction_count(s.users[2].address)
        s.tx(s.users[2], s.escrow.functions.setPrice(2, 55 * USDC, 0))
        rows_before = await index_to_head(db, url(s), s)
        assert any(r[9] == 55 * USDC for r in rows_before["agents"])
        # While the indexer is "down", the block with that price is replaced by one with another price.
        reorg(s, 1, [(signed_tx(s, s.users[2], s.escrow.functions.setPrice(2, 56 * USDC, 0), nonce), 0)])
        mine(s, 1)
        rows = await index_to_head(db, url(s), s)
        assert rows == await index_to_head(tmp_path / "clean.db", url(s), s)
        prices = {r[1]: r[9] for r in rows["agents"]}
        assert prices[2] == 56 * USDC

    asyncio.run(scenario())


class Releases:
    """A follower of AgentEscrow's final events: writes each release to a table of its own and records
    (job, its projected status) as it sees it."""

    name = "releases"
    contracts = frozenset({"AgentEscrow"})

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        if event.name != "JobReleased":
            return
        job = event.args["jobId"]
        conn.execute("INSERT INTO derived VALUES (?, 'order released')", (job,))
        status = conn.execute("SELECT status FROM escrow_jobs WHERE job_id = ?", (job,)).fetchone()
        self.seen.append((job, status[0]))


def test_a_followers_writes_commit_with_the_final_event_and_a_reorg_never_reaches_them(
    snap: System, tmp_path: Path
) -> None:
    """A follower's derived write is in the step's transaction that makes its event final (present exactly
    when the event is final, seeing the event's projection); an event whose block a reorg replaces before
    it is final never reaches the follower, so there is nothing of it to undo."""
    s = snap
    mine(s, 3)

    async def scenario() -> None:
        conn = db_connect(tmp_path / "follow.db", durable=False)
        conn.execute("CREATE TABLE derived (job_id TEXT NOT NULL, note TEXT NOT NULL, PRIMARY KEY (job_id, note))")
        releases = Releases()
        owner, buyer = s.users[2], s.users[1]
        s.mint_usdc(buyer.address, 100 * USDC)
        s.approve(buyer, s.escrow.address, 100 * USDC)
        s.tx(owner, s.escrow.functions.setPrice(2, 10 * USDC, 0))
        for job in (b"\x77" * 32, b"\x78" * 32):
            s.tx(buyer, s.escrow.functions.createJob(job, "agl_00000000000b", 10 * USDC, 7 * 86_400))
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s, use_finalized_tag=False, confirmations=2, followers=[releases])
            await ix.run_until(s.w3.eth.block_number)
            earlier = [("0x" + "b0" * 32, "released")]  # the scenario's release, final long ago
            assert releases.seen == earlier
            nonce = s.w3.eth.get_transaction_count(s.operator.address)
            s.tx(s.operator, s.escrow.functions.release(b"\x77" * 32))
            await ix.run_until(s.w3.eth.block_number)
            job = "0x" + "77" * 32
            assert conn.execute("SELECT status FROM escrow_jobs WHERE job_id = ?", (job,)).fetchall() == [("released",)]
            assert releases.seen == earlier  # applied, not final: held from the follower
            reorg(s, 1, [(signed_tx(s, s.operator, s.escrow.functions.refund(b"\x77" * 32), nonce), 0)])
            mine(s, 2)
            await ix.run_until(s.w3.eth.block_number)
            assert ix.status.reorgs == 1
            assert conn.execute("SELECT status FROM escrow_jobs WHERE job_id = ?", (job,)).fetchall() == [("refunded",)]
            assert releases.seen == earlier  # the replaced release never reached it
            s.tx(s.operator, s.escrow.functions.release(b"\x78" * 32))
            mine(s, 2)
            await ix.run_until(s.w3.eth.block_number)
        assert releases.seen == [*earlier, ("0x" + "78" * 32, "released")]
        derived = sorted(conn.execute("SELECT job_id FROM derived").fetchall())
        assert derived == [("0x" + "78" * 32,), ("0x" + "b0" * 32,)]
        conn.close()

    asyncio.run(scenario())


def test_head_going_backwards_is_waited_out_then_a_real_fork_is_rolled_back(snap: System, tmp_path: Path) -> None:
    """evm_revert makes the head go backwards: not a reorg by itself (nothing is rolled back while
    the node is behind us); once the new fork is longer than our tip, the fork is detected."""
    s = snap
    mine(s, 2)
    snapshot = s.w3.provider.make_request("evm_snapshot", [])["result"]  # type: ignore[arg-type]

    async def scenario() -> None:
        conn = db_connect(tmp_path / "back.db", durable=False)
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s)
            s.tx(s.users[2], s.escrow.functions.setPrice(2, 31 * USDC, 0))
            mine(s, 3)
            tip = s.w3.eth.block_number
            await ix.run_until(tip)
            before = dump(conn)
            s.w3.provider.make_request("evm_revert", [snapshot])  # type: ignore[arg-type]
            assert s.w3.eth.block_number < tip
            for _ in range(3):
                assert await ix.step() is False  # waiting, not rolling back
            assert dump(conn) == before and ix.status.reorgs == 0
            s.tx(s.users[2], s.escrow.functions.setPrice(2, 32 * USDC, 0))
            mine(s, 6)
            await ix.run_until(s.w3.eth.block_number)
            assert ix.status.reorgs == 1
        rows = dump(conn)
        conn.close()
        assert rows == await index_to_head(tmp_path / "clean.db", url(s), s)
        assert {r[1]: r[9] for r in rows["agents"]}[2] == 32 * USDC

    asyncio.run(scenario())


class Interrupted(BaseException):
    """Not an Exception, as KeyboardInterrupt: no follower's savepoint skips it, so the step fails."""


class Breaker:
    """A follower of every contract, interrupted by the events from block `breaking` on."""

    name = "breaker"

    def __init__(self, contracts: frozenset[str], breaking: int) -> None:
        self.contracts, self.breaking = contracts, breaking

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        if event.block_number >= self.breaking:
            raise Interrupted("step interrupted")


def test_a_backfill_failing_part_way_keeps_whole_ranges_and_resumes(snap: System, tmp_path: Path) -> None:
    """The backfill commits one range while it decodes the next: a failure in a later range (here a
    follower interrupted in it) rolls that range back whole, keeps the committed ones, and a restart
    finishes the history exactly like a clean index."""
    s = snap
    dep = s.deployment
    ours: Any = [a for n, a in dep.contracts.items() if n != "MockUSDC"]
    blocks = sorted(
        {int(lg["blockNumber"]) for lg in s.w3.eth.get_logs({"fromBlock": dep.deploy_block, "address": ours})}
    )
    breaking = blocks[len(blocks) // 2]  # a block with our events, half-way through the history

    async def scenario() -> None:
        db = tmp_path / "partial.db"
        conn = db_connect(db, durable=False)
        async with RpcClient(url(s)) as rpc:
            breaker = Breaker(frozenset(dep.contracts), breaking)
            # many ranges: commits overlap the next decode
            ix = make_indexer(conn, rpc, s, RangeSizer(size=2, maximum=2), use_finalized_tag=False, followers=[breaker])
            with pytest.raises(Interrupted, match="step interrupted"):
                await ix.run_until(s.w3.eth.block_number)
        tip_row = conn.execute("SELECT block_number FROM sync_state").fetchone()
        assert tip_row is not None
        tip = int(tip_row[0])
        assert dep.deploy_block < tip < breaking  # earlier ranges committed, the failing one not
        assert ix.status.seen == tip
        stored: Any = conn.execute("SELECT count(*), max(block_number) FROM events").fetchone()
        expected = s.w3.eth.get_logs({"fromBlock": dep.deploy_block, "toBlock": tip, "address": ours})
        assert stored[0] == len(expected) and stored[1] <= tip  # every event up to the checkpoint, none after
        conn.close()
        rows = await index_to_head(db, url(s), s)  # restarted without the failing follower
        assert rows == await index_to_head(tmp_path / "clean.db", url(s), s)

    asyncio.run(scenario())


def test_backfill_checkpoints_on_a_thread_of_its_own(snap: System, tmp_path: Path) -> None:
    """While a backfill runs, the WAL checkpoints SQLite would run inside a COMMIT run on a thread and
    connection of their own at the same threshold; afterwards the connection checkpoints by itself
    again (the same wal_autocheckpoint) and the thread is gone. The rows are those of a plain run."""
    s = snap
    seen_threads: set[str] = set()

    class Watch:
        """A follower of every contract: the threads alive while each range is written."""

        name = "watch"
        contracts = frozenset(s.deployment.contracts)

        def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
            seen_threads.update(t.name for t in threading.enumerate())

    async def scenario() -> None:
        conn = db_connect(tmp_path / "ckpt.db", durable=False)
        conn.execute("PRAGMA wal_autocheckpoint=2")  # every range's COMMIT passes it
        async with RpcClient(url(s)) as rpc:
            # many ranges, many commits
            ix = make_indexer(conn, rpc, s, RangeSizer(size=2, maximum=2), use_finalized_tag=False, followers=[Watch()])
            await ix.run_until(s.w3.eth.block_number)
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchall() == [(2,)]
        rows = dump(conn)
        conn.close()
        assert rows == await index_to_head(tmp_path / "plain.db", url(s), s)

    asyncio.run(scenario())
    assert "indexer-checkpoint" in seen_threads
    for _ in range(250):
        if all(t.name != "indexer-checkpoint" for t in threading.enumerate()):
            break
        time.sleep(0.02)
    assert all(t.name != "indexer-checkpoint" for t in threading.enumerate())


def test_a_database_locked_past_the_busy_timeout_fails_a_step_not_the_indexer(snap: System, tmp_path: Path) -> None:
    """Another writer (an operator script, a backup) holds the file longer than the busy timeout:
    the step fails, the indexer keeps running, reports the error, and catches up once the lock goes."""
    s = snap
    db = tmp_path / "locked.db"

    async def scenario() -> None:
        conn = db_connect(db, durable=False)
        conn.setbusytimeout(50)
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s, use_finalized_tag=False, poll_interval=0.02)
            await ix.run_until(s.w3.eth.block_number)
            other = db_connect(db, durable=False)
            other.execute("BEGIN IMMEDIATE")  # hold the write lock
            stop = asyncio.Event()
            task = asyncio.create_task(ix.run(stop))
            s.tx(s.users[2], s.escrow.functions.setPrice(2, 77 * USDC, 0))
            head = s.w3.eth.block_number
            for _ in range(200):
                if "Busy" in ix.status.last_error:
                    break
                await asyncio.sleep(0.02)
            assert "Busy" in ix.status.last_error and not task.done()
            other.execute("ROLLBACK")
            other.close()
            for _ in range(300):
                # `seen` moves when the range commits (in the COMMIT's thread), the error clears when the
                # step returns, a moment later: wait for both
                if ix.status.seen >= head and ix.status.last_error == "":
                    break
                await asyncio.sleep(0.02)
            assert ix.status.seen >= head and not task.done() and ix.status.last_error == ""
            stop.set()
            await task
        prices = {r[1]: r[9] for r in dump(conn)["agents"]}
        conn.close()
        assert prices[2] == 77 * USDC

    asyncio.run(scenario())


def test_the_first_checkpoint_waits_for_the_write_lock_off_the_event_loop(snap: System, tmp_path: Path) -> None:
    """The indexer's very first write (the checkpoint before the deploy block) while another writer holds
    the lock, a writer that needs the event loop to finish (as the API's committer in the same process
    does): the indexer waits in a thread, the loop runs on, the other writer commits, the step goes
    through. Waiting on the loop froze both until the busy timeout failed the step (a CI run lost 60 s
    to that in test_drop)."""
    path = tmp_path / "first.db"
    db_connect(path).close()
    blocker = db_connect(path)
    loop_ran = threading.Event()
    released = threading.Thread(target=lambda: (loop_ran.wait(30), blocker.execute("COMMIT")))
    released.start()

    async def scenario() -> None:
        conn = db_connect(path, durable=False)
        async with RpcClient(url(snap)) as rpc:
            ix = make_indexer(conn, rpc, snap)
            real_call = rpc.call
            first = hex(snap.deployment.deploy_block - 1)

            async def call(method: str, params: list[Any], *args: Any, **kw: Any) -> Any:
                result = await real_call(method, params, *args, **kw)
                if method == "eth_getBlockByNumber" and params[0] == first:
                    blocker.execute("BEGIN IMMEDIATE")  # the lock is taken just before the indexer wants it
                    # runs only once the loop gets control back after this reply: the blocker then commits
                    asyncio.get_running_loop().call_soon(loop_ran.set)
                return result

            rpc.call = call  # type: ignore[method-assign]
            await ix.step()
            assert ix.status.seen is not None and ix.status.seen >= snap.deployment.deploy_block - 1
        conn.close()

    try:
        asyncio.run(scenario())
    finally:
        loop_ran.set()
        released.join()
        blocker.close()


def test_rebuild_from_the_recorded_events_equals_a_fresh_backfill_and_a_later_reorg_still_unwinds(
    snap: System, tmp_path: Path, database: Database
) -> None:
    """`indexer_admin reindex --from-events`: every projection rebuilt from the `events` table alone
    equals what the indexer built from the node, table by table; the events of blocks not yet final are
    journaled again, so a reorg after the rebuild rolls back to exactly a clean index of the new fork."""
    mine(s := snap, 70)

    async def scenario() -> None:
        conn = database.connect(durable=False)
        async with RpcClient(url(s)) as rpc:
            ix = make_indexer(conn, rpc, s)  # anvil: final = head - 64
            owner, buyer = s.users[2], s.users[1]
            s.mint_usdc(buyer.address, 1000 * USDC)
            s.approve(buyer, s.escrow.address, 1000 * USDC)
            s.tx(owner, s.escrow.functions.setPrice(2, 10 * USDC, 0))
            s.tx(buyer, s.escrow.functions.createJob(b"\x43" * 32, "agl_00000000000b", 10 * USDC, 7 * 86_400))
            nonce = s.w3.eth.get_transaction_count(s.operator.address)
            s.tx(s.operator, s.escrow.functions.release(b"\x43" * 32))
            await ix.run_until(s.w3.eth.block_number)
            built = dump(conn)
            journal = conn.execute("SELECT count(*) FROM reorg_undo").fetchone()[0]
            assert journal > 0  # the last blocks are not final: their writes are journaled
            # projections damaged (a bug, a hand edit): the rebuild needs only the recorded events
            conn.execute("UPDATE agents SET lifetime_earnings = 0")
            conn.execute("DELETE FROM escrow_jobs")
            recorded = conn.execute("SELECT count(*) FROM events").fetchone()[0]
            assert rebuild_from_events(conn, s.deployment.chain_id) == recorded
            assert dump(conn) == built  # row by row, every projection table (events included)
            assert conn.execute("SELECT count(*) FROM reorg_undo").fetchone()[0] == journal
            # the indexer goes on from its checkpoint, and a reorg of the rebuilt blocks unwinds them
            reorg(s, 1, [(signed_tx(s, s.operator, s.escrow.functions.refund(b"\x43" * 32), nonce), 0)])
            mine(s, 2)
            await ix.run_until(s.w3.eth.block_number)
            assert ix.status.reorgs == 1
        after = dump(conn)
        conn.close()
        assert after == await index_to_head(tmp_path / "clean.db", url(s), s)
        assert next(r for r in after["escrow_jobs"] if r[1] == "0x" + "43" * 32)[6] == "refunded"

    asyncio.run(scenario())
