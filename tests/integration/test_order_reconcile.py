"""With confirmations > 0 the API records an order's funding and its release from
receipts that are not final. A reorg that drops those transactions is reconciled by the written rule
(core.checkout.follower): a funding gone fails the order (and a funding mined again brings it back),
a release gone takes it back to in_progress; each with history, audit entry and webhook. Afterwards
the running service's orders agree with a fresh re-index of the chain."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from eth_account import Account
from eth_account.messages import encode_defunct

from api.app import create_app
from api.http import SERVICES
from core.checkout import orders
from core.checkout.context import Checkout
from core.checkout.follower import OrderFollower
from core.config import Settings
from core.operator import Operator
from core.store import connect
from core.store import orders as store
from core.store.projections import dump, get_tip
from indexer.rpc import RetryPolicy, RpcClient
from tests.integration.chainkit import USDC, System
from tests.integration.indexer_kit import index_to_head, make_indexer, mine, reorg
from tests.integration.test_checkout import Shop
from tests.integration.test_provider_orders import upload_headers
from tests.integration.test_providers import Clock, Harness

CONFIRMATIONS = 3


@asynccontextmanager
async def service(system: System, tmp_path: Path) -> AsyncIterator[Harness]:
    """The whole app (create_app) on a real SQLite file, its operator on the test chain."""
    db = connect(tmp_path / "ledger.db", durable=True)
    dep = system.deployment
    operator = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    app = create_app(
        dep,
        "http://127.0.0.1:9",
        db,
        settings=Settings(webhook_allow_private="true"),
        operator=operator,
        sweep_interval=None,
    )
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield Harness(
                session,
                str(server.make_url("")),
                db,
                Clock(),
                system,
                app,
                app[SERVICES].operator,
                app[SERVICES].part(Checkout),
                app[SERVICES].hooks,
            )
    finally:
        await server.close()
        db.close()


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_orders_from_dropped_receipts_are_reconciled_and_agree_with_a_fresh_index(
    system: System, tmp_path: Path
) -> None:
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    me = system.users[0]  # the provider's self wallet (Shop.open links it)

    def signed(action: str, order_id: str) -> dict[str, Any]:
        ts = int(time.time())
        sig = Account.sign_message(encode_defunct(text=orders.provider_message(action, order_id, ts)), me.key)
        return {"timestamp": ts, "signature": "0x" + bytes(sig.signature).hex()}

    def attestation(job_id: str, cid: str, later: int = 0) -> dict[str, Any]:
        ts = int(time.time()) + later
        sig = me.sign_message(encode_defunct(text=orders.completion_message(job_id, cid, ts))).signature
        return {"cid": cid, "timestamp": ts, "signature": "0x" + bytes(sig).hex()}

    async def main() -> None:
        async with service(system, tmp_path) as h:
            shop = await Shop(h, system.users[2]).open(approve=2_000 * USDC, mint=2_000 * USDC)
            mine(system, CONFIRMATIONS + 2)  # the set-up is final before anything is reorganised
            idb = connect(tmp_path / "ledger.db", durable=False)
            stop = asyncio.Event()
            async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc:
                ix = make_indexer(
                    idb,
                    rpc,
                    system,
                    confirmations=CONFIRMATIONS,
                    use_finalized_tag=False,
                    poll_interval=0.02,
                    followers=[OrderFollower(time.time)],
                )
                task = asyncio.create_task(ix.run(stop))
                try:
                    await scenario(h, shop)
                    head = system.w3.eth.block_number
                    await until(
                        lambda: (tip := get_tip(idb, system.deployment.chain_id)) is not None and tip[0] >= head,
                        "the tip",
                    )
                finally:
                    stop.set()
                    await task
            # the running service and a fresh re-index agree on every projection row and every order
            fresh_path = tmp_path / "fresh.db"
            assert dump(idb) == await index_to_head(fresh_path, rpc_url, system)
            fresh = connect(fresh_path, durable=False)
            jobs = dict(fresh.execute("SELECT job_id, status FROM gateway_jobs").fetchall())
            fresh.close()
            idb.close()
            expected = {None: "failed", "funded": "created", "released": "released"}  # by the job's status
            rows = h.db.execute("SELECT id, job_id, status FROM orders").fetchall()
            assert len(rows) == 2
            for order_id, job_id, order_status in rows:
                assert order_status == expected[jobs.get(job_id)], (order_id, order_status, jobs.get(job_id))

    async def scenario(h: Harness, shop: Shop) -> None:
        def status(order_id: str) -> str:
            order = store.get_order(h.db, order_id)
            assert order is not None
            return order.status

        # A: the funding transaction is dropped by a reorg -> failed; mined again later -> created again
        sid = await shop.new(buyer={"email": "b@example.com"}, webhook_url="http://127.0.0.1:9/hook")
        done = await shop.complete(sid)
        assert done.status == 200, done.body
        a = done.body["order"]["id"]
        fund_tx = done.body["order"]["settlement_tx_hash"]
        raw = system.w3.provider.make_request("eth_getRawTransactionByHash", [fund_tx])["result"]  # type: ignore[arg-type]
        reorg(system, 1)  # the funding's block is replaced by an empty one
        mine(system, CONFIRMATIONS + 1)
        await until(lambda: status(a) == "failed", "order A failed")
        last = store.history(h.db, a)[-1]
        assert (last.from_state, last.to_state, last.actor, last.reason) == (
            "created",
            "failed",
            "chain",
            orders.FUNDING_GONE,
        )
        payload = json.loads(h.db.execute("SELECT payload FROM audit_log WHERE id = ?", (last.audit_id,)).fetchone()[0])
        assert payload["to_state"] == "failed" and payload["reason"] == orders.FUNDING_GONE
        hooks = [json.loads(b) for (b,) in h.db.execute("SELECT body FROM outbox WHERE source = ?", (f"order:{a}",))]
        assert [w["status"] for w in hooks] == ["created", "failed"]
        system.w3.eth.send_raw_transaction(raw)  # a node broadcasts it again: mined in a later block
        mine(system, CONFIRMATIONS + 1)
        await until(lambda: status(a) == "created", "order A created again")
        assert store.history(h.db, a)[-1].reason == orders.FUNDING_BACK

        # B: the release transaction is dropped by a reorg -> back to in_progress, attest again -> released
        sid = await shop.new(buyer={"email": "b@example.com"})
        done = await shop.complete(sid)
        assert done.status == 200, done.body
        b, job_id = done.body["order"]["id"], done.body["order"]["service_job_id"]
        mine(system, CONFIRMATIONS + 1)
        await until(
            lambda: h.db.execute("SELECT funding_settled FROM orders WHERE id = ?", (b,)).fetchone()[0] == 1,
            "B's funding final",
        )
        assert (await h.call("POST", f"/api/acp/orders/{b}/start", signed("start", b))).status == 200
        data = b"the report"
        form = aiohttp.FormData()
        form.add_field("file", data, filename="r.txt")
        async with h.session.post(
            f"{h.base}/api/acp/orders/{b}/deliverables", data=form, headers=upload_headers(b, me, data)
        ) as r:
            cid = (await r.json())["cid"]
            assert r.status == 201
        first = await h.call("POST", f"/api/acp/orders/{b}/complete", attestation(job_id, cid))
        assert first.status == 200 and status(b) == "completed", first.body
        reorg(system, 1)  # the release's block is replaced by an empty one
        mine(system, CONFIRMATIONS + 1)
        await until(lambda: status(b) == "in_progress", "order B back in progress")
        order = store.get_order(h.db, b)
        assert order is not None and order.attestation is None and order.release_submitted_tx is None
        assert store.history(h.db, b)[-1].reason == orders.RELEASE_GONE
        again = await h.call("POST", f"/api/acp/orders/{b}/complete", attestation(job_id, cid, later=1))
        assert again.status == 200, again.body
        mine(system, CONFIRMATIONS + 1)
        await until(lambda: status(b) == "released", "order B released")

    asyncio.run(main())
