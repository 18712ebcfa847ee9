"""The ownership marketplace ("drop"): listings over AgentMarketplace, the offer book, sales with
their due-diligence bundle, the settle and expiry sweeps, notices (e-mail, webhooks) and the
handover of a sold agent. See the modules: rules, context, trading, records, follower, sweep,
handover, notices, views."""

from __future__ import annotations

from core.marketplace.context import Market, Notices, notices_for
from core.marketplace.follower import MarketFollower, follower

__all__ = ["Market", "MarketFollower", "Notices", "follower", "notices_for"]
