"""Where the API's reads run: `await reads.run(fn)`, `fn(conn) -> T` a plain function of store calls.

The writes have one such seam already (core.store.committer.GroupCommitter.run: the committer's
thread). This is the reads' one, so a handler never holds a connection between two awaits and never
knows the backend:

- SQLite: `fn` runs at once, on the process's read connection, on the event loop. A read there is
  microseconds from the page cache and never waits for a lock (WAL), so a hop to a thread would cost
  more than it saves.
- PostgreSQL: `fn` runs in a worker thread on a connection from a pool (core.store.pg.PooledReads, a
  psycopg_pool), so a round trip to the server (0.5-1 ms across machines) never blocks the loop, and
  several requests read at once.
  The pool's sessions are read-only (`default_transaction_read_only`): a write through a read is an
  error on this backend, not a silent write outside the committer. A pool of size 0
  (AGENTLEDGER_READ_POOL_SIZE=0) reads as SQLite does, inline on one connection: for a server on the
  same host, where the hop to a thread costs more than the round trip (benchmarks/reads.py).

`fn` sees committed rows; each statement has its own snapshot on both backends, as the process's one
read connection gave before; several reads that must agree take `core.store.read_snapshot(conn)`.
`fn` may run in another thread than its caller: it touches only its connection and its arguments.

While the server is out of reach a read fails within a bounded time with DatabaseUnavailable (the API's
503): a pooled connection is waited for at most POOL_WAIT seconds, and the pool gives up reconnecting a
slot after RECONNECT_GIVE_UP seconds, so the next read that finds the pool empty tries at once instead of
waiting out the pool's backoff (an outage of 8 s was served again 6-7 s after the server was back).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from core.store.types import Conn, StoreError

if TYPE_CHECKING:
    from core.store.backend import Backend

T = TypeVar("T")

#: Connections (and threads) of a PostgreSQL process's read pool.
READ_POOL_SIZE = 8
#: The pool's sessions in pg_stat_activity.
APPLICATION_NAME = "agentledger-reads"
#: Seconds a read waits for a pooled connection before it fails (DatabaseUnavailable).
POOL_WAIT = 2.0
#: Seconds the pool keeps retrying a lost slot in the background before leaving it to the next read.
RECONNECT_GIVE_UP = 2.0


class Reads:
    """The read side of one process's database (see the module doc): each `fn` inline on `conn`. A
    PostgreSQL session lost under it (a server restart) is replaced at the next read, on the loop."""

    def __init__(self, conn: Conn, backend: Backend) -> None:
        self._conn = conn
        self._backend = backend
        self._replaced: Conn | None = None  # a connection opened here after `conn` was lost (ours to close)
        #: "sqlite" or "postgresql".
        self.kind: str = backend.kind

    async def run(self, fn: Callable[[Conn], T]) -> T:
        """`fn(conn)`'s result (its exception raised here)."""
        try:
            return fn(self._conn)
        except StoreError:
            if not self._backend.broken(self._conn):
                raise
            # raises DatabaseUnavailable while it is still down
            fresh = self._backend.connect(self._conn.filename, durable=True)
            if self._replaced is not None:
                self._replaced.close()
            self._conn = self._replaced = fresh
            return fn(fresh)  # a read wrote nothing: running it again does nothing twice

    def close(self) -> None:
        """The read connection belongs to whoever opened it; one opened here after it was lost is closed."""
        if self._replaced is not None:
            self._replaced.close()
            self._replaced = None
