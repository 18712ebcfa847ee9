"""Transactions, the same on both backends (core.store.backend says how each begins one).

- `transaction(conn)`: a write transaction holding the database's write lock from its BEGIN to its end,
  so two writers never interleave and never wait for each other in a cycle;
- `read_snapshot(conn)`: several reads that see one state of the database, taking no lock;
- `savepoint(conn, name)`: a nested transaction that can fail alone inside an open one;
- `begin` / `commit` / `rollback`: a write transaction committed elsewhere (the indexer's COMMIT runs in
  a thread of its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from core.store.backend import backend_of
from core.store.types import Conn


def transaction(conn: Conn) -> AbstractContextManager[Conn]:
    """BEGIN with the write lock ... COMMIT (ROLLBACK on any exception)."""
    return _between(conn, begin)


def read_snapshot(conn: Conn) -> AbstractContextManager[Conn]:
    """Several reads that see one state of the database, whatever commits meanwhile (SQLite: a deferred
    BEGIN, whose WAL snapshot is taken at the first read; PostgreSQL: a REPEATABLE READ READ ONLY
    transaction). Not inside another transaction. Nothing may be written in it."""
    return _between(conn, backend_of(conn).begin_snapshot)


@contextmanager
def _between(conn: Conn, open_transaction: Callable[[Conn], object]) -> Iterator[Conn]:
    """`open_transaction(conn)` ... COMMIT, or ROLLBACK when the body raises."""
    open_transaction(conn)
    try:
        yield conn
    except BaseException:
        rollback(conn)
        raise
    commit(conn)


def begin(conn: Conn) -> None:
    """Open a write transaction holding the database's write lock (waiting for it up to the backend's lock
    timeout); for a caller that commits it elsewhere."""
    backend_of(conn).begin_write(conn)


def commit(conn: Conn) -> None:
    """COMMIT; when it raises, nothing of the transaction was committed and it is ended."""
    backend_of(conn).commit(conn)


def rollback(conn: Conn) -> None:
    """Roll back the open transaction, if any (a lost session has nothing left to roll back)."""
    if in_transaction(conn) and not backend_of(conn).broken(conn):
        conn.execute("ROLLBACK")


def in_transaction(conn: Conn) -> bool:
    """Is a transaction open on `conn` (one a failed step may have left behind)?"""
    return not conn.getautocommit()


@contextmanager
def savepoint(conn: Conn, name: str) -> Iterator[Conn]:
    """A nested transaction inside the open one: rolled back to (and the error re-raised) when the
    body raises, released either way, so the outer transaction carries on."""
    if not name.isidentifier():
        raise ValueError(f"not a savepoint name: {name!r}")
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


def tune_for_indexing(conn: Conn) -> None:
    """The backend's settings for the indexer's own connection."""
    backend_of(conn).tune_for_indexing(conn)
