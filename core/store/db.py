"""Opening the SQLite file, schema migrations and transactions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import apsw

from core.store import reorg, schema, sums
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
    _use_wal(conn)
    conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    sums.install(conn)
    _migrate(conn)
    return conn


def _use_wal(conn: apsw.Connection) -> None:
    """Put the file in WAL mode (a property of the file, kept across connections).

    Switching the mode takes a lock that SQLite may refuse at once, busy timeout or not, while other
    connections are opening the same file (CI saw "database is locked" from 8 threads connecting at
    once). So the mode is only set when the file is not in WAL mode yet, and a refusal is retried until
    the busy timeout has passed."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            (mode,) = conn.execute("PRAGMA journal_mode").fetchone()  # type: ignore[misc]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def transaction(conn: apsw.Connection) -> AbstractContextManager[apsw.Connection]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on any exception): take the write lock up front so two
    processes sharing the file never deadlock upgrading a read lock."""
    return _between(conn, "BEGIN IMMEDIATE")


def read_snapshot(conn: apsw.Connection) -> AbstractContextManager[apsw.Connection]:
    """Several reads that see one state of the database, whatever commits meanwhile (SQLite: a deferred
    BEGIN, whose WAL snapshot is taken at the first read and kept until its COMMIT; it takes no write
    lock). Not inside another transaction. Nothing may be written in it. PostgreSQL: a REPEATABLE READ
    READ ONLY transaction (its BEGIN under READ COMMITTED would give each statement its own snapshot)."""
    if isinstance(conn, PostgresConnection):
        return _between(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    return _between(conn, "BEGIN")


@contextmanager
def _between(conn: apsw.Connection, begin_sql: str) -> Iterator[apsw.Connection]:
    """`begin_sql` ... COMMIT, or ROLLBACK when the body raises."""
    conn.execute(begin_sql)
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
    """Bring the file to the latest schema. Checked first with reads only: every connection runs this,
    and a file already current must not make it queue for the write lock behind busy writers (eight
    threads of a test writing in a loop starved a ninth's connect past the busy timeout)."""
    with read_snapshot(conn):
        current = _user_version(conn) == len(schema.MIGRATIONS) and reorg.triggers_current(conn)
    if current:
        return
    with transaction(conn):
        version = _user_version(conn)
        for i, script in enumerate(schema.MIGRATIONS[version:], start=version + 1):
            conn.execute(script)
            conn.execute(f"PRAGMA user_version={i}")
        reorg.install_triggers(conn)


def _user_version(conn: apsw.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchall()[0][0])  # type: ignore[arg-type]
