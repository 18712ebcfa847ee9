"""Agent-to-agent hire: providers publish services; callers hire them by standard hire (charged to
the caller agent's balance) or escrow hire (USDC locked in AgentEscrow, released or refunded by the
service as oracle); a registry ranks services by a reputation earned only from paid, settled jobs.

Modules: rules (limits, messages, digests, failure codes), schemas (JSON Schema checks), context
(what the use cases run with), runners (HTTPS and A2A), moves (audit entry + webhooks of a state
change), services (publishing), standard, escrow, reputation (the formula), registry (views),
settle (background jobs, start-up recovery), follower (final AgentEscrow events).
"""

from core.hire.context import Hire, Seams
from core.hire.follower import EscrowFollower

__all__ = ["EscrowFollower", "Hire", "Seams"]
