"""The indexer against a real anvil behind a faulty provider (tests/integration/rpc_proxy.py):
dropped connections, delays, 429s, a small eth_getLogs range limit with and without suggested
ranges, a node that goes away for a while, and a block with more logs than the provider returns.
Whatever the faults, the index must equal a clean index read straight from anvil, row by row."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, web
from web3 import Web3

from core.anvil import Anvil
from core.chain import connect
from core.store import connect as db_connect
from core.store.projections import dump
from indexer.decode import INDEXED_CONTRACTS
from indexer.fetch import RangeSizer
from indexer.rpc import RetryPolicy, RpcClient, RpcError
from indexer.sync import Indexer
from scripts.devchain import USDC, System, deploy_dev_system, run_scenario
from tests.integration.indexer_kit import index_to_head, make_indexer, mine, signed_tx
from tests.integration.rpc_proxy import RpcProxy

Rows = dict[str, list[tuple[Any, ...]]]

# Many attempts with tiny backoff: a 25% fault rate must never exhaust the budget, and the run stays fast.
# The backoff stays well below the pacer's first interval (0.05 s), so a gap after a 429 shows the pacer.
FAULTY = RetryPolicy(attempts=12, base_delay=0.005, max_delay=0.01, timeout=10.0)
MAX_RANGE = 3
_JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def chain() -> Iterator[System]:
    with Anvil() as node:
        system = deploy_dev_system(connect(node.rpc_url))
        system.rpc_url = node.rpc_url  # type: ignore[attr-defined]
        run_scenario(system)
        yield system


@pytest.fixture(scope="module")
def clean(chain: System, tmp_path_factory: pytest.TempPathFactory) -> Rows:
    """The index of the unchanged chain, read straight from anvil."""
    return asyncio.run(index_to_head(tmp_path_factory.mktemp("clean") / "clean.db", url(chain), chain))


@pytest.fixture()
def snap(chain: System) -> Iterator[System]:
    snap_id = chain.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    yield chain
    chain.w3.provider.make_request("evm_revert", [snap_id["result"]])  # type: ignore[arg-type]


def url(system: System) -> str:
    return str(system.rpc_url)  # type: ignore[attr-defined]


async def backfill(db: Path, proxy: RpcProxy, system: System, head: int) -> tuple[Rows, Indexer, RpcClient]:
    """Index through `proxy` up to `head`, every block treated as final (the historical path)."""
    conn = db_connect(db, durable=False)
    try:
        async with RpcClient(proxy.url, FAULTY) as rpc:
            ix = make_indexer(conn, rpc, system, use_finalized_tag=False, poll_interval=0.01)
            await ix.run_until(head, timeout=45)
        return dump(conn), ix, rpc
    finally:
        conn.close()


async def wait_until(cond: Callable[[], bool], timeout: float, what: str) -> float:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
    return time.monotonic()


def our_logs_per_block(system: System) -> collections.Counter[int]:
    addresses = [Web3.to_checksum_address(system.deployment.contracts[name]) for name in INDEXED_CONTRACTS]
    logs = system.w3.eth.get_logs(
        {"fromBlock": system.deployment.deploy_block, "toBlock": "latest", "address": addresses}
    )
    return collections.Counter(lg["blockNumber"] for lg in logs)


# ---- the proxy itself ------------------------------------------------------------------------------


def test_the_proxy_answers_a_batch_call_by_call(chain: System) -> None:
    head = chain.w3.eth.block_number

    async def scenario() -> None:
        async with (
            RpcProxy(url(chain), max_range=MAX_RANGE) as proxy,
            RpcClient(proxy.url, RetryPolicy(attempts=3, base_delay=0.01)) as rpc,
        ):
            proxy.fail_next("503", 1, method="eth_getLogs")  # skips requests without eth_getLogs
            number, refused, logs = await rpc.batch(
                [
                    ("eth_blockNumber", []),
                    ("eth_getLogs", [{"fromBlock": "0x1a", "toBlock": "latest"}]),
                    ("eth_getLogs", [{"fromBlock": "0x1a", "toBlock": "0x1c"}]),
                ]
            )
            assert int(number, 16) == head
            assert isinstance(refused, RpcError) and refused.code == -32005
            assert "[0x1a, 0x1c]" in refused.message  # the suggestion starts at the requested fromBlock
            assert isinstance(logs, list) and logs
            assert proxy.counts["503"] == 1 and proxy.counts["http"] == 2 and rpc.requests == 2
            assert proxy.get_logs == [(0x1A, head, "range"), (0x1A, 0x1C, "ok")]
            proxy.suggest_range = False
            with pytest.raises(RpcError, match="block range is too large"):
                await rpc.call("eth_getLogs", [{"fromBlock": "0x1", "toBlock": "0x4"}])

    asyncio.run(scenario())


# ---- backfill through drops, delays, 429s and a 3-block range limit --------------------------------


@pytest.mark.parametrize("suggest", [True, False], ids=["suggested-range", "no-suggestion"])
def test_backfill_through_a_faulty_range_limited_provider_equals_a_clean_index(
    chain: System, clean: Rows, tmp_path: Path, suggest: bool
) -> None:
    head = chain.w3.eth.block_number
    start = chain.deployment.deploy_block

    async def scenario() -> tuple[Rows, Indexer, RpcClient, RpcProxy]:
        async with RpcProxy(
            url(chain),
            seed=7,
            drop=0.2,
            throttle=0.05,
            delay=0.2,
            delay_ms=(5.0, 40.0),
            max_range=MAX_RANGE,
            suggest_range=suggest,
        ) as proxy:
            rows, ix, rpc = await backfill(tmp_path / "faulty.db", proxy, chain, head)
        return rows, ix, rpc, proxy

    rows, ix, rpc, proxy = asyncio.run(scenario())
    assert rows == clean  # row by row, every projection table

    # the faults really happened, and the client rode them out
    assert proxy.counts["drop"] >= 10 and proxy.counts["delay"] >= 10 and proxy.counts["429"] >= 2
    assert rpc.throttled == proxy.counts["429"]
    # each 429 slowed the client down: the next request came only after the pacer's interval (>= 0.05 s),
    # not after the retry backoff alone (<= 1.5 * max_delay = 0.015 s);
    # the median, so that one scheduling hiccup on a loaded machine cannot fail the test
    after_429 = [b[0] - a[0] - a[2] / 1000 for a, b in itertools.pairwise(proxy.timeline) if a[1] == "429"]
    assert after_429 and statistics.median(after_429) >= 0.04, after_429

    # the range sizer learnt the provider's limit ...
    assert proxy.counts["range_error"] > 0
    assert ix.sizer.size <= 4 * MAX_RANGE < RangeSizer().size  # it may double twice after the last refusal
    # ... and the ranges the provider served tile the chain from the deploy block to the head
    served = [(lo, hi) for lo, hi, outcome in proxy.get_logs if outcome == "ok"]
    assert all(hi - lo + 1 <= MAX_RANGE for lo, hi in served)
    assert served[0][0] == start and served[-1][1] == head
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(served)), served
    for (lo, hi, outcome), (lo2, hi2, _) in itertools.pairwise(proxy.get_logs):
        if outcome == "range":
            assert lo2 == lo  # the retry starts where the refused range started
            if suggest:  # with exactly the suggested span
                assert hi2 == min(lo + MAX_RANGE - 1, head)
            else:  # with a span no larger than the refused one
                assert hi2 - lo2 <= hi - lo


# ---- a block with more logs than the provider will return ----------------------------------------


def test_a_block_over_the_providers_log_limit_is_read_from_its_receipts(snap: System, tmp_path: Path) -> None:
    s, w3 = snap, snap.w3
    limit = max(our_logs_per_block(s).values())  # every block so far fits the provider's limit
    # Eight registrations in one block (two logs each): more logs than the provider returns at once.
    nonce = w3.eth.get_transaction_count(s.operator.address)
    raws, self_wallets = [], []
    for i in range(8):
        owner, self_wallet = (Web3.to_checksum_address(f"0x{0xC0DE0000 + 2 * i + k:040x}") for k in (0, 1))
        mint = s.registry.functions.mint(owner, self_wallet, f"agl_{0xC0DE00 + i:012x}", 0)
        raws.append(signed_tx(s, s.operator, mint, nonce + i))
        self_wallets.append(self_wallet)
    w3.provider.make_request("evm_setAutomine", [False])  # type: ignore[arg-type]
    try:
        hashes = [w3.provider.make_request("eth_sendRawTransaction", [raw])["result"] for raw in raws]  # type: ignore[arg-type]
        w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    finally:
        w3.provider.make_request("evm_setAutomine", [True])  # type: ignore[arg-type]
    heavy = w3.eth.block_number
    receipts = [w3.eth.get_transaction_receipt(h) for h in hashes]
    assert {r["blockNumber"] for r in receipts} == {heavy} and all(r["status"] == 1 for r in receipts)
    n_heavy = our_logs_per_block(s)[heavy]
    assert n_heavy == 16 > limit
    mine(s, 2)  # quiet blocks after it
    head = w3.eth.block_number

    with RpcProxy(url(s), max_logs=limit) as proxy:  # served from a background thread with its own loop
        rows, _, _ = asyncio.run(backfill(tmp_path / "heavy.db", proxy, s, head))
    assert (heavy, heavy, "too_many") in proxy.get_logs  # even the single block was refused ...
    assert proxy.receipts == [heavy]  # ... so it was read from its receipts, and only it
    assert sum(1 for r in rows["events"] if r[1] == heavy) == n_heavy
    assert set(self_wallets) <= {r[4] for r in rows["agents"]}  # the eight new agents
    assert rows == asyncio.run(index_to_head(tmp_path / "clean.db", url(s), s))


# ---- the node goes away for a while --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["503", "refuse"])
def test_run_waits_out_a_node_outage_and_catches_up(snap: System, tmp_path: Path, mode: str) -> None:
    s = snap
    outage = 1.5

    async def scenario() -> Rows:
        conn = db_connect(tmp_path / "live.db", durable=False)
        try:
            async with (
                RpcProxy(url(s)) as proxy,
                RpcClient(proxy.url, RetryPolicy(attempts=2, base_delay=0.02, max_delay=0.05, timeout=2.0)) as rpc,
            ):
                ix = make_indexer(conn, rpc, s, poll_interval=0.05)
                stop = asyncio.Event()
                task = asyncio.create_task(ix.run(stop))
                before = s.w3.eth.block_number
                await wait_until(lambda: ix.status.seen == before and ix.status.node_ok, 20, "the first catch-up")

                proxy.down(outage, mode)
                went_down = time.monotonic()
                # the chain moves on while the indexer cannot see it
                s.tx(s.users[2], s.escrow.functions.setPrice(2, 31 * USDC, 0))
                mine(s, 3)
                head = s.w3.eth.block_number
                await wait_until(lambda: not ix.status.node_ok, outage, "the outage to show")
                assert proxy.is_down  # seen while the node was still down
                assert ix.status.last_error
                assert ("HTTP 503" if mode == "503" else "Cannot connect") in ix.status.last_error
                assert ix.status.seen == before
                assert not task.done()  # run() keeps going

                # The error is cleared once the step that reached the head returns (seen and node_ok are
                # set inside it): wait for all three, not for a status caught between them.
                caught_up = await wait_until(
                    lambda: ix.status.seen == head and ix.status.node_ok and ix.status.last_error == "",
                    outage + 10,
                    "the catch-up after the outage",
                )
                assert caught_up - went_down >= outage * 0.9  # not before the node came back
                if mode == "refuse":  # the port was closed: later attempts never reached the proxy
                    assert proxy.counts["refused"] == 1
                else:
                    assert proxy.counts["down"] >= 2
                stop.set()
                await asyncio.wait_for(task, 5)
            return dump(conn)
        finally:
            conn.close()

    rows = asyncio.run(scenario())
    assert any(r[1] == 2 and r[9] == 31 * USDC for r in rows["agents"])  # the change made during the outage
    assert rows == asyncio.run(index_to_head(tmp_path / "clean.db", url(s), s))


# ---- realtime following through a range-limited provider ------------------------------------------


def test_realtime_following_through_a_range_limited_provider(chain: System, clean: Rows, tmp_path: Path) -> None:
    head = chain.w3.eth.block_number

    async def scenario() -> Rows:
        conn = db_connect(tmp_path / "rt.db", durable=False)
        try:
            async with (
                RpcProxy(url(chain), max_range=MAX_RANGE) as proxy,
                RpcClient(proxy.url, FAULTY) as rpc,
            ):
                ix = make_indexer(conn, rpc, chain)  # anvil's finalized tag: head - 64, the rest is realtime
                await ix.run_until(head, timeout=20)
            return dump(conn)
        finally:
            conn.close()

    assert asyncio.run(scenario()) == clean


def test_a_syncing_node_or_a_head_behind_us_is_waited_out_not_rolled_back(
    chain: System, clean: Rows, tmp_path: Path
) -> None:
    head = chain.w3.eth.block_number

    async def scenario() -> Rows:
        conn = db_connect(tmp_path / "sync.db", durable=False)
        try:
            async with RpcProxy(url(chain)) as proxy, RpcClient(proxy.url, FAULTY) as rpc:
                ix = make_indexer(conn, rpc, chain)
                await ix.run_until(head)
                before = dump(conn)
                # The node says it is syncing and reports a head far behind ours (a node that
                # restarted from an old snapshot): nothing may be rolled back.
                proxy.overrides.update(
                    eth_syncing={"startingBlock": "0x0", "currentBlock": "0x2", "highestBlock": hex(head + 10)},
                    eth_blockNumber="0x2",
                )
                for _ in range(3):
                    assert await ix.step() is False
                assert ix.status.node_syncing and ix.status.reorgs == 0
                assert dump(conn) == before
                del proxy.overrides["eth_syncing"]  # synced again, but still behind us: wait as well
                assert await ix.step() is False
                assert ix.status.reorgs == 0 and dump(conn) == before
                proxy.overrides.clear()
                await ix.run_until(head)
                assert not ix.status.node_syncing
            return dump(conn)
        finally:
            conn.close()

    assert asyncio.run(scenario()) == clean


# ---- eth_getLogs replies cut short -----------------------------------------------------------------


@contextlib.asynccontextmanager
async def rewriting_proxy(chain: System, rewrite: Callable[[bytes, bytes], bytes]) -> AsyncIterator[str]:
    """A loopback JSON-RPC proxy in front of anvil whose replies pass through rewrite(request, reply);
    yields its URL."""

    async def forward(request: web.Request) -> web.Response:
        body = await request.read()
        async with ClientSession() as http, http.post(url(chain), data=body, headers=_JSON) as resp:
            reply = await resp.read()
        return web.Response(body=rewrite(body, reply), content_type="application/json")

    app = web.Application()
    app.router.add_post("/", forward)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/"
    finally:
        await runner.cleanup()


def test_a_getlogs_reply_cut_short_is_fetched_again(chain: System, clean: Rows, tmp_path: Path) -> None:
    """The backfill reads eth_getLogs replies unparsed and parses them in its worker thread: a body
    cut short there (a proxy giving up mid-reply, after a 200) is fetched again, within the step."""
    cut: list[int] = []

    def rewrite(body: bytes, reply: bytes) -> bytes:
        if b'"eth_getLogs"' in body and len(cut) < 3 and len(reply) > 100:
            cut.append(len(reply))
            return reply[: len(reply) // 2]
        return reply

    async def scenario() -> Rows:
        conn = db_connect(tmp_path / "cut.db", durable=False)
        try:
            async with rewriting_proxy(chain, rewrite) as proxy_url, RpcClient(proxy_url, FAULTY) as rpc:
                # many ranges, so several replies are cut
                ix = make_indexer(conn, rpc, chain, RangeSizer(size=4, maximum=4), use_finalized_tag=False)
                await ix.run_until(chain.w3.eth.block_number, timeout=45)  # raises if a step failed
            return dump(conn)
        finally:
            conn.close()

    assert asyncio.run(scenario()) == clean
    assert len(cut) == 3


CREDITED = Web3.to_hex(Web3.keccak(text="PaymentCredited(address,uint256)"))


def test_a_getlogs_reply_repeating_a_log_is_refused_and_fetched_again(
    chain: System, clean: Rows, tmp_path: Path
) -> None:
    """A node (or a proxy) that repeats a log in an eth_getLogs reply: applied, it would count a credit
    twice or stop the indexer on a duplicate payout. The step is refused and the range fetched again;
    the index ends equal to a clean one and the indexer never stopped."""
    repeated: list[int] = []

    def rewrite(body: bytes, reply: bytes) -> bytes:
        if b'"eth_getLogs"' in body and len(repeated) < 3:
            parsed = json.loads(reply)
            logs = parsed.get("result") if isinstance(parsed, dict) else None
            credits = [i for i, lg in enumerate(logs or []) if lg["topics"][0] == CREDITED]
            if logs and credits:  # counted twice, a credit would stay outstanding after its withdrawal
                repeated.append(credits[0])
                parsed["result"] = [*logs[: credits[0] + 1], *logs[credits[0] :]]
                return json.dumps(parsed, separators=(",", ":")).encode()
        return reply

    async def scenario() -> Rows:
        conn = db_connect(tmp_path / "repeated.db", durable=False)
        try:
            async with rewriting_proxy(chain, rewrite) as proxy_url, RpcClient(proxy_url, FAULTY) as rpc:
                ix = make_indexer(conn, rpc, chain, use_finalized_tag=False, poll_interval=0.01)
                stop = asyncio.Event()
                task = asyncio.create_task(ix.run(stop))
                head = chain.w3.eth.block_number
                deadline = time.monotonic() + 45
                while ix.status.seen < head and time.monotonic() < deadline and not task.done():
                    await asyncio.sleep(0.05)
                assert not task.done() and ix.status.seen >= head
                stop.set()
                await task
            return dump(conn)
        finally:
            conn.close()

    assert asyncio.run(scenario()) == clean
    assert len(repeated) == 3
