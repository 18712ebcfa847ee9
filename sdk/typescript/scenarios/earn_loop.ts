// The seed's earn loop: register, earn (97/1/2), earnBatch, recordRun, getAgent; totals as decimal strings.
import { addAmounts, AmountError, ConflictError, type EarnResult } from "@agentledger/sdk";
import { check, env, equal, newAgent, run } from "./lib.ts";

await run("earn_loop", async () => {
  const { ledger, wallet } = await newAgent(env().url, "earner");

  const first = await ledger.earn(wallet, "100", "gumroad");
  equal([first.ownerCut, first.agentCut, first.serviceCut], ["97", "1", "2"], "the seed's split of 100");
  equal(first.net, "98", "the agent is credited owner + agent cuts");

  // 0.3 is exact to 6 decimals as a number; 0.1 + 0.2 (0.30000000000000004) is not and never leaves
  let refused = false;
  try {
    await ledger.earn(wallet, 0.1 + 0.2);
  } catch (error) {
    refused = error instanceof AmountError;
  }
  check(refused, "0.1 + 0.2 is refused before any request");
  const cents = await ledger.earn(wallet, 0.3);
  equal(addAmounts(cents.ownerCut, cents.agentCut, cents.serviceCut, cents.referralCut), "0.3", "the parts sum to 0.3 exactly");
  const micro = await ledger.earn(wallet, "0.000001"); // the smallest amount: the dust goes to the treasury
  equal(addAmounts(micro.ownerCut, micro.agentCut, micro.serviceCut), "0.000001", "the parts of 1 micro-USDC");
  const big = await ledger.earn(wallet, "123456789.999999");
  equal(addAmounts(big.ownerCut, big.agentCut, big.serviceCut), "123456789.999999", "the parts of a 6-decimal edge");

  const batch: EarnResult[] = await ledger.earnBatch([
    { wallet, amount: "10", source: "etsy" },
    { wallet, amount: 2.5 },
  ]);
  equal(batch.map((r) => r.ownerCut), ["9.7", "2.425"], "each payment of the batch split as earn does");

  const key = "earn-loop-once";
  const once = await ledger.earn(wallet, "1", "retry", { idempotencyKey: key });
  const again = await ledger.earn(wallet, "1", "retry", { idempotencyKey: key });
  check(!once.replayed && again.replayed && again.transactionId === once.transactionId, "a repeated key is applied once");

  const runs = await ledger.recordRun(wallet, true);
  const runs2 = await ledger.recordRun(wallet, false, { niche: "content_seo" });
  check(runs.runs.success === 1, "a success counted");
  check(runs2.runs.failure === 1, "a failure counted");

  const agent = await ledger.getAgent(wallet);
  const earned = addAmounts("100", "0.3", "0.000001", "123456789.999999", "10", "2.5", "1");
  equal(agent.totalEarned, earned, "totalEarned is every earning, as a decimal string");
  equal(agent.totalTransactions, 7, "one transaction per earning");
  const credited = addAmounts(first.net, cents.net, micro.net, big.net, batch[0]?.net ?? "0", batch[1]?.net ?? "0", once.net);
  equal(agent.balance, credited, "the balance is the sum of the nets");

  let code: string | undefined;
  try {
    await ledger.spend(wallet, "999999999", "somewhere");
  } catch (error) {
    if (error instanceof ConflictError) code = error.code;
  }
  equal(code, "insufficient_balance", "an overspend is a typed error with the API's code");

  return { wallet, totalEarned: agent.totalEarned, balance: agent.balance, totalTransactions: agent.totalTransactions };
});
