"""The ownership marketplace end to end on anvil: the real service over HTTP, the indexer with its
followers, the settle and expiry sweeps through the Operator, chain time moved by evm_increaseTime.

Flows: list -> buy -> notice window -> the sweep settles -> handover (the seller's key refused, the
pre-sale balance in the seller's own wallet, the buyer's claim and its key); list -> offer -> accept
-> settle; cancel before a commit; cancel after a commit refused; the expiry sweep; an offer below
the floor; an offer of the wrong signer; a replayed txHash; a floor under the reported earnings,
refused by the chain (the operator's earnings statement); a reorg of a commit."""

from __future__ import annotations

import asyncio
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from agentledger_sdk import AsyncAgentLedger

from core.store import marketplace as store
from core.store import wallets as wallet_store
from tests.integration.chainkit import System, assert_reverts
from tests.integration.drop_kit import BASE, DAY, USDC, World, claim_body, running, seller_pair
from tests.integration.indexer_kit import mine, reorg, signed_tx


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

        await w.until_projected(listing["chainListingId"], "committed")
        await w.run_job("drop-settle")  # inside the notice window: nothing to send
        assert w.listing_state(listing["id"]) == "settling"
        system.advance(7 * DAY + 1)
        await w.sweep_when_due("settle", listing["chainListingId"])
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
        await w.ok(
            "POST", "/api/agents/spend", {"agentId": wallet, "amount": 0.000001, "destination": "x"}, 422, key=new_key
        )  # unpaused (refused for the empty balance, not the pause)
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


def test_offer_accept_settle_and_the_offer_book(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller, buyer, other = system.users[0], system.users[1], system.users[2]
        key, wallet, _uuid, token = await _agent(w, 0)
        listing = await w.list(key, wallet, seller, token, 1000 * USDC, 30 * USDC)
        buyer_key, _, _ = await w.register("buyer")
        w.fund(buyer, 400 * USDC)
        # below the floor (25% of the 100 USDC earned, the on-chain floor being 30): refused
        r = await w.call("POST", f"{BASE}/offer", w.offer_body(listing, buyer, 20 * USDC, 1), key=buyer_key)
        assert (r.status, r.body["code"]) == (422, "offer_below_floor")
        # signed by another key than buyerAddress
        r = await w.call(
            "POST", f"{BASE}/offer", w.offer_body(listing, buyer, 300 * USDC, 1, signer=other), key=buyer_key
        )
        assert (r.status, r.body["code"]) == (401, "offer_signature_mismatch")
        # more than the buyer allows the marketplace
        r = await w.call("POST", f"{BASE}/offer", w.offer_body(listing, buyer, 500 * USDC, 1), key=buyer_key)
        assert (r.status, r.body["code"]) == (422, "insufficient_balance")
        offer = w.offer_body(listing, buyer, 300 * USDC, 7)
        got = await w.ok("POST", f"{BASE}/offer", offer, 201, key=buyer_key)
        assert got["offer"]["state"] == "open"
        r = await w.call("POST", f"{BASE}/offer", offer, key=buyer_key)
        assert (r.status, r.body["code"]) == (409, "offer_exists")
        # a second offer whose nonce the buyer then cancels on-chain: not fillable once that is final
        cancelled = w.offer_body(listing, buyer, 200 * USDC, 8)
        await w.ok("POST", f"{BASE}/offer", cancelled, 201, key=buyer_key)
        system.tx(buyer, system.market.functions.cancelOfferNonce(8))
        await w.until(lambda: any(o.state == "cancelled" for o in store.offers_of(w.db, listing["id"])))
        # the book: fillable or not; signatures to the seller only
        public = (await w.ok("GET", BASE, params={"listingId": listing["id"]}))["listing"]
        mine_ = (await w.ok("GET", BASE, params={"listingId": listing["id"]}, key=key))["listing"]
        by_nonce = {o["nonce"]: o for o in public["drop_offers"]}
        assert by_nonce["7"]["fillable"] is True and "signature" not in by_nonce["7"]
        assert by_nonce["8"]["fillable"] is False and by_nonce["8"]["notFillableReason"] == "cancelled"
        seller_view = {o["nonce"]: o for o in mine_["drop_offers"]}
        assert seller_view["7"]["signature"] == offer["signature"]

        o = (listing["chainListingId"], buyer.address, 300 * USDC, 7, offer["deadline"])
        receipt = system.tx(
            seller,
            system.market.functions.acceptOffer(listing["chainListingId"], o, bytes.fromhex(offer["signature"][2:])),
        )
        tx = "0x" + bytes(receipt["transactionHash"]).hex()
        r = await w.call("POST", f"{BASE}/accept", {"listingId": listing["id"], "buyNow": True, "txHash": tx}, key=key)
        assert (r.status, r.body["code"]) == (422, "wrong_commit_kind")
        sale = await w.ok(
            "POST", f"{BASE}/accept", {"listingId": listing["id"], "buyNow": False, "txHash": tx}, 201, key=key
        )
        assert sale["viaOffer"] is True and sale["salePrice"] == 300 and sale["offerId"] == got["offer"]["id"]
        states = {x.nonce: x.state for x in store.offers_of(w.db, listing["id"])}
        assert states == {7: "accepted", 8: "cancelled"}
        system.advance(7 * DAY + 1)
        await w.sweep_when_due("settle", listing["chainListingId"])
        await w.settled_state(listing["id"], "sold")
        assert system.registry.functions.ownerOf(token).call() == buyer.address

    asyncio.run(_run(tmp_path, system, body))


def test_cancel_before_commit_and_refused_after(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller, buyer = system.users[0], system.users[1]
        key, wallet, _uuid, token = await _agent(w, 0)
        first = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC)
        receipt = system.tx(seller, system.market.functions.cancel(first["chainListingId"]))
        tx = "0x" + bytes(receipt["transactionHash"]).hex()
        other_key, _, _ = await w.register("stranger")
        r = await w.call("POST", f"{BASE}/cancel", {"listingId": first["id"], "txHash": tx}, key=other_key)
        assert (r.status, r.body["code"]) == (404, "listing_not_found")  # not the seller's key
        got = await w.ok("POST", f"{BASE}/cancel", {"listingId": first["id"], "txHash": tx}, key=key)
        assert got["listing"]["state"] == "cancelled" and got["listing"]["agentPaused"] is False
        # The NFT's on-chain pause also pauses spending until the indexer has followed the cancel's block
        # (the cancel answered from its receipt): under load that can come after the answer.
        await w.until_projected(first["chainListingId"], "cancelled")
        await w.ok("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1, "destination": "x"}, key=key)

        second = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC)
        w.fund(buyer, 500 * USDC)
        w.buy(buyer, second["chainListingId"])
        await w.until(lambda: w.listing_state(second["id"]) == "settling")  # the final commit, unreported
        assert_reverts(
            lambda: system.market.functions.cancel(second["chainListingId"]).call({"from": seller.address}),
            "NoticeWindowActive",
        )
        r = await w.call("POST", f"{BASE}/cancel", {"listingId": second["id"], "txHash": tx}, key=key)
        assert (r.status, r.body["code"]) == (409, "notice_window_active")
        assert w.listing_state(second["id"]) == "settling"

    asyncio.run(_run(tmp_path, system, body))


def test_a_listing_answers_status_and_state_its_deprecated_name(system: System, tmp_path: Path) -> None:
    """The description names a listing's state `status`: every listing answer (recording, cancel, one
    listing, a page; HTTP, MCP and the SDK read the same JSON) carries it, and `state` too, the same value,
    deprecated in /api/schema until API 2.0.0; the page filter is `status`, `state` still taken."""

    async def body(w: World) -> None:
        seller = system.users[0]
        key, wallet, _uuid, token = await _agent(w, 0)
        listing = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC)
        assert listing["status"] == listing["state"] == "active"
        one = (await w.ok("GET", BASE, params={"listingId": listing["id"]}))["listing"]
        assert one["status"] == one["state"] == "active"
        receipt = system.tx(seller, system.market.functions.cancel(listing["chainListingId"]))
        tx = "0x" + bytes(receipt["transactionHash"]).hex()
        got = await w.ok("POST", f"{BASE}/cancel", {"listingId": listing["id"], "txHash": tx}, key=key)
        assert got["listing"]["status"] == got["listing"]["state"] == "cancelled"
        for params in ({"status": "cancelled"}, {"state": "cancelled"}, {"status": "cancelled", "state": "cancelled"}):
            page = await w.ok("GET", BASE, params=params)
            assert [(x["id"], x["status"], x["state"]) for x in page["listings"]] == [
                (listing["id"], "cancelled", "cancelled")
            ], params
        assert (await w.ok("GET", BASE, params={"status": "active"}))["total"] == 0
        r = await w.call("GET", BASE, params={"status": "active", "state": "cancelled"})
        assert (r.status, r.body["code"], r.body["param"]) == (400, "invalid_field", "state")
        async with AsyncAgentLedger(w.base, key) as sdk:
            page = await sdk.drop_listings(status="cancelled")
            assert page["listings"][0]["status"] == "cancelled"
            with pytest.warns(DeprecationWarning, match="status="):
                old = await sdk.drop_listings(state="cancelled")
            assert old["total"] == 1
        doc = await w.ok("GET", "/api/schema")
        listing_schema = doc["components"]["schemas"]["Listing"]["properties"]
        assert listing_schema["state"]["deprecated"] is True and "deprecated" not in listing_schema["status"]
        params = {p["name"]: p for p in doc["paths"][BASE]["get"]["parameters"]}
        assert params["state"]["deprecated"] is True and "deprecated" not in params["status"]

    asyncio.run(_run(tmp_path, system, body))


def test_expiry_sweep_returns_the_agent(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller = system.users[0]
        key, wallet, _uuid, token = await _agent(w, 0)
        listing = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC, duration=DAY)
        await w.until_projected(listing["chainListingId"], "listed")
        await w.run_job("drop-expire")  # before the expiry: nothing to send
        assert w.listing_state(listing["id"]) == "active"
        system.advance(DAY + 1)
        await w.sweep_when_due("expire", listing["chainListingId"])
        await w.settled_state(listing["id"], "expired")
        assert system.registry.functions.ownerOf(token).call() == seller.address
        assert [t.state for t in store.sweep_txs(w.db, listing["chainListingId"])] == ["mined"]
        await w.run_job("drop-expire")  # nothing more to send
        assert len(store.sweep_txs(w.db, listing["chainListingId"])) == 1
        await w.ok("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1, "destination": "x"}, key=key)
        async with AsyncAgentLedger(w.base, key) as sdk:  # the SDK reads the same listing
            seen = await sdk.drop_listings(agent_id=wallet)
            assert seen["listing"]["status"] == "expired" and seen["listing"]["id"] == listing["id"]
            page = await sdk.drop_listings(status="expired")
            assert page["total"] == 1 and page["pages"] == 1
        health = await w.ok("GET", "/healthz")
        assert health["jobs"]["drop-expire"]["runs"] == 3 and health["jobs"]["drop-settle"]["schedule"] == "every 300 s"

    asyncio.run(_run(tmp_path, system, body))


def test_listing_refusals_and_replayed_tx(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller = system.users[0]
        key, wallet, _uuid, token = await _agent(w, 0, earned=400)
        # the chain refuses a floor (50) under 25% of the 400 USDC the operator's statement reports
        statement, signature = await w.statement(key, wallet, seller)
        system.tx(seller, system.registry.functions.approve(system.market.address, token))
        list_fn = system.market.functions.list(token, 500 * USDC, 50 * USDC, 0, statement, signature)
        assert_reverts(lambda: system.tx(seller, list_fn), "FloorTooLow", 50 * USDC, 100 * USDC)
        tx = await w.list_onchain(key, wallet, seller, token, 500 * USDC, 100 * USDC)
        req = {"agentId": wallet, "txHash": tx, "askingPriceUsdc": 400, "acceptOffers": False}
        r = await w.call("POST", f"{BASE}/list", req, key=key)
        assert (r.status, r.body["code"]) == (422, "asking_price_mismatch")
        req = {**req, "askingPriceUsdc": 500}
        stranger_key, stranger_wallet, _ = await w.register("stranger")
        r = await w.call("POST", f"{BASE}/list", {**req, "agentId": stranger_wallet}, key=stranger_key)
        assert (r.status, r.body["code"]) == (422, "wrong_agent")
        first = await w.call("POST", f"{BASE}/list", req, key=key, idem="l1")
        replay = await w.call("POST", f"{BASE}/list", req, key=key, idem="l1")
        again = await w.call("POST", f"{BASE}/list", req, key=key, idem="l2")
        assert first.status == 201 and replay.headers.get("Idempotent-Replayed") == "true"
        assert again.status == 200 and again.body["listing"]["id"] == first.body["listing"]["id"]
        assert store.count_listings(w.db, "active") == 1
        r = await w.call("POST", f"{BASE}/list", {**req, "txHash": "0x" + "ab" * 32}, key=key)
        assert (r.status, r.body["code"]) == (422, "tx_not_found")

    asyncio.run(_run(tmp_path, system, body))


def test_a_floor_under_the_reported_earnings_is_refused_by_the_chain(system: System, tmp_path: Path) -> None:
    """1,000 USDC reported, none on-chain: a listing at a floor of 1 USDC cannot be made at all (the
    contract checks the floor against the operator's statement of the reported earnings), so no reader
    ever shows it and the agent is never paused for it; the statement's refusals."""

    async def body(w: World) -> None:
        seller, stranger = system.users[0], system.users[2]
        key, wallet, _uuid, token = await _agent(w, 0, earned=1000)
        async with AsyncAgentLedger(w.base, key) as sdk:
            got = await sdk.drop_statement(wallet, seller.address)
        assert (got["reportedEarningsUsdc"], got["onchainEarningsUsdc"], got["minimumFloorUsdc"]) == (1000, 0, 250)
        assert got["statement"]["tokenId"] == token and got["statement"]["seller"] == seller.address
        statement, signature = await w.statement(key, wallet, seller)
        system.tx(seller, system.registry.functions.approve(system.market.address, token))
        m = system.market.functions
        assert_reverts(
            lambda: system.tx(seller, m.list(token, 1000 * USDC, USDC, 0, statement, signature)),
            "FloorTooLow",
            USDC,
            250 * USDC,
        )
        # going to the chain with a statement of no earnings signed by anyone but the operator
        zero, forged = system.earnings_statement(seller.address, token, 0, signer=seller)
        assert_reverts(
            lambda: system.tx(seller, m.list(token, 1000 * USDC, USDC, 0, zero, forged)),
            "BadStatementSigner",
            seller.address,
        )
        assert system.registry.functions.ownerOf(token).call() == seller.address
        await w.ok("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1, "destination": "x"}, key=key)

        listing = await w.list(key, wallet, seller, token, 1000 * USDC, 250 * USDC)
        assert listing["floorPriceUsdc"] == 250 and listing["earningsAtListingUsdc"] == 1000
        # once the follower has the valid listing final, it has been past every earlier block: it
        # published nothing else
        await w.until(lambda: store.get_listing(w.db, listing["id"]).confirmed)  # type: ignore[union-attr]
        page = await w.ok("GET", f"{BASE}?state=active")
        assert [(x["id"], x["floorPriceUsdc"]) for x in page["listings"]] == [(listing["id"], 250)]

        refusals = [
            ({"agentId": wallet, "sellerAddress": stranger.address}, key, 403, "not_nft_owner"),
        ]
        other_key, other_wallet, _ = await w.register("unminted")
        refusals.append(
            ({"agentId": other_wallet, "sellerAddress": seller.address}, other_key, 404, "agent_not_minted")
        )
        refusals.append(({"agentId": wallet, "sellerAddress": seller.address}, other_key, 404, "agent_not_found"))
        for req, as_key, status, code in refusals:
            r = await w.call("POST", f"{BASE}/statement", req, key=as_key)
            assert (r.status, r.body["code"]) == (status, code), (req, r.body)

    asyncio.run(_run(tmp_path, system, body))


def test_reorg_of_a_commit_reverts_the_sale(system: System, tmp_path: Path) -> None:
    async def body(w: World) -> None:
        seller, buyer = system.users[0], system.users[1]
        key, wallet, _uuid, token = await _agent(w, 0)
        listing = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC)
        await w.until(lambda: store.get_listing(w.db, listing["id"]).confirmed)  # type: ignore[union-attr]
        w.fund(buyer, 500 * USDC)
        nonce = system.w3.eth.get_transaction_count(buyer.address)
        tx = w.buy(buyer, listing["chainListingId"])
        sale = await w.ok(
            "POST", f"{BASE}/accept", {"listingId": listing["id"], "buyNow": True, "txHash": tx}, 201, key=key
        )
        assert sale["final"] is False and w.listing_state(listing["id"]) == "settling"
        # the block with the buy is replaced by one where the buyer's nonce is spent on something else
        other = signed_tx(system, buyer, system.usdc.functions.approve(system.market.address, 0), nonce)
        reorg(system, 1, [(other, 0)])
        await w.run_job("drop-reconcile")
        assert w.listing_state(listing["id"]) == "active"
        sales = store.sales_of(w.db, listing["id"])
        assert [s.state for s in sales] == ["reorged"]
        kinds = [k for (k,) in w.db.execute("SELECT kind FROM audit_log ORDER BY id")]
        assert kinds[-1] == "drop_sale_reverted"
        mine(system, 4)
        await asyncio.sleep(0.3)
        assert w.listing_state(listing["id"]) == "active"  # no final commit ever arrived
        assert system.market.functions.getListing(listing["chainListingId"]).call()[2] == 1  # Listed

    asyncio.run(_run(tmp_path, system, body))
