// Publish a service and hire it: the provider's runner (an HTTP server here) checks both signatures of
// each job request with the SDK; the caller gets the output, is charged the price, and reads the job's
// audit stream, whose leaves it recomputes.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { addAmounts, auditLeafHash, verifyServiceSignature, verifyStandardWebhook } from "@agentledger/sdk";
import { check, env, equal, linkedProvider, newAgent, run } from "./lib.ts";

await run("hire", async () => {
  const { url } = env();
  let secrets = { standard: "", raw: "" };
  const checked: boolean[] = [];
  const runner = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        checked.push(
          (await verifyStandardWebhook(secrets.standard, headers, body)) &&
            (await verifyServiceSignature(secrets.raw, body, headers["x-service-signature"] ?? "")),
        );
        const job = JSON.parse(body.toString()) as { input: { topic: string } };
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ keywords: [`${job.input.topic} tips`, `best ${job.input.topic}`] }));
      })();
    });
  });
  await new Promise<void>((resolve) => runner.listen(0, "127.0.0.1", resolve));
  try {
    const provider = await linkedProvider(url, "provider");
    const published = await provider.ledger.publishService({
      agentId: provider.wallet,
      serviceType: "keyword_research",
      price: "2.5",
      description: "keywords for a topic",
      inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      outputSchema: { type: "object", properties: { keywords: { type: "array", items: { type: "string" } } } },
      runner: { type: "https", url: `http://127.0.0.1:${(runner.address() as AddressInfo).port}/run` },
    });
    equal(published.priceUsdc, "2.5", "the published price");
    check(typeof published.signingSecret === "string" && typeof published.signingSecretRaw === "string", "the signing secret, once");
    secrets = { standard: published.signingSecret ?? "", raw: published.signingSecretRaw ?? "" };

    const caller = await newAgent(url, "caller");
    await caller.ledger.earn(caller.wallet, "10", "seed money");
    const before = await caller.ledger.getAgent(caller.wallet);
    const listed = await caller.ledger.registry({ serviceType: "keyword_research", wallet: provider.wallet });
    check(listed.providers.some((p) => p["wallet"] === provider.wallet), "the provider is in the registry");

    const job = await caller.ledger.hire(caller.wallet, "keyword_research", { topic: "jam" }, { providerWallet: provider.wallet, maxPrice: "3" });
    equal(job.value, { keywords: ["jam tips", "best jam"] }, "the job's output");
    equal(job.amountCharged, "2.5", "the charge is the price");
    equal(addAmounts(job.earnSplit.ownerCut, job.earnSplit.agentCut, job.earnSplit.serviceCut, job.earnSplit.referralCut), "2.5", "the provider's split");
    equal(checked, [true], "the runner got one request, both signatures valid");
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
