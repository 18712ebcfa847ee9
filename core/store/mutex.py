"""Named locks shared by every process of one database, for work that must not interleave between
processes and is no database write: the operator key's nonce (estimate -> sign -> send), which two
API processes sharing the key would otherwise both take.

SQLite: an flock on a file beside the database (every process of a SQLite database runs on its
machine). PostgreSQL: a session advisory lock on a connection kept for the lock. Either is released
by the operating system or the server when the holding process dies, so a kill -9 never leaves it
held."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.store.database import Database
from core.store.types import Conn

IN_MEMORY = ("", ":memory:")


class ProcessLock:
    """`with lock.held():` excludes every other holder of `name` on `database`, in any process.
    Blocking: call it from a worker thread, never on the event loop."""

    def __init__(self, database: Database, name: str) -> None:
        self.database = database
        self.name = name
        self._local = threading.Lock()  # one holder per process at a time; the cross-process lock below
        self._conn: Conn | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._local:
            if self.database.kind == "postgresql":
                with self._advisory():
                    yield
            elif self.database.location in IN_MEMORY:  # a private database: no other process can open it
                yield
            else:
                with self._flock():
                    yield

    @contextmanager
    def _flock(self) -> Iterator[None]:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.name)
        with Path(f"{self.database.location}.{safe}.lock").open("a") as file:  # closing it releases the lock
            fcntl.flock(file, fcntl.LOCK_EX)
            yield

    @contextmanager
    def _advisory(self) -> Iterator[None]:
        if self._conn is None:
            self._conn = self.database.connect()
        self._conn.execute("SELECT pg_advisory_lock(hashtext(?))", (self.name,))
        try:
            yield
        finally:
            self._conn.execute("SELECT pg_advisory_unlock(hashtext(?))", (self.name,))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
