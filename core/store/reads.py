"""Where the API's reads run: `await reads.run(fn)`, `fn(conn) -> T` a plain function of store calls.

The writes have one such seam already (core.store.committer.GroupCommitter.run: the committer's
thread). This is the reads' one, so a handler never holds a connection between two awaits and never
knows the backend:

- SQLite: `fn` runs at once, on the process's read connection, on the event loop. A read there is
  microseconds from the page cache and never waits for a lock (WAL), so a hop to a thread would cost
  more than it saves.
- PostgreSQL: `fn` runs in a worker thread on a connection from a pool (psycopg_pool), so a round trip
  to the server (0.5-1 ms across machines) never blocks the loop, and several requests read at once.
  The pool's sessions are read-only (`default_transaction_read_only`): a write through a read is an
  error on this backend, not a silent write outside the committer. A pool of size 0
  (AGENTLEDGER_READ_POOL_SIZE=0) reads as SQLite does, inline on one connection: for a server on the
  same host, where the hop to a thread costs more than the round trip (benchmarks/reads.py).

`fn` sees committed rows; each statement has its own snapshot on both backends, as the process's one
read connection gave before; several reads that must agree take `core.store.read_snapshot(conn)`.
`fn` may run in another thread than its caller: it touches only its connection and its arguments.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from core.store.types import Conn, StoreError

T = TypeVar("T")

#: Connections (and threads) of a PostgreSQL process's read pool.
READ_POOL_SIZE = 8
#: The pool's sessions in pg_stat_activity.
APPLICATION_NAME = "agentledger-reads"


class Reads:
    """The read side of one process's database (see the module doc): each `fn` inline on `conn`."""

    def __init__(self, conn: Conn) -> None:
        from core.store.database import kind_of

        self._conn = conn
        #: "sqlite" or "postgresql" (core.store.database.Kind).
        self.kind: str = kind_of(conn)

    async def run(self, fn: Callable[[Conn], T]) -> T:
        """`fn(conn)`'s result (its exception raised here)."""
        return fn(self._conn)

    def close(self) -> None:
        """Nothing to release: the read connection belongs to whoever opened it."""


class PooledReads(Reads):
    """PostgreSQL: each `fn` on a pooled connection, in a thread of the pool's own executor (as many
    threads as connections, so a thread never waits for a connection)."""

    def __init__(self, conn: Conn, *, size: int = READ_POOL_SIZE) -> None:
        from core.store.database import database_of

        super().__init__(conn)
        # Not opened here: an app that is built and never served (schema, tests) opens nothing.
        self._url = database_of(conn).location
        self._size = size
        self._pool: Any = None
        self._executor: ThreadPoolExecutor | None = None
        self._opening = threading.Lock()

    def _open(self) -> tuple[Any, ThreadPoolExecutor]:
        with self._opening:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                from core.store.pg import adapt

                def configure(raw: Any) -> None:
                    adapt(raw)
                    raw.execute("SET default_transaction_read_only = on")

                self._pool = ConnectionPool(
                    self._url,
                    min_size=1,
                    max_size=self._size,
                    kwargs={"autocommit": True, "application_name": APPLICATION_NAME},
                    configure=configure,
                    num_workers=1,
                    name="agentledger-reads",
                    open=True,
                )
                self._executor = ThreadPoolExecutor(self._size, thread_name_prefix="agentledger-read")
            assert self._executor is not None
            return self._pool, self._executor

    def _call(self, pool: Any, fn: Callable[[Conn], T]) -> T:
        from core.store.pg import PostgresConnection

        attempts = self._size + 1  # every pooled session may have died at once (a server restart)
        for attempt in range(1, attempts + 1):
            with pool.connection() as raw:  # the pool discards a broken connection when it comes back
                try:
                    return fn(PostgresConnection.borrowing(raw, self._url))  # type: ignore[arg-type]
                except StoreError:
                    # The server closed the session (a restart, an idle timeout, a terminated backend):
                    # again on another. A read-only session wrote nothing, so nothing is done twice.
                    if attempt == attempts or not raw.broken:
                        raise
        raise AssertionError("unreachable")

    async def run(self, fn: Callable[[Conn], T]) -> T:
        pool, executor = self._pool, self._executor
        if pool is None or executor is None:
            pool, executor = self._open()
        return await asyncio.get_running_loop().run_in_executor(executor, self._call, pool, fn)

    def close(self) -> None:
        with self._opening:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            if self._pool is not None:
                self._pool.close()
            self._pool = self._executor = None


def reads_beside(conn: Conn, *, size: int = READ_POOL_SIZE) -> Reads:
    """The reads of the process whose read connection is `conn`: on it (SQLite), or from a pool of
    `size` connections on the same PostgreSQL database. PostgreSQL with size 0: on `conn`, on the loop,
    as SQLite (a server on the same host, where a round trip costs less than the hop to a thread:
    benchmarks/reads.py)."""
    from core.store.database import kind_of

    if kind_of(conn) == "postgresql" and size > 0:
        return PooledReads(conn, size=size)
    return Reads(conn)
