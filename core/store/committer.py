"""Group commit: durable writes without one fsync per request.

Every write of the API goes through one GroupCommitter, which owns the only writing
connection (synchronous=FULL). Work items submitted while a commit is in progress wait for
the next one; each group runs in ONE transaction, each item inside its own SAVEPOINT (an item
that raises rolls back alone, the others still commit), and only after COMMIT returns do the
callers get their results: an acknowledged write is on disk, and throughput comes from sharing
the fsync, not from weaker settings. Items run one after another on one connection, so
check-then-write logic inside an item (a balance check before a debit) is race-free.

An item submitted with savepoint=False promises to write nothing when it raises (every check
comes before its first write): it skips the SAVEPOINT/RELEASE pair, the largest fixed cost of a
small item. The promise is checked (the connection's change count): should an item raise after
writing, the group's transaction is rolled back and the group run again without it (it fails with
its own exception, its writes undone), so no request can fail another's; the others are run again
from the start of a fresh transaction, which is why every item must be a function of the
connection alone (items are: they read what they need inside the transaction).

On PostgreSQL (core.store.pg) the same group runs in one READ COMMITTED transaction. BEGIN takes no
lock there (rows are locked by the statements that write them), and a failed statement aborts the
whole transaction: a savepoint=False item that raises after a SQL error has broken its promise even
if it wrote nothing, and takes the same path. A deadlock or serialization failure (another process's
group locked the same rows in the other order) rolls the group back and runs it again, whole.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from core.store.database import Database, open_database
from core.store.db import BUSY_TIMEOUT_MS
from core.store.pg import PostgresConnection
from core.store.types import PostgresRetryable

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")
Work = Callable[[apsw.Connection], Any]
#: Told after each durable commit: (items in the group, seconds its oldest item waited from submission
#: to the end of the commit, seconds the COMMIT itself took). For metrics; must not raise.
CommitObserver = Callable[[int, float, float], None]
#: A submitted write: (its work, whether it runs in a savepoint, its caller's future, when it was submitted).
Item = tuple[Work, bool, "asyncio.Future[Any]", float]


log = logging.getLogger("agentledger.store")

#: How many times a group is run again after a deadlock or serialization failure before its items fail.
RETRIES = 8


class _BrokenPromise(Exception):
    """An item given savepoint=False raised after writing (internal: its group is run again without it)."""

    def __init__(self, index: int, exc: BaseException) -> None:
        super().__init__(index)
        self.index = index
        self.exc = exc


class _Rerun(Exception):
    """PostgreSQL rolled the group's transaction back (deadlock, serialization): run it again whole."""

    def __init__(self, exc: PostgresRetryable) -> None:
        super().__init__(str(exc))
        self.exc = exc


class GroupCommitter:
    def __init__(self, database: Database | Path | str, *, max_group: int = 512) -> None:
        self.database = open_database(database)
        self.conn = self.database.connect(durable=True)
        self._postgres = isinstance(self.conn, PostgresConnection)
        self.max_group = max_group
        self._pending: list[Item] = []
        self._worker: asyncio.Task[None] | None = None
        self.groups = 0  # commits made, for tests and benchmarks
        self.items = 0
        self.reruns = 0  # groups run again after a deadlock or serialization failure (PostgreSQL)
        self.observer: CommitObserver | None = None

    async def run(self, work: Callable[[apsw.Connection], T], *, savepoint: bool = True) -> T:
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
                outcomes = await self._apply_isolated(group)
                started = time.perf_counter()
                await asyncio.to_thread(self._commit)  # the fsync, off the loop (apsw releases the GIL)
                self.items += len(group)
            except BaseException as exc:  # BEGIN or COMMIT failed: nothing of the group is durable
                for _, _, future, _ in group:
                    if not future.done():
                        future.set_exception(exc)
                continue
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

    async def _apply_isolated(self, group: list[Item]) -> list[tuple[bool, Any]]:
        """BEGIN, then every item of `group`; an item that broke its savepoint=False promise is taken
        out (it fails with its own exception) and the rest run again in a new transaction."""
        failed: dict[int, BaseException] = {}
        reruns = 0
        while True:
            await self._begin()
            live = [(i, item) for i, item in enumerate(group) if i not in failed]
            items = [item for _, item in live]
            try:
                # PostgreSQL locks rows and names as the items run: waiting for one another process holds
                # until its COMMIT (the audit log's lock, a balance row) must not stop this process's loop,
                # so the items run in a thread there. SQLite's lock was taken by BEGIN: items never wait.
                applied = await asyncio.to_thread(self._apply, items) if self._postgres else self._apply(items)
            except _Rerun as rerun:
                reruns += 1
                self.reruns += 1
                if reruns > RETRIES:
                    raise rerun.exc from rerun
                log.warning("a group was rolled back by the database (%s); running it again", rerun.exc.sqlstate)
                await asyncio.sleep(0.001 * reruns)
                continue
            except _BrokenPromise as broken:
                index, exc = live[broken.index][0], broken.exc
                log.error("a write item failed after writing; its group runs again without it", exc_info=exc)
                failed[index] = exc
                continue
            by_index = dict(zip((i for i, _ in live), applied, strict=True))
            return [(False, failed[i]) if i in failed else by_index[i] for i in range(len(group))]

    async def _begin(self) -> None:
        """BEGIN IMMEDIATE: at once on the loop when the write lock is free; when another process
        (the indexer) holds it, wait for it in a thread, never on the loop. PostgreSQL: BEGIN locks nothing."""
        if self._postgres:
            if isinstance(self.conn, PostgresConnection) and self.conn.broken:
                # the server restarted or the network cut the session: the failed group's callers got the
                # error; the next group runs on a new connection instead of failing forever
                log.warning("the database connection was lost; the writer reconnects")
                self.conn.close()
                self.conn = await asyncio.to_thread(self.database.connect, durable=True)
            self.conn.execute("BEGIN")
            return
        self.conn.setbusytimeout(0)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            return
        except apsw.BusyError:
            pass
        finally:
            self.conn.setbusytimeout(BUSY_TIMEOUT_MS)
        await asyncio.to_thread(self.conn.execute, "BEGIN IMMEDIATE")

    def _apply(self, group: list[Item]) -> list[tuple[bool, Any]]:
        """Run every item of the open transaction (committed by _commit), each in its own savepoint
        unless it was submitted with savepoint=False; on any failure of the group as a whole the
        transaction is rolled back and the failure raised (_BrokenPromise: which item broke it)."""
        conn = self.conn
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
                    # it broke its promise (its writes cannot be undone alone), or on PostgreSQL a failed
                    # statement aborted the whole transaction
                    if conn.total_changes() != changes or (isinstance(conn, PostgresConnection) and conn.failed):
                        raise _BrokenPromise(index, exc) from exc
                    outcomes.append((False, exc))
                else:
                    outcomes.append((True, value))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return outcomes

    def _commit(self) -> None:
        try:
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.groups += 1

    async def close(self) -> None:
        if self._worker is not None:
            await self._worker
        self.conn.close()
