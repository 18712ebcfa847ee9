"""Opening the SQLite file, schema migrations and transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from core.store import reorg, schema
from core.store.pg import PostgresConnection

BUSY_TIMEOUT_MS = 10_000


def connect(path: Path | str, *, durable: bool = True) -> apsw.Connection:
    """Open (creating and migrating if needed) the database at `path`.

    durable=True commits with synchronous=FULL: for writes that acknowledge money. The indexer
    may pass durable=False (synchronous=NORMAL, still crash-consistent in WAL mode): everything it
    writes is re-derivable from the chain and its checkpoint is in the same transaction as its rows.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(path))
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    _migrate(conn)
    return conn


@contextmanager
def transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on any exception): take the write lock up front so two
    processes sharing the file never deadlock upgrading a read lock."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def read_snapshot(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """Several reads that see one state of the database, whatever commits meanwhile (SQLite: a deferred
    BEGIN, whose WAL snapshot is taken at the first read and kept until its COMMIT; it takes no write
    lock). Not inside another transaction. Nothing may be written in it. PostgreSQL: a REPEATABLE READ
    READ ONLY transaction (its BEGIN under READ COMMITTED would give each statement its own snapshot)."""
    if isinstance(conn, PostgresConnection):
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    else:
        conn.execute("BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def begin(conn: apsw.Connection) -> None:
    """Open a write transaction (the write lock taken up front, as `transaction` does); for a caller
    that commits it elsewhere (the indexer's COMMIT runs in a thread of its own)."""
    conn.execute("BEGIN IMMEDIATE")


def commit(conn: apsw.Connection) -> None:
    conn.execute("COMMIT")


def rollback(conn: apsw.Connection) -> None:
    conn.execute("ROLLBACK")


def in_transaction(conn: apsw.Connection) -> bool:
    """Is a transaction open on `conn` (one a failed step may have left behind)?"""
    return not conn.getautocommit()


@contextmanager
def savepoint(conn: apsw.Connection, name: str) -> Iterator[apsw.Connection]:
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


#: The indexer's page cache (SQLite's default is 2 MiB).
INDEXING_CACHE_KIB = 64 * 1024


def tune_for_indexing(conn: apsw.Connection) -> None:
    """Settings for the indexer's own connection: a page cache of up to 64 MiB, so that the index pages
    of a large backfill are not read back from the file over and over. PostgreSQL: nothing (its cache is
    the server's shared buffers; the indexer's connection already commits asynchronously, durable=False)."""
    if isinstance(conn, PostgresConnection):
        return
    conn.execute(f"PRAGMA cache_size = -{INDEXING_CACHE_KIB}")


def _migrate(conn: apsw.Connection) -> None:
    with transaction(conn):
        version = int(conn.execute("PRAGMA user_version").fetchall()[0][0])  # type: ignore[arg-type]
        for i, script in enumerate(schema.MIGRATIONS[version:], start=version + 1):
            conn.execute(script)
            conn.execute(f"PRAGMA user_version={i}")
        reorg.install_triggers(conn)
