"""Leases (core.store.leases, core.leases) and the jobs' leases (core.jobs): one holder at a time,
renewal, takeover after expiry with a higher term, fencing of a stalled holder's writes."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from core.jobs import Every, Job, JobRunner
from core.leases import Lease
from core.store import Conn, LostLease, connect, savepoint, transaction
from core.store import leases as store
from core.store.committer import GroupCommitter


@pytest.fixture()
def conn(tmp_path: Path) -> Conn:
    return connect(tmp_path / "leases.db")


def test_acquire_renew_and_takeover_only_after_expiry(conn: Conn) -> None:
    assert store.acquire_or_renew(conn, "job:x", "a", 10, now=100) == 1
    assert store.acquire_or_renew(conn, "job:x", "b", 10, now=105) is None  # a's lease runs until 110
    assert store.acquire_or_renew(conn, "job:x", "a", 10, now=108) == 1  # renewed: same term, until 118
    assert store.acquire_or_renew(conn, "job:x", "b", 10, now=117) is None
    assert store.get(conn, "job:x") == store.LeaseRow("job:x", "a", 1, 118)  # a's until 118, expired from then
    assert store.acquire_or_renew(conn, "job:x", "b", 10, now=118) == 2  # taken over: the term grows
    assert store.acquire_or_renew(conn, "job:x", "a", 10, now=119) is None
    assert store.get(conn, "job:x") == store.LeaseRow("job:x", "b", 2, 128)
    # a holder renewing its own expired lease (nobody took it meanwhile) keeps its term
    assert store.acquire_or_renew(conn, "job:x", "b", 10, now=500) == 2
    # leases are independent of each other
    assert store.acquire_or_renew(conn, "job:y", "a", 10, now=500) == 1


def test_release_hands_over_at_once_and_terms_only_grow(conn: Conn) -> None:
    assert store.acquire_or_renew(conn, "service:outbox", "a", 10, now=100) == 1
    assert not store.release(conn, "service:outbox", "b")  # not b's to release
    assert store.release(conn, "service:outbox", "a")
    assert store.get(conn, "service:outbox") == store.LeaseRow("service:outbox", "a", 1, store.RELEASED)
    assert store.acquire_or_renew(conn, "service:outbox", "b", 10, now=101) == 2
    assert store.release(conn, "service:outbox", "b")
    assert store.acquire_or_renew(conn, "service:outbox", "a", 10, now=102) == 3


def test_fence_refuses_a_stalled_holder_after_a_takeover(conn: Conn) -> None:
    a = store.acquire_or_renew(conn, "indexer:1", "a", 5, now=100)
    assert a == 1
    with transaction(conn):
        store.fence(conn, "indexer:1", "a", a, now=104, ttl=5)  # extends to 109
    assert store.acquire_or_renew(conn, "indexer:1", "b", 5, now=108) is None
    assert store.acquire_or_renew(conn, "indexer:1", "b", 5, now=109) == 2
    conn.execute("CREATE TABLE rows (x INTEGER)")
    with pytest.raises(LostLease), transaction(conn):  # a wakes up and writes: refused, rolled back
        conn.execute("INSERT INTO rows VALUES (1)")
        store.fence(conn, "indexer:1", "a", a, now=110)
    assert conn.execute("SELECT count(*) FROM rows").fetchall() == [(0,)]
    # b's lease expired but nobody took it over: still b's (a slow step is not thrown away); extended
    with transaction(conn):
        store.fence(conn, "indexer:1", "b", 2, now=1_000, ttl=5)
    assert store.get(conn, "indexer:1") == store.LeaseRow("indexer:1", "b", 2, 1_005)
    assert store.acquire_or_renew(conn, "indexer:1", "a", 5, now=1_004) is None
    with pytest.raises(LostLease):
        store.fence(conn, "indexer:1", "b", 1, now=110)  # an old term of the right holder


def test_core_lease_takes_over_from_a_dead_holder_at_once_and_fences(conn: Conn) -> None:
    clock = [100.0]
    mine = Lease("job:anchor", 60, holder=f"{socket.gethostname()}:{os.getpid()}:0:mine", clock=lambda: clock[0])
    alive = Lease("job:anchor", 60, holder="other-host:1:0:cafe", clock=lambda: clock[0])
    assert store.acquire_or_renew(conn, "job:other", alive.holder, 60, now=100) == 1
    assert store.acquire_or_renew(conn, "job:other", mine.holder, 60, now=100) is None
    assert not Lease("job:other", 60, mine.holder, lambda: clock[0]).acquire(conn)  # another host: never judged gone
    dead = f"{socket.gethostname()}:{2**22 + 12345}:0:deadbeef"  # a pid no process has on this host
    assert store.acquire_or_renew(conn, "job:anchor", dead, 60, now=100) == 1
    assert mine.acquire(conn) and mine.term == 2  # the dead holder's lease is taken before it expires
    with transaction(conn):
        mine.fence(conn)
    clock[0] = 200.0  # mine stalled past its expiry; another takes it
    assert alive.acquire(conn) and alive.term == 3
    with pytest.raises(LostLease), transaction(conn):
        mine.fence(conn)
    assert not mine.held


def test_savepoint_rolls_back_only_its_own_writes(conn: Conn) -> None:
    conn.execute("CREATE TABLE t (x INTEGER)")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), savepoint(conn, "step"):
            conn.execute("INSERT INTO t VALUES (2)")
            raise ValueError("refused")
        with savepoint(conn, "step"):
            conn.execute("INSERT INTO t VALUES (3)")
    assert conn.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (3,)]


class _Service:
    def __init__(self, name: str) -> None:
        self.name = name
        self.running = False
        self.starts = 0

    async def start(self) -> None:
        self.running = True
        self.starts += 1

    async def stop(self) -> None:
        self.running = False

    def status(self) -> dict[str, object]:
        return {}


def test_jobs_and_services_run_on_one_runner_at_a_time_and_move_when_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    connect(path).close()

    async def scenario() -> None:
        calls: dict[str, int] = {"a": 0, "b": 0}

        def runner(holder: str) -> tuple[JobRunner, _Service, GroupCommitter]:
            async def step() -> None:
                calls[holder] += 1

            writer = GroupCommitter(path)
            service = _Service("outbox")
            r = JobRunner(
                [Job("sweep", Every(0.01), step)],
                [service],
                writer=writer,
                holder=holder,
                lease_ttl=30,  # real seconds: nothing expires in this test, handovers are releases
                renew_every=0.05,
            )
            return r, service, writer

        ra, sa, wa = runner("a")
        rb, sb, wb = runner("b")
        await ra.start()
        await rb.start()
        await asyncio.sleep(0.5)
        assert calls["a"] > 5 and calls["b"] == 0  # b's steps were skipped: a holds the job's lease
        assert sa.running and not sb.running
        assert ra.status()["outbox"]["state"] == "running" and rb.status()["outbox"]["state"] == "standby"
        assert ra.status()["sweep"]["leader"] and not rb.status()["sweep"]["leader"]
        await ra.stop()  # a clean stop releases: b takes over at its next renewal
        await wa.close()
        assert not sa.running
        before = calls["a"]
        await asyncio.sleep(0.5)
        assert calls["b"] > 5 and calls["a"] == before
        assert sb.running and sb.starts == 1
        assert rb.status()["sweep"]["leader"] and rb.status()["outbox"]["state"] == "running"
        await rb.stop()
        await wb.close()
        check = connect(path)
        assert {row.name: row.holder for row in store.all_leases(check)} == {"job:sweep": "b", "service:outbox": "b"}
        assert all(row.expires_at == store.RELEASED for row in store.all_leases(check))
        check.close()

    asyncio.run(scenario())


def test_a_lost_service_lease_stops_the_service(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    connect(path).close()

    async def scenario() -> None:
        now = [1_000.0]
        writer = GroupCommitter(path)
        service = _Service("outbox")
        r = JobRunner([], [service], writer=writer, holder="a", clock=lambda: now[0], lease_ttl=10, renew_every=0.02)
        await r.start()
        assert service.running
        other = connect(path)
        # a hangs past its lease (its clock jumps, as if it had stopped); b takes the lease meanwhile
        assert store.acquire_or_renew(other, "service:outbox", "b", 10, now=1_011) == 2
        for _ in range(100):
            if not service.running:
                break
            await asyncio.sleep(0.02)
        assert not service.running and r.status()["outbox"]["state"] == "standby"
        other.close()
        await r.stop()
        await writer.close()

    asyncio.run(scenario())
