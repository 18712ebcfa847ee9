/**
 * `new AgentLedger({ apiKey, baseUrl })`: the service's calls, camelCase, amounts as decimal strings.
 */
import { toAmount, toMicro, type AmountInput } from "./decimal.js";
import { VerificationError } from "./errors.js";
import { JsonNumber, parseJson, type Json } from "./json.js";
import { answer, createTransport, failure, IDEMPOTENCY_HEADER, type Api, type Transport, type TransportOptions } from "./transport.js";
import { getAddress, sha256 as sha256Bytes, toHex, type Account, type Address, type Hex } from "viem";
import { clientsFor, ensureAllowance, ERC721_ABI, ESCROW_ABI, MARKETPLACE_ABI, transact } from "./chain.js";
import {
  claimMessage,
  marketplaceDomain,
  mintMessage,
  OFFER_TYPES,
} from "./messages.js";
import { completionMessage, deliverableMessage, escrowMessage, FUNDING_TYPES, providerLinkMessage, providerMessage, type FundingConsent } from "./messages.js";
import type {
  Agent,
  AgentSummary,
  BrainUpdate,
  CallOptions,
  CheckoutSession,
  CompoundResult,
  Decision,
  DecisionReceipt,
  DecisionVerification,
  Deliverable,
  DropOffer,
  EarnPayment,
  EarnResult,
  EscrowHireOptions,
  EscrowHireResult,
  EscrowStatus,
  HireAudit,
  HireOptions,
  HireResult,
  Item,
  JsonObject,
  Listing,
  Memory,
  MemoryPage,
  NetworkStats,
  Order,
  OrderMove,
  Provider,
  PublishedService,
  Registration,
  Registry,
  RegistryQuery,
  Reputation,
  RunResult,
  Sale,
  Schemas,
  ServiceInfo,
  ServiceSpec,
  SignedOffer,
  Specialty,
  SpendResult,
} from "./types.js";
import { auditLeafHash, canonicalJson, decisionChainHash, sha256Hex, verifyInclusion } from "./verify.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";
/** What `earn` sends as `source` when none is given (the API requires one). */
export const DEFAULT_SOURCE = "sdk";

export interface AgentLedgerOptions extends Partial<TransportOptions> {
  apiKey?: string | undefined;
  /** Default http://127.0.0.1:8080 (`make run`). */
  baseUrl?: string | undefined;
}

// ---- helpers ----------------------------------------------------------------------------------

/** The amount fields of the hire answers (USDC, as decimal strings). */
const HIRE_AMOUNTS: ReadonlySet<string> = new Set([
  "price", "priceUsdc", "amountCharged", "amountUsdc", "balance", "ownerCut", "agentCut", "serviceCut", "referralCut",
  "maxPrice", "charged",
]);

const DROP_AMOUNTS: ReadonlySet<string> = new Set([
  "askingPriceUsdc", "floorPriceUsdc", "offerPriceUsdc", "salePrice", "sellerProceeds", "serviceFee", "priceUsdc",
  "reportedEarningsUsdc", "onchainEarningsUsdc", "minimumFloorUsdc", "lifetimeEarningsUsdc",
]);

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

/** `value` with every property named in `amounts` (at any depth) as canonical decimal text. */
export function withAmounts<T>(value: Json, amounts: ReadonlySet<string>): T {
  const walk = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== "object" || v === null) return v;
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = amounts.has(k) && (typeof x === "number" || typeof x === "string") ? amountOut(x) : walk(x);
    }
    return out;
  };
  return walk(value) as T;
}

/** Query parameters as the API takes them: text ("true"/"false" for booleans), absent ones left out. */
function queryOf(values: Record<string, string | number | boolean | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = String(v);
  return out;
}

const PRICE: ReadonlySet<string> = new Set(["price"]);
/** The one payment handler of the service's checkout (ACP): USDC escrow funded by the buyer's consent. */
const PAYMENT_HANDLER_ID = "service-usdc-commerce-v1" as const;

function now(): number {
  return Math.floor(Date.now() / 1000);
}

async function sign(account: Account, message: string): Promise<Hex> {
  if (account.signMessage === undefined) throw new TypeError("the account cannot sign messages (use a local viem account)");
  return account.signMessage({ message });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function firstHandler(session: CheckoutSession): JsonObject {
  const payment = obj((session.capabilities["payment"] ?? null) as Json);
  const handlers = payment["handlers"];
  const handler = Array.isArray(handlers) ? handlers[0] : undefined;
  if (handler === undefined) throw new VerificationError(`session ${session.id} offers no payment handler`);
  const h = obj(handler);
  return { ...obj(h["config"] ?? null), id: h["id"] ?? null };
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
    if (!response.ok || data === undefined) throw failure(response, error, k);
    return data.memory;
  }

  /** The agent's memories, newest first; `query` filters keys and values. */
  async memories(wallet: string, options: { query?: string; limit?: number; cursor?: string } = {}): Promise<MemoryPage> {
    const { data, error, response } = await this.api.GET(`${AGENTS}/memory`, { params: { query: { agentId: wallet, ...options } } });
    if (!response.ok || data === undefined) throw failure(response, error);
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

  // ---- hire: services, jobs, registry, reputation ----

  /**
   * Publish (or update) a service this agent sells by the job. The answer shows the runner's signing
   * secret once (`signingSecret`, whsec_ form, and `signingSecretRaw`): check every job request with
   * verifyStandardWebhook / verifyServiceSignature.
   */
  async publishService(service: ServiceSpec, options?: CallOptions): Promise<PublishedService> {
    const key = idem(options);
    const body = {
      serviceType: service.serviceType,
      price: wireAmount(service.price, "price"),
      description: service.description,
      inputSchema: service.inputSchema,
      outputSchema: service.outputSchema,
      runner: service.runner,
      ...(service.agentId === undefined ? {} : { agentId: service.agentId }),
      ...(service.slaSeconds === undefined ? {} : { slaSeconds: service.slaSeconds }),
      ...(service.webhookUrl === undefined ? {} : { webhookUrl: service.webhookUrl }),
      ...(service.webhookSecret === undefined ? {} : { webhookSecret: service.webhookSecret }),
      ...(service.rotateSecret === undefined ? {} : { rotateSecret: service.rotateSecret }),
    };
    const { body: out } = await answer(this.api.POST("/api/a2a/services", { body, params: headers(key), parseAs: "text" }), key);
    return withAmounts(out, HIRE_AMOUNTS);
  }

  /** Stop selling `serviceType`. */
  async withdrawService(serviceType: string, agentId?: string): Promise<PublishedService> {
    const { body } = await answer(
      this.api.DELETE("/api/a2a/services/{serviceType}", {
        params: { path: { serviceType }, query: agentId === undefined ? {} : { agentId } },
        parseAs: "text",
      }),
    );
    return withAmounts(body, HIRE_AMOUNTS);
  }

  /**
   * Hire a provider for one job, paid from `callerWallet`'s balance. The service keeps the
   * Idempotency-Key's answer (a failed job included), so a retry never runs a job twice.
   */
  async hire(callerWallet: string, serviceType: string, input: JsonObject, options: HireOptions = {}): Promise<HireResult> {
    const key = idem(options);
    const body = {
      callerWallet,
      serviceType,
      input,
      ...(options.providerWallet === undefined ? {} : { providerWallet: options.providerWallet }),
      ...(options.maxPrice === undefined ? {} : { maxPrice: wireAmount(options.maxPrice, "maxPrice") }),
      ...(options.webhookUrl === undefined ? {} : { webhookUrl: options.webhookUrl }),
      ...(options.webhookSecret === undefined ? {} : { webhookSecret: options.webhookSecret }),
    };
    const { body: out, replayed } = await answer(this.api.POST("/api/a2a/hire", { body, params: headers(key), parseAs: "text" }), key);
    const r = withAmounts<Omit<HireResult, "value" | "replayed">>(out, HIRE_AMOUNTS);
    return { ...r, value: JSON.parse(r.output) as unknown, replayed };
  }

  /** A job's audit stream (every move, with its chain and leaf hashes). */
  async hireAudit(jobId: string): Promise<HireAudit> {
    const { body } = await answer(this.api.GET("/api/a2a/hire/{jobId}/audit", { params: { path: { jobId } }, parseAs: "text" }));
    return withAmounts(body, HIRE_AMOUNTS);
  }

  /** Providers, best first (public). */
  async registry(query: RegistryQuery = {}): Promise<Registry> {
    const q = queryOf({ ...query, maxPrice: query.maxPrice === undefined ? undefined : toAmount(query.maxPrice, "maxPrice") });
    const { body } = await answer(this.api.GET("/api/a2a/registry", { params: { query: q }, parseAs: "text" }));
    return withAmounts(body, HIRE_AMOUNTS);
  }

  /** A provider's reputation for a service type, with the samples it is computed from (public). */
  async reputation(wallet: string, serviceType: string, page: { limit?: number; cursor?: string } = {}): Promise<Reputation> {
    const { body } = await answer(
      this.api.GET("/api/a2a/reputation", { params: { query: { wallet, serviceType, ...queryOf(page) } }, parseAs: "text" }),
    );
    return withAmounts(body, HIRE_AMOUNTS);
  }

  /** An escrow hire's on-chain state (locked, released, refunded or not_found). */
  async escrowStatus(jobId: string): Promise<EscrowStatus> {
    const { body } = await answer(this.api.GET("/api/a2a/escrow", { params: { query: { jobId } }, parseAs: "text" }));
    return withAmounts(body, HIRE_AMOUNTS);
  }

  // ---- escrow hire ----

  /** The provider's on-chain price and SLA for escrow hires (its self wallet pays the gas). */
  async setEscrowPrice(tokenId: number, price: AmountInput, slaSeconds: number, selfWallet: Account, rpcUrl: string): Promise<Hex> {
    const info = await this.serviceInfo();
    const escrow = info.contracts["AgentEscrow"];
    if (escrow === undefined) throw new TypeError("this service has no escrow contract");
    const c = clientsFor(selfWallet, rpcUrl, info.chainId);
    const hash = await c.wallet.writeContract({
      address: getAddress(escrow),
      abi: ESCROW_ABI,
      functionName: "setPrice",
      args: [BigInt(tokenId), toMicro(price, "price"), BigInt(slaSeconds)],
    });
    const receipt = await c.public.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    if (receipt.status !== "success") throw new Error(`setPrice ${hash} reverted`);
    return hash;
  }

  /**
   * Hire by escrow: the price and SLA from the registry, checked on-chain; approve (if the allowance
   * is short) and createJob from the caller's own account, each waited for; then POST /api/a2a/escrow
   * signed (EIP-191) by the same account. The service runs the job and releases (or refunds) on-chain.
   */
  async escrowHire(providerWallet: string, serviceType: string, input: JsonObject, options: EscrowHireOptions): Promise<EscrowHireResult> {
    const page = obj(
      (
        await answer(
          this.api.GET("/api/a2a/registry", { params: { query: { serviceType, wallet: providerWallet, escrow: "true" } }, parseAs: "text" }),
        )
      ).body,
    );
    const contract = obj(page["escrowContract"] ?? null);
    const providers = page["providers"];
    const entry = (Array.isArray(providers) ? providers : [])
      .map((p) => obj(p))
      .find((p) => p["wallet"] === providerWallet && p["serviceType"] === serviceType);
    const terms = entry === undefined ? undefined : obj(entry["escrow"] ?? null);
    if (entry === undefined || terms === undefined || terms["available"] !== true) {
      throw new VerificationError(`${providerWallet} offers no escrow-hirable ${serviceType}: ${String(terms?.["reason"] ?? "not listed")}`);
    }
    const chainId = int(contract["chainId"]);
    const escrow = getAddress(str(contract["address"]));
    const usdc = getAddress(str(contract["usdc"]));
    const tokenId = BigInt(int(entry["tokenId"] ?? terms["tokenId"]));
    const price = toMicro(amountOut(entry["priceUsdc"]));
    const sla = BigInt(int(terms["slaSeconds"]));
    const c = clientsFor(options.account, options.rpcUrl, chainId);
    const [onChainPrice, onChainSla] = await Promise.all([
      c.public.readContract({ address: escrow, abi: ESCROW_ABI, functionName: "priceOf", args: [tokenId] }),
      c.public.readContract({ address: escrow, abi: ESCROW_ABI, functionName: "slaOf", args: [tokenId] }),
    ]);
    if (onChainPrice !== price || onChainSla !== sla) {
      throw new VerificationError(`the registry says ${price} micro-USDC / ${sla} s, the chain ${onChainPrice} / ${onChainSla}`);
    }
    const approveTx = await ensureAllowance(c, usdc, escrow, price);
    const jobId = options.jobId ?? toHex(crypto.getRandomValues(new Uint8Array(32)));
    const createTx = await c.wallet.writeContract({ address: escrow, abi: ESCROW_ABI, functionName: "createJob", args: [jobId, providerWallet, price, sla] });
    const receipt = await c.public.waitForTransactionReceipt({ hash: createTx, pollingInterval: 100 });
    if (receipt.status !== "success") throw new Error(`createJob ${createTx} reverted`);
    const timestamp = now();
    const signature = await sign(options.account, escrowMessage(chainId, escrow, jobId, sha256Hex(canonicalJson(input)), timestamp));
    const key = crypto.randomUUID();
    const body = {
      escrowJobId: jobId,
      txHash: createTx,
      serviceType,
      input,
      providerWallet,
      timestamp,
      signature,
      ...(options.webhookUrl === undefined ? {} : { webhookUrl: options.webhookUrl }),
      ...(options.webhookSecret === undefined ? {} : { webhookSecret: options.webhookSecret }),
    };
    const { body: out } = await answer(this.api.POST("/api/a2a/escrow", { body, params: headers(key), parseAs: "text" }), key);
    const r = withAmounts<EscrowHireResult>(out, HIRE_AMOUNTS);
    return { ...r, value: typeof r.output === "string" ? (JSON.parse(r.output) as unknown) : undefined, approveTx, createTx };
  }

  // ---- checkout: the provider's side ----

  /** The service's chain, USDC and contracts (GET /healthz). */
  async serviceInfo(): Promise<ServiceInfo> {
    const { body } = await answer(this.api.GET("/healthz", { parseAs: "text" }));
    return body as unknown as ServiceInfo;
  }

  /**
   * Link `agentWallet` as a provider: its self wallet (a viem account) signs the link (EIP-191), the
   * service mints the agent's registry token naming the self wallet and the owner.
   */
  async linkProvider(agentWallet: string, selfWallet: Account, owner: Address, options: CallOptions & { referrerTokenId?: number } = {}): Promise<Provider> {
    const { chainId } = await this.serviceInfo();
    const timestamp = now();
    const signature = await sign(selfWallet, providerLinkMessage(chainId, agentWallet, selfWallet.address, owner, timestamp));
    const key = idem(options);
    const body = {
      agent_id: agentWallet,
      self_wallet: getAddress(selfWallet.address),
      owner_address: getAddress(owner),
      timestamp,
      signature,
      ...(options.referrerTokenId === undefined ? {} : { referrer_token_id: options.referrerTokenId }),
    };
    const { body: out } = await answer(this.api.POST("/api/acp/providers", { body, params: headers(key), parseAs: "text" }), key);
    return out as unknown as Provider;
  }

  /** A catalogue item the provider sells (tier: its delivery time and default price). */
  async createItem(item: { title: string; tier: string; agentId?: string; itemId?: string; price?: AmountInput }, options?: CallOptions): Promise<Item> {
    const key = idem(options);
    const body = {
      title: item.title,
      tier: item.tier,
      ...(item.agentId === undefined ? {} : { agent_id: item.agentId }),
      ...(item.itemId === undefined ? {} : { item_id: item.itemId }),
      ...(item.price === undefined ? {} : { price: wireAmount(item.price, "price") }),
    };
    const { body: out } = await answer(this.api.POST("/api/acp/items", { body, params: headers(key), parseAs: "text" }), key);
    return withAmounts(out, PRICE);
  }

  async getItem(itemId: string): Promise<Item> {
    const { body } = await answer(this.api.GET("/api/acp/items/{item_id}", { params: { path: { item_id: itemId } }, parseAs: "text" }));
    return withAmounts(body, PRICE);
  }

  /** The catalogue, oldest first (public); `provider`: one provider's agent wallet. */
  async listItems(query: { provider?: string; after?: string; limit?: number } = {}): Promise<{ data: Item[]; has_more: boolean }> {
    const { body } = await answer(this.api.GET("/api/acp/items", { params: { query: queryOf(query) }, parseAs: "text" }));
    return withAmounts(body, PRICE);
  }

  /** Acknowledge a new order (signed by the provider's self wallet). */
  acknowledgeOrder(orderId: string, selfWallet: Account): Promise<OrderMove> {
    return this.orderMove(orderId, "acknowledge", selfWallet);
  }

  /** Start working on an acknowledged order. */
  startOrder(orderId: string, selfWallet: Account): Promise<OrderMove> {
    return this.orderMove(orderId, "start", selfWallet);
  }

  /** Give up on an order (the buyer is refunded); `reason` is public and signed too. */
  failOrder(orderId: string, selfWallet: Account, reason?: string): Promise<OrderMove> {
    return this.orderMove(orderId, "fail", selfWallet, reason);
  }

  /** Take a failed-by-timeout order back into work. */
  recoverOrder(orderId: string, selfWallet: Account): Promise<OrderMove> {
    return this.orderMove(orderId, "recover", selfWallet);
  }

  private async orderMove(orderId: string, action: "acknowledge" | "start" | "fail" | "recover", selfWallet: Account, reason?: string): Promise<OrderMove> {
    const timestamp = now();
    const signature = await sign(selfWallet, providerMessage(action, orderId, timestamp, reason));
    const body = { timestamp, signature, ...(reason === undefined ? {} : { reason }) };
    const path = { params: { path: { order_id: orderId } }, body, parseAs: "text" as const };
    const call =
      action === "acknowledge"
        ? this.api.POST("/api/acp/orders/{order_id}/acknowledge", path)
        : action === "start"
          ? this.api.POST("/api/acp/orders/{order_id}/start", path)
          : action === "fail"
            ? this.api.POST("/api/acp/orders/{order_id}/fail", path)
            : this.api.POST("/api/acp/orders/{order_id}/recover", path);
    const { body: out } = await answer(call);
    return out as unknown as OrderMove;
  }

  /**
   * Upload the order's deliverable, signed in the headers (X-Provider-Timestamp, X-Provider-Signature
   * over the SHA-256 of the exact bytes, X-Content-SHA256): a JSON object (stored as its RFC 8785
   * bytes; integers only) or raw bytes (sent as multipart/form-data).
   */
  async uploadDeliverable(orderId: string, selfWallet: Account, content: JsonObject | Uint8Array, filename = "deliverable.bin"): Promise<Deliverable> {
    const bytes = content instanceof Uint8Array ? content : new TextEncoder().encode(canonicalJson(content));
    const digest = sha256Bytes(bytes).slice(2);
    const timestamp = now();
    const signature = await sign(selfWallet, deliverableMessage(orderId, digest, timestamp));
    const headers = new Headers({
      Accept: "application/json",
      "X-Provider-Timestamp": String(timestamp),
      "X-Provider-Signature": signature,
      "X-Content-SHA256": digest,
    });
    let body: BodyInit;
    if (content instanceof Uint8Array) {
      const form = new FormData();
      form.append("file", new Blob([bytes as BlobPart], { type: "application/octet-stream" }), filename);
      body = form;
    } else {
      headers.set("Content-Type", "application/json");
      body = `{"content":${canonicalJson(content)}}`;
    }
    const url = `${this.baseUrl}/api/acp/orders/${encodeURIComponent(orderId)}/deliverables`;
    const response = await this.transport.fetch(new Request(url, { method: "POST", headers, body }));
    const text = await response.text();
    if (!response.ok) throw failure(response, safeJson(text));
    return parseJson(text) as unknown as Deliverable;
  }

  /** Complete the order with the uploaded deliverable's CID: the attestation releases the escrow on-chain. */
  async completeOrder(orderId: string, jobId: string, cid: string, selfWallet: Account): Promise<{ txHash: string; jobId: string; status: string }> {
    const timestamp = now();
    const signature = await sign(selfWallet, completionMessage(jobId, cid, timestamp));
    const { body } = await answer(
      this.api.POST("/api/acp/orders/{order_id}/complete", {
        params: { path: { order_id: orderId } },
        body: { cid, timestamp, signature },
        parseAs: "text",
      }),
    );
    return body as unknown as { txHash: string; jobId: string; status: string };
  }

  /** The provider's orders, newest first. */
  async providerOrders(agentWallet: string, query: { status?: string; limit?: number; cursor?: string } = {}): Promise<Schemas["ProviderOrderList"]> {
    const { body } = await answer(
      this.api.GET("/api/acp/providers/{agent_id}/orders", { params: { path: { agent_id: agentWallet }, query: queryOf(query) }, parseAs: "text" }),
    );
    return body as unknown as Schemas["ProviderOrderList"];
  }

  // ---- checkout: the buyer's five steps ----

  /** 1. A checkout session for catalogue items (amounts in the answer are micro-USDC, as ACP has them). */
  async createCheckoutSession(
    session: { items: { id: string; quantity?: number }[]; buyerEmail?: string; webhookUrl?: string },
    options?: CallOptions,
  ): Promise<CheckoutSession> {
    const key = idem(options);
    const body = {
      line_items: session.items.map((i) => ({ item: { id: i.id }, quantity: i.quantity ?? 1 })),
      ...(session.buyerEmail === undefined ? {} : { buyer: { email: session.buyerEmail } }),
      ...(session.webhookUrl === undefined ? {} : { webhook_url: session.webhookUrl }),
    };
    const { body: out } = await answer(this.api.POST("/api/acp/checkout_sessions", { body, params: headers(key), parseAs: "text" }), key);
    return out as unknown as CheckoutSession;
  }

  async getCheckoutSession(sessionId: string): Promise<CheckoutSession> {
    const { body } = await answer(
      this.api.GET("/api/acp/checkout_sessions/{session_id}", { params: { path: { session_id: sessionId } }, parseAs: "text" }),
    );
    return body as unknown as CheckoutSession;
  }

  /** Cancel a session that is not paid yet. */
  async cancelCheckoutSession(sessionId: string, options?: CallOptions): Promise<CheckoutSession> {
    const key = idem(options);
    const { body } = await answer(
      this.api.POST("/api/acp/checkout_sessions/{session_id}/cancel", { params: { path: { session_id: sessionId }, ...headers(key) }, parseAs: "text" }),
      key,
    );
    return body as unknown as CheckoutSession;
  }

  /**
   * The funding consent the buyer signs, built here from the session (its job id, provider token and
   * deadline, as its payment handler states them) and checked against what the SDK knows itself: the
   * service's chain and gateway, the session's total. Throws VerificationError on any difference.
   */
  async fundingConsent(session: CheckoutSession, buyer: Address): Promise<FundingConsent> {
    const info = await this.serviceInfo();
    const handler = firstHandler(session);
    const typed = obj((handler["typed_data"] ?? null) as Json);
    const domain = obj(typed["domain"] ?? null);
    const message = obj(typed["message"] ?? null);
    const total = session.totals.find((t) => t.type === "total")?.amount;
    const gateway = info.contracts["PaymentGateway"];
    const consent: FundingConsent = {
      domain: {
        name: str(domain["name"]),
        version: str(domain["version"]),
        chainId: info.chainId,
        verifyingContract: getAddress(gateway ?? "0x0000000000000000000000000000000000000000"),
      },
      types: FUNDING_TYPES,
      primaryType: "Funding",
      message: {
        jobId: str(message["jobId"]) as Hex,
        buyer: getAddress(buyer),
        providerTokenId: BigInt(String(message["providerTokenId"])),
        amount: BigInt(String(message["amount"])),
        deadline: BigInt(String(message["deadline"])),
      },
    };
    if (gateway === undefined || getAddress(str(domain["verifyingContract"])) !== consent.domain.verifyingContract) {
      throw new VerificationError(`the session names gateway ${String(domain["verifyingContract"])}, the service's is ${String(gateway)}`);
    }
    if (domain["chainId"] !== info.chainId) throw new VerificationError(`the session is for chain ${String(domain["chainId"])}, not ${info.chainId}`);
    if (total === undefined || consent.message.amount !== BigInt(total)) {
      throw new VerificationError(`the consent's amount ${consent.message.amount} is not the session's total ${String(total)}`);
    }
    return consent;
  }

  /** 2. The buyer approves the gateway for the session's total from its own account (skipped when already allowed). */
  async approveCheckout(session: CheckoutSession, buyer: Account, rpcUrl: string): Promise<Hex | undefined> {
    const info = await this.serviceInfo();
    const consent = await this.fundingConsent(session, buyer.address);
    return ensureAllowance(clientsFor(buyer, rpcUrl, info.chainId), getAddress(info.usdc), consent.domain.verifyingContract, consent.message.amount);
  }

  /** 3. Complete: the buyer signs the EIP-712 funding consent; the service funds the gateway job with it. */
  async completeCheckout(session: CheckoutSession, buyer: Account, options: CallOptions & { buyerEmail?: string } = {}): Promise<CheckoutSession> {
    if (buyer.signTypedData === undefined) throw new TypeError("the buyer's account cannot sign typed data (use a local viem account)");
    const consent = await this.fundingConsent(session, buyer.address);
    const signature = await buyer.signTypedData(consent);
    const key = idem(options);
    const body = {
      ...(options.buyerEmail === undefined ? {} : { buyer: { email: options.buyerEmail } }),
      payment_data: {
        handler_id: PAYMENT_HANDLER_ID,
        instrument: { type: "wallet", credential: { type: "address", token: getAddress(buyer.address), signature } },
      },
    };
    const { body: out } = await answer(
      this.api.POST("/api/acp/checkout_sessions/{session_id}/complete", {
        params: { path: { session_id: session.id }, ...headers(key) },
        body,
        parseAs: "text",
      }),
      key,
    );
    return out as unknown as CheckoutSession;
  }

  /** 4. The order (the funder's key sees its buyer details and line items; anyone sees its status). */
  async getOrder(orderId: string): Promise<Order> {
    const { body } = await answer(this.api.GET("/api/acp/orders/{order_id}", { params: { path: { order_id: orderId } }, parseAs: "text" }));
    return body as unknown as Order;
  }

  // ---- the drop: an agent's ownership (its registry NFT) for sale ----

  /** Listings (public; the seller's key also sees offers' signatures). */
  async dropBrowse(query: { listingId?: string; agentId?: string; status?: string; page?: number; perPage?: number } = {}): Promise<JsonObject> {
    const { body } = await answer(this.api.GET("/api/a2a/drop", { params: { query: queryOf(query) }, parseAs: "text" }));
    return withAmounts(body, DROP_AMOUNTS);
  }

  /** Mint the agent's registry NFT naming its self wallet (which signs) and its owner (200 with the existing token). */
  async dropMint(agentWallet: string, selfWallet: Account, owner: Address, options?: CallOptions): Promise<{ agentId: string; tokenId: number; mintTx: string | null; minted: boolean }> {
    const { chainId } = await this.serviceInfo();
    const timestamp = now();
    const signature = await sign(selfWallet, mintMessage(chainId, agentWallet, selfWallet.address, owner, timestamp));
    const key = idem(options);
    const body = { agentId: agentWallet, ownerAddress: getAddress(owner), selfWallet: getAddress(selfWallet.address), timestamp, signature };
    const { body: out } = await answer(this.api.POST("/api/a2a/drop/mint", { body, params: headers(key), parseAs: "text" }), key);
    return out as unknown as { agentId: string; tokenId: number; mintTx: string | null; minted: boolean };
  }

  /**
   * List the agent's NFT as its owner does: the service's earnings statement, the NFT approved to the
   * marketplace and `list` sent from the owner's account, then the listing recorded with the service.
   * `floorPrice` must be at least 25% of the agent's lifetime earnings.
   */
  async dropList(
    agentWallet: string,
    owner: Account,
    rpcUrl: string,
    terms: { askingPrice: AmountInput; floorPrice: AmountInput; durationSeconds?: number; acceptOffers?: boolean; sellerEmail?: string },
    options?: CallOptions,
  ): Promise<Listing> {
    const info = await this.serviceInfo();
    const market = getAddress(info.contracts["AgentMarketplace"] ?? "0x0000000000000000000000000000000000000000");
    const registry = getAddress(info.contracts["AgentRegistry"] ?? "0x0000000000000000000000000000000000000000");
    const { body: st } = await answer(
      this.api.POST("/api/a2a/drop/statement", { body: { agentId: agentWallet, sellerAddress: getAddress(owner.address) }, parseAs: "text" }),
    );
    const statement = obj(obj(st)["statement"] ?? null);
    const signature = str(obj(st)["signature"]) as Hex;
    const tokenId = BigInt(String(statement["tokenId"]));
    const c = clientsFor(owner, rpcUrl, info.chainId);
    await transact(c, { address: registry, abi: ERC721_ABI, functionName: "approve", args: [market, tokenId] });
    const txHash = await transact(c, {
      address: market,
      abi: MARKETPLACE_ABI,
      functionName: "list",
      args: [
        tokenId,
        toMicro(terms.askingPrice, "askingPrice"),
        toMicro(terms.floorPrice, "floorPrice"),
        BigInt(terms.durationSeconds ?? 0),
        {
          tokenId,
          seller: getAddress(str(statement["seller"])),
          reportedEarnings: BigInt(String(statement["reportedEarnings"])),
          nonce: BigInt(String(statement["nonce"])),
          deadline: BigInt(String(statement["deadline"])),
        },
        signature,
      ],
    });
    const key = idem(options);
    const body = {
      agentId: agentWallet,
      txHash,
      askingPriceUsdc: wireAmount(terms.askingPrice, "askingPrice"),
      acceptOffers: terms.acceptOffers ?? true,
      ...(terms.sellerEmail === undefined ? {} : { sellerEmail: terms.sellerEmail }),
    };
    const { body: out } = await answer(this.api.POST("/api/a2a/drop/list", { body, params: headers(key), parseAs: "text" }), key);
    return withAmounts<{ listing: Listing }>(out, DROP_AMOUNTS).listing;
  }

  /**
   * Offer for a listing: the buyer's account approves the marketplace for the price (when short),
   * signs the EIP-712 Offer the seller can accept on-chain, and the service records it.
   */
  async dropOffer(listing: Listing, buyer: Account, rpcUrl: string, offer: Omit<DropOffer, "listingId">, options?: CallOptions): Promise<{ offer: JsonObject; signed: SignedOffer }> {
    if (buyer.signTypedData === undefined) throw new TypeError("the buyer's account cannot sign typed data (use a local viem account)");
    const info = await this.serviceInfo();
    const market = getAddress(info.contracts["AgentMarketplace"] ?? "0x0000000000000000000000000000000000000000");
    const price = toMicro(offer.price, "price");
    await ensureAllowance(clientsFor(buyer, rpcUrl, info.chainId), getAddress(info.usdc), market, price);
    const message = {
      listingId: BigInt(listing.chainListingId),
      buyer: getAddress(buyer.address),
      price,
      nonce: BigInt(offer.nonce),
      deadline: BigInt(offer.deadline),
    };
    const signature = await buyer.signTypedData({ domain: marketplaceDomain(info.chainId, market), types: OFFER_TYPES, primaryType: "Offer", message });
    const key = idem(options);
    const body = {
      listingId: listing.id,
      offerPriceUsdc: wireAmount(offer.price, "price"),
      buyerAddress: message.buyer,
      nonce: offer.nonce,
      deadline: offer.deadline,
      signature,
      ...(offer.buyerEmail === undefined ? {} : { buyerEmail: offer.buyerEmail }),
    };
    const { body: out } = await answer(this.api.POST("/api/a2a/drop/offer", { body, params: headers(key), parseAs: "text" }), key);
    return {
      offer: withAmounts<{ offer: JsonObject }>(out, DROP_AMOUNTS).offer,
      signed: { listingId: listing.id, offer: message, signature },
    };
  }

  /** The seller accepts a signed offer: acceptOffer sent from its account, then the sale recorded (the notice window starts). */
  async dropAccept(offer: SignedOffer, seller: Account, rpcUrl: string, options: CallOptions & { buyerEmail?: string } = {}): Promise<Sale> {
    const info = await this.serviceInfo();
    const market = getAddress(info.contracts["AgentMarketplace"] ?? "0x0000000000000000000000000000000000000000");
    const txHash = await transact(clientsFor(seller, rpcUrl, info.chainId), {
      address: market,
      abi: MARKETPLACE_ABI,
      functionName: "acceptOffer",
      args: [offer.offer.listingId, offer.offer, offer.signature],
    });
    const key = idem(options);
    const body = { listingId: offer.listingId, buyNow: false, txHash, ...(options.buyerEmail === undefined ? {} : { buyerEmail: options.buyerEmail }) };
    const { body: out } = await answer(this.api.POST("/api/a2a/drop/accept", { body, params: headers(key), parseAs: "text" }), key);
    return withAmounts(out, DROP_AMOUNTS);
  }

  /** Settle a committed sale once its notice window is over (anyone may; the service's sweep does it too). */
  async dropSettle(chainListingId: number, account: Account, rpcUrl: string): Promise<Hex> {
    const info = await this.serviceInfo();
    const market = getAddress(info.contracts["AgentMarketplace"] ?? "0x0000000000000000000000000000000000000000");
    return transact(clientsFor(account, rpcUrl, info.chainId), { address: market, abi: MARKETPLACE_ABI, functionName: "settle", args: [BigInt(chainListingId)] });
  }

  /**
   * After the sale settled on-chain, the NFT's new owner claims the agent (signed by its account):
   * with this client's key the agent joins that account, without one its holding account becomes yours.
   * Answers the agent and a key.
   */
  async dropClaim(agentWallet: string, tokenId: number, owner: Account): Promise<{ agent: JsonObject; apiKey: string; scope: string }> {
    const { chainId } = await this.serviceInfo();
    const timestamp = now();
    const signature = await sign(owner, claimMessage(chainId, agentWallet, tokenId, owner.address, timestamp));
    const body = { agentId: agentWallet, ownerAddress: getAddress(owner.address), timestamp, signature };
    const { body: out } = await answer(this.api.POST("/api/a2a/drop/claim", { body, parseAs: "text" }));
    const r = obj(out);
    return { agent: withAmounts(r["agent"] ?? null, DROP_AMOUNTS), apiKey: str(r["api_key"]), scope: str(r["scope"]) };
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
