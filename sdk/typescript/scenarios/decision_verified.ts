// Log a decision, recompute its chain hash client-side as /methodology describes, check its inclusion proof.
import { sha256Hex, VerificationError, type Decision } from "@agentledger/sdk";
import { check, env, equal, newAgent, run } from "./lib.ts";

await run("decision_verified", async () => {
  const { ledger, wallet } = await newAgent(env().url, "decider");
  const { uuid } = await ledger.identity(wallet);

  const first: Decision = {
    eventType: "routine",
    contentHash: sha256Hex("approve invoice 42 for 12.50 USDC"),
    modelId: "planner",
    modelVersion: "2026-11",
    correlationRef: "invoice-42",
  };
  const second: Decision = {
    eventType: "critical",
    contentHash: sha256Hex("pay supplier"),
    modelId: "planner",
    modelVersion: "2026-11",
    evidenceManifest: [{ type: "pdf", sha256: sha256Hex("the signed quote") }],
  };
  const r1 = await ledger.logDecision(uuid, first);
  const r2 = await ledger.logDecision(uuid, second);
  const v1 = await ledger.verifyDecision(uuid, first, r1);
  const v2 = await ledger.verifyDecision(uuid, second, r2);
  equal([v1.seq, v1.prevHash], [1, "genesis"], "the stream's first entry");
  equal([v2.seq, v2.prevHash], [2, r1.chainHash], "the second entry chains to the first");
  check(v2.leafIndex === r2.auditId - 1 && v2.treeSize >= r2.auditId, "the leaf's place in the tree");

  // what was not logged does not verify: another content hash under the same receipt
  let caught = "";
  try {
    await ledger.verifyDecision(uuid, { ...second, contentHash: sha256Hex("something else") }, r2);
  } catch (error) {
    if (error instanceof VerificationError) caught = error.message;
  }
  check(caught.includes("payload hash"), `a changed decision is caught (${caught})`);

  return { agent: uuid, auditIds: [r1.auditId, r2.auditId], root: v2.root, treeSize: v2.treeSize };
});
