/**
 * `new AgentLedger({ apiKey, baseUrl })`: the service's calls, camelCase, amounts as decimal strings.
 */
import { toAmount, type AmountInput } from "./decimal.js";
import { VerificationError } from "./errors.js";
import { JsonNumber, type Json } from "./json.js";
import { answer, createTransport, IDEMPOTENCY_HEADER, type Api, type Transport, type TransportOptions } from "./transport.js";
import type { components } from "./generated/schema.js";
import { auditLeafHash, canonicalJson, decisionChainHash, sha256Hex, verifyInclusion } from "./verify.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";
/** What `earn` sends as `source` when none is given (the API requires one). */
export const DEFAULT_SOURCE = "sdk";

export interface AgentLedgerOptions extends Partial<TransportOptions> {
  apiKey?: string | undefined;
  /** Default http://127.0.0.1:8080 (`make run`). */
  baseUrl?: string | undefined;
}

/** Options every value-moving call takes. */
export interface CallOptions {
  /** The Idempotency-Key to send (default: a new random UUID per call, reused on its retries). */
  idempotencyKey?: string;
}

export type JsonObject = { [key: string]: Json };
type Schemas = components["schemas"];
/** One of the service's specialty slugs. */
export type Specialty = Schemas["RegisterRequest"]["specialty"];

// ---- answers ----------------------------------------------------------------------------------

export interface Agent {
  id: string;
  wallet: string;
  name: string;
  specialty: string;
  balance: string;
  referralCode: string;
}

export interface Registration {
  agent: Agent;
  /** The new account's key: shown once (only when registering without a key). */
  apiKey: string | undefined;
}

/** The split of one earning; the three parts the seed names, and the rest of the service's answer. */
export interface EarnResult {
  ownerCut: string;
  agentCut: string;
  serviceCut: string;
  referralCut: string;
  /** ownerCut + agentCut: what the agent's balance was credited. */
  net: string;
  /** serviceCut (the seed's other name for it). */
  toll: string;
  balance: string;
  ownerBalance: string;
  agentSelfBalance: string;
  transactionId: number;
  message: string;
  /** True when this is the stored answer to an earlier call with the same Idempotency-Key. */
  replayed: boolean;
}

export interface EarnPayment {
  wallet: string;
  amount: AmountInput;
  /** Default "sdk" (DEFAULT_SOURCE). */
  source?: string;
}

export interface RunResult {
  key: string;
  runs: { success: number; failure: number };
}

/** The seed's getAgent answer: the balances and totals of one agent. */
export interface AgentSummary {
  balance: string;
  ownerBalance: string;
  agentSelfBalance: string;
  reinvested: string;
  totalEarned: string;
  reportedEarned: string;
  settledEarned: string;
  totalTransactions: number;
  memoryEntries: number;
}

export interface SpendResult {
  spent: string;
  destination: string;
  balance: string;
  ownerBalance: string;
  agentSelfBalance: string;
  transactionId: number;
  replayed: boolean;
}

export interface CompoundResult {
  balance: string;
  reinvested: string;
  moved: string;
  ownerBalance: string;
  agentSelfBalance: string;
  transactionId: number | null;
  replayed: boolean;
}

export interface Memory {
  key: string;
  /** As written (JSON; numbers as JavaScript numbers: memory is the agent's own data, not amounts). */
  value: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryPage {
  memories: Memory[];
  nextCursor: string | null;
}

export interface BrainUpdate {
  action: Schemas["BrainUpdateRequest"]["action"];
  niche: string;
  price: AmountInput;
  revenue?: AmountInput;
  name?: string;
}

export interface NetworkStats {
  totalAgents: number;
  totalEarned: string;
  totalTolls: string;
}

export interface Decision {
  eventType: "routine" | "high_stakes" | "critical";
  /** SHA-256 (64 lowercase hex) of the decision's content: the content itself never leaves you. */
  contentHash: string;
  modelId: string;
  modelVersion: string;
  evidenceManifest?: Schemas["EvidenceItem"][];
  correlationRef?: string;
  webhookUrl?: string;
  webhookSecret?: string;
}

export interface DecisionReceipt {
  auditId: number;
  chainHash: string;
  contentHash: string;
  tier: string;
  timestamp: string;
  verificationUrl: string;
  webhookSecret: string | undefined;
}

/** What verifyDecision recomputed and checked, each against the service's published answers. */
export interface DecisionVerification {
  auditId: number;
  stream: string;
  seq: number;
  prevHash: string;
  payloadHash: string;
  chainHash: string;
  leafHash: string;
  leafIndex: number;
  treeSize: number;
  root: string;
  anchored: boolean;
}

// ---- helpers ----------------------------------------------------------------------------------

const AGENTS = "/api/agents";

function obj(value: Json): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError("expected a JSON object");
  return value;
}

/** An amount from the service (a number's decimal text, or an integer) as canonical decimal text. */
export function amountOut(value: Json | undefined): string {
  if (typeof value === "number" || typeof value === "string") return toAmount(String(value));
  throw new TypeError(`expected an amount, got ${JSON.stringify(value)}`);
}

function int(value: Json | undefined): number {
  if (typeof value !== "number") throw new TypeError(`expected an integer, got ${JSON.stringify(value)}`);
  return value;
}

function str(value: Json | undefined): string {
  if (typeof value !== "string") throw new TypeError(`expected a string, got ${JSON.stringify(value)}`);
  return value;
}

/** An amount as the wire's JSON number, written from its decimal text (typed as the schema's number). */
export function wireAmount(value: AmountInput, what = "amount"): number {
  return new JsonNumber(toAmount(value, what)) as unknown as number;
}

function idem(options: CallOptions | undefined): string {
  return options?.idempotencyKey ?? crypto.randomUUID();
}

function agentOf(v: Json | undefined): Agent {
  const a = obj(v ?? null);
  return {
    id: str(a["id"]),
    wallet: str(a["wallet"]),
    name: str(a["name"]),
    specialty: str(a["specialty"]),
    balance: amountOut(a["balance"]),
    referralCode: str(a["referral_code"]),
  };
}

function earnOf(v: Json | undefined, replayed: boolean): EarnResult {
  const e = obj(v ?? null);
  return {
    ownerCut: amountOut(e["ownerCut"]),
    agentCut: amountOut(e["agentCut"]),
    serviceCut: amountOut(e["serviceCut"]),
    referralCut: amountOut(e["referralCut"]),
    net: amountOut(e["net"]),
    toll: amountOut(e["toll"]),
    balance: amountOut(e["balance"]),
    ownerBalance: amountOut(e["ownerBalance"]),
    agentSelfBalance: amountOut(e["agentSelfBalance"]),
    transactionId: int(e["transactionId"]),
    message: str(e["message"]),
    replayed,
  };
}

function headers(key: string): { header: { [IDEMPOTENCY_HEADER]: string } } {
  return { header: { [IDEMPOTENCY_HEADER]: key } };
}

// ---- the client -------------------------------------------------------------------------------

export class AgentLedger {
  /** The typed openapi-fetch client of every path (for calls this class does not wrap). */
  readonly api: Api;
  protected readonly transport: Transport;

  constructor(options: AgentLedgerOptions = {}) {
    this.transport = createTransport({ ...options, baseUrl: options.baseUrl ?? DEFAULT_BASE_URL });
    this.api = this.transport.api;
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  // ---- agents ----

  /**
   * Register an agent. Without an API key this creates an account and answers its key once (never
   * replayed by the service, so retried only when the request certainly did not arrive); with a key
   * it adds an agent to the key's account.
   */
  async register(name: string, specialty: Specialty, options: CallOptions & { referralCode?: string } = {}): Promise<Registration> {
    const body = { name, specialty, ...(options.referralCode === undefined ? {} : { referralCode: options.referralCode }) };
    const key = this.transport.apiKey === undefined ? undefined : idem(options);
    const { body: out } = await answer(
      this.api.POST(`${AGENTS}/register`, { body, parseAs: "text", ...(key === undefined ? {} : { params: headers(key) }) }),
      key,
    );
    const r = obj(out);
    return { agent: agentOf(r["agent"]), apiKey: typeof r["api_key"] === "string" ? r["api_key"] : undefined };
  }

  /** The seed's earn: credit `amount` USDC earned by `wallet`; answers the split. */
  async earn(wallet: string, amount: AmountInput, source: string = DEFAULT_SOURCE, options?: CallOptions): Promise<EarnResult> {
    const key = idem(options);
    const body = { agentId: wallet, amount: wireAmount(amount), source };
    const { body: out, replayed } = await answer(this.api.POST(`${AGENTS}/earn`, { body, params: headers(key), parseAs: "text" }), key);
    return earnOf(out, replayed);
  }

  /** Several earnings at once, all or none (at most 100). */
  async earnBatch(payments: readonly EarnPayment[], options?: CallOptions): Promise<EarnResult[]> {
    const key = idem(options);
    const body = {
      payments: payments.map((p, i) => ({
        agentId: p.wallet,
        amount: wireAmount(p.amount, `payments[${i}].amount`),
        source: p.source ?? DEFAULT_SOURCE,
      })),
    };
    const { body: out, replayed } = await answer(
      this.api.POST(`${AGENTS}/earn/batch`, { body, params: headers(key), parseAs: "text" }),
      key,
    );
    const results = obj(out)["results"];
    if (!Array.isArray(results)) throw new TypeError("expected results");
    return results.map((r) => earnOf(r, replayed));
  }

  /** Count one run of `wallet` (a success or a failure), optionally in a niche. */
  async recordRun(wallet: string, success: boolean, options: CallOptions & { niche?: string } = {}): Promise<RunResult> {
    const key = idem(options);
    const body = { agentId: wallet, success, ...(options.niche === undefined ? {} : { niche: options.niche }) };
    const { body: out } = await answer(this.api.POST(`${AGENTS}/runs`, { body, params: headers(key), parseAs: "text" }), key);
    const r = obj(out);
    const runs = obj(r["runs"] ?? null);
    return { key: str(r["key"]), runs: { success: int(runs["success"]), failure: int(runs["failure"]) } };
  }

  /** The seed's getAgent: balances and totals (totalEarned, balance, totalTransactions, ...). */
  async getAgent(wallet: string): Promise<AgentSummary> {
    const { body } = await answer(this.api.GET(`${AGENTS}/balance`, { params: { query: { agentId: wallet } }, parseAs: "text" }));
    const b = obj(body);
    return {
      balance: amountOut(b["balance"]),
      ownerBalance: amountOut(b["ownerBalance"]),
      agentSelfBalance: amountOut(b["agentSelfBalance"]),
      reinvested: amountOut(b["reinvested"]),
      totalEarned: amountOut(b["totalEarned"]),
      reportedEarned: amountOut(b["reportedEarned"]),
      settledEarned: amountOut(b["settledEarned"]),
      totalTransactions: int(b["totalTransactions"]),
      memoryEntries: int(b["memoryEntries"]),
    };
  }

  /** The agent's UUID (what decision logging takes) and wallet. */
  async identity(wallet: string): Promise<{ uuid: string; wallet: string }> {
    const { body } = await answer(this.api.GET(`${AGENTS}/identity`, { params: { query: { agentId: wallet } }, parseAs: "text" }));
    const b = obj(body);
    return { uuid: str(b["uuid"]), wallet: str(b["wallet"]) };
  }

  /** Spend from the agent's balance to `destination`. */
  async spend(wallet: string, amount: AmountInput, destination: string, options?: CallOptions): Promise<SpendResult> {
    const key = idem(options);
    const body = { agentId: wallet, amount: wireAmount(amount), destination };
    const { body: out, replayed } = await answer(this.api.POST(`${AGENTS}/spend`, { body, params: headers(key), parseAs: "text" }), key);
    const s = obj(out);
    return {
      spent: amountOut(s["spent"]),
      destination: str(s["destination"]),
      balance: amountOut(s["balance"]),
      ownerBalance: amountOut(s["ownerBalance"]),
      agentSelfBalance: amountOut(s["agentSelfBalance"]),
      transactionId: int(s["transactionId"]),
      replayed,
    };
  }

  /** Reinvest `reinvestPercent` (1-100) of the agent's self balance. */
  async compound(wallet: string, reinvestPercent?: number, options?: CallOptions): Promise<CompoundResult> {
    const key = idem(options);
    const body = { agentId: wallet, ...(reinvestPercent === undefined ? {} : { reinvestPercent }) };
    const { body: out, replayed } = await answer(this.api.POST(`${AGENTS}/compound`, { body, params: headers(key), parseAs: "text" }), key);
    const c = obj(out);
    return {
      balance: amountOut(c["balance"]),
      reinvested: amountOut(c["reinvested"]),
      moved: amountOut(c["moved"]),
      ownerBalance: amountOut(c["ownerBalance"]),
      agentSelfBalance: amountOut(c["agentSelfBalance"]),
      transactionId: c["transactionId"] === null ? null : int(c["transactionId"]),
      replayed,
    };
  }

  /** Store `value` (any JSON) under `key` in the agent's memory. */
  async remember(wallet: string, key: string, value: unknown, options?: CallOptions): Promise<Memory> {
    const k = idem(options);
    const { data, error, response } = await this.api.POST(`${AGENTS}/memory`, {
      body: { agentId: wallet, key, value: value as Json },
      params: headers(k),
      bodySerializer: (b: unknown) => JSON.stringify(b),
    });
    if (!response.ok || data === undefined) throw (await import("./transport.js")).failure(response, error, k);
    return data.memory;
  }

  /** The agent's memories, newest first; `query` filters keys and values. */
  async memories(wallet: string, options: { query?: string; limit?: number; cursor?: string } = {}): Promise<MemoryPage> {
    const { data, error, response } = await this.api.GET(`${AGENTS}/memory`, { params: { query: { agentId: wallet, ...options } } });
    if (!response.ok || data === undefined) throw (await import("./transport.js")).failure(response, error);
    return data;
  }

  /** The agent's brain (niches, prices, win rate) and its niche weights; numbers with a fraction as decimal text. */
  async brain(wallet: string): Promise<{ brain: JsonObject; weights: JsonObject }> {
    const { body } = await answer(this.api.GET(`${AGENTS}/brain`, { params: { query: { agentId: wallet } }, parseAs: "text" }));
    const b = obj(body);
    return { brain: obj(b["brain"] ?? null), weights: obj(b["weights"] ?? null) };
  }

  /** Teach the brain one outcome (listed, sold, ...) at a price. */
  async updateBrain(wallet: string, update: BrainUpdate, options?: CallOptions): Promise<{ brain: JsonObject; weights: JsonObject }> {
    const key = idem(options);
    const body = {
      agentId: wallet,
      action: update.action,
      niche: update.niche,
      price: wireAmount(update.price, "price"),
      ...(update.revenue === undefined ? {} : { revenue: wireAmount(update.revenue, "revenue") }),
      ...(update.name === undefined ? {} : { name: update.name }),
    };
    const { body: out } = await answer(this.api.POST(`${AGENTS}/brain`, { body, params: headers(key), parseAs: "text" }), key);
    const b = obj(out);
    return { brain: obj(b["brain"] ?? null), weights: obj(b["weights"] ?? null) };
  }

  /** The whole network's totals (public). */
  async network(): Promise<NetworkStats> {
    const { body } = await answer(this.api.GET(`${AGENTS}/network`, { parseAs: "text" }));
    const n = obj(body);
    return { totalAgents: int(n["totalAgents"]), totalEarned: amountOut(n["totalEarned"]), totalTolls: amountOut(n["totalTolls"]) };
  }

  // ---- decision logging ----

  /** Log a decision (hashes only) in the agent's tamper-evident stream. `agentUuid`: identity(wallet).uuid. */
  async logDecision(agentUuid: string, decision: Decision, options?: CallOptions): Promise<DecisionReceipt> {
    const key = idem(options);
    const body = {
      event_type: decision.eventType,
      content_hash: decision.contentHash,
      model_id: decision.modelId,
      model_version: decision.modelVersion,
      ...(decision.evidenceManifest === undefined ? {} : { evidence_manifest: decision.evidenceManifest }),
      ...(decision.correlationRef === undefined ? {} : { correlation_ref: decision.correlationRef }),
      ...(decision.webhookUrl === undefined ? {} : { webhook_url: decision.webhookUrl }),
      ...(decision.webhookSecret === undefined ? {} : { webhook_secret: decision.webhookSecret }),
    };
    const { body: out } = await answer(
      this.api.POST("/api/agents/{agent_uuid}/log", {
        params: { path: { agent_uuid: agentUuid }, ...headers(key) },
        body,
        parseAs: "text",
      }),
      key,
    );
    const r = obj(out);
    return {
      auditId: int(r["audit_id"]),
      chainHash: str(r["chain_hash"]),
      contentHash: str(r["content_hash"]),
      tier: str(r["tier"]),
      timestamp: str(r["timestamp"]),
      verificationUrl: str(r["verification_url"]),
      webhookSecret: typeof r["webhook_secret"] === "string" ? r["webhook_secret"] : undefined,
    };
  }

  /**
   * Check a logged decision without trusting the service's own checks: rebuild the stored entry from
   * what you logged (and the receipt's timestamp), hash it as /methodology says, recompute the chain
   * hash from the entry's seq and prev_hash, and check the RFC 9162 inclusion proof of its leaf against
   * the tree's root. Throws VerificationError naming the first thing that does not hold.
   */
  async verifyDecision(agentUuid: string, decision: Decision, receipt: DecisionReceipt): Promise<DecisionVerification> {
    const entry: Json = {
      agent_id: agentUuid,
      content_hash: decision.contentHash,
      correlation_ref: decision.correlationRef ?? null,
      event_type: decision.eventType,
      evidence_manifest: (decision.evidenceManifest ?? []).map((e) => ({ sha256: e.sha256, type: e.type })),
      model_id: decision.modelId,
      model_version: decision.modelVersion,
      timestamp: receipt.timestamp,
    };
    const payloadHash = sha256Hex(canonicalJson(entry));
    const { body: v } = await answer(
      this.api.GET("/verify/{audit_id}", {
        params: { path: { audit_id: String(receipt.auditId) }, query: { format: "json" } },
        headers: { Accept: "application/json" },
        parseAs: "text",
      }),
    );
    const view = obj(v);
    const stream = str(view["stream"]);
    const seq = int(view["seq"]);
    const prevHash = str(view["prev_hash"]);
    const fail = (what: string): never => {
      throw new VerificationError(`decision ${receipt.auditId}: ${what}`);
    };
    if (stream !== `agent:${agentUuid}`) fail(`stream ${stream} is not agent:${agentUuid}`);
    if (view["payload_hash"] !== payloadHash) fail(`payload hash ${String(view["payload_hash"])} is not the recomputed ${payloadHash}`);
    const chainHash = decisionChainHash(agentUuid, seq, prevHash, payloadHash);
    if (chainHash !== receipt.chainHash) fail(`chain hash ${receipt.chainHash} is not the recomputed ${chainHash}`);
    if (view["chain_hash"] !== chainHash) fail(`the log holds chain hash ${String(view["chain_hash"])}, not ${chainHash}`);
    const { body: p } = await answer(
      this.api.GET("/api/audit/proof/{audit_id}", { params: { path: { audit_id: String(receipt.auditId) } }, parseAs: "text" }),
    );
    const proof = obj(p);
    const leafHash = auditLeafHash(receipt.auditId, stream, chainHash);
    const leafIndex = int(proof["leaf_index"]);
    const treeSize = int(proof["tree_size"]);
    const root = str(proof["root"]);
    const path = proof["proof"];
    if (leafIndex !== receipt.auditId - 1) fail(`leaf index ${leafIndex} is not audit id - 1`);
    if (proof["leaf_hash"] !== leafHash) fail(`leaf hash ${String(proof["leaf_hash"])} is not the recomputed ${leafHash}`);
    if (!Array.isArray(path) || !path.every((h): h is string => typeof h === "string")) return fail("the proof is not a list of hashes");
    if (!verifyInclusion(leafIndex, treeSize, leafHash, path, root)) fail(`the inclusion proof does not lead to root ${root}`);
    return {
      auditId: receipt.auditId,
      stream,
      seq,
      prevHash,
      payloadHash,
      chainHash,
      leafHash,
      leafIndex,
      treeSize,
      root,
      anchored: proof["anchored"] === true,
    };
  }
}
