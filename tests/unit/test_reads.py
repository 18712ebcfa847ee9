"""core.store.reads on both backends: a read's result and errors come back to the caller; on PostgreSQL
it runs on a pooled read-only session in a worker thread, so a read that waits does not stop the
event loop or the other reads, a dead session is replaced, and close() leaves no session behind."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from core.store import Conn, Database, StoreError
from core.store.backend import reads_beside
from core.store.pg import PooledReads
from core.store.reads import APPLICATION_NAME, Reads
from tests.pg_kit import PgCluster


@pytest.fixture
def reads(database: Database) -> Iterator[tuple[Reads, Conn]]:
    with _reads(database) as found:
        yield found


@contextmanager
def _reads(database: Database) -> Iterator[tuple[Reads, Conn]]:
    own = database.connect()
    own.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)")
    own.execute("INSERT INTO t VALUES (1, 'one')")
    r = reads_beside(own)
    try:
        yield r, own
    finally:
        r.close()
        own.close()


def test_a_read_returns_what_its_function_returns_and_raises_what_it_raises(reads: tuple[Reads, Conn]) -> None:
    r, own = reads
    assert r.kind == ("postgresql" if isinstance(r, PooledReads) else "sqlite")

    async def go() -> None:
        assert await r.run(lambda c: c.execute("SELECT v FROM t WHERE k = ?", (1,)).fetchone()) == ("one",)
        own.execute("INSERT INTO t VALUES (2, 'two')")  # committed elsewhere: the next read sees it
        assert await r.run(lambda c: c.execute("SELECT count(*) FROM t").fetchall()) == [(2,)]
        with pytest.raises(StoreError):
            await r.run(lambda c: c.execute("SELECT nope FROM t").fetchall())
        assert await r.run(lambda c: c.execute("SELECT 1").fetchone()) == (1,)  # the failure left nothing behind

    asyncio.run(go())


@pytest.fixture
def pooled(pg_cluster: PgCluster) -> Iterator[tuple[PooledReads, Conn]]:
    """PostgreSQL only: SQLite's reads run inline on the loop (no pool, no thread)."""
    database = pg_cluster.fresh()
    with _reads(database) as (r, own):
        assert isinstance(r, PooledReads)
        yield r, own
    pg_cluster.drop(database)


def test_a_waiting_read_blocks_neither_the_loop_nor_the_other_reads(pooled: tuple[PooledReads, Conn]) -> None:
    r, own = pooled
    own.execute("BEGIN")
    own.execute("SELECT pg_advisory_xact_lock(42)")  # held until ROLLBACK: the first read waits on it

    async def go() -> None:
        loop_thread = threading.get_ident()
        started = threading.Event()

        def waits(c: Conn) -> int:
            started.set()
            c.execute("SELECT pg_advisory_xact_lock(42)")
            return threading.get_ident()

        blocked = asyncio.ensure_future(r.run(waits))
        while not started.is_set():
            await asyncio.sleep(0.01)  # the loop turns while the read is started in its thread
        ticks = 0
        for _ in range(5):
            assert await r.run(lambda c: c.execute("SELECT v FROM t").fetchone()) == ("one",)
            await asyncio.sleep(0)
            ticks += 1
        assert ticks == 5 and not blocked.done()  # others read while the first still waits
        own.execute("ROLLBACK")
        ran_on = await asyncio.wait_for(blocked, 30)
        assert ran_on != loop_thread

    try:
        asyncio.run(go())
    finally:
        if own.in_transaction:
            own.execute("ROLLBACK")


def test_a_read_cannot_write(pooled: tuple[PooledReads, Conn]) -> None:
    r, own = pooled

    async def go() -> None:
        with pytest.raises(StoreError, match="read-only"):
            await r.run(lambda c: c.execute("INSERT INTO t VALUES (3, 'three')"))

    asyncio.run(go())
    assert own.execute("SELECT count(*) FROM t").fetchone() == (1,)


def _sessions(own: Conn) -> int:
    row = own.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()",
        (APPLICATION_NAME,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_reads_go_on_after_the_server_ends_every_pooled_session_and_close_leaves_none(
    pooled: tuple[PooledReads, Conn],
) -> None:
    r, own = pooled

    async def go() -> None:
        await asyncio.gather(*(r.run(lambda c: c.execute("SELECT pg_sleep(0.05)").fetchall()) for _ in range(4)))
        assert _sessions(own) >= 1
        own.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = ? AND datname = current_database()",
            (APPLICATION_NAME,),
        )
        assert await r.run(lambda c: c.execute("SELECT v FROM t").fetchone()) == ("one",)

    asyncio.run(go())
    r.close()
    deadline = time.monotonic() + 10  # a closed session leaves pg_stat_activity when its backend has exited
    while _sessions(own) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _sessions(own) == 0


def test_a_pool_of_size_zero_reads_inline_on_the_loop(pg_cluster: PgCluster) -> None:
    """AGENTLEDGER_READ_POOL_SIZE=0: PostgreSQL read as SQLite is, on the process's own connection."""
    database = pg_cluster.fresh()
    own = database.connect()
    try:
        r = reads_beside(own, size=0)
        assert not isinstance(r, PooledReads) and r.kind == "postgresql"

        async def go() -> None:
            assert await r.run(lambda c: (c is own, threading.get_ident())) == (True, threading.get_ident())

        asyncio.run(go())
    finally:
        own.close()
        pg_cluster.drop(database)
