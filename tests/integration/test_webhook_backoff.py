"""The dispatcher's per-host circuit breaker against real loopback receivers (distinct hosts are
distinct "name:port" pairs), a real SQLite file and an injected clock: a dead host cannot delay a
healthy one, is sent at most N attempts plus one probe per cool-down, its held rows keep their
attempt counts, are released when it heals, survive a restart, and never stay held forever."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path

import pytest

from core import outbox
from core.outbox.dispatcher import host_failure
from core.store import connect
from core.store import outbox as store
from scripts import webhooks as command
from tests.integration.test_webhook_dispatcher import T0, Clock, enqueue, receiver, run, running, status_of, until

N = 5  # the default failure threshold


def attempts_of(conn: object, ids: list[str]) -> list[int]:
    return [status_of(conn, e).attempts for e in ids]  # type: ignore[arg-type]


def test_host_key_and_what_counts_as_a_host_failure() -> None:
    assert store.host_of("https://Example.COM/hook") == "example.com:443"
    assert store.host_of("http://example.com/a") == store.host_of("http://EXAMPLE.com:80/b?x=1")
    assert store.host_of("http://127.0.0.1:8080/x") != store.host_of("http://127.0.0.1:8081/x")
    assert store.host_of("http://[::1]:9000/x") == "[::1]:9000"
    assert [host_failure(False, s) for s in (None, 500, 503, 408, 429)] == [True] * 5
    assert [host_failure(ok, s) for ok, s in ((True, 200), (False, 404), (False, 400), (False, 307))] == [False] * 4


def test_a_dead_host_does_not_delay_a_healthy_one(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """120 rows for a host that never answers, queued first, then 10 for a healthy host. Without the
    breaker the dead host's rows fill the due window and its 3 slots sit on timeouts: the healthy rows
    would wait about 120 / 3 x 0.3 s = 12 s. With it: at most N attempts, then its rows are held."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as dead, receiver(clock) as good:
            dead.delay = 30.0  # never answers within the dispatcher's timeout
            dead_ids = [enqueue(conn, dead.url, T0, source=f"order:d{i}") for i in range(120)]
            good_url = good.url.replace("127.0.0.1", "localhost")
            good_ids = [enqueue(conn, good_url, T0, source=f"order:g{i}") for i in range(10)]
            async with running(tmp_path / "w.db", clock, concurrency=4, per_host=3, timeout=0.3) as d:
                started = time.monotonic()
                d.wake()
                await until(lambda: all(status_of(conn, e).status == "delivered" for e in good_ids), timeout=10)
                elapsed = time.monotonic() - started
                assert elapsed < 1.5, f"healthy deliveries waited {elapsed:.2f} s behind the dead host"
                await until(lambda: not d._inflight and not d._background)
                assert len(dead.hits) == N  # and nothing more while the cool-down lasts
                assert sorted(attempts_of(conn, dead_ids)) == [0] * (120 - N) + [1] * N
                held = [status_of(conn, e) for e in dead_ids if status_of(conn, e).attempts == 0]
                assert {(s.status, s.next_attempt_at) for s in held} == {("pending", T0 + 30)}
                d.wake()
                await asyncio.sleep(0.1)
                assert len(dead.hits) == N
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "circuit open" in r.message]
        assert len(warnings) == 1

    caplog.set_level(logging.INFO, logger="agentledger.outbox")
    run(body)


def test_probes_double_the_cool_down_and_a_healed_host_gets_everything(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            rx.statuses = [500] * (N + 2)  # the first N attempts and two probes fail, then 200
            ids = [enqueue(conn, rx.url, T0, source=f"order:o{i}") for i in range(40)]
            d.wake()
            await until(lambda: len(rx.hits) == N and not d._inflight and not d._background)

            # the operator's view: every row pending, the 35 never attempted held back
            assert command.main(["hosts", "--json", "--db", str(tmp_path / "w.db")]) == 0
            (view,) = json.loads(capsys.readouterr().out)
            assert (view["host"], view["pending"]) == (store.host_of(rx.url), 40)
            rows = store.hosts(conn, T0)
            assert (rows[0].pending, rows[0].held, rows[0].oldest_created_at) == (40, 40 - N, T0)

            for cool in (30, 60, 120):  # two probes fail, the third succeeds
                seen = len(rx.hits)
                clock.now += cool - 1
                d.wake()
                await asyncio.sleep(0.1)
                assert len(rx.hits) == seen, "attempted during the cool-down"
                clock.now += 1
                d.wake()

                def probed(seen: int = seen) -> bool:
                    return len(rx.hits) >= seen + 1 and not d._inflight

                await until(probed)
                if cool < 120:
                    await until(lambda: not d._background)
                    await asyncio.sleep(0.1)
                    assert len(rx.hits) == seen + 1, "more than one probe per cool-down"
            # healed: the held rows are released at once, without advancing the clock; only the row of
            # the second (failed) probe waits for its own next retry (+5 min after its second attempt)
            await until(lambda: sum(status_of(conn, e).status == "delivered" for e in ids) == 39)
            (late,) = [status_of(conn, e) for e in ids if status_of(conn, e).status == "pending"]
            assert (late.attempts, late.next_attempt_at) == (2, T0 + 90 + 300)
            clock.now = T0 + 390
            d.wake()
            await until(lambda: all(status_of(conn, e).status == "delivered" for e in ids))
            assert len(rx.hits) == 40 + N + 2
            assert sorted(attempts_of(conn, ids)) == [1] * 34 + [2] * 5 + [3]  # held rows kept their counts
            assert store.hosts(conn, clock()) == []
        messages = [(r.levelno, r.message) for r in caplog.records if "circuit" in r.message]
        assert [lvl for lvl, _ in messages] == [logging.WARNING, logging.INFO]

    caplog.set_level(logging.INFO, logger="agentledger.outbox")
    run(body)


def test_a_4xx_answer_does_not_open_the_circuit(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            rx.statuses = [404] * 12
            ids = [enqueue(conn, rx.url, T0, source=f"order:o{i}") for i in range(12)]
            d.wake()
            await until(lambda: attempts_of(conn, ids) == [1] * 12)
            assert len(rx.hits) == 12
            b = d.breakers.get(store.host_of(rx.url))
            assert b is None or b.open_until is None
            assert all(status_of(conn, e).next_attempt_at == T0 + 60 for e in ids)  # own schedule, not held

    run(body)


def test_a_restart_forgets_the_circuit_and_delivers_held_rows(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx:
            rx.statuses = [503] * N
            ids = [enqueue(conn, rx.url, T0, source=f"order:o{i}") for i in range(20)]
            async with running(tmp_path / "w.db", clock) as d1:
                d1.wake()
                await until(lambda: len(rx.hits) == N and not d1._inflight and not d1._background)
            before = attempts_of(conn, ids)
            clock.now += 60  # the hold (30 s) and the first retries (60 s) are due
            async with running(tmp_path / "w.db", clock):  # never woken: its poll finds them
                await until(lambda: all(status_of(conn, e).status == "delivered" for e in ids))
            assert attempts_of(conn, ids) == [a + 1 for a in before]
            delivered = [h.headers["webhook-id"] for h in rx.hits[N:]]
            assert sorted(delivered) == sorted(ids)  # each once more, with its own event id

    run(body)


def test_no_row_is_held_longer_than_max_hold(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, max_hold=100) as d:
            rx.statuses = [500] * 100
            ids = [enqueue(conn, rx.url, T0, source=f"order:o{i}") for i in range(10)]
            d.wake()
            await until(lambda: len(rx.hits) == N and not d._inflight and not d._background)
            for step in (30, 60, 10):  # probes at +30 and +90 fail; at +100 the hold has lasted max_hold
                clock.now += step
                d.wake()
                await asyncio.sleep(0.05)
                await until(lambda: not d._inflight and not d._background)
            never = [status_of(conn, e) for e in ids if status_of(conn, e).attempts == 0]
            assert len(never) == 10 - N - 1  # all but the first N and the first probe's row
            assert {s.status for s in never} == {"dead_letter"}
            assert all(s.last_error is not None and "circuit breaker" in s.last_error for s in never)
            assert len(rx.hits) == N + 2
        assert command.main(["reset", "--all", "--db", str(tmp_path / "w.db")]) == 0
        held = conn.execute("SELECT COUNT(*) FROM outbox WHERE attempts = 0 AND held_since IS NOT NULL")
        assert held.fetchall() == [(0,)]  # reset rows start over, no longer held

    run(body)


def test_a_dead_hosts_backlog_does_not_hide_others_before_its_circuit_opens(tmp_path: Path) -> None:
    """100 rows for a host that never answers (2 s timeout) fill the first page of the due query
    (36 rows here); the healthy rows behind them go out while its first attempts still hang."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as dead, receiver(clock) as good:
            dead.delay = 30.0
            for i in range(100):
                enqueue(conn, dead.url, T0, source=f"order:d{i}")
            good_ids = [enqueue(conn, good.url.replace("127.0.0.1", "localhost"), T0, source=f"order:g{i}")]
            # 5 slots: hosts not known to answer share 4 (the dead one takes 3), the rest is kept for others
            async with running(tmp_path / "w.db", clock, concurrency=5, per_host=3, timeout=2.0) as d:
                d.wake()
                await until(lambda: status_of(conn, good_ids[0]).status == "delivered", timeout=1.5)
                assert len(dead.hits) == 3 and d._inflight  # its first attempts still hang

    run(body)


def test_hosts_that_never_answered_share_three_quarters_of_the_slots(tmp_path: Path) -> None:
    """Tenants choose their webhook URLs: eight names (ports) of machines that never answer, each under
    its own per-host cap, together take at most 3/4 of the slots; a receiver known to answer keeps the
    rest and its deliveries go out while all those attempts hang."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with contextlib.AsyncExitStack() as stack:
            good = await stack.enter_async_context(receiver(clock))
            dead = [await stack.enter_async_context(receiver(clock)) for _ in range(8)]
            for rx in dead:
                rx.delay = 30.0
            async with running(tmp_path / "w.db", clock, concurrency=8, per_host=8, timeout=3.0) as d:
                first = enqueue(conn, good.url, T0, source="order:g0")
                d.wake()
                await until(lambda: status_of(conn, first).status == "delivered")  # now known to answer
                for i, rx in enumerate(dead):
                    for k in range(5):
                        enqueue(conn, rx.url, T0, source=f"order:d{i}_{k}")
                later = [enqueue(conn, good.url, T0, source=f"order:g{i}") for i in range(1, 6)]
                d.wake()
                await until(lambda: all(status_of(conn, e).status == "delivered" for e in later), timeout=2.5)
                assert sum(len(rx.hits) for rx in dead) == 6  # 8 - 8 // 4: the cap, not one more
                assert d._unproven == 6 and d._inflight  # their attempts still hang

    run(body)


def test_a_release_ends_the_hold_and_rows_in_flight_are_never_dead_lettered(tmp_path: Path) -> None:
    """Store level, one host: rows held since T0 and released later start a new hold if the host fails
    again (they are not dead letters with 0 attempts); past max_hold, a row being attempted stays
    pending (its attempt records the outcome) while the other held rows become dead letters."""
    conn = connect(tmp_path / "w.db")
    url = "https://hooks.example/x"
    host = store.host_of(url)
    ids = [
        outbox.enqueue_webhook(conn, event="e", source=f"s{i}", url=url, secret="k", payload={"i": i}, now=T0)
        for i in range(3)
    ]
    hold = 1000.0
    assert store.hold_host(conn, host, until=T0 + 30, now=T0, max_hold=hold, error="held") == (3, 0)
    assert store.release_host(conn, host, now=T0 + 900, held_until=T0 + 30) == 3
    # the host fails again after max_hold counted from the first hold: a new hold, nobody dead
    assert store.hold_host(conn, host, until=T0 + 1100, now=T0 + 1060, max_hold=hold, error="held") == (3, 0)
    in_flight = conn.execute("SELECT id FROM outbox WHERE event_id = ?", (ids[0],)).fetchall()[0][0]
    later = T0 + 1060 + hold
    assert (
        store.hold_host(
            conn, host, until=later + 30, now=later, max_hold=hold, error="held", in_flight=[int(in_flight)]
        )[1]
        == 2
    )
    assert [status_of(conn, e).status for e in ids] == ["pending", "dead_letter", "dead_letter"]
    plan = " ".join(
        str(r[-1])
        for r in conn.execute(
            "EXPLAIN QUERY PLAN UPDATE outbox SET held_since = 1 WHERE host = ? AND status = 'pending'"
            " AND next_attempt_at < ?",
            (host, later),
        )
    )
    assert "outbox_host" in plan  # a hold reads one host's rows, not every pending row
