"""Orders follow the gateway's final events: a crashed complete heals from JobFunded (once), a
release mined before we recorded it still lands as completed -> released, disputes are reflected."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import apsw
from eth_abi import encode as abi_encode
from eth_account import Account
from eth_account.messages import encode_defunct

from core import audit
from core.checkout import orders
from core.checkout.follower import OrderFollower
from core.checkout.rules import job_id_for
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import connect, transaction
from core.store import orders as store
from indexer.rpc import RetryPolicy, RpcClient
from scripts.devchain import System, dev_account
from tests.integration.indexer_kit import make_indexer

AMOUNT = 250_000_000


def _setup(conn: apsw.Connection, system: System, wallet_id: str, account: int = 300) -> tuple[int, object]:
    provider = dev_account(account)
    token = system.register_agent(system.users[1].address, provider.address, wallet_id)
    with transaction(conn):
        conn.execute("INSERT INTO accounts (id, created_at) VALUES ('acc', 0) ON CONFLICT (id) DO NOTHING")
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
        system.fund_fn(buyer, bytes.fromhex(job[2:]), token, AMOUNT, system.now() + 48 * 3600),
    )
    return "0x" + bytes(receipt["transactionHash"]).hex()


async def _index(conn: apsw.Connection, system: System, rpc_url: str) -> None:
    follower = OrderFollower(time.time)
    async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc:
        ix = make_indexer(conn, rpc, system, use_finalized_tag=False, followers=[follower])
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
        orders.transition(conn, order.id, "acknowledged", actor="provider", now=time.time())
        orders.transition(conn, order.id, "in_progress", actor="provider", now=time.time())
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


def _release(system: System, provider: Any, job: str, cid: bytes, ts: int) -> str:
    """The gateway release with the provider's attestation over raw cid bytes (any bytes: anyone may)."""
    message = b"complete:" + job.encode() + b":" + cid + b":" + str(ts).encode()
    sig = Account.sign_message(encode_defunct(primitive=message), provider.key).signature
    # web3 encodes a str as UTF-8: build the calldata by hand (string and bytes share one encoding).
    selector = bytes(system.w3.keccak(text="release(bytes32,string,uint256,bytes)"))[:4]
    calldata = selector + abi_encode(["bytes32", "bytes", "uint256", "bytes"], [bytes.fromhex(job[2:]), cid, ts, sig])
    payer = system.users[5]
    tx = {
        "to": system.gateway.address,
        "data": calldata,
        "from": payer.address,
        "nonce": system.w3.eth.get_transaction_count(payer.address),
        "gas": 400_000,
        "gasPrice": system.w3.eth.gas_price,
        "chainId": system.w3.eth.chain_id,
    }
    h = system.w3.eth.send_raw_transaction(payer.sign_transaction(tx).raw_transaction)
    receipt = system.w3.eth.wait_for_transaction_receipt(h)
    assert receipt["status"] == 1
    return "0x" + bytes(h).hex()


def test_hostile_releases_do_not_stop_the_indexer_and_still_settle(system: System, tmp_path: Path) -> None:
    """Anyone can release with the provider's signature over any cid bytes and any timestamp: an
    invalid-UTF-8 cid and a 2**70 timestamp are applied (leniently), never crash the indexer; a release
    straight from `created` walks the order through completed to released."""
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    conn = connect(tmp_path / "h.db", durable=False)
    token, provider = _setup(conn, system, "agl_00000000f003")
    job1 = _pending_session(conn, "cs_h1", "agl_00000000f003", system.users[2].address)
    _fund(system, job1, token)
    job2 = _pending_session(conn, "cs_h2", "agl_00000000f003", system.users[2].address)
    _fund(system, job2, token)
    asyncio.run(_index(conn, system, rpc_url))
    _release(system, provider, job1, b"\xff\xfe-not-utf8", system.now())
    _release(system, provider, job2, b"bafy-ok", 2**70)
    asyncio.run(_index(conn, system, rpc_url))
    for job in (job1, job2):
        order = store.order_by_job(conn, job)
        assert order is not None and order.status == "released", order
        moves = [(h.from_state, h.to_state) for h in store.history(conn, order.id)]
        assert moves == [(None, "created"), ("created", "completed"), ("completed", "released")]
    assert store.order_by_job(conn, job2).attested_at is None  # type: ignore[union-attr]  # beyond int64
    rows = conn.execute("SELECT cid, attested_at FROM gateway_jobs WHERE job_id = ?", (job2,)).fetchall()
    # exact, not a lossy REAL: hex text on SQLite, NUMERIC(78,0) on PostgreSQL
    assert [(cid, int(at, 16) if isinstance(at, str) else at) for cid, at in rows] == [("bafy-ok", 2**70)]


def test_a_full_refund_by_the_arbiter_fails_the_order(system: System, tmp_path: Path) -> None:
    rpc_url = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    conn = connect(tmp_path / "r.db", durable=False)
    token, _provider = _setup(conn, system, "agl_00000000f004")
    job = _pending_session(conn, "cs_r", "agl_00000000f004", system.users[2].address)
    _fund(system, job, token)
    system.tx(system.users[2], system.gateway.functions.openDispute(bytes.fromhex(job[2:])))
    system.tx(system.arbiter, system.gateway.functions.resolveDispute(bytes.fromhex(job[2:]), 0))
    asyncio.run(_index(conn, system, rpc_url))
    order = store.order_by_job(conn, job)
    assert order is not None and order.status == "failed" and order.release_tx is None
    last = store.history(conn, order.id)[-1]
    assert (last.from_state, last.reason) == ("disputed", "dispute resolved: refunded to the buyer in full")
