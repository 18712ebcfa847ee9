/**
 * The exact texts and typed data the service checks signatures over (core/checkout, core/marketplace):
 * EIP-191 personal_sign messages of a provider's self wallet, and the buyer's EIP-712 funding consent.
 */
import { getAddress, type Address } from "viem";

/** What a provider's self wallet signs to link an agent as a provider (addresses EIP-55 checksummed). */
export function providerLinkMessage(chainId: number, agentWallet: string, selfWallet: string, owner: string, timestamp: number): string {
  return (
    "agentledger provider link\n" +
    `chain: ${chainId}\n` +
    `agent: ${agentWallet}\n` +
    `self_wallet: ${getAddress(selfWallet)}\n` +
    `owner: ${getAddress(owner)}\n` +
    `timestamp: ${timestamp}`
  );
}

/** acknowledge, start, fail (its reason signed too) and recover an order. */
export function providerMessage(action: string, orderId: string, timestamp: number, reason?: string): string {
  return reason === undefined ? `${action}:${orderId}:${timestamp}` : `${action}:${orderId}:${timestamp}:${reason}`;
}

/** Upload a deliverable: the SHA-256 (hex) of the exact bytes uploaded. */
export function deliverableMessage(orderId: string, sha256Hex: string, timestamp: number): string {
  return `deliver:${orderId}:${sha256Hex}:${timestamp}`;
}

/** The completion attestation (PaymentGateway.attestationMessage). */
export function completionMessage(jobId: string, cid: string, timestamp: number): string {
  return `complete:${jobId}:${cid}:${timestamp}`;
}

/** The escrow hire's call (AgentEscrow): signed by the caller that created the job. */
export function escrowMessage(chainId: number, escrow: string, jobId: string, inputSha256: string, timestamp: number): string {
  return [
    "agentledger escrow hire",
    `chain: ${chainId}`,
    `escrow: ${getAddress(escrow)}`,
    `job: ${jobId.toLowerCase()}`,
    `input: ${inputSha256}`,
    `timestamp: ${timestamp}`,
  ].join("\n");
}

export const FUNDING_TYPES = {
  Funding: [
    { name: "jobId", type: "bytes32" },
    { name: "buyer", type: "address" },
    { name: "providerTokenId", type: "uint256" },
    { name: "amount", type: "uint256" },
    { name: "deadline", type: "uint64" },
  ],
} as const;

export interface FundingConsent {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: typeof FUNDING_TYPES;
  primaryType: "Funding";
  message: { jobId: `0x${string}`; buyer: Address; providerTokenId: bigint; amount: bigint; deadline: bigint };
}

/** What the self wallet signs to mint the agent's registry token for the drop (POST /api/a2a/drop/mint). */
export function mintMessage(chainId: number, agentWallet: string, selfWallet: string, owner: string, timestamp: number): string {
  return `agentledger agent mint\nchain: ${chainId}\nagent: ${agentWallet}\nself_wallet: ${getAddress(selfWallet)}\nowner: ${getAddress(owner)}\ntimestamp: ${timestamp}`;
}

/** What the agent NFT's new owner signs to claim the agent after a sale. */
export function claimMessage(chainId: number, agentWallet: string, tokenId: number, owner: string, timestamp: number): string {
  return `agentledger agent claim\nchain: ${chainId}\nagent: ${agentWallet}\ntoken: ${tokenId}\nowner: ${getAddress(owner)}\ntimestamp: ${timestamp}`;
}

/** The marketplace's EIP-712 domain ("agentledger Marketplace", version 1). */
export function marketplaceDomain(chainId: number, marketplace: string): { name: string; version: string; chainId: number; verifyingContract: Address } {
  return { name: "agentledger Marketplace", version: "1", chainId, verifyingContract: getAddress(marketplace) };
}

export const OFFER_TYPES = {
  Offer: [
    { name: "listingId", type: "uint256" },
    { name: "buyer", type: "address" },
    { name: "price", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;
