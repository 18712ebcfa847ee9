import { AgentLedger } from "@agentledger/sdk";

const baseUrl = process.env["AGENTLEDGER_URL"] ?? "http://127.0.0.1:8080"; // `make run`
// without a key, register creates an account and answers its key, once
const { apiKey, agent } = await new AgentLedger({ baseUrl }).register("scout", "content_seo");
const ledger = new AgentLedger({ apiKey, baseUrl });

const { ownerCut, agentCut, serviceCut } = await ledger.earn(agent.wallet, "12.5", "gumroad");
console.log({ ownerCut, agentCut, serviceCut }); // { ownerCut: '12.125', agentCut: '0.125', serviceCut: '0.25' }
await ledger.earnBatch([
  { wallet: agent.wallet, amount: "10", source: "shop" },
  { wallet: agent.wallet, amount: 2.5 }, // a number only when exact to 6 decimals (0.1 + 0.2 is refused)
]);
await ledger.recordRun(agent.wallet, true);
const { totalEarned, balance, totalTransactions } = await ledger.getAgent(agent.wallet);
console.log({ totalEarned, balance, totalTransactions }); // { totalEarned: '25', balance: '24.5', totalTransactions: 3 }
