"""What the checkout use cases run with: the shared Services (the store's two sides, the operator,
the chain, the clock) and the feature's settings (built once by the runtime; no request objects)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.services import FeatureContext


@dataclass
class Checkout(FeatureContext):
    #: Seconds before an unpaid session expires (AGENTLEDGER_CHECKOUT_SESSION_TTL).
    session_ttl: float = 3600.0
    #: Job ids whose funding this process is sending (from complete_in_progress until the send's
    #: outcome is known): the stuck-session sweep never resets those.
    funding: set[str] = field(default_factory=set)
