"""WAL checkpoints off the committing thread, for the indexer's backfill (SQLite only)."""

from __future__ import annotations

import logging
import threading

import apsw

from core.store.pg import PostgresConnection

log = logging.getLogger("agentledger.indexer")


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
        if isinstance(self.conn, PostgresConnection):  # PostgreSQL checkpoints on its own
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
