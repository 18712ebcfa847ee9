"""Named locks shared by every process of one database, for work that must not interleave between
processes and is no database write: the operator key's nonce (estimate -> sign -> send), which two
API processes sharing the key would otherwise both take.

Each backend keeps it its own way (core.store.backend.process_lock): SQLite, an flock on a file beside
the database (every process of a SQLite database runs on its machine); PostgreSQL, a session advisory
lock on a connection kept for the lock. Either is released by the operating system or the server when
the holding process dies, so a kill -9 never leaves it held."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from core.store.database import Database


class ProcessLock:
    """`with lock.held():` excludes every other holder of `name` on `database`, in any process.
    Blocking: call it from a worker thread, never on the event loop."""

    def __init__(self, database: Database, name: str) -> None:
        self.database = database
        self.name = name
        self._local = threading.Lock()  # one holder per process at a time; the cross-process lock below
        self._lock = database.backend.process_lock(database.location, name)

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._local, self._lock.held():
            yield

    def close(self) -> None:
        self._lock.close()
