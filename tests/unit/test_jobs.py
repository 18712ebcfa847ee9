"""core.jobs: the one lifecycle of background work, on an injected clock (time is the only fake)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.jobs import DailyAt, Every, Job, JobRunner, next_daily
from core.store import connect
from core.store.committer import GroupCommitter


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


class FakeTime:
    """A clock the runner reads and a sleep that moves it (and lets the loop run)."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


async def run_until(runner: JobRunner, done: Callable[[], bool], *, within: float = 30.0) -> None:
    """Start `runner` and let the loop turn until `done()`. Bounded by real seconds, not by turns of the
    loop: the runner's reads and writes go through the committer's thread, which a loaded machine
    (parallel test workers) may not schedule within any fixed number of turns."""
    await runner.start()
    try:
        deadline = time.monotonic() + within
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError("the condition was never met")
            await asyncio.sleep(0)
    finally:
        await runner.stop()


def recorder(calls: list[float], clock: FakeTime, fail_on: set[int] | None = None) -> Callable[[], Awaitable[None]]:
    async def step() -> None:
        calls.append(clock.now)
        if len(calls) in (fail_on or set()):
            raise RuntimeError(f"node down at call {len(calls)}")

    return step


def test_every_runs_on_its_interval_and_a_failure_is_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeTime(1_000.0)
    calls: list[float] = []
    runner = JobRunner(
        [Job("sweep", Every(30), recorder(calls, clock, fail_on={2}))], clock=clock, sleep=clock.sleep, max_wait=5
    )
    caplog.set_level(logging.DEBUG, logger="agentledger.jobs")
    asyncio.run(run_until(runner, lambda: len(calls) >= 4))
    assert calls[:4] == [1_030.0, 1_060.0, 1_090.0, 1_120.0]  # counted from each run's end
    failures = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in failures] == ["job sweep failed: RuntimeError: node down at call 2"]
    assert failures[0].exc_info is None  # one line; the traceback only at debug level
    status = runner.status()["sweep"]
    assert status["runs"] >= 4 and status["failures"] == 1 and status["lastError"] is None
    assert status["schedule"] == "every 30 s" and status["lastRun"].endswith("Z")


def test_daily_at_and_its_status() -> None:
    clock = FakeTime(utc("2027-01-15T22:00:00"))
    calls: list[float] = []
    runner = JobRunner([Job("anchor", DailyAt("00:00"), recorder(calls, clock))], clock=clock, sleep=clock.sleep)
    asyncio.run(run_until(runner, lambda: len(calls) >= 2))
    assert calls[:2] == [utc("2027-01-16T00:00:00"), utc("2027-01-17T00:00:00")]
    status = runner.status()["anchor"]
    assert status["schedule"] == "daily at 00:00 UTC"
    assert status["nextRun"] == "2027-01-18T00:00:00.000Z"
    with pytest.raises(ValueError):
        DailyAt("25:00")
    assert next_daily(utc("2027-01-16T00:00:00"), "00:00") == utc("2027-01-17T00:00:00")


def _runner(path: Path, clock: FakeTime, calls: list[float], hhmm: str = "00:00") -> tuple[JobRunner, Any]:
    writer = GroupCommitter(path)
    job = Job("anchor", DailyAt(hhmm), recorder(calls, clock))
    return JobRunner([job], clock=clock, sleep=clock.sleep, writer=writer), writer


def test_a_restart_neither_repeats_a_finished_step_nor_skips_a_missed_one(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    connect(path).close()  # migrated
    calls: list[float] = []

    async def scenario() -> None:
        # day 1: the daily job runs at midnight
        clock = FakeTime(utc("2027-01-15T23:59:00"))
        runner, writer = _runner(path, clock, calls)
        await run_until(runner, lambda: len(calls) == 1)
        await writer.close()
        assert calls == [utc("2027-01-16T00:00:00")]
        # restarted the same day: today's step finished, so nothing runs before tomorrow
        clock = FakeTime(utc("2027-01-16T00:05:00"))
        runner, writer = _runner(path, clock, calls)
        await runner.start()
        for _ in range(50):
            await asyncio.sleep(0)
        assert calls == [utc("2027-01-16T00:00:00")]
        assert runner.status()["anchor"]["nextRun"] == "2027-01-17T00:00:00.000Z"
        assert runner.status()["anchor"]["runs"] == 1  # remembered across the restart
        await runner.stop()
        await writer.close()
        # down over the next midnight: the missed step runs at once when the service is back
        clock = FakeTime(utc("2027-01-17T09:30:00"))
        runner, writer = _runner(path, clock, calls)
        await run_until(runner, lambda: len(calls) == 2)
        await writer.close()
        assert calls[1] == utc("2027-01-17T09:30:00")

    asyncio.run(scenario())


def test_a_step_cut_off_by_a_crash_runs_again_after_the_restart(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    connect(path).close()
    calls: list[float] = []

    async def scenario() -> None:
        clock = FakeTime(utc("2027-01-15T23:59:30"))
        writer = GroupCommitter(path)
        entered = asyncio.Event()

        async def hangs() -> None:  # the process "dies" while this step runs
            calls.append(clock.now)
            entered.set()
            await asyncio.Event().wait()

        runner = JobRunner([Job("anchor", DailyAt("00:00"), hangs)], clock=clock, sleep=clock.sleep, writer=writer)
        await runner.start()
        await entered.wait()
        await runner.stop()  # cancelled mid-step: its end is never recorded
        await writer.close()
        clock2 = FakeTime(utc("2027-01-16T00:01:00"))
        runner2, writer2 = _runner(path, clock2, calls)
        await run_until(runner2, lambda: len(calls) == 2)
        await writer2.close()
        assert calls == [utc("2027-01-16T00:00:00"), utc("2027-01-16T00:01:00")]

    asyncio.run(scenario())


class FakeService:
    name = "outbox"

    def __init__(self) -> None:
        self.events: list[str] = []

    async def start(self) -> None:
        self.events.append("start")

    async def stop(self) -> None:
        self.events.append("stop")

    def status(self) -> dict[str, Any]:
        return {"delivered": 3}


def test_services_share_the_lifecycle_and_show_in_the_status() -> None:
    service = FakeService()
    runner = JobRunner(services=[service])

    async def scenario() -> None:
        await runner.start()
        assert runner.status() == {"outbox": {"state": "running", "delivered": 3}}
        await runner.stop()

    asyncio.run(scenario())
    assert service.events == ["start", "stop"]
    assert runner.status()["outbox"]["state"] == "stopped"
    with pytest.raises(ValueError, match="unique"):
        JobRunner([Job("outbox", Every(1), FakeService().start)], services=[FakeService()])


def test_a_job_marked_at_start_runs_at_once_then_on_its_interval() -> None:
    """The checkout sweep settles what a crashed run left at start-up, not 30 s later."""
    clock = FakeTime(1_000.0)
    calls: list[float] = []
    runner = JobRunner(
        [Job("sweep", Every(30), recorder(calls, clock), at_start=True)], clock=clock, sleep=clock.sleep, max_wait=5
    )
    asyncio.run(run_until(runner, lambda: len(calls) >= 3))
    assert calls[:3] == [1_000.0, 1_030.0, 1_060.0]
