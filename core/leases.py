"""A lease held by this process (core.store.leases): one process at a time runs a background job or
service, or follows the chain, and another takes over when the holder stops renewing.

The holder is this process's instance id (core.instance), so a lease whose holder certainly died on
this host (kill -9) is taken over at once instead of after its expiry; on another host, after
`ttl` seconds of the clock given.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core import instance
from core.store import Conn
from core.store import leases as store
from core.store.leases import LostLease

__all__ = [
    "Lease",
    "LostLease",
    "holders",
    "indexer_lease_name",
    "is_this_process",
    "job_lease_name",
    "service_lease_name",
]


def indexer_lease_name(chain_id: int) -> str:
    return f"indexer:{chain_id}"


def job_lease_name(job: str) -> str:
    return f"job:{job}"


def service_lease_name(service: str) -> str:
    return f"service:{service}"


@dataclass
class Lease:
    name: str
    ttl: float
    holder: str = field(default_factory=instance.current)
    clock: Callable[[], float] = time.time
    #: The term this holder has (None: not held, or lost).
    term: int | None = None

    @property
    def held(self) -> bool:
        return self.term is not None

    def acquire(self, conn: Conn) -> bool:
        """Take or renew the lease (see core.store.leases.acquire_or_renew); a lease whose holder is
        certainly gone (instance.is_gone) is taken over at once. True if this holder has it now; a
        changed `term` means it was gained (or regained after another holder had it)."""
        now = self.clock()
        term = store.acquire_or_renew(conn, self.name, self.holder, self.ttl, now)
        if term is None:
            prior = store.get(conn, self.name)
            if prior is not None and instance.is_gone(prior.holder):
                term = store.take_over(conn, self.name, self.holder, self.ttl, now, prior)
        self.term = term
        return term is not None

    def fence(self, conn: Conn, *, extend: bool = True) -> None:
        """Inside a write transaction: raise LostLease unless this holder still has the lease at its term
        (and, with `extend`, renew it). The transaction must then roll back."""
        if self.term is None:
            raise LostLease(f"lease {self.name!r} is not held by {self.holder}")
        try:
            store.fence(conn, self.name, self.holder, self.term, self.clock(), self.ttl if extend else None)
        except LostLease:
            self.term = None
            raise

    def release(self, conn: Conn) -> None:
        """Give it up at once (a clean stop): another process takes it at its next attempt."""
        if self.term is not None:
            store.release(conn, self.name, self.holder)
        self.term = None

    def lost(self) -> None:
        """Forget the term (the lease could not be renewed, or a fenced write was refused)."""
        self.term = None


def holders(conn: Conn, now: float) -> dict[str, str]:
    """Each unexpired lease's holder by lease name (for /healthz)."""
    return {row.name: row.holder for row in store.all_leases(conn) if row.expires_at > now}


def is_this_process(holder: str | None) -> bool:
    """Is `holder` this process (the default holder of every lease it takes)?"""
    return holder is not None and holder == instance.current()
