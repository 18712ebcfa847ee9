"""The explicit serialization points of check-then-write: every place that reads something and then
writes on the strength of it (a balance before a debit, the audit log's head before an append, a key's
spend today before a hold, an Idempotency-Key row before a claim) names its point here.

Every write transaction of the store holds the database's one write lock from its BEGIN to its end
(core.store.backend: SQLite's BEGIN IMMEDIATE; on PostgreSQL an advisory lock taken with the BEGIN), so
its reads already see every earlier commit and no other writer can interleave until it commits, with
any number of writer processes. A point therefore takes nothing more: `lock` refuses to run outside such
a transaction, where the read it guards would protect nothing.
"""

from __future__ import annotations

from core.store.backend import backend_of
from core.store.types import Conn

__all__ = ["NotInTransaction", "lock"]


class NotInTransaction(RuntimeError):
    """A serialization point, or a write that needs one (a ledger row), outside a write transaction."""


def lock(conn: Conn, name: str) -> None:
    """The serialization point `name`: raise NotInTransaction unless `conn` is in a write transaction
    (which holds the database's write lock until it ends)."""
    if not backend_of(conn).holds_write_lock(conn):
        raise NotInTransaction(f"serialization point {name!r} reached outside a write transaction")
