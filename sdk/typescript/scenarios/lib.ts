// What every scenario shares (sdk/scenarios/scenarios.json: the convention): the environment it is
// given, a check that names what failed, and the one JSON line it prints when every step held.
import { AgentLedger } from "@agentledger/sdk";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";

export interface ScenarioEnv {
  url: string;
  rpcUrl: string;
  privateKeys: `0x${string}`[];
}

export function env(): ScenarioEnv {
  const url = process.env["AGENTLEDGER_URL"];
  if (!url) throw new Error("AGENTLEDGER_URL is not set");
  const keys = (process.env["AGENTLEDGER_PRIVATE_KEYS"] ?? "").split(",").filter((k) => k !== "");
  return {
    url,
    rpcUrl: process.env["AGENTLEDGER_RPC_URL"] ?? "",
    privateKeys: keys.map((k) => (k.startsWith("0x") ? k : `0x${k}`) as `0x${string}`),
  };
}

export function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`check failed: ${what}`);
}

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `${x}n` : x));

export function equal<T>(got: T, want: T, what: string): void {
  check(show(got) === show(want), `${what}: got ${show(got)}, want ${show(want)}`);
}

/** An account of its own (registration without a key answers the key once) and its first agent. */
export async function newAgent(url: string, name: string): Promise<{ ledger: AgentLedger; wallet: string; apiKey: string }> {
  const reg = await new AgentLedger({ baseUrl: url }).register(name, "content_seo");
  check(reg.apiKey !== undefined, "a keyless registration answers the new account's key");
  return { ledger: new AgentLedger({ baseUrl: url, apiKey: reg.apiKey }), wallet: reg.agent.wallet, apiKey: reg.apiKey };
}

export async function run(name: string, body: () => Promise<Record<string, unknown>>): Promise<void> {
  try {
    const summary = await body();
    console.log(JSON.stringify({ scenario: name, ok: true, ...summary }));
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  }
}

export interface LinkedProvider {
  ledger: AgentLedger;
  wallet: string;
  /** Signs the provider's calls (a fresh key: it needs no funds, the service mints the token). */
  selfWallet: PrivateKeyAccount;
  owner: PrivateKeyAccount;
  tokenId: number;
}

/** An agent linked as a provider: its registry token names a fresh self wallet and owner. */
export async function linkedProvider(url: string, name: string): Promise<LinkedProvider> {
  const { ledger, wallet } = await newAgent(url, name);
  const selfWallet = privateKeyToAccount(generatePrivateKey());
  const owner = privateKeyToAccount(generatePrivateKey());
  const linked = await ledger.linkProvider(wallet, selfWallet, owner.address);
  check(linked.token_id !== null, "the provider's registry token is minted");
  return { ledger, wallet, selfWallet, owner, tokenId: linked.token_id };
}
