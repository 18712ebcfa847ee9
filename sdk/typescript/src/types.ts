/** What the client's calls take and answer (camelCase; USDC amounts as decimal strings). */
import type { Account, Address, Hex } from "viem";
import type { AmountInput } from "./decimal.js";
import type { components } from "./generated/schema.js";
import type { Json } from "./json.js";

/** Options every value-moving call takes. */
export interface CallOptions {
  /** The Idempotency-Key to send (default: a new random UUID per call, reused on its retries). */
  idempotencyKey?: string;
}

export type JsonObject = { [key: string]: Json };
export type Schemas = components["schemas"];
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

// ---- hire ----

export interface ServiceSpec {
  serviceType: string;
  price: AmountInput;
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject;
  runner: { type: "https" | "a2a"; url: string };
  /** The provider agent (required with an account key). */
  agentId?: string;
  slaSeconds?: number;
  webhookUrl?: string;
  webhookSecret?: string;
  rotateSecret?: boolean;
}

export interface PublishedService {
  wallet: string;
  serviceType: string;
  priceUsdc: string;
  escrow: JsonObject;
  signingSecret?: string;
  signingSecretRaw?: string;
  created?: boolean;
  [more: string]: unknown;
}

export interface HireOptions extends CallOptions {
  providerWallet?: string;
  maxPrice?: AmountInput;
  webhookUrl?: string;
  webhookSecret?: string;
}

export interface EarnSplit {
  ownerCut: string;
  agentCut: string;
  serviceCut: string;
  referralCut: string;
}

export interface HireResult {
  success: boolean;
  jobId: string;
  /** The output as RFC 8785 JSON text (its SHA-256 is outputSha256). */
  output: string;
  /** The output, parsed. */
  value: unknown;
  outputSha256: string;
  outputCid: string;
  providerWallet: string;
  serviceType: string;
  amountCharged: string;
  responseMs: number;
  earnSplit: EarnSplit;
  balance: string;
  auditId: number;
  replayed: boolean;
}

/** One entry of a job's audit stream (its payload's amounts as decimal strings). */
export type AuditStreamEntry = Schemas["AuditStreamEntry"];

/** A job's audit stream: every move, with its chain and leaf hashes. */
export type HireAudit = Schemas["HireAuditResponse"];

export interface RegistryQuery {
  serviceType?: string;
  wallet?: string;
  maxPrice?: AmountInput;
  minScore?: number;
  escrow?: boolean;
  healthy?: boolean;
  limit?: number;
  cursor?: string;
}

export interface Registry {
  providers: JsonObject[];
  hasMore: boolean;
  nextCursor: string | null;
  formula: string;
}

export interface Reputation {
  wallet: string;
  serviceType: string;
  /** A number's decimal text when it has a fraction (never a binary float). */
  reputationScore: number | string;
  samples: JsonObject[];
  hasMore: boolean;
  nextCursor: string | null;
  formula: string;
}

export interface EscrowStatus {
  jobId: string;
  status: string;
  caller: string | null;
  amountUsdc: string;
  released: boolean;
  refunded: boolean;
}

// ---- checkout (ACP) ----

/** The service's health, chain, USDC and contracts (GET /healthz). */
export type ServiceInfo = Schemas["HealthResponse"];

/** A linked provider (its registry token names its self wallet and owner). */
export type Provider = Schemas["ProviderResponse"];

export interface Item {
  id: string;
  title: string;
  tier: string;
  delivery_hours: number;
  /** USDC. */
  price: string;
  /** micro-USDC (ACP's minor units). */
  unit_amount: number;
  currency: string;
  provider: JsonObject;
}

/** A checkout session as the service answers it (ACP fields, snake_case; amounts in micro-USDC integers). */
export interface CheckoutSession {
  id: string;
  status: string;
  totals: { type: string; amount: number; display_text?: string }[];
  expires_at: string;
  webhook_secret?: string;
  capabilities: JsonObject;
  order?: Order;
  [more: string]: unknown;
}

/** An order (ACP; amounts in micro-USDC integers). */
export type Order = Schemas["OrderResponse"];

/** An order's move (acknowledged, in_progress, failed, ...), with its audit entry. */
export type OrderMove = Schemas["OrderMove"];

/** An uploaded deliverable: its CID (the completion attests it), size and URL. */
export type Deliverable = Schemas["DeliverableResponse"];

// ---- escrow hire ----

export interface EscrowHireOptions {
  /** The caller's viem account: it approves the escrow, creates the job and signs the call. */
  account: Account;
  /** JSON-RPC URL of the service's chain. */
  rpcUrl: string;
  /** The bytes32 job id (default: random). */
  jobId?: Hex;
  webhookUrl?: string;
  webhookSecret?: string;
}

export interface EscrowHireResult {
  success: boolean;
  jobId: string;
  status: string;
  serviceType: string;
  providerWallet: string | null;
  amountUsdc: string;
  inputSha256: string;
  settlement: string;
  final: boolean;
  output?: string | null;
  /** The output, parsed (when there is one). */
  value: unknown;
  outputSha256?: string | null;
  outputCid?: string | null;
  releaseTx?: string | null;
  refundTx?: string | null;
  earnSplit?: EarnSplit | null;
  /** The approve (when the allowance was short) and createJob transactions. */
  approveTx: Hex | undefined;
  createTx: Hex;
  [more: string]: unknown;
}

// ---- the drop (agent ownership marketplace) ----

/** A listing as the service shows it (camelCase; USDC amounts as decimal strings). */
export interface Listing {
  id: string;
  chainListingId: number;
  agentId: string;
  tokenId: number;
  state: string;
  [more: string]: unknown;
}

export interface DropOffer {
  listingId: string;
  /** USDC. */
  price: AmountInput;
  nonce: number;
  /** Unix seconds (chain time) after which the offer cannot be accepted. */
  deadline: number;
  buyerEmail?: string;
}

/** An offer as the buyer signed it (what the seller passes to acceptOffer). */
export interface SignedOffer {
  /** The service's listing id. */
  listingId: string;
  /** The marketplace's Offer struct. */
  offer: { listingId: bigint; buyer: Address; price: bigint; nonce: bigint; deadline: bigint };
  signature: Hex;
}

export interface Sale {
  saleId: string;
  noticeWindowEndsAt: string;
  salePrice: string;
  sellerProceeds: string;
  serviceFee: string;
  [more: string]: unknown;
}
