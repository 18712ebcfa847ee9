"""The dashboard's use cases: read-only views composed from the features' own views and stores, and
the browser sessions that sign an owner or an operator in.

- access: sign-in sessions (the cookie's hash, the key it signed in with, its CSRF token), and the
  one operator check (require_operator; the operator flag of a key, not its scope "admin");
- owner: an account's agents, balances, earnings over time and by source, the ledger (filters, CSV),
  memory and brain, orders with their history and audit chain, decision-log entries, hires made and
  received, and the services the agents publish in the registry;
- operator: network totals (hires among them), the indexer's progress, the outbox, anchors, contracts
  and what they owe, keys (list, issue, revoke).

A feature that lands later adds one view function here and one panel in api.dashboard; nothing else
changes.
"""

from core.dashboard import access, operator, owner

__all__ = ["access", "operator", "owner"]
