"""What the marketplace's use cases run with (built once by the app, no request objects)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from core.config import Settings
from core.networks import LOCAL_CHAIN_ID
from core.outbox.email import DEFAULT_FROM
from core.services import FeatureContext


@dataclass(frozen=True)
class Notices:
    """How notices are addressed: links start at `base_url` (AGENTLEDGER_PUBLIC_URL, or the local
    API's address on a local chain), e-mails come from `sender`."""

    base_url: str
    sender: str = DEFAULT_FROM

    def unsubscribe_url(self, token: str) -> str:
        return f"{self.base_url.rstrip('/')}/api/a2a/drop/unsubscribe?token={token}"

    def listing_url(self, listing_uuid: str) -> str:
        return f"{self.base_url.rstrip('/')}/api/a2a/drop?listingId={listing_uuid}"


@dataclass
class Market(FeatureContext):
    #: AgentMarketplace's address (the EIP-712 Offer's verifying contract).
    marketplace: str
    notices: Notices
    #: Serialises mints on demand in this process (check-mint-record race-free, as provider links).
    mint_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def notices_for(settings: Settings, chain_id: int, public_url: str | None = None) -> Notices:
    """How notices are addressed: links under the public URL (the local API's address on a local
    chain when none is configured), e-mails from AGENTLEDGER_SMTP_FROM."""
    base = public_url or settings.public_url
    if not base:
        if chain_id != LOCAL_CHAIN_ID:
            raise ValueError(f"set AGENTLEDGER_PUBLIC_URL: it is required on chain {chain_id}")
        base = f"http://{settings.api_host}:{settings.api_port}"
    return Notices(base_url=base.rstrip("/"), sender=settings.smtp_from)
