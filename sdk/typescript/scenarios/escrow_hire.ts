// Escrow hire: the provider sets its on-chain price; the caller's own account approves the escrow and
// creates the job (viem), then signs the call; the service runs the job and releases the USDC on-chain.
import { createPublicClient, getAddress, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { check, env, equal, keywordRunner, KEYWORDS, linkedProvider, newAgent, run, sleep } from "./lib.ts";

const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)"]);

await run("escrow_hire", async () => {
  const { url, rpcUrl, privateKeys } = env();
  const [selfKey, callerKey] = [privateKeys[1], privateKeys[2]];
  check(selfKey !== undefined && callerKey !== undefined, "two funded keys");
  const runner = await keywordRunner();
  try {
    // the provider's self wallet pays setPrice's gas: a funded key
    const provider = await linkedProvider(url, "escrow provider", privateKeyToAccount(selfKey));
    runner.trust(await provider.ledger.publishService({ ...KEYWORDS, agentId: provider.wallet, price: "2", runner: { type: "https", url: runner.url } }));
    await provider.ledger.setEscrowPrice(provider.tokenId, "2", 3600, provider.selfWallet, rpcUrl);

    const caller = await newAgent(url, "escrow caller");
    let available = false;
    for (let i = 0; i < 100 && !available; i++) {
      const page = await caller.ledger.registry({ serviceType: "keyword_research", wallet: provider.wallet, escrow: true });
      available = page.providers.some((p) => (p["escrow"] as { available?: boolean } | undefined)?.available === true);
      if (!available) await sleep(100);
    }
    check(available, "the indexer saw the on-chain price: escrow-hirable");

    const account = privateKeyToAccount(callerKey);
    const chain = createPublicClient({ transport: http(rpcUrl) });
    const usdc = getAddress((await caller.ledger.serviceInfo()).usdc);
    const balance = (): Promise<bigint> => chain.readContract({ address: usdc, abi: ERC20, functionName: "balanceOf", args: [account.address] });
    const before = await balance();
    const job = await caller.ledger.escrowHire(provider.wallet, "keyword_research", { topic: "tea" }, { account, rpcUrl });
    equal(job.value, { keywords: ["tea tips", "best tea"] }, "the job's output");
    equal(job.amountUsdc, "2", "locked at the on-chain price");
    check(job.success && typeof job.releaseTx === "string", `released on-chain (${job.settlement})`);
    equal(await balance(), before - 2_000_000n, "the caller paid the price from its own account");
    equal(runner.checked, [true], "the runner got one request, both signatures valid");
    let status = await caller.ledger.escrowStatus(job.jobId);
    for (let i = 0; i < 100 && status.status !== "released"; i++) {
      await sleep(100);
      status = await caller.ledger.escrowStatus(job.jobId);
    }
    equal([status.status, status.amountUsdc, status.caller], ["released", "2", account.address], "the escrow's status");
    return { jobId: job.jobId, createTx: job.createTx, releaseTx: job.releaseTx, status: status.status };
  } finally {
    runner.close();
  }
});
