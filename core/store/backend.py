"""What differs between the store's two databases, in one protocol: every other module of core.store is
written once against it, and the backend is chosen once, where the database is opened (a connection
carries its backend, `backend_of`).

- SQLite (core.store.sqlite): one file, apsw, WAL. A write transaction takes the file's single write lock
  at BEGIN IMMEDIATE; reads never wait (WAL).
- PostgreSQL (core.store.pg): psycopg 3. A write transaction takes the database's one write lock (an
  advisory transaction lock) right after BEGIN, so writers run one at a time exactly as on SQLite: every
  lock a transaction takes afterwards (row locks of its UPDATEs) is taken while it holds that one lock, so
  two writers can never wait for each other in a cycle, whichever rows they touch in whichever order.
  Reads (READ COMMITTED, or a REPEATABLE READ snapshot) take no lock.

What the rest of the project sees is the same either way: `Conn`, `StoreError`, the transaction helpers
of core.store.transactions, and `unavailable(exc)` for "the database is out of reach for now".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, Protocol

from core.store.reads import READ_POOL_SIZE
from core.store.types import Conn, UnsupportedDatabase

if TYPE_CHECKING:
    from core.store.reads import Reads

Kind = Literal["sqlite", "postgresql"]
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Checkpointer(Protocol):
    """The backfill's checkpoints off its committing thread (SQLite); nothing to do on PostgreSQL."""

    def attach(self) -> None: ...

    def detach(self) -> None: ...


class ProcessLockHolder(Protocol):
    """A lock named once across every process of a database (core.store.process_lock.ProcessLock)."""

    def held(self) -> AbstractContextManager[None]: ...

    def close(self) -> None: ...


class Backend(Protocol):
    @property
    def kind(self) -> Kind: ...

    #: A write's RETURNING can feed another write in the same statement (PostgreSQL's data-modifying WITH):
    #: a store function may then send one statement where it would send two, one round trip fewer.
    chains_writes: bool
    #: A statement may wait for another process (a lock, the network): the group committer runs its
    #: transactions in a thread instead of on the event loop.
    waits_off_loop: bool

    def connect(self, location: str, *, durable: bool) -> Conn:
        """A new connection, the schema migrated first. durable=False: commits may return before they are
        on disk (the indexer: everything it writes is re-derived from the chain after a crash)."""
        ...

    def begin_write(self, conn: Conn, *, wait: bool = True) -> bool:
        """BEGIN a write transaction holding the database's write lock. wait=False: return False at once
        (no transaction open) when another writer holds it; wait=True waits up to the lock timeout."""
        ...

    def commit(self, conn: Conn) -> None:
        """COMMIT the open transaction; when it raises, nothing of it was committed (the transaction is
        ended). PostgreSQL: a COMMIT whose answer was lost with the session is asked about on a new one."""
        ...

    def begin_snapshot(self, conn: Conn) -> None:
        """BEGIN a read-only transaction whose reads all see one state of the database."""
        ...

    def holds_write_lock(self, conn: Conn) -> bool:
        """Is `conn` inside a write transaction begun by begin_write?"""
        ...

    def write_transaction(self, conn: Conn) -> int | None:
        """An id of the write transaction open on `conn`, unique in the database (None: none open, or the
        backend has no such id). A value read under the write lock cannot change until this transaction
        changes it: a store function may keep it for the rest of the transaction by this id."""
        ...

    def aborted(self, conn: Conn) -> bool:
        """Did an error abort the open transaction (only a rollback is accepted now)? SQLite: never."""
        ...

    def broken(self, conn: Conn) -> bool:
        """Is the session gone (a server restart, a cut network), so that only a new connection goes on?"""
        ...

    def track(self, conn: Conn, table: str) -> None:
        """Journal the writes of `table` for reorg rollback (core.store.reorg) from now on."""
        ...

    def undo(self, conn: Conn, ancestor: int) -> int:
        """Replay the reorg journal above `ancestor`, newest first; the number of writes undone."""
        ...

    def exact_rows(self, conn: Conn, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of `sql` whose sums of money are written exact_sum(x), each exact at any size
        (core.store.sums)."""
        ...

    def checkpointer(self, conn: Conn) -> Checkpointer:
        """The backfill's checkpoints for the indexer's connection `conn`."""
        ...

    def tune_for_indexing(self, conn: Conn) -> None:
        """Settings of the indexer's own connection."""
        ...

    def record_events(self, conn: Conn, chain_id: int, rows: Sequence[Sequence[Any]]) -> None:
        """Insert `rows` into `events` (its columns after chain_id, in order; a row already recorded is
        left as it is), in the open transaction: SQLite one prepared INSERT per row; PostgreSQL one
        COPY (the backfill's bulk of rows)."""
        ...

    def process_lock(self, location: str, name: str) -> ProcessLockHolder:
        """A lock named `name` across every process of the database, held for each `with holder.held()`
        block (blocking: from a worker thread). Released by the OS or the server when the holder dies."""
        ...

    def reads(self, conn: Conn, size: int) -> Reads:
        """The API's reads beside the read connection `conn` (core.store.reads), with a pool of `size`."""
        ...


def backend_for(location: str) -> Backend:
    """The backend of a database location: a postgresql:// URL, else a SQLite file."""
    if location.startswith(POSTGRES_SCHEMES):
        from core.store.pg import POSTGRESQL

        return POSTGRESQL
    from core.store.sqlite import SQLITE

    return SQLITE


def backend_of(conn: Conn) -> Backend:
    """The backend `conn` belongs to: a PostgreSQL connection names its own; an apsw connection (a plain
    C type that cannot carry one) is SQLite's."""
    found: Backend | None = getattr(conn, "backend", None)
    if found is not None:
        return found
    from core.store.sqlite import SQLITE

    if SQLITE.owns(conn):
        return SQLITE
    raise UnsupportedDatabase(f"not a connection of this build: {type(conn).__name__}")


def reads_beside(conn: Conn, *, size: int = READ_POOL_SIZE) -> Reads:
    """The reads of the process whose read connection is `conn` (core.store.reads): on it (SQLite), or
    from a pool of `size` connections on the same PostgreSQL database (0: on `conn`, on the loop, as
    SQLite: a server on the same host, where a round trip costs less than the hop to a thread)."""
    return backend_of(conn).reads(conn, size)
