"""Escrow hire: the provider sets its on-chain price (AgentEscrow.setPrice, its self wallet); the
caller's own key approves and creates the job on-chain, then the signed call runs it; its status on
the chain and its audit stream."""

from __future__ import annotations

from typing import Any

from _provider import endpoint, publish
from _scenario import RPC_URL, URL, check, fresh_account, mint_test_usdc, run, until
from agentledger_sdk import AgentLedger


def scenario() -> dict[str, Any]:
    self_wallet, owner, payer = fresh_account(), fresh_account(), fresh_account()
    with endpoint() as ep, AgentLedger(URL) as provider, AgentLedger(URL) as caller:
        wallet = provider.register("escrowed", "content_seo").agent.wallet
        provider.link_provider(wallet, self_account=self_wallet, owner_address=owner.address)
        publish(provider, wallet, ep, "2")
        provider.set_escrow_price(wallet, "2", 0, account=self_wallet, rpc_url=RPC_URL)

        def escrow_ready() -> Any:
            found = caller.registry("keyword_research", wallet=wallet, escrow=True).providers
            return found and (found[0].get("escrow") or {}).get("available")

        until(escrow_ready, bool, "the registry to show the escrow price")
        mint_test_usdc(payer, "5")
        caller.register("escrow-hirer", "content_seo")
        out = caller.escrow_hire(wallet, "keyword_research", {"topic": "ads"}, account=payer, rpc_url=RPC_URL)
        check(out.success, f"the escrow job ran: {out.raw}")
        check(out.value == {"keywords": ["ads tips", "best ads"]}, f"the provider's output: {out.output}")
        job_id = ep.jobs[-1]
        status = until(lambda: caller.escrow_status(job_id), lambda s: s.status == "released", "the release")
        audit = caller.hire_audit(job_id)
        check(audit.broken_link() is None, f"the escrow job's audit stream holds: {audit.broken_link()}")
    return {"job": job_id, "create_tx": out.create_tx, "status": status.status, "amount": status.amount_usdc}


if __name__ == "__main__":
    run(scenario)
