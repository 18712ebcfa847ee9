"""What the checkout use cases run with: the store's two sides, the operator, the chain, the clock
and the feature's settings (built once by the runtime; no request objects)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.operator import Operator
from core.store.committer import GroupCommitter
from core.store.reads import Reads


@dataclass
class Checkout:
    #: Committed reads (lookups before a transaction, GETs): `await reads.run(fn)` (core.store.reads).
    reads: Reads

    #: Every write (the group committer: synchronous=FULL).
    writer: GroupCommitter
    operator: Operator
    chain_id: int
    clock: Callable[[], float] = time.time
    #: Seconds before an unpaid session expires (AGENTLEDGER_CHECKOUT_SESSION_TTL).
    session_ttl: float = 3600.0
    #: Whether webhook targets may be private addresses (core.egress.allow_private_for).
    allow_private_webhooks: bool = False
    #: Job ids whose funding this process is sending (from complete_in_progress until the send's
    #: outcome is known): the stuck-session sweep never resets those.
    funding: set[str] = field(default_factory=set)
