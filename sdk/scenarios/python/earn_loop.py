"""The seed's earn loop: register an agent; earn, earn_batch, record_run, get_agent with the seed's
answers (97/1/2 split, totals exact in Decimal). get_agent runs on the async client too."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from _scenario import URL, check, run
from agentledger_sdk import AgentLedger, AsyncAgentLedger


def scenario() -> dict[str, Any]:
    with AgentLedger(URL) as al:
        reg = al.register("scout", "content_seo")  # keyless: a new account, its key adopted
        wallet = reg.agent.wallet
        r = al.earn(wallet, "12.5", source="gumroad")
        check(
            (r.ownerCut, r.agentCut, r.serviceCut) == (Decimal("12.125"), Decimal("0.125"), Decimal("0.25")),
            f"the 97/1/2 split of 12.5: {r.ownerCut} {r.agentCut} {r.serviceCut}",
        )
        check(r.owner_cut + r.agent_cut + r.service_cut + r.referral_cut == Decimal("12.5"), "the parts sum to 12.5")
        batch = al.earn_batch(
            [(wallet, Decimal("0.1"), "shop"), {"agentId": wallet, "amount": "0.2", "source": "shop"}]
        )
        check(len(batch.results) == 2, "two batch results")
        run_ = al.record_run(wallet, True, niche="youtube")
        check(run_.success, "the run was counted")
        agent = al.get_agent(wallet)
        check(
            agent.totalEarned == Decimal("12.8"),
            f"totalEarned 12.5 + 0.1 + 0.2 = 12.8 exactly, not {agent.totalEarned}",
        )
        check(agent.totalTransactions == 3, f"three earnings, not {agent.totalTransactions}")
        key = al.api_key

    async def read() -> Any:
        async with AsyncAgentLedger(URL, key) as aal:
            return await aal.get_agent(wallet)

    again = asyncio.run(read())
    check(again.balance == agent.balance, "the async client reads the same balance")
    return {"wallet": wallet, "totalEarned": agent.totalEarned, "balance": agent.balance}


if __name__ == "__main__":
    run(scenario)
