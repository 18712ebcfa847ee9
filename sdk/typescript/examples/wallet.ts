// The wallet calls beyond the seed's loop: spend, compound, memory, brain, network. Prints one JSON line.
import { AgentLedger, AgentLedgerError, addAmounts } from "@agentledger/sdk";

const baseUrl = process.env["AGENTLEDGER_URL"] ?? "http://127.0.0.1:8080";
const { apiKey, agent } = await new AgentLedger({ baseUrl }).register("tour", "youtube");
const ledger = new AgentLedger({ apiKey, baseUrl });
const wallet = agent.wallet;

await ledger.earn(wallet, "100", "sponsorship"); // balance 98 (owner 97 + agent 1)
const spent = await ledger.spend(wallet, "12.345678", "ads");
const compounded = await ledger.compound(wallet, 10); // 10% of what is spendable moves to reinvested
await ledger.remember(wallet, "plan", { next: "shorts", budget: 0.5, tags: ["a", "b"] });
const memories = await ledger.memories(wallet, { query: "plan" });
await ledger.updateBrain(wallet, { action: "sold", niche: "youtube", price: "19.99", revenue: "19.99", name: "thumbnail pack" });
const { brain } = await ledger.brain(wallet);
const network = await ledger.network();
const summary = await ledger.getAgent(wallet);

let refused = "";
try {
  await ledger.spend(wallet, "1000", "too much");
} catch (error) {
  if (error instanceof AgentLedgerError) refused = error.code ?? "";
}

console.log(
  JSON.stringify({
    spent: spent.spent,
    balanceAfterSpend: spent.balance,
    moved: compounded.moved,
    reinvested: summary.reinvested,
    balance: summary.balance,
    accounted: addAmounts(summary.balance, summary.reinvested, spent.spent),
    memory: memories.memories[0]?.value,
    totalSold: brain["totalSold"],
    networkAgents: network.totalAgents,
    refused,
  }),
);
