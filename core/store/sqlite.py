"""The SQLite backend (core.store.backend): one file through apsw, in WAL mode.

Every writer of the file (each process's group committer, the outbox dispatcher, the indexer, the
scripts) writes inside BEGIN IMMEDIATE, which takes the file's single write lock for the whole
transaction; reads never wait for it (WAL). The reorg journal is kept by triggers; the indexer's backfill
moves WAL checkpoints off its committing thread.
"""

from __future__ import annotations

import fcntl
import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import apsw

from core.store import exact, schema
from core.store.types import Conn

if TYPE_CHECKING:
    from core.store.reads import Reads

log = logging.getLogger("agentledger.store")

BUSY_TIMEOUT_MS = 10_000
#: The indexer's page cache (SQLite's default is 2 MiB).
INDEXING_CACHE_KIB = 64 * 1024
#: Locations of private databases: no other process can open them, so a process lock takes nothing.
IN_MEMORY = ("", ":memory:")


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
    conn.create_aggregate_function("exact_sum", exact.ExactSum, 1, flags=apsw.SQLITE_DETERMINISTIC)
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


def _migrate(conn: apsw.Connection) -> None:
    """Bring the file to the latest schema. Checked first with reads only: every connection runs this,
    and a file already current must not make it queue for the write lock behind busy writers (eight
    threads of a test writing in a loop starved a ninth's connect past the busy timeout)."""
    conn.execute("BEGIN")
    try:
        current = _user_version(conn) == len(schema.MIGRATIONS) and triggers_current(conn)
    finally:
        conn.execute("COMMIT")
    if current:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _user_version(conn)
        for i, script in enumerate(schema.MIGRATIONS[version:], start=version + 1):
            conn.execute(script)
            conn.execute(f"PRAGMA user_version={i}")
        for table in schema.TRACKED_TABLES:
            _install(conn, table)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _user_version(conn: apsw.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchall()[0][0])  # type: ignore[arg-type]


# ---- the reorg journal: triggers ------------------------------------------------------------------

_CTX = "(SELECT block_number FROM reorg_context WHERE id = 1)"


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def triggers_current(conn: apsw.Connection) -> bool:
    """Does the file hold today's journaling trigger of every tracked table? (A read: opening a
    connection needs no write lock when it does.)"""
    return all(_stored(conn, name) == sql for table in schema.TRACKED_TABLES for name, sql in _triggers(conn, table))


def _install(conn: apsw.Connection, table: str) -> None:
    """(Re)create the journaling triggers of `table` whose stored text differs from today's (an unchanged
    trigger is left alone, so no schema change)."""
    for name, sql in _triggers(conn, table):
        if _stored(conn, name) != sql:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            conn.execute(sql)


def _triggers(conn: apsw.Connection, table: str) -> list[tuple[str, str]]:
    """(name, CREATE TRIGGER text) of the insert, update and delete journaling triggers of `table`."""
    cols = _columns(conn, table)
    old = "json_array(" + ", ".join(f"OLD.{c}" for c in cols) + ")"
    return [
        (
            f"{table}_undo_{op}",
            f"CREATE TRIGGER {table}_undo_{op} AFTER {when} ON {table} WHEN {_CTX} IS NOT NULL BEGIN "
            f"INSERT INTO reorg_undo (block_number, tbl, op, row_id, old) "
            f"VALUES ({_CTX}, '{table}', '{op}', {row}, {image}); END",
        )
        for op, when, row, image in (
            ("I", "INSERT", "NEW.rowid", "NULL"),
            ("U", "UPDATE", "OLD.rowid", old),
            ("D", "DELETE", "OLD.rowid", old),
        )
    ]


def _stored(conn: apsw.Connection, trigger: str) -> str | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    return None if row is None else str(row[0])


def _undo(conn: apsw.Connection, ancestor: int) -> int:
    undone = 0
    columns: dict[str, list[str]] = {}
    rows = conn.execute(
        "SELECT seq, tbl, op, row_id, old FROM reorg_undo WHERE block_number > ? ORDER BY seq DESC", (ancestor,)
    ).fetchall()
    for _seq, tbl, op, row_id, old in rows:
        table = str(tbl)
        if table not in columns:
            columns[table] = _columns(conn, table)
        cols = columns[table]
        if op == "I":
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (row_id,))
        else:
            values = json.loads(str(old))
            if op == "U":
                assignments = ", ".join(f"{c} = ?" for c in cols)
                conn.execute(f"UPDATE {table} SET {assignments} WHERE rowid = ?", (*values, row_id))
            else:
                placeholders = ", ".join("?" for _ in range(len(cols) + 1))
                conn.execute(
                    f"INSERT INTO {table} (rowid, {', '.join(cols)}) VALUES ({placeholders})", (row_id, *values)
                )
        undone += 1
    return undone


# ---- the backfill's checkpoints --------------------------------------------------------------------


class BackgroundCheckpoints:
    """The backfill's WAL checkpoints, in a thread and on a connection of their own.

    SQLite checkpoints inside the COMMIT that takes the WAL past `wal_autocheckpoint` pages: it
    copies the pages into the database file and syncs both, most of a range's COMMIT time, and the
    next range's writes waited for it. A PASSIVE checkpoint on another connection blocks no writer:
    `attach` replaces the connection's automatic checkpoint with a request to this thread at the
    same threshold, so the same checkpoints overlap the next range instead. What a COMMIT writes and
    syncs (synchronous) is unchanged; `detach` restores the automatic checkpoint."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.pages = 0  # the connection's wal_autocheckpoint while attached (0: not attached)
        self._thread: tuple[threading.Event, threading.Event] | None = None  # its (wake, stop)

    def attach(self) -> None:
        if self.pages or not self.conn.filename:  # attached already, or an in-memory database
            return
        mode = self.conn.execute("PRAGMA journal_mode").fetchall()[0][0]
        pages = int(self.conn.execute("PRAGMA wal_autocheckpoint").fetchall()[0][0])  # type: ignore[arg-type]
        if mode == "wal" and pages > 0:
            self.pages = pages
            self.conn.set_wal_hook(self._committed)

    def detach(self) -> None:
        """Back to SQLite's own checkpoints; the thread ends after the checkpoint it may be running."""
        if self.pages:
            self.conn.wal_autocheckpoint(self.pages)
            self.pages = 0
        if self._thread is not None:
            wake, stop = self._thread
            self._thread = None
            stop.set()
            wake.set()

    def _committed(self, _conn: apsw.Connection, _name: str, wal_pages: int) -> int:
        """SQLite's WAL hook, after each COMMIT (in the committing thread)."""
        if wal_pages >= self.pages:
            if self._thread is None:
                self._thread = threading.Event(), threading.Event()
                wake, stop = self._thread
                thread = threading.Thread(target=_checkpoints, args=(self.conn.filename, wake, stop), daemon=True)
                thread.name = "indexer-checkpoint"
                thread.start()
            self._thread[0].set()
        return apsw.SQLITE_OK


def _checkpoints(filename: str, wake: threading.Event, stop: threading.Event) -> None:
    """A checkpointer thread: one PASSIVE checkpoint each time it is woken, until stopped."""
    conn = apsw.Connection(filename)
    try:
        while True:
            wake.wait()
            wake.clear()
            if stop.is_set():
                return
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except apsw.Error as exc:  # the next COMMIT asks again, as SQLite's own would
                log.debug("backfill checkpoint failed: %s", exc)
    finally:
        conn.close()


class FileLock:
    """core.store.process_lock.ProcessLock on SQLite: an flock on a file beside the database (every process of a
    SQLite database runs on its host), released by closing the file, or by the OS when the holder dies."""

    def __init__(self, location: str, name: str) -> None:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
        self.path = None if location in IN_MEMORY else Path(f"{location}.{safe}.lock")

    @contextmanager
    def held(self) -> Iterator[None]:
        if self.path is None:  # a private database: no other process can open it
            yield
            return
        with self.path.open("a") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            yield

    def close(self) -> None:
        pass


# ---- the backend -----------------------------------------------------------------------------------


class SqliteBackend:
    kind: Literal["sqlite"] = "sqlite"
    #: BEGIN IMMEDIATE took the write lock: the statements after it never wait for another process.
    waits_off_loop = False
    #: No data-modifying WITH; and a statement costs no round trip.
    chains_writes = False

    def owns(self, conn: object) -> bool:
        return isinstance(conn, apsw.Connection)

    def connect(self, location: str, *, durable: bool) -> Conn:
        return connect(location, durable=durable)

    def begin_write(self, conn: Conn, *, wait: bool = True) -> bool:
        if wait:
            conn.execute("BEGIN IMMEDIATE")
            return True
        conn.setbusytimeout(0)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            return False
        finally:
            conn.setbusytimeout(BUSY_TIMEOUT_MS)
        return True

    def commit(self, conn: Conn) -> None:
        try:
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():  # SQLite may leave it open (busy): nothing of it is kept
                conn.execute("ROLLBACK")
            raise

    def begin_snapshot(self, conn: Conn) -> None:
        # a deferred BEGIN: its WAL snapshot is taken at the first read and kept until COMMIT; no write lock
        conn.execute("BEGIN")

    def holds_write_lock(self, conn: Conn) -> bool:
        return bool(conn.txn_state() == apsw.SQLITE_TXN_WRITE)

    def write_transaction(self, conn: Conn) -> int | None:
        return None  # a read is microseconds from the page cache: nothing worth keeping

    def aborted(self, conn: Conn) -> bool:
        return False  # a failed statement leaves SQLite's transaction usable

    def broken(self, conn: Conn) -> bool:
        return False  # a file does not go away under an open connection

    def track(self, conn: Conn, table: str) -> None:
        _install(conn, table)

    def undo(self, conn: Conn, ancestor: int) -> int:
        return _undo(conn, ancestor)

    def exact_rows(self, conn: Conn, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The native SUM first; the exact aggregate when it overflowed or answered a REAL (core.store.sums)."""
        try:
            fast: list[tuple[Any, ...]] = conn.execute(exact.native(sql), params).fetchall()
        except apsw.SQLError as exc:
            if "integer overflow" not in str(exc):
                raise
        else:
            if not any(type(v) is float for row in fast for v in row):
                return fast
        return list(conn.execute(sql, params).fetchall())

    def checkpointer(self, conn: Conn) -> BackgroundCheckpoints:
        return BackgroundCheckpoints(conn)

    def tune_for_indexing(self, conn: Conn) -> None:
        """A page cache of up to 64 MiB, so that the index pages of a large backfill are not read back
        from the file over and over."""
        conn.execute(f"PRAGMA cache_size = -{INDEXING_CACHE_KIB}")

    def record_events(self, conn: Conn, chain_id: int, rows: Sequence[Sequence[Any]]) -> None:
        # the chain id as a literal (an int): each row is then the event's own first fields
        conn.executemany(
            "INSERT INTO events (chain_id, block_number, block_hash, tx_hash, log_index, contract, event, topics, data)"
            f" VALUES ({int(chain_id)}, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (chain_id, block_number, log_index) DO NOTHING",
            rows,
        )

    def process_lock(self, location: str, name: str) -> FileLock:
        return FileLock(location, name)

    def reads(self, conn: Conn, size: int) -> Reads:
        from core.store.reads import Reads

        return Reads(conn, self)

    def __repr__(self) -> str:
        return "<SQLite backend>"


SQLITE = SqliteBackend()
