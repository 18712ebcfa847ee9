"""Group commit: durable writes without one fsync per request.

Every write of the API goes through one GroupCommitter, which owns the only writing
connection (synchronous=FULL). Work items submitted while a commit is in progress wait for
the next one; each group runs in ONE transaction, each item inside its own SAVEPOINT (an item
that raises rolls back alone, the others still commit), and only after COMMIT returns do the
callers get their results: an acknowledged write is on disk, and throughput comes from sharing
the fsync, not from weaker settings. Items run one after another on one connection, and the
transaction holds the database's write lock (core.store.backend), so check-then-write logic inside
an item (a balance check before a debit) is race-free with any number of processes.

An item submitted with savepoint=False promises to write nothing when it raises (every check
comes before its first write): it skips the SAVEPOINT/RELEASE pair, the largest fixed cost of a
small item. The promise is checked (the connection's change count): should an item raise after
writing, the group's transaction is rolled back and the group run again without it (it fails with
its own exception, its writes undone), so no request can fail another's; the others are run again
from the start of a fresh transaction, which is why every item must be a function of the
connection alone (items are: they read what they need inside the transaction). On PostgreSQL a
failed statement aborts the whole transaction: a savepoint=False item that raises after a SQL error
has broken its promise even if it wrote nothing, and takes the same path.

Losing the database: a session lost before COMMIT (a terminated backend, a failover, a restart) left
nothing committed, so the group runs again at once on a new connection when one can be made; while
none can, groups fail at once with DatabaseUnavailable (the API's 503) and a new connection is tried
after a backoff that grows to RECONNECT_BACKOFF_MAX. A session lost during COMMIT is asked about on a
new one (core.store.pg: the transaction's id), so a group that committed is answered as committed.
`health` says whether the last group could run, and since when it could not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from core.store.backend import backend_of
from core.store.database import Database, open_database
from core.store.health import PartHealth
from core.store.types import CommitOutcomeUnknown, Conn, DatabaseUnavailable, PostgresRetryable, unavailable

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")
Work = Callable[[Conn], Any]
#: Told after each durable commit: (items in the group, seconds its oldest item waited from submission
#: to the end of the commit, seconds the COMMIT itself took). For metrics; must not raise.
CommitObserver = Callable[[int, float, float], None]
#: A submitted write: (its work, whether it runs in a savepoint, its caller's future, when it was submitted).
Item = tuple[Work, bool, "asyncio.Future[Any]", float]


log = logging.getLogger("agentledger.store")

#: How many times a group is run again after a deadlock, a serialization failure or a lost session
#: before its items fail.
RETRIES = 8
#: Seconds between two attempts to reconnect while the database cannot be reached: the first at once,
#: then doubling from RECONNECT_BACKOFF_MIN up to RECONNECT_BACKOFF_MAX.
RECONNECT_BACKOFF_MIN = 0.05
RECONNECT_BACKOFF_MAX = 1.0


class _BrokenPromise(Exception):
    """An item given savepoint=False raised after writing (internal: its group is run again without it)."""

    def __init__(self, index: int, exc: BaseException) -> None:
        super().__init__(index)
        self.index = index
        self.exc = exc


class _Rerun(Exception):
    """The database rolled the group's transaction back (a deadlock, a serialization failure, the session
    lost before COMMIT): run it again whole, on a new connection if the session is gone."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


class GroupCommitter:
    def __init__(self, database: Database | Path | str, *, max_group: int = 512) -> None:
        self.database = open_database(database)
        self.conn: Conn | None = self.database.connect(durable=True)
        self.backend = backend_of(self.conn)  # the connection's: what it is, whatever opened it
        self.max_group = max_group
        self._pending: list[Item] = []
        self._worker: asyncio.Task[None] | None = None
        self.groups = 0  # commits made, for tests and benchmarks
        self.items = 0
        self.reruns = 0  # groups run again after a deadlock, serialization failure or lost session
        self.reconnects = 0
        self.observer: CommitObserver | None = None
        #: Whether the last group could run (a database out of reach makes it fail).
        self.health = PartHealth()
        self._next_connect = 0.0  # time.monotonic() before which no reconnection is tried
        self._backoff = 0.0

    async def run(self, work: Callable[[Conn], T], *, savepoint: bool = True) -> T:
        """Run `work(conn)` in the next group; return its result once the group is committed.
        An exception from `work` is raised here (its writes rolled back, the group's others kept).
        savepoint=False: `work` writes nothing when it raises (see the module docstring)."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((work, savepoint, future, time.perf_counter()))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            group, self._pending = self._pending[: self.max_group], self._pending[self.max_group :]
            try:
                outcomes, started = await self._apply_isolated(group)
                self.items += len(group)
            except BaseException as exc:  # BEGIN or COMMIT failed: nothing of the group is durable
                if unavailable(exc) and self.conn is None:  # the session is gone, not only a lock's wait
                    self.health.failed(exc)
                for _, _, future, _ in group:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.health.ok()
            if self.observer is not None:
                done = time.perf_counter()
                self.observer(len(group), done - group[0][3], done - started)
            for (_, _, future, _), (ok, value) in zip(group, outcomes, strict=True):
                if future.done():  # the caller went away (cancelled): its writes are committed anyway
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    async def _apply_isolated(self, group: list[Item]) -> tuple[list[tuple[bool, Any]], float]:
        """BEGIN, every item of `group`, COMMIT; an item that broke its savepoint=False promise is taken
        out (it fails with its own exception) and the rest run again in a new transaction. Returns the
        outcomes and when the COMMIT started."""
        failed: dict[int, BaseException] = {}
        reruns = 0
        while True:
            conn = await self._connection()
            live = [(i, item) for i, item in enumerate(group) if i not in failed]
            items = [item for _, item in live]
            try:
                if self.backend.waits_off_loop:
                    # Every statement is a round trip, and BEGIN may wait for another process's writer: the
                    # whole transaction, BEGIN to COMMIT, in one call in a thread. It never waits for the loop
                    # while it holds the write lock (whatever blocks the loop, or cancels this task, the
                    # transaction ends), and costs one hop to a thread.
                    applied, started = await asyncio.to_thread(self._run_group, conn, items)
                else:
                    # SQLite: BEGIN IMMEDIATE took the file's write lock; the items never wait, so they run on
                    # the loop (a hop to a thread per group would cost more), with no await before the
                    # COMMIT's thread starts. Only BEGIN may wait, in a thread.
                    if not self.backend.begin_write(conn, wait=False):
                        await asyncio.to_thread(self.backend.begin_write, conn)
                    applied = self._apply(conn, items)
                    started = time.perf_counter()
                    await asyncio.to_thread(self._commit, conn)  # the fsync, off the loop
            except _Rerun as rerun:
                reruns += 1
                self.reruns += 1
                if reruns > RETRIES:
                    raise rerun.exc from rerun
                log.warning("a group was rolled back by the database (%s); running it again", rerun.exc)
                await asyncio.sleep(0.001 * reruns)
                continue
            except _BrokenPromise as broken:
                index, exc = live[broken.index][0], broken.exc
                log.error("a write item failed after writing; its group runs again without it", exc_info=exc)
                failed[index] = exc
                continue
            except BaseException as exc:
                if self.backend.broken(conn) and unavailable(exc):
                    self._lost(conn)
                raise
            self.groups += 1
            by_index = dict(zip((i for i, _ in live), applied, strict=True))
            return [(False, failed[i]) if i in failed else by_index[i] for i in range(len(group))], started

    async def _connection(self) -> Conn:
        """The writing connection; after it was lost, a new one (DatabaseUnavailable at once while the last
        attempt failed less than the backoff ago)."""
        if self.conn is not None:
            return self.conn
        if time.monotonic() < self._next_connect:
            raise DatabaseUnavailable("the database is out of reach; the writer tries to reconnect shortly")
        try:
            conn = await asyncio.to_thread(self.database.connect, durable=True)
        except BaseException:
            self._backoff = min(RECONNECT_BACKOFF_MAX, max(RECONNECT_BACKOFF_MIN, self._backoff * 2))
            self._next_connect = time.monotonic() + self._backoff
            raise
        self._backoff = 0.0
        self.reconnects += 1
        log.warning("the writer reconnected to the database")
        self.conn = conn
        return conn

    def _lost(self, conn: Conn) -> None:
        """The session is gone: the next group opens a new one (the first attempt at once)."""
        if self.conn is conn:
            log.warning("the writer's database session was lost")
            self.conn = None
            self._next_connect = 0.0
            conn.close()

    def _run_group(self, conn: Conn, group: list[Item]) -> tuple[list[tuple[bool, Any]], float]:
        """BEGIN, the items, COMMIT, in the calling thread: the outcomes and when the COMMIT started."""
        try:
            self.backend.begin_write(conn)
        except DatabaseUnavailable as exc:
            if not self.backend.broken(conn):  # the write lock not had within its timeout
                raise
            self._lost(conn)  # an idle session the server dropped (a restart): again on a new one
            raise _Rerun(exc) from exc
        applied = self._apply(conn, group)
        started = time.perf_counter()
        self._commit(conn)
        return applied, started

    def _commit(self, conn: Conn) -> None:
        try:
            self.backend.commit(conn)
        except DatabaseUnavailable as lost:
            # Lost with its session and known not to have committed: nothing of it is kept, so it runs
            # again whole. CommitOutcomeUnknown: it may have committed, so it must not run twice.
            if not self.backend.broken(conn) or isinstance(lost, CommitOutcomeUnknown):
                raise
            self._lost(conn)
            raise _Rerun(lost) from lost

    def _apply(self, conn: Conn, group: list[Item]) -> list[tuple[bool, Any]]:
        """Run every item of the open transaction (committed by the caller), each in its own savepoint
        unless it was submitted with savepoint=False; on any failure of the group as a whole the
        transaction is rolled back and the failure raised (_BrokenPromise: which item broke it; _Rerun:
        the database rolled it back, or the session was lost, and nothing of it was committed)."""
        backend = self.backend
        outcomes: list[tuple[bool, Any]] = []
        try:
            for index, (work, savepoint, _, _) in enumerate(group):
                if savepoint:
                    conn.execute("SAVEPOINT item")
                    try:
                        value = work(conn)
                    except PostgresRetryable as exc:
                        raise _Rerun(exc) from exc
                    except BaseException as exc:
                        if backend.broken(conn):
                            raise _Rerun(exc) from exc
                        conn.execute("ROLLBACK TO item")
                        conn.execute("RELEASE item")
                        outcomes.append((False, exc))
                    else:
                        conn.execute("RELEASE item")
                        outcomes.append((True, value))
                    continue
                changes = conn.total_changes()
                try:
                    value = work(conn)
                except PostgresRetryable as exc:
                    raise _Rerun(exc) from exc
                except BaseException as exc:
                    if backend.broken(conn):
                        raise _Rerun(exc) from exc
                    # it broke its promise (its writes cannot be undone alone), or on PostgreSQL a failed
                    # statement aborted the whole transaction
                    if conn.total_changes() != changes or backend.aborted(conn):
                        raise _BrokenPromise(index, exc) from exc
                    outcomes.append((False, exc))
                else:
                    outcomes.append((True, value))
        except BaseException as exc:
            if backend.broken(conn):
                self._lost(conn)
                if not isinstance(exc, _Rerun):
                    raise _Rerun(exc) from exc
                raise
            conn.execute("ROLLBACK")
            raise
        return outcomes

    async def close(self) -> None:
        if self._worker is not None:
            await self._worker
        if self.conn is not None:
            self.conn.close()
