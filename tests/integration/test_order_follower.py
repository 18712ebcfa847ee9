"""Orders follow the gateway's final events: a crashed complete heals from JobFunded (once), a
release mined before we recorded it still lands as completed -> released, disputes are reflected."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import apsw
from eth_account import Account
from eth_account.messages import encode_defunct

from core import audit, orders
from core.checkout import job_id_for
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import orders as store
from core.store.db import connect, transaction
from indexer.order_follower import OrderFollower
from indexer.rpc import RetryPolicy, RpcClient
from scripts.devchain import System, dev_account
from tests.integration.indexer_kit import make_indexer

AMOUNT = 250_000_000


def _setup(conn: apsw.Connection, system: System, wallet_id: str) -> tuple[int, object]:
    provider = dev_account(300)
    token = system.register_agent(system.users[1].address, provider.address, wallet_id)
    with transaction(conn):
        conn.execute("INSERT OR IGNORE INTO accounts (id, created_at) VALUES ('acc', 0)")
        conn.execute(
            "INSERT INTO wallet_agents (uuid, wallet, account_id, name, specialty, referral_code, created_at)"
            " VALUES (?, ?, 'acc', 'p', 'content_seo', ?, 0)",
            (wallet_id, wallet_id, wallet_id[-8:].upper()),
        )
        conn.execute(
            "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
            " VALUES (?, ?, ?, ?, 0)",
            (wallet_id, provider.address, system.users[1].address, token),
        )
    return token, provider


def _pending_session(conn: apsw.Connection, sid: str, provider_uuid: str, buyer: str) -> str:
    job = job_id_for(sid)
    now = time.time()
    with transaction(conn):
        checkout_store.insert_session(
            conn,
            checkout_store.SessionRow(
                sid,
                "kh",
                "complete_in_progress",
                [{"item_id": "x", "quantity": 1}],
                {"email": "b@x.io"},
                provider_uuid,
                AMOUNT,
                None,
                None,
                job,
                buyer,
                None,
                None,
                now + 3600,
                now,
                now,
            ),
        )
    return job


def _fund(system: System, job: str, token: int) -> str:
    buyer = system.users[2]
    system.mint_usdc(buyer.address, AMOUNT)
    system.approve(buyer, system.gateway.address, AMOUNT)
    receipt = system.tx(
        system.operator,
        system.gateway.functions.fund(bytes.fromhex(job[2:]), buyer.address, token, AMOUNT, system.now() + 48 * 3600),
    )
    return "0x" + bytes(receipt["transactionHash"]).hex()


async def _index(conn: apsw.Connection, system: System, rpc_url: str) -> None:
    follower = OrderFollower(system.deployment.contracts, time.time)
    async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc:
        ix = make_indexer(conn, rpc, system, use_finalized_tag=False, finality_hooks=[follower])
        await ix.run_until(system.w3.eth.block_number)


def test_funding_event_heals_a_crashed_complete_once_and_release_follows(
    system: System, anvil: object, tmp_path: Path
) -> None:
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    conn = connect(tmp_path / "f.db", durable=False)
    token, provider = _setup(conn, system, "agl_00000000f001")
    job = _pending_session(conn, "cs_heal", "agl_00000000f001", system.users[2].address)
    fund_tx = _fund(system, job, token)
    asyncio.run(_index(conn, system, rpc_url))
    asyncio.run(_index(conn, system, rpc_url))  # again: nothing new, nothing twice
    session = checkout_store.get_session(conn, "cs_heal")
    assert session is not None and session.status == "completed" and session.order_id
    order = store.get_order(conn, session.order_id)
    assert order is not None and order.status == "created" and order.funding_tx == fund_tx
    assert conn.execute("SELECT count(*) FROM orders").fetchall()[0][0] == 1

    with transaction(conn):
        store.transition(conn, order.id, "acknowledged", actor="provider", now=time.time())
        store.transition(conn, order.id, "in_progress", actor="provider", now=time.time())
    # The provider's attestation is released on-chain, but our process died before recording it.
    cid, ts = "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", system.now()
    sig = Account.sign_message(encode_defunct(text=orders.completion_message(job, cid, ts)), provider.key)  # type: ignore[attr-defined]
    rel = system.tx(system.users[5], system.gateway.functions.release(bytes.fromhex(job[2:]), cid, ts, sig.signature))
    asyncio.run(_index(conn, system, rpc_url))
    order = store.get_order(conn, order.id)
    assert order is not None and order.status == "released"
    assert order.release_tx == "0x" + bytes(rel["transactionHash"]).hex()
    moves = [(h.from_state, h.to_state, h.actor) for h in store.history(conn, order.id)]
    assert moves[-2:] == [("in_progress", "completed", "chain"), ("completed", "released", "chain")]
    entries = audit_store.stream_entries(conn, audit.order_stream(order.id))
    assert len(entries) == 5 and entries[-1].seq == 5


def test_dispute_opened_and_resolved_are_reflected(system: System, tmp_path: Path) -> None:
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    conn = connect(tmp_path / "d.db", durable=False)
    token, _provider = _setup(conn, system, "agl_00000000f002")
    job = _pending_session(conn, "cs_disp", "agl_00000000f002", system.users[2].address)
    _fund(system, job, token)
    asyncio.run(_index(conn, system, rpc_url))
    order = store.order_by_job(conn, job)
    assert order is not None
    system.tx(system.users[2], system.gateway.functions.openDispute(bytes.fromhex(job[2:])))
    asyncio.run(_index(conn, system, rpc_url))
    got = store.get_order(conn, order.id)
    assert got is not None and got.status == "disputed"
    system.tx(system.arbiter, system.gateway.functions.resolveDispute(bytes.fromhex(job[2:]), AMOUNT // 2))
    asyncio.run(_index(conn, system, rpc_url))
    got = store.get_order(conn, order.id)
    assert got is not None and got.status == "released" and got.release_tx
    last = store.history(conn, order.id)[-1]
    assert (last.from_state, last.to_state, last.reason) == ("disputed", "released", "dispute resolved by the arbiter")
