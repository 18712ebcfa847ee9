"""Buyer-funded escrow checkout (ACP style): the feature's rules, transactions, follower and job.

rules            prices, tiers, ids, the messages buyers and providers sign (pure)
context          Checkout: what its use cases run with (store, operator, chain, clock, settings)
sessions         create, update, cancel and expire checkout sessions
funding          completing a session: the four-step funding saga
orders           the order state machine and the one way an order changes state
provider_orders  the provider's signed moves: acknowledge, start, fail, recover, deliver, complete
providers        linking an agent as a provider: its signed consent, then its NFT minted
views            what a caller may see of sessions and orders
follower         orders follow the gateway's final events (installed in the indexer)
sweep            expiry and stuck-completion sweep (a job)
"""

__all__ = [
    "context",
    "follower",
    "funding",
    "orders",
    "provider_orders",
    "providers",
    "rules",
    "sessions",
    "sweep",
    "views",
]
