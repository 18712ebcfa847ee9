// What every scenario shares (sdk/scenarios/scenarios.json: the convention): the environment it is
// given, a check that names what failed, and the one JSON line it prints when every step held.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AgentLedger, verifyServiceSignature, verifyStandardWebhook, type PublishedService } from "@agentledger/sdk";
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

/** An agent linked as a provider: its registry token names a self wallet (default: a fresh key) and a fresh owner. */
export async function linkedProvider(url: string, name: string, selfWallet = privateKeyToAccount(generatePrivateKey())): Promise<LinkedProvider> {
  const { ledger, wallet } = await newAgent(url, name);
  const owner = privateKeyToAccount(generatePrivateKey());
  const linked = await ledger.linkProvider(wallet, selfWallet, owner.address);
  check(linked.token_id !== null, "the provider's registry token is minted");
  return { ledger, wallet, selfWallet, owner, tokenId: linked.token_id };
}

export interface Runner {
  url: string;
  /** One entry per job request: were both its signatures valid? */
  checked: boolean[];
  /** The signing secrets the publish answered, to check the requests with. */
  trust(service: PublishedService): void;
  close(): void;
}

/** A provider's job runner on loopback: checks both signatures of each request with the SDK, answers keywords. */
export async function keywordRunner(): Promise<Runner> {
  let standard = "";
  let raw = "";
  const checked: boolean[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        checked.push(
          (await verifyStandardWebhook(standard, headers, body)) && (await verifyServiceSignature(raw, body, headers["x-service-signature"] ?? "")),
        );
        const job = JSON.parse(body.toString()) as { input: { topic: string } };
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ keywords: [`${job.input.topic} tips`, `best ${job.input.topic}`] }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`,
    checked,
    trust(service) {
      check(typeof service.signingSecret === "string" && typeof service.signingSecretRaw === "string", "the signing secret, once");
      standard = service.signingSecret;
      raw = service.signingSecretRaw;
    },
    close: () => server.close(),
  };
}

export const KEYWORDS = {
  serviceType: "keyword_research",
  description: "keywords for a topic",
  inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
  outputSchema: { type: "object", properties: { keywords: { type: "array", items: { type: "string" } } } },
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
