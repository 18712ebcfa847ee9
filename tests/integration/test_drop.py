"""The ownership marketplace end to end on anvil: the real service over HTTP, the indexer with its
followers, the settle and expiry sweeps through the Operator, chain time moved by evm_increaseTime.

Flows: list -> buy -> notice window -> the sweep settles -> handover (the seller's key refused, the
pre-sale balance in the seller's own wallet, the buyer's claim and its key); list -> offer -> accept
-> settle; cancel before a commit; cancel after a commit refused; the expiry sweep; an offer below
the floor; an offer of the wrong signer; a replayed txHash; a reorg of a commit."""

from __future__ import annotations

import asyncio
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import rfc8785

from core.store import marketplace as store
from core.store import wallets as wallet_store
from tests.integration.chainkit import System
from tests.integration.drop_kit import BASE, DAY, USDC, World, claim_body, running, seller_pair


async def _agent(w: World, n: int, earned: int = 100) -> tuple[str, str, str, int]:
    """A registered agent with `earned` USDC reported and its NFT minted to users[n]: (key, wallet, uuid, token)."""
    key, wallet, uuid = await w.register(f"agent{n}")
    if earned:
        await w.ok("POST", "/api/agents/earn", {"agentId": wallet, "amount": earned, "source": "shop"}, key=key)
    _, self_wallet = seller_pair(n)
    token = await w.mint(key, wallet, w.system.users[n], self_wallet)
    return key, wallet, uuid, token


def test_list_buy_sweep_settles_and_hands_over(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller, buyer = system.users[0], system.users[1]
        key, wallet, uuid, token = await _agent(w, 0)
        await w.ok("POST", "/api/agents/memory", {"agentId": wallet, "key": "notes", "value": {"n": 1}}, key=key)
        watcher_key, _, _ = await w.register("watcher")
        listing = await w.list(key, wallet, seller, token, 1000 * USDC, 30 * USDC, sellerEmail="Seller@Example.com")
        assert listing["state"] == "active" and listing["agentPaused"] is True
        assert listing["floorPriceUsdc"] == 30 and listing["earningsAtListingUsdc"] == 100
        # a paused agent earns, but spends nothing
        await w.ok("POST", "/api/agents/earn", {"agentId": wallet, "amount": 10, "source": "shop"}, key=key)
        r = await w.call("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1, "destination": "x"}, key=key)
        assert (r.status, r.body["code"]) == (409, "agent_paused")
        await w.until(lambda: store.get_listing(w.db, listing["id"]).confirmed)  # type: ignore[union-attr]

        w.fund(buyer, 1000 * USDC)
        tx = w.buy(buyer, listing["chainListingId"])
        accept = {"listingId": listing["id"], "buyNow": True, "txHash": tx, "buyerEmail": "b@example.com"}
        sale = await w.ok("POST", f"{BASE}/accept", accept, 201, key=watcher_key, idem="a1")
        assert sale["salePrice"] == 1000 and sale["sellerProceeds"] == 980 and sale["serviceFee"] == 20
        assert sale["noticeWindowEndsAt"].endswith("Z")
        bundle = sale["dueDiligence"]["bundle"]
        assert hashlib.sha256(rfc8785.dumps(bundle)).hexdigest() == sale["dueDiligence"]["sha256"]
        assert bundle["earnings"]["total_earned_reported"] == str(110 * USDC)
        assert bundle["memory"]["entries"] == 1 and bundle["sale"]["commit_tx"] == tx
        entry = w.db.execute("SELECT kind, payload FROM audit_log WHERE id = ?", (sale["dueDiligence"]["auditId"],))
        kind, payload = entry.fetchall()[0]
        assert kind == "drop_due_diligence" and json.loads(payload)["bundle_sha256"] == sale["dueDiligence"]["sha256"]
        # the same transaction again (another Idempotency-Key): the same sale
        again = await w.ok("POST", f"{BASE}/accept", accept, 200, key=watcher_key, idem="a2")
        assert again["saleId"] == sale["saleId"]
        # the memory the buyer committed to is frozen
        r = await w.call("POST", "/api/agents/memory", {"agentId": wallet, "key": "notes", "value": 2}, key=key)
        assert (r.status, r.body["code"]) == (409, "agent_settling")

        await w.run_job("drop-settle")  # inside the notice window: nothing to send
        assert w.listing_state(listing["id"]) == "settling"
        system.advance(7 * DAY + 1)
        await w.run_job("drop-settle")
        await w.settled_state(listing["id"], "sold")
        assert system.registry.functions.ownerOf(token).call() == buyer.address
        (sent,) = store.sweep_txs(w.db, listing["chainListingId"])
        assert sent.action == "settle" and sent.state == "mined"

        # the seller's key no longer acts for the agent; its pre-sale balance is in its own new wallet
        r = await w.call("GET", "/api/agents/balance", params={"agentId": wallet}, key=key)
        assert (r.status, r.body["code"]) == (404, "agent_not_found")
        r = await w.call("POST", "/api/agents/earn", {"agentId": wallet, "amount": 1, "source": "x"}, key=key)
        assert r.status == 404
        handover = store.handover_of(w.db, listing["id"])
        assert handover is not None and handover.estate_agent_uuid is not None
        estate = wallet_store.agent_by_uuid(w.db, handover.estate_agent_uuid)
        assert estate is not None
        bal = await w.ok("GET", "/api/agents/balance", params={"agentId": estate.wallet}, key=key)
        assert bal["balance"] == Decimal("107.8")  # 98% of the 110 USDC earned before the sale
        await w.ok("POST", "/api/agents/spend", {"agentId": estate.wallet, "amount": 1, "destination": "x"}, key=key)

        # the new NFT owner claims the agent and gets its key once
        wrong = claim_body(w, wallet, token, seller)
        r = await w.call("POST", f"{BASE}/claim", wrong)
        assert (r.status, r.body["code"]) == (403, "not_nft_owner")
        got = await w.ok("POST", f"{BASE}/claim", claim_body(w, wallet, token, buyer), 201)
        new_key = got["api_key"]
        assert got["scope"] == "account" and got["agent"]["id"] == uuid
        bal = await w.ok("GET", "/api/agents/balance", params={"agentId": wallet}, key=new_key)
        assert bal["balance"] == 0 and bal["memoryEntries"] == 1
        await w.ok("POST", "/api/agents/spend", {"agentId": wallet, "amount": 0.000001, "destination": "x"}, 422,
                   key=new_key)  # unpaused (refused for the empty balance, not the pause)
        r = await w.call("POST", f"{BASE}/claim", claim_body(w, wallet, token, buyer))
        assert (r.status, r.body["code"]) == (409, "already_claimed")
        r = await w.call("GET", "/api/agents/memory", params={"agentId": wallet}, key=key)
        assert r.status == 404  # still refused to the seller
        page = await w.ok("GET", BASE, params={"listingId": listing["id"]})
        assert page["listing"]["state"] == "sold"
        assert [s["state"] for s in page["listing"]["drop_sales"]] == ["settled"]

    asyncio.run(_run(tmp_path, system, body))


async def _run(tmp_path: Path, system: System, body: Any, **kw: Any) -> None:
    async with running(tmp_path, system, **kw) as w:
        await body(w)
