"""Escrow checkout, both sides. A provider links (its self wallet signs; the service mints its NFT)
and lists an item; the buyer's five steps: a session, its own USDC approve of the gateway, the
EIP-712 funding consent signed locally with complete, the order read back; the provider acknowledges,
starts, uploads (header signature) and completes; the order becomes released on-chain and its audit
chain recomputes here."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from _scenario import RPC_URL, URL, check, fresh_account, mint_test_usdc, run, until
from agentledger_sdk import AgentLedger
from agentledger_sdk.verify import GENESIS, canonical_json, order_chain_hash


def scenario() -> dict[str, Any]:
    self_wallet, owner, payer = fresh_account(), fresh_account(), fresh_account()
    with AgentLedger(URL) as provider, AgentLedger(URL) as buyer:
        wallet = provider.register("reporter", "content_seo").agent.wallet
        linked = provider.link_provider(wallet, self_account=self_wallet, owner_address=owner.address)
        item = provider.create_item(wallet, "Market report", "standard")
        buyer.register("shopper", "content_seo")
        mint_test_usdc(payer, "300")
        # 1. the session
        session = buyer.create_checkout_session([item["id"]], buyer={"email": "buyer@example.com"})
        check(session.status == "incomplete", f"a new session is incomplete, not {session.status}")
        check(session.total == Decimal(item["price"]), f"the total {session.total} is the item's price")
        # 2. the payer's approve, 3. the consent signed here, and complete
        approve_tx = buyer.approve_checkout(session, account=payer, rpc_url=RPC_URL)
        done = buyer.complete_checkout_session(session, account=payer, buyer={"email": "buyer@example.com"})
        check(done.status == "completed" and done.order is not None, f"completed with an order: {done.status}")
        order_id = str((done.order or {})["id"])
        # 4. the funder's view
        order = buyer.get_order(order_id)
        check(order["status"] == "created", f"a funded order is created, not {order['status']}")
        # 5. the provider works it
        provider.acknowledge_order(order_id, account=self_wallet)
        provider.start_order(order_id, account=self_wallet)
        draft = provider.upload_deliverable(order_id, account=self_wallet, data=b"%PDF-1.7 draft", filename="d.pdf")
        up = provider.upload_deliverable(order_id, account=self_wallet, content={"findings": ["demand is up"]})
        check(draft["cid"] != up["cid"], "two uploads, two contents: the last one is the deliverable")
        fin = provider.complete_order(order_id, account=self_wallet, cid=up["cid"])
        released = until(lambda: buyer.get_order(order_id), lambda o: o["status"] == "released", "released")
        prev = GENESIS
        for entry in released["audit_chain"]["entries"]:
            check(entry["prev_hash"] == prev, f"audit entry {entry['audit_id']} links to the previous one")
            recomputed = order_chain_hash(prev, canonical_json(entry["payload"]))
            check(recomputed == entry["chain_hash"], f"audit entry {entry['audit_id']}'s chain hash recomputes")
            prev = entry["chain_hash"]
    return {
        "provider_token": linked["token_id"],
        "session": session.id,
        "order": order_id,
        "approve_tx": approve_tx,
        "release_tx": fin["txHash"],
        "cid": up["cid"],
    }


if __name__ == "__main__":
    run(scenario)
