// The drop: an agent's NFT listed by its owner, an EIP-712 offer from a buyer, accepted on-chain by the
// seller, settled after the notice window (this dev chain's clock moved forward), claimed by the buyer.
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { AgentLedgerError, type Listing } from "@agentledger/sdk";
import { check, env, equal, newAgent, run, sleep } from "./lib.ts";

const NOTICE_SECONDS = 7 * 24 * 3600;

await run("drop_offer_accepted", async () => {
  const { url, rpcUrl, privateKeys } = env();
  const [buyerKey, ownerKey] = [privateKeys[2], privateKeys[3]];
  check(buyerKey !== undefined && ownerKey !== undefined, "two funded keys");
  const owner = privateKeyToAccount(ownerKey); // sends list and acceptOffer: a funded key
  const buyerAccount = privateKeyToAccount(buyerKey);
  const chain = createPublicClient({ transport: http(rpcUrl) });

  const seller = await newAgent(url, "for sale");
  await seller.ledger.earn(seller.wallet, "100", "sales"); // the floor is at least 25% of lifetime earnings
  const minted = await seller.ledger.dropMint(seller.wallet, privateKeyToAccount(generatePrivateKey()), owner.address);
  check(minted.minted, "the agent's NFT is minted to its owner");
  const listing: Listing = await seller.ledger.dropList(seller.wallet, owner, rpcUrl, { askingPrice: "1000", floorPrice: "30" });
  equal(listing.state, "active", "listed");
  const browsed = await seller.ledger.dropBrowse({ listingId: listing.id });
  check(JSON.stringify(browsed).includes(listing.id), "the listing can be browsed");

  const buyer = await newAgent(url, "buyer");
  const block = await chain.getBlock();
  const { offer, signed } = await buyer.ledger.dropOffer(listing, buyerAccount, rpcUrl, { price: "300.5", nonce: 1, deadline: Number(block.timestamp) + 86_400 });
  equal([offer["state"], signed.offer.price], ["open", 300_500_000n], "the offer is open at its exact price");

  const sale = await seller.ledger.dropAccept(signed, owner, rpcUrl);
  equal(sale.salePrice, "300.5", "sold at the offer's price");
  check(sale["viaOffer"] === true, "the sale came through the offer");

  // the notice window, then settlement (this is a dev chain: its clock moves on request)
  await chain.request({ method: "evm_increaseTime" as never, params: [NOTICE_SECONDS + 1] as never });
  await chain.request({ method: "evm_mine" as never, params: [] as never });
  await seller.ledger.dropSettle(listing.chainListingId, buyerAccount, rpcUrl);

  // the buyer claims the agent once the service has followed the settlement
  let claimed: Awaited<ReturnType<typeof buyer.ledger.dropClaim>> | undefined;
  let lastError = "";
  for (let i = 0; i < 150 && claimed === undefined; i++) {
    try {
      claimed = await buyer.ledger.dropClaim(seller.wallet, minted.tokenId, buyerAccount);
    } catch (error) {
      if (!(error instanceof AgentLedgerError) || error.status === undefined || error.status >= 500) throw error;
      lastError = `${error.code}: ${error.message}`;
      await sleep(100);
    }
  }
  check(claimed !== undefined, `the buyer claimed the agent (${lastError})`);
  equal(claimed.agent["wallet"], seller.wallet, "the claimed agent");
  return { listing: listing.id, salePrice: sale.salePrice, claimedScope: claimed.scope };
});
