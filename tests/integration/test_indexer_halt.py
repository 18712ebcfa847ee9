"""A fork below finality halts the indexer, and the halt is visible to every process
sharing the database (/healthz says `halted` with the reason), money-moving calls that need the
indexer answer 503 until an operator acts, and the operator's commands (resume, reindex) work on the
running service."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from api.app import create_app
from core import indexing
from core.checkout.follower import OrderFollower
from core.store import connect
from core.store.projections import dump, get_tip
from indexer.rpc import RetryPolicy, RpcClient
from indexer.sync import Halted
from scripts import indexer_admin
from tests.integration.chainkit import System
from tests.integration.indexer_kit import index_to_head, make_indexer, mine, reorg, signed_tx
from tests.integration.test_checkout import Shop, job, status_of
from tests.integration.test_providers import Harness, assert_error, run


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_a_fork_below_finality_halts_until_an_operator_acts(
    system: System, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    chain_id = system.deployment.chain_id

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        path = tmp_path / "ledger.db"  # the harness's database: the indexer runs "apart", on the same file
        idb = connect(path, durable=False)
        stop = asyncio.Event()
        async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc:
            ix = make_indexer(
                idb,
                rpc,
                system,
                confirmations=2,
                use_finalized_tag=False,
                poll_interval=0.02,
                halt_poll=0.05,
                followers=[OrderFollower(time.time)],
            )
            mine(system, 6)  # the fork below replaces only empty blocks
            await ix.run_until(system.w3.eth.block_number)
            task = asyncio.create_task(ix.run(stop))
            try:
                # three of the five replaced blocks were final; the new branch holds a transaction, so its
                # blocks differ from the old empty ones even when their timestamps are the same
                who = system.users[7]
                nonce = system.w3.eth.get_transaction_count(who.address)
                tx = signed_tx(system, who, system.usdc.functions.approve(who.address, 0), nonce)
                reorg(system, 5, [(tx, 0)])
                await until(lambda: indexing.halt_of(h.db, chain_id) is not None, "the halt")
                halt = indexing.halt_of(h.db, chain_id)
                assert halt is not None and "reorg" in halt.reason and ix.status.halted == halt.reason

                # /healthz of an API process that does not run the indexer
                api = TestServer(create_app(system.deployment, rpc_url, connect(path)), host="127.0.0.1", port=0)
                await api.start_server()
                try:
                    async with aiohttp.ClientSession() as http, http.get(api.make_url("/healthz")) as r:
                        health = await r.json()
                finally:
                    await api.close()
                assert health["status"] == "degraded", health
                assert health["indexer"]["state"] == "halted" and health["indexer"]["reason"] == halt.reason
                assert health["indexer"]["haltedAt"].endswith("Z")

                # money-moving calls that need the indexer: a clear 503, nothing done
                refused = await shop.complete(sid)
                assert_error(refused, 503, "indexer_halted")
                assert refused.headers["Retry-After"] == "60"
                assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0

                # a restarted indexer stays halted (the halt is in the database, not in a process)
                other = connect(path, durable=False)
                try:
                    again = make_indexer(other, rpc, system, confirmations=2, use_finalized_tag=False)
                    try:
                        await again.step()
                        raise AssertionError("a halted indexer stepped")
                    except Halted as exc:
                        assert str(exc) == halt.reason
                finally:
                    other.close()

                # resume: the fork is real, so the indexer halts again (a later halt)
                assert indexer_admin.main(["resume", "--db", str(path)]) == 0
                await until(
                    lambda: (found := indexing.halt_of(h.db, chain_id)) is not None and found.since > halt.since,
                    "the second halt",
                )

                # reindex: rebuilt from the deploy block, it equals a fresh index of the chain
                assert indexer_admin.main(["reindex", "--db", str(path)]) == 0
                head = system.w3.eth.block_number
                await until(lambda: (tip := get_tip(h.db, chain_id)) is not None and tip[0] >= head, "the re-index")
                assert indexer_admin.main(["reindex", "--db", str(path)]) == 2  # not halted: refused
                # from the recorded events: one transaction beside the running indexer, no node asked
                capsys.readouterr()
                assert indexer_admin.main(["reindex", "--from-events", "--db", str(path)]) == 0
                assert f"rebuilt the projections of chain {chain_id} from " in capsys.readouterr().out
                assert dump(idb) == await index_to_head(tmp_path / "fresh.db", rpc_url, system)
                done = await shop.complete(sid)
                assert done.status == 200, done.body
            finally:
                stop.set()
                await task
        idb.close()

    run(tmp_path, system, body)
