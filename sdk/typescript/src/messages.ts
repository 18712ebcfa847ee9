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
