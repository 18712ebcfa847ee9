// Publish a service and hire it: the provider's runner (an HTTP server here) checks both signatures of
// each job request with the SDK; the caller gets the output, is charged the price, and reads the job's
// audit stream, whose leaves it recomputes.
import { addAmounts, auditLeafHash } from "@agentledger/sdk";
import { check, env, equal, keywordRunner, KEYWORDS, linkedProvider, newAgent, run } from "./lib.ts";

await run("hire", async () => {
  const { url } = env();
  const runner = await keywordRunner();
  try {
    const provider = await linkedProvider(url, "provider");
    const published = await provider.ledger.publishService({ ...KEYWORDS, agentId: provider.wallet, price: "2.5", runner: { type: "https", url: runner.url } });
    equal(published.priceUsdc, "2.5", "the published price");
    runner.trust(published);

    const caller = await newAgent(url, "caller");
    await caller.ledger.earn(caller.wallet, "10", "seed money");
    const before = await caller.ledger.getAgent(caller.wallet);
    const listed = await caller.ledger.registry({ serviceType: "keyword_research", wallet: provider.wallet });
    check(listed.providers.some((p) => p["wallet"] === provider.wallet), "the provider is in the registry");

    const job = await caller.ledger.hire(caller.wallet, "keyword_research", { topic: "jam" }, { providerWallet: provider.wallet, maxPrice: "3" });
    equal(job.value, { keywords: ["jam tips", "best jam"] }, "the job's output");
    equal(job.amountCharged, "2.5", "the charge is the price");
    equal(addAmounts(job.earnSplit.ownerCut, job.earnSplit.agentCut, job.earnSplit.serviceCut, job.earnSplit.referralCut), "2.5", "the provider's split");
    equal(runner.checked, [true], "the runner got one request, both signatures valid");
    const after = await caller.ledger.getAgent(caller.wallet);
    equal(addAmounts(after.balance, job.amountCharged), before.balance, "the caller's balance fell by the charge");

    const audit = await caller.ledger.hireAudit(job.jobId);
    check(audit.entries.length >= 2, "the job's moves are in its stream");
    audit.entries.forEach((e, i) => {
      equal(e.seq, i + 1, "entries in order");
      equal(e.leafHash, auditLeafHash(e.auditId, audit.stream, e.chainHash), `entry ${e.seq}'s leaf recomputed`);
      if (i > 0) equal(e.prevHash, audit.entries[i - 1]?.chainHash, "each entry chains to the one before");
    });
    const rep = await caller.ledger.reputation(provider.wallet, "keyword_research");
    check(rep.samples.length >= 1, "the job counts in the provider's reputation");
    return { jobId: job.jobId, charged: job.amountCharged, entries: audit.entries.length, status: audit.status };
  } finally {
    runner.close();
  }
});
