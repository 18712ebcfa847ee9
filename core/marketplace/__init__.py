"""The ownership marketplace ("drop"): listings over AgentMarketplace, the offer book, sales with
their due-diligence bundle, the settle and expiry sweeps, notices (e-mail, webhooks) and the
handover of a sold agent. See the modules: rules, context, trading, records, follower, sweep,
handover, notices, views."""

from __future__ import annotations

from core.config import Settings
from core.marketplace.context import Market, Notices
from core.marketplace.follower import MarketFollower
from core.networks import LOCAL_CHAIN_ID

__all__ = ["Market", "MarketFollower", "Notices", "notices_for"]


def notices_for(settings: Settings, chain_id: int, public_url: str | None = None) -> Notices:
    """How notices are addressed: links under the public URL (the local API's address on a local
    chain when none is configured), e-mails from AGENTLEDGER_SMTP_FROM."""
    base = public_url or settings.public_url
    if not base:
        if chain_id != LOCAL_CHAIN_ID:
            raise ValueError(f"set AGENTLEDGER_PUBLIC_URL: it is required on chain {chain_id}")
        base = f"http://{settings.api_host}:{settings.api_port}"
    return Notices(base_url=base.rstrip("/"), sender=settings.smtp_from)
