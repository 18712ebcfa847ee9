"""GroupCommitter: concurrent writers share commits, failures stay isolated, results only after COMMIT."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from core.store import Conn, ConstraintViolation, Database, lock
from core.store.committer import GroupCommitter
from core.store.pg_ddl import translate


def ddl(database: Database, sql: str) -> str:
    """A test table's DDL for the backend (an INTEGER PRIMARY KEY is an identity column on PostgreSQL)."""
    return translate(sql) if database.kind == "postgresql" else sql


def _setup(db: Database) -> None:
    conn = db.connect()
    conn.execute(ddl(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)"))
    conn.execute(ddl(db, "CREATE TABLE acct (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL CHECK (balance >= 0))"))
    conn.execute("INSERT INTO acct VALUES (1, 50)")
    conn.close()


def test_concurrent_items_share_commits_and_all_land(database: Database) -> None:
    db = database
    _setup(db)

    async def scenario() -> GroupCommitter:
        gc = GroupCommitter(db)
        results = await asyncio.gather(
            *(gc.run(lambda c, i=i: c.execute("INSERT INTO t (v) VALUES (?)", (i,)) and i) for i in range(300))
        )
        assert results == list(range(300))
        await gc.close()
        return gc

    gc = asyncio.run(scenario())
    assert gc.items == 300 and gc.groups < 300  # grouped: fewer commits than items
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == list(range(300))
    reader.close()


def test_a_failing_item_rolls_back_alone(database: Database) -> None:
    db = database
    _setup(db)

    def bad(c: Conn) -> None:
        c.execute("INSERT INTO t (v) VALUES (-1)")
        raise ValueError("refused")

    async def scenario() -> None:
        gc = GroupCommitter(db)
        ok1 = gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (1)") and 1)
        failing = gc.run(bad)
        ok2 = gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (2)") and 2)
        out = await asyncio.gather(ok1, failing, ok2, return_exceptions=True)
        assert out[0] == 1 and out[2] == 2
        assert isinstance(out[1], ValueError)
        await gc.close()

    asyncio.run(scenario())
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [1, 2]
    reader.close()


def test_result_is_visible_to_another_connection_when_run_returns(database: Database) -> None:
    db = database
    _setup(db)
    reader = db.connect()

    async def scenario() -> None:
        gc = GroupCommitter(db)
        for i in range(20):
            rowid = await gc.run(
                lambda c, i=i: c.execute("INSERT INTO t (v) VALUES (?) RETURNING id", (i,)).fetchone()[0]  # type: ignore[index]
            )
            assert reader.execute("SELECT v FROM t WHERE id = ?", (rowid,)).fetchall() == [(i,)]
        await gc.close()

    asyncio.run(scenario())
    reader.close()


def test_check_then_debit_never_overdraws_under_concurrency(database: Database) -> None:
    db = database
    _setup(db)

    class Insufficient(Exception):
        pass

    def debit(c: Conn) -> int:
        (balance,) = c.execute("SELECT balance FROM acct WHERE id = 1").fetchone()  # type: ignore[misc]
        if balance < 1:
            raise Insufficient
        c.execute("UPDATE acct SET balance = balance - 1 WHERE id = 1")
        return int(balance) - 1  # type: ignore[call-overload]

    async def scenario() -> list[object]:
        gc = GroupCommitter(db)
        out = await asyncio.gather(*(gc.run(debit) for _ in range(100)), return_exceptions=True)
        await gc.close()
        return out

    out = asyncio.run(scenario())
    assert sum(1 for o in out if isinstance(o, int)) == 50
    assert sum(1 for o in out if isinstance(o, Insufficient)) == 50
    reader = db.connect()
    assert reader.execute("SELECT balance FROM acct").fetchall() == [(0,)]
    reader.close()


def test_a_failed_commit_fails_every_item_of_the_group(database: Database) -> None:
    db = database
    _setup(db)

    async def scenario() -> None:
        gc = GroupCommitter(db)
        # A deferred foreign-key-like failure at COMMIT time: a deferred constraint violated.
        gc.conn.execute(ddl(db, "CREATE TABLE parent (id INTEGER PRIMARY KEY)"))
        child = "CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        gc.conn.execute(ddl(db, child))
        a = gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (7)") and 7)
        b = gc.run(lambda c: c.execute("INSERT INTO child VALUES (99)") and 0)
        out = await asyncio.gather(a, b, return_exceptions=True)
        assert all(isinstance(o, ConstraintViolation) for o in out), out
        await gc.close()

    asyncio.run(scenario())
    reader = db.connect()
    assert reader.execute("SELECT count(*) FROM t").fetchone() == (0,)
    reader.close()


@pytest.mark.parametrize("n", [1, 2])
def test_sequential_runs_each_commit(database: Database, n: int) -> None:
    db = database
    _setup(db)

    async def scenario() -> GroupCommitter:
        gc = GroupCommitter(db)
        for i in range(n):
            await gc.run(lambda c, i=i: c.execute("INSERT INTO t (v) VALUES (?)", (i,)))
        await gc.close()
        return gc

    assert asyncio.run(scenario()).groups == n


def test_waiting_for_another_writer_does_not_block_the_event_loop(database: Database) -> None:
    """Another process holding what a group needs makes the group wait, not the loop. SQLite: the
    file's write lock (the indexer's transaction), taken by BEGIN; PostgreSQL: a lock an item takes
    (another API process's group holding the audit log's lock until its COMMIT), so the items run in
    a thread there."""
    db = database
    _setup(db)
    other = db.connect()

    def insert(c: Conn) -> int:
        lock(c, "t")
        c.execute("INSERT INTO t (v) VALUES (5)")
        return 5

    async def scenario() -> int:
        gc = GroupCommitter(db)
        other.execute("BEGIN IMMEDIATE")  # holds SQLite's write lock
        lock(other, "t")  # and PostgreSQL's lock of "t"
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick_task = asyncio.create_task(ticker())
        write = asyncio.create_task(gc.run(insert))
        await asyncio.sleep(0.3)
        assert not write.done()  # still waiting for the lock...
        assert ticks >= 10  # ...while the loop kept running
        await asyncio.to_thread(other.execute, "COMMIT")
        result = await write
        tick_task.cancel()
        await gc.close()
        return result

    assert asyncio.run(scenario()) == 5
    other.close()
    reader = db.connect()
    assert reader.execute("SELECT v FROM t").fetchall() == [(5,)]
    reader.close()


def test_items_without_savepoint_that_refuse_before_writing_fail_alone(database: Database) -> None:
    db = database
    _setup(db)

    def refuse(c: Conn) -> None:
        c.execute("SELECT 1").fetchall()
        raise ValueError("refused before writing")

    async def scenario() -> GroupCommitter:
        gc = GroupCommitter(db)
        out = await asyncio.gather(
            gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (1)") and 1, savepoint=False),
            gc.run(refuse, savepoint=False),
            gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (2)") and 2),
            return_exceptions=True,
        )
        assert out[0] == 1 and out[2] == 2 and isinstance(out[1], ValueError)
        await gc.close()
        return gc

    gc = asyncio.run(scenario())
    assert gc.groups == 1
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [1, 2]
    reader.close()


def test_an_item_without_savepoint_that_fails_after_writing_fails_alone(database: Database) -> None:
    """The broken promise is caught: its group runs again without it, so none of its writes commit
    and every other item of the group commits exactly once."""
    db = database
    _setup(db)
    runs: list[int] = []

    def half(c: Conn) -> None:
        c.execute("UPDATE acct SET balance = balance - 10 WHERE id = 1")
        raise ValueError("failed after writing")

    def insert(v: int) -> Callable[[Conn], int]:
        def work(c: Conn) -> int:
            runs.append(v)
            c.execute("INSERT INTO t (v) VALUES (?)", (v,))
            return v

        return work

    async def scenario() -> GroupCommitter:
        gc = GroupCommitter(db)
        out = await asyncio.gather(
            gc.run(insert(1)),
            gc.run(half, savepoint=False),
            gc.run(insert(2), savepoint=False),
            gc.run(half, savepoint=False),
            gc.run(insert(4)),
            return_exceptions=True,
        )
        assert out[0] == 1 and out[2] == 2 and out[4] == 4, out
        assert isinstance(out[1], ValueError) and isinstance(out[3], ValueError)
        assert await gc.run(insert(5), savepoint=False) == 5
        await gc.close()
        return gc

    gc = asyncio.run(scenario())
    assert gc.groups == 2 and gc.items == 6  # one group for the five (run three times), one for the last
    assert runs == [1, 1, 2, 1, 2, 4, 5]  # each rollback ran the clean items before it again
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [1, 2, 4, 5]
    assert reader.execute("SELECT balance FROM acct").fetchall() == [(50,)]
    reader.close()


def test_a_sql_error_in_an_item_without_savepoint_fails_it_alone(database: Database) -> None:
    """On PostgreSQL a failed statement aborts the whole transaction even when the item wrote nothing:
    the group runs again without it (on SQLite only the statement failed, the item fails alone at once)."""
    db = database
    _setup(db)

    def violate(c: Conn) -> None:
        c.execute("INSERT INTO acct VALUES (1, 5)")  # duplicate key

    async def scenario() -> list[object]:
        gc = GroupCommitter(db)
        out = await asyncio.gather(
            gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (1)") and 1, savepoint=False),
            gc.run(violate, savepoint=False),
            gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (2)") and 2),
            return_exceptions=True,
        )
        await gc.close()
        return out

    out = asyncio.run(scenario())
    assert out[0] == 1 and out[2] == 2 and isinstance(out[1], ConstraintViolation), out
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [1, 2]
    reader.close()


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_a_deadlock_with_another_process_reruns_the_group(database: Database) -> None:
    """Another connection locks acct 2 then acct 1 while a group locks 1 then 2: PostgreSQL kills the
    group's transaction (it detects the deadlock first) and the committer runs the group again."""
    import threading
    import time

    db = database
    _setup(db)
    setup = db.connect()
    setup.execute("INSERT INTO acct VALUES (2, 50)")
    setup.close()
    other = db.connect()
    other.execute("SET deadlock_timeout = '20s'")  # the group's connection (1 s) detects it first
    locked, group_locked = threading.Event(), threading.Event()

    def rival() -> None:
        other.execute("BEGIN")
        other.execute("UPDATE acct SET balance = balance - 1 WHERE id = 2")
        locked.set()
        group_locked.wait(10)  # the group holds acct 1 now: this update closes the cycle
        time.sleep(0.1)
        other.execute("UPDATE acct SET balance = balance - 1 WHERE id = 1")
        other.execute("COMMIT")

    def both(c: Conn) -> int:
        c.execute("UPDATE acct SET balance = balance - 10 WHERE id = 1")
        group_locked.set()
        time.sleep(0.3)
        c.execute("UPDATE acct SET balance = balance - 10 WHERE id = 2")
        return 1

    async def scenario() -> GroupCommitter:
        gc = GroupCommitter(db)
        thread = threading.Thread(target=rival)
        thread.start()
        await asyncio.to_thread(locked.wait)
        assert await gc.run(both) == 1
        await asyncio.to_thread(thread.join)
        await gc.close()
        return gc

    gc = asyncio.run(scenario())
    assert gc.groups == 1 and gc.reruns == 1  # rolled back once by the deadlock, then committed
    reader = db.connect()
    assert reader.execute("SELECT id, balance FROM acct ORDER BY id").fetchall() == [(1, 39), (2, 39)]
    reader.close()
    other.close()


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_a_group_whose_session_is_ended_runs_again_on_a_new_one(database: Database) -> None:
    """PostgreSQL: the writer's idle session is ended by the server (a failover-like cut: the server
    terminates the backend): the next group finds it gone at BEGIN, having committed nothing, and runs again
    at once on a new connection, so its caller never sees the loss."""
    db = database
    _setup(db)

    async def scenario() -> tuple[object, GroupCommitter]:
        gc = GroupCommitter(db)
        await gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (1)") and 1)
        assert gc.conn is not None
        (pid,) = gc.conn.execute("SELECT pg_backend_pid()").fetchone()  # type: ignore[misc]
        killer = db.connect()
        killer.execute("SELECT pg_terminate_backend(?)", (pid,))
        killer.close()
        after = await gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (2)") and 2)
        await gc.close()
        return after, gc

    after, gc = asyncio.run(scenario())
    assert after == 2 and gc.reconnects == 1 and gc.reruns == 1 and gc.health.failing_since is None
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [1, 2]
    reader.close()


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_a_group_cut_off_mid_transaction_runs_again_whole(database: Database) -> None:
    """The session is ended while a group is half done (after its first item's write): nothing of it was
    committed, so the whole group runs again on a new session, every item exactly once in the result."""
    import threading

    db = database
    _setup(db)
    killer = db.connect()
    runs: list[int] = []
    first = threading.Event()

    def cut(c: Conn) -> int:
        c.execute("INSERT INTO t (v) VALUES (10)")
        runs.append(1)
        if not first.is_set():
            first.set()
            (pid,) = c.execute("SELECT pg_backend_pid()").fetchone()  # type: ignore[misc]
            killer.execute("SELECT pg_terminate_backend(?)", (pid,))
            c.execute("INSERT INTO t (v) VALUES (11)")  # the session is gone: this raises
        return 10

    async def scenario() -> list[object]:
        gc = GroupCommitter(db)
        got = await asyncio.gather(gc.run(cut), gc.run(lambda c: c.execute("INSERT INTO t (v) VALUES (20)") and 20))
        await gc.close()
        return list(got)

    assert asyncio.run(scenario()) == [10, 20]
    assert len(runs) == 2  # cut off once, then run again whole
    reader = db.connect()
    assert sorted(v for (v,) in reader.execute("SELECT v FROM t")) == [10, 20]
    reader.close()
    killer.close()
