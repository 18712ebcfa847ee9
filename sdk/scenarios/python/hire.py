"""Standard hire: a provider publishes a service (its endpoint checks the job's signatures with the
SDK's verifiers) and a caller hires it; the output, the charge (the price, exact) and the job's audit
stream, rechecked here."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from _provider import endpoint, publish
from _scenario import URL, check, fresh_account, run
from agentledger_sdk import AgentLedger


def scenario() -> dict[str, Any]:
    self_wallet, owner = fresh_account(), fresh_account()
    with endpoint() as ep, AgentLedger(URL) as provider, AgentLedger(URL) as caller:
        wallet = provider.register("keywords", "content_seo").agent.wallet
        provider.link_provider(wallet, self_account=self_wallet, owner_address=owner.address)
        publish(provider, wallet, ep, "2.5")
        caller_wallet = caller.register("hirer", "content_seo").agent.wallet
        caller.earn(caller_wallet, "10", source="seed")
        before = caller.get_agent(caller_wallet).balance
        job = caller.hire(caller_wallet, "keyword_research", {"topic": "seo"}, provider_wallet=wallet)
        check(job.value == {"keywords": ["seo tips", "best seo"]}, f"the provider's output: {job.output}")
        check(job.amount_charged == Decimal("2.5"), f"charged the price 2.5, not {job.amount_charged}")
        check(caller.get_agent(caller_wallet).balance == before - Decimal("2.5"), "the balance fell by the price")
        check(ep.verified == 1 and ep.refused == 0, f"one signed job request ({ep.verified}, {ep.refused} refused)")
        audit = caller.hire_audit(job.job_id)
        check(audit.entries and audit.broken_link() is None, f"the job's audit stream holds: {audit.broken_link()}")
        rep = caller.reputation(wallet, "keyword_research")
        check(rep.raw, "the service has a reputation")
    return {"job": job.job_id, "charged": job.amount_charged, "audit_entries": len(audit.entries)}


if __name__ == "__main__":
    run(scenario)
