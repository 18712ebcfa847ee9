"""The drop: an agent's NFT minted and listed on-chain by its owner, a buyer's EIP-712 offer signed
here, accepted by the seller on-chain, settled after the 7-day notice (chain time moved by anvil) and
the agent claimed by its new owner, whose key then reads it."""

from __future__ import annotations

from typing import Any

from _scenario import RPC_URL, URL, advance_chain_time, check, fresh_account, mint_test_usdc, run, until
from agentledger_sdk import AgentLedger

NOTICE = 7 * 86_400


def scenario() -> dict[str, Any]:
    self_wallet, seller, buyer_acct = fresh_account(), fresh_account(), fresh_account()
    with AgentLedger(URL) as owner, AgentLedger(URL) as buyer:
        wallet = owner.register("for-sale", "content_seo").agent.wallet
        minted = owner.drop_mint_agent(wallet, self_account=self_wallet, owner_address=seller.address)
        listed = owner.drop_list_agent(wallet, account=seller, rpc_url=RPC_URL, asking_price="100", floor_price="10")
        listing_id = str(listed["listing"]["id"])
        buyer.register("collector", "content_seo")
        mint_test_usdc(buyer_acct, "60")
        offer = buyer.drop_make_offer(listing_id, "42.5", account=buyer_acct, rpc_url=RPC_URL)
        offer_id = str(offer["offer"]["id"])
        sale = owner.drop_accept_offer(listing_id, offer_id, account=seller, rpc_url=RPC_URL)
        check(sale["viaOffer"] is True, f"sold through the offer: {sale.raw}")
        advance_chain_time(NOTICE + 1)

        def listing() -> Any:
            return buyer.drop_listings(listing_id=listing_id)["listing"]

        until(listing, lambda row: row["status"] == "sold", "the settle sweep to hand the agent over")
        claimed = buyer.drop_claim_agent(wallet, account=buyer_acct)
    with AgentLedger(URL, api_key=str(claimed["api_key"])) as new_owner:
        agent = new_owner.get_agent(wallet)
        check(agent.raw, "the claimed key reads the agent")
    return {"token": minted["tokenId"], "listing": listing_id, "offer": offer_id, "sale_price": sale["salePrice"]}


if __name__ == "__main__":
    run(scenario)
