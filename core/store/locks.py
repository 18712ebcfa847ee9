"""The explicit serialization points of check-then-write: a transaction-scoped named lock, and
row locks on the SELECTs whose answer decides a write.

Every place that reads something and then writes on the strength of it (a balance before a debit,
the audit log's head before an append, a key's spend today before a hold, an Idempotency-Key row
before a claim) names its lock here, so it holds with any number of writer processes:

- SQLite: every writer of the file (each process's group committer, the outbox dispatcher, the
  indexer, the scripts) writes inside BEGIN IMMEDIATE, which takes the file's single write lock
  for the whole transaction. A transaction's reads then already see every earlier commit and no
  other writer can interleave until it commits: `lock` takes nothing and `for_update` is empty.
- PostgreSQL (READ COMMITTED): `lock` takes `pg_advisory_xact_lock(hashtext(name))`, held until
  the transaction ends; every read after it sees what the previous holder committed. `for_update`
  appends ` FOR UPDATE` (the row stays locked until the transaction ends).

Both need a transaction: a lock taken outside one would end with its statement.
"""

from __future__ import annotations

from core.store.database import kind_of
from core.store.types import Conn

__all__ = ["NotInTransaction", "for_update", "lock"]


class NotInTransaction(RuntimeError):
    """A lock, or a write that needs one (a ledger row), asked for outside BEGIN ... COMMIT."""


def lock(conn: Conn, name: str) -> None:
    """Hold the lock `name` until the transaction of `conn` ends (commit or rollback). Writers that
    take the same name run one after another; take locks in one order (see the callers)."""
    if not conn.in_transaction:
        raise NotInTransaction(f"lock {name!r} taken outside a transaction")
    if kind_of(conn) == "sqlite":
        return  # the transaction already holds the file's write lock (module docstring)
    # ---- PostgreSQL: the one place its named lock is taken ----
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (name,))


def for_update(conn: Conn) -> str:
    """The suffix of a SELECT whose rows must stay as read until the transaction ends: empty on
    SQLite (no such clause; the write lock covers it), " FOR UPDATE" on PostgreSQL. Only for
    single-table SELECTs without aggregates (PostgreSQL refuses FOR UPDATE on those)."""
    return "" if kind_of(conn) == "sqlite" else " FOR UPDATE"
