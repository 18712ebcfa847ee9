"""The marketplace ("drop") under test: the real service (create_app) over loopback HTTP with a real
SQLite file, the session's anvil, and the indexer with the order and market followers as a task."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import apsw
from aiohttp.test_utils import TestServer
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from api.app import create_app
from api.http import JOBS
from core.checkout.follower import OrderFollower
from core.config import Settings
from core.marketplace import MarketFollower, notices_for, rules
from core.operator import Operator
from core.store import connect
from core.store import marketplace as store
from indexer.rpc import RetryPolicy, RpcClient
from tests.integration.chainkit import USDC, System, test_account
from tests.integration.http_kit import Client, Reply
from tests.integration.indexer_kit import make_indexer

DAY = 86_400
BASE = "/api/a2a/drop"


def sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


@dataclass
class World(Client):
    system: System = field(default=None)  # type: ignore[assignment]
    db: apsw.Connection = field(default=None)  # type: ignore[assignment]
    app: Any = None
    db_path: Path = field(default=None)  # type: ignore[assignment]
    confirmations: int = 0

    @property
    def chain_id(self) -> int:
        return self.system.deployment.chain_id

    async def ok(self, method: str, path: str, body: Any = None, status: int = 200, **kw: Any) -> Any:
        r = await self.call(method, path, body, **kw)
        assert r.status == status, (method, path, r.status, r.body)
        return r.body

    async def register(self, name: str = "scout", key: str | None = None) -> tuple[str, str, str]:
        """(account key, agl_ wallet, uuid)."""
        body = await self.ok("POST", "/api/agents/register", {"name": name, "specialty": "content_seo"}, 201, key=key)
        return key or body["api_key"], body["agent"]["wallet"], body["agent"]["id"]

    async def mint(self, key: str, wallet: str, owner: LocalAccount, self_wallet: LocalAccount) -> int:
        ts = int(time.time())
        msg = rules.mint_message(
            chain_id=self.chain_id, wallet=wallet, self_wallet=self_wallet.address, owner=owner.address, timestamp=ts
        )
        body = {
            "agentId": wallet,
            "ownerAddress": owner.address,
            "selfWallet": self_wallet.address,
            "timestamp": ts,
            "signature": sign(self_wallet, msg),
        }
        got = await self.ok("POST", f"{BASE}/mint", body, 201, key=key)
        assert got["minted"] is True
        return int(got["tokenId"])

    async def statement(self, key: str, wallet: str, seller: LocalAccount) -> tuple[tuple[Any, ...], str]:
        """The service's EarningsStatement for `seller` to list `wallet`'s NFT: (struct, signature)."""
        got = await self.ok("POST", f"{BASE}/statement", {"agentId": wallet, "sellerAddress": seller.address}, key=key)
        st = got["statement"]
        fields = (st["tokenId"], st["seller"], int(st["reportedEarnings"]), int(st["nonce"]), st["deadline"])
        return fields, got["signature"]

    async def list_onchain(
        self, key: str, wallet: str, seller: LocalAccount, token: int, asking: int, floor: int, duration: int = 0
    ) -> str:
        """AgentMarketplace.list as a seller does it: the statement from the service, then the transaction."""
        s = self.system
        statement, signature = await self.statement(key, wallet, seller)
        s.tx(seller, s.registry.functions.approve(s.market.address, token))
        receipt = s.tx(seller, s.market.functions.list(token, asking, floor, duration, statement, signature))
        return "0x" + bytes(receipt["transactionHash"]).hex()

    def chain_listing_id(self, tx: str) -> int:
        receipt = self.system.w3.eth.get_transaction_receipt(tx)  # type: ignore[arg-type]
        (ev,) = self.system.events(receipt, "AgentMarketplace", "Listed")
        return int(ev["args"]["listingId"])

    async def list(
        self, key: str, wallet: str, seller: LocalAccount, token: int, asking: int, floor: int, **kw: Any
    ) -> dict[str, Any]:
        tx = await self.list_onchain(key, wallet, seller, token, asking, floor, kw.pop("duration", 0))
        body = {"agentId": wallet, "txHash": tx, "askingPriceUsdc": asking // USDC, "acceptOffers": True, **kw}
        r = await self.call("POST", f"{BASE}/list", body, key=key)
        # 201, or 200 when the follower recorded the (already final) listing first
        assert r.status in (200, 201), r.body
        return dict(r.body["listing"])

    def fund(self, buyer: LocalAccount, amount: int) -> None:
        s = self.system
        s.mint_usdc(buyer.address, amount)
        s.approve(buyer, s.market.address, amount)

    def buy(self, buyer: LocalAccount, chain_listing_id: int) -> str:
        receipt = self.system.tx(buyer, self.system.market.functions.buy(chain_listing_id))
        return "0x" + bytes(receipt["transactionHash"]).hex()

    def offer_body(
        self,
        listing: dict[str, Any],
        buyer: LocalAccount,
        price: int,
        nonce: int,
        *,
        signer: LocalAccount | None = None,
    ) -> dict[str, Any]:
        deadline = self.system.now() + DAY
        typed = rules.offer_typed_data(
            chain_id=self.chain_id,
            marketplace=self.system.market.address,
            listing_id=listing["chainListingId"],
            buyer=buyer.address,
            price=price,
            nonce=nonce,
            deadline=deadline,
        )
        sig = (signer or buyer).sign_typed_data(full_message=typed).signature.to_0x_hex()
        return {
            "listingId": listing["id"],
            "offerPriceUsdc": price // USDC,
            "buyerAddress": buyer.address,
            "nonce": nonce,
            "deadline": deadline,
            "signature": sig,
        }

    async def run_job(self, name: str) -> None:
        await self.app[JOBS].run_now(name)

    async def until_projected(self, chain_listing_id: int, status: str) -> None:
        """Until the indexer's projection of the on-chain listing has `status` (listed, committed, ...):
        a sweep run before that sees nothing, so "the sweep sent nothing" would prove nothing."""
        sql = "SELECT status FROM listings WHERE listing_id = ?"
        await self.until(lambda: self.db.execute(sql, (chain_listing_id,)).fetchall() == [(status,)])

    async def sweep_when_due(self, action: str, chain_listing_id: int) -> None:
        """Run the settle or expire sweep once the indexer's projection shows the listing due. The sweep
        reads the projection, not the chain, so running it before the indexer has followed the buy (or
        the listing) finds nothing to send; in service the job simply runs again at its next interval."""
        now = self.system.now()
        await self.until(lambda: chain_listing_id in store.due_on_chain(self.db, action, now))
        await self.run_job(f"drop-{action}")

    async def until(self, check: Callable[[], bool], timeout: float = 60.0) -> None:
        """Wait for the indexer (and its followers) to get there (a bound on waiting, not a speed figure:
        20 s once ran out in a full run on a loaded machine)."""
        deadline = time.monotonic() + timeout
        rounds = 0
        while not check():
            assert time.monotonic() < deadline, "timed out waiting for the indexer"
            rounds += 1
            if self.confirmations and rounds % 5 == 0:  # blocks come only with transactions: make some
                self.system.w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
            await asyncio.sleep(0.02)

    def listing_state(self, listing_uuid: str) -> str:
        row = store.get_listing(self.db, listing_uuid)
        assert row is not None
        return row.state

    async def settled_state(self, listing_uuid: str, state: str) -> None:
        await self.until(lambda: self.listing_state(listing_uuid) == state)


def claim_body(w: World, wallet: str, token: int, owner: LocalAccount, ts: int | None = None) -> dict[str, Any]:
    ts = int(time.time()) if ts is None else ts
    msg = rules.claim_message(chain_id=w.chain_id, wallet=wallet, token_id=token, owner=owner.address, timestamp=ts)
    return {"agentId": wallet, "ownerAddress": owner.address, "timestamp": ts, "signature": sign(owner, msg)}


@asynccontextmanager
async def running(
    tmp_path: Path, system: System, *, confirmations: int = 2, settings: Settings | None = None
) -> AsyncIterator[World]:
    dep = system.deployment
    rpc_url: str = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    db_path = tmp_path / "ledger.db"
    api_db = connect(db_path)
    indexer_db = connect(db_path, durable=False)
    read_db = connect(db_path)
    operator = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    settings = settings or Settings(webhook_allow_private="true", data_dir=tmp_path)
    app = create_app(dep, rpc_url, api_db, settings=settings, operator=operator)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    stop = asyncio.Event()
    followers = [OrderFollower(time.time), MarketFollower(time.time, notices_for(settings, dep.chain_id))]
    try:
        async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc, aiohttp.ClientSession() as http:
            ix = make_indexer(
                indexer_db,
                rpc,
                system,
                use_finalized_tag=False,
                poll_interval=0.02,
                confirmations=confirmations,
                followers=followers,
            )
            task = asyncio.create_task(ix.run(stop), name="indexer")
            try:
                yield World(http, str(server.make_url("")).rstrip("/"), system, read_db, app, db_path, confirmations)
            finally:
                stop.set()
                await task
    finally:
        await server.close()
        read_db.close()
        indexer_db.close()
        api_db.close()


def seller_pair(n: int) -> tuple[LocalAccount, LocalAccount]:
    """A self wallet that signs nothing on-chain (no ETH needed) for agent n."""
    return test_account(900 + n), test_account(950 + n)


__all__ = ["BASE", "DAY", "USDC", "Reply", "World", "claim_body", "running", "seller_pair", "sign"]
