// A buyer's five checkout steps with the EIP-712 funding consent (a viem account), and the provider's
// side: acknowledge, start, upload (signed in the headers), complete; the buyer then sees the order
// released, its USDC paid out exactly, and the session's webhooks signed.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, getAddress, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { verifyServiceSignature, verifyStandardWebhook } from "@agentledger/sdk";
import { check, env, equal, linkedProvider, newAgent, run } from "./lib.ts";

const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)"]);

await run("checkout_delivered", async () => {
  const { url, rpcUrl, privateKeys } = env();
  const buyerKey = privateKeys[0];
  check(buyerKey !== undefined, "a funded key");
  const buyerAccount = privateKeyToAccount(buyerKey);

  // the buyer's webhook receiver: every delivery's two signatures checked with the SDK
  let secret = "";
  const deliveries: { event: string; ok: boolean }[] = [];
  const hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const ok = (await verifyStandardWebhook(secret, headers, body)) && (await verifyServiceSignature(secret, body, headers["x-service-signature"] ?? ""));
        deliveries.push({ event: String((JSON.parse(body.toString()) as { type?: string; event?: string }).type ?? ""), ok });
        res.writeHead(ok ? 204 : 400).end();
      })();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  try {
    const seller = await linkedProvider(url, "seller");
    const item = await seller.ledger.createItem({ title: "Market report", tier: "standard", agentId: seller.wallet });
    const catalogue = await seller.ledger.listItems({ provider: seller.wallet });
    equal(catalogue.data.map((i) => [i.id, i.price]), [[item.id, item.price]], "the provider's catalogue, its price a decimal string");
    const buyer = await newAgent(url, "buyer");
    const dropped = await buyer.ledger.createCheckoutSession({ items: [{ id: item.id }] });
    equal((await buyer.ledger.cancelCheckoutSession(dropped.id)).status, "cancelled", "a session not wanted is cancelled");
    const info = await buyer.ledger.serviceInfo();
    const chain = createPublicClient({ transport: http(rpcUrl) });
    const usdc = getAddress(info.usdc);
    const balance = (who: `0x${string}`): Promise<bigint> => chain.readContract({ address: usdc, abi: ERC20, functionName: "balanceOf", args: [who] });

    // 1. the session
    const session = await buyer.ledger.createCheckoutSession({
      items: [{ id: item.id }],
      buyerEmail: "buyer@example.com",
      webhookUrl: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`,
    });
    secret = session.webhook_secret ?? "";
    const total = session.totals.find((t) => t.type === "total")?.amount ?? 0;
    equal(BigInt(total), BigInt(item.unit_amount), "the total is the item's price in micro-USDC");
    // 2. approve the gateway from the buyer's own account
    await buyer.ledger.approveCheckout(session, buyerAccount, rpcUrl);
    const before = await balance(buyerAccount.address);
    // 3. complete with the signed consent
    const paid = await buyer.ledger.completeCheckout(session, buyerAccount, { buyerEmail: "buyer@example.com" });
    const order = paid.order;
    check(paid.status === "completed" && order !== undefined && order.status === "created", "the session is paid and its order created");
    equal(await balance(buyerAccount.address), before - BigInt(total), "the buyer paid the total, no more");
    // 4. the funder's view
    const mine = await buyer.ledger.getOrder(order.id);
    check(mine["buyer_details"] !== undefined, "the funder sees its order's details");

    // 5. the provider's work
    const listed = await seller.ledger.providerOrders(seller.wallet);
    check(listed.data.some((o) => o["id"] === order.id), "the order is in the provider's list");
    equal((await seller.ledger.acknowledgeOrder(order.id, seller.selfWallet)).status, "acknowledged", "acknowledged");
    equal((await seller.ledger.startOrder(order.id, seller.selfWallet)).status, "in_progress", "started");
    const raw = new Uint8Array(300_000).map((_, i) => i % 251); // bytes, as multipart/form-data (> 256 KiB: two chunks)
    const file = await seller.ledger.uploadDeliverable(order.id, seller.selfWallet, raw, "report.bin");
    equal(file.size, raw.length, "the file's size as stored");
    const up = await seller.ledger.uploadDeliverable(order.id, seller.selfWallet, { title: "Market report", findings: ["demand is up"], n: 3 });
    const done = await seller.ledger.completeOrder(order.id, order.service_job_id, up.cid, seller.selfWallet);
    check(["completed", "released"].includes(done.status), `completed (${done.status})`);
    const receipt = await chain.waitForTransactionReceipt({ hash: done.txHash as `0x${string}`, pollingInterval: 100 });
    equal(receipt.status, "success", "the release transaction");
    const selfPaid = await balance(seller.selfWallet.address);
    const ownerPaid = await balance(seller.owner.address);
    check(selfPaid > 0n && ownerPaid > 0n && selfPaid + ownerPaid < BigInt(total), "the provider's wallets are paid their cuts of the total");

    // the buyer sees it released, and every webhook was signed
    let status = "";
    for (let i = 0; i < 100 && status !== "released"; i++) {
      status = (await buyer.ledger.getOrder(order.id)).status;
      if (status !== "released") await new Promise((r) => setTimeout(r, 100));
    }
    equal(status, "released", "the indexer saw the release");
    for (let i = 0; i < 100 && deliveries.length < 5; i++) await new Promise((r) => setTimeout(r, 100));
    check(deliveries.length >= 1 && deliveries.every((d) => d.ok), `webhooks signed (${JSON.stringify(deliveries)})`);
    return { order: order.id, cid: up.cid, total, releaseTx: done.txHash, webhooks: deliveries.length };
  } finally {
    hooks.close();
  }
});
