/** The caller's own transactions (viem): approve USDC, wait for receipts. Only ever signed by your account. */
import {
  createPublicClient,
  createWalletClient,
  http,
  parseAbi,
  type Account,
  type Address,
  type Chain,
  type Hash,
  type PublicClient,
  type WalletClient,
  type Transport,
} from "viem";

export const ERC20_ABI = parseAbi([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address owner) view returns (uint256)",
]);

export interface ChainClients {
  public: PublicClient<Transport, Chain>;
  wallet: WalletClient<Transport, Chain, Account>;
}

export function clientsFor(account: Account, rpcUrl: string, chainId: number): ChainClients {
  const chain: Chain = {
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  };
  return {
    public: createPublicClient({ chain, transport: http(rpcUrl) }),
    wallet: createWalletClient({ account, chain, transport: http(rpcUrl) }),
  };
}

/** Approve `spender` for `amount` micro-USDC when the allowance is short; answers the transaction, if one was sent. */
export async function ensureAllowance(c: ChainClients, usdc: Address, spender: Address, amount: bigint): Promise<Hash | undefined> {
  const owner = c.wallet.account.address;
  const allowance = await c.public.readContract({ address: usdc, abi: ERC20_ABI, functionName: "allowance", args: [owner, spender] });
  if (allowance >= amount) return undefined;
  const hash = await c.wallet.writeContract({ address: usdc, abi: ERC20_ABI, functionName: "approve", args: [spender, amount] });
  const receipt = await c.public.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== "success") throw new Error(`approve ${hash} reverted`);
  return hash;
}

export const ESCROW_ABI = parseAbi([
  "function priceOf(uint256 tokenId) view returns (uint256)",
  "function slaOf(uint256 tokenId) view returns (uint64)",
  "function setPrice(uint256 tokenId, uint256 price, uint64 slaSeconds)",
  "function createJob(bytes32 jobId, string providerWallet, uint256 amount, uint64 slaSeconds)",
]);

export const MARKETPLACE_ABI = parseAbi([
  "struct EarningsStatement { uint256 tokenId; address seller; uint256 reportedEarnings; uint256 nonce; uint256 deadline; }",
  "struct Offer { uint256 listingId; address buyer; uint256 price; uint256 nonce; uint256 deadline; }",
  "function list(uint256 tokenId, uint256 askingPrice, uint256 floorPrice, uint64 duration, EarningsStatement statement, bytes signature) returns (uint256)",
  "function acceptOffer(uint256 listingId, Offer offer, bytes signature)",
  "function buy(uint256 listingId)",
  "function settle(uint256 listingId)",
]);

export const ERC721_ABI = parseAbi(["function approve(address to, uint256 tokenId)"]);

/** Send one contract call and wait for it to succeed. */
export async function transact(c: ChainClients, call: Parameters<ChainClients["wallet"]["writeContract"]>[0]): Promise<Hash> {
  const hash = await c.wallet.writeContract(call);
  const receipt = await c.public.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return hash;
}
