"""The one home of the service's background work: periodic jobs (sweeps, the anchorer) and long-
running services (the outbox dispatcher), with one lifecycle.

A Job is a name, a schedule (every N seconds, or daily at HH:MM UTC) and an async `step`. The
runner starts every service and schedules every job; a failed step is logged in one line with its
reason and retried at its next time; `status()` gives each job's last run, next run, last error
and counts (shown in /healthz).

Restarts: with a writer, the runner keeps each job's runs in the `job_runs` table. A job's next
run is computed from its last FINISHED run, so a restart neither repeats a step that completed
(a sweep that just ran waits its interval; a daily anchor that ran today waits for tomorrow) nor
skips one that is due (an anchor missed while the service was down runs at start). A step cut
off by a crash never recorded its end and runs again: steps are written to be safe to repeat
(they read the chain or the database before acting).

Several processes: with a writer, each job and each service runs on one process at a time. The
runner holds a lease per job ("job:<name>") and per service ("service:<name>", core.leases),
renewed every `renew_every` seconds while the process lives: a job's step runs only on the process
holding its lease (taken or renewed just before the step; skipped elsewhere), a service runs only
on the process holding its lease (started when gained, stopped when lost). When the holder stops
renewing (killed, stopped, hung) its leases expire after `lease_ttl` seconds (at once when it died
on this host) and another process takes them over; a job gained so resumes the holder's schedule
from job_runs (a step it left cut off runs again at once), as a restart would. Without a writer
(tests, one process by construction), there are no leases: everything runs here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from core import instance
from core.isotime import iso_utc
from core.leases import Lease, job_lease_name, service_lease_name
from core.store import Conn, StoreError
from core.store import jobs as store
from core.store.committer import GroupCommitter
from core.store.health import PartHealth

log = logging.getLogger("agentledger.jobs")


@dataclass(frozen=True)
class Every:
    """Every `seconds`, counted from the end of the last run (the first run one interval after start)."""

    seconds: float

    def next_after(self, last_finished: float | None, now: float) -> float:
        return (now if last_finished is None else last_finished) + self.seconds


@dataclass(frozen=True)
class DailyAt:
    """Every day at HH:MM UTC."""

    hhmm: str

    def __post_init__(self) -> None:
        next_daily(0, self.hhmm)  # refuse a malformed time at once

    def next_after(self, last_finished: float | None, now: float) -> float:
        if last_finished is None:
            return next_daily(now, self.hhmm)
        return next_daily(last_finished, self.hhmm)  # due at once if one was missed while stopped


def next_daily(now: float, at_utc: str) -> float:
    """Unix time of the next HH:MM (UTC) strictly after `now`."""
    try:
        hours, minutes = (int(x) for x in at_utc.split(":"))
    except ValueError:
        raise ValueError(f"a daily time must be HH:MM (UTC), not {at_utc!r}") from None
    if not (0 <= hours < 24 and 0 <= minutes < 60):
        raise ValueError(f"a daily time must be HH:MM (UTC), not {at_utc!r}")
    current = datetime.fromtimestamp(now, UTC)
    target = current.replace(hour=hours, minute=minutes, second=0, microsecond=0)
    if target.timestamp() <= now:
        target += timedelta(days=1)
    return target.timestamp()


Schedule = Every | DailyAt


@dataclass(frozen=True)
class Job:
    name: str
    schedule: Schedule
    step: Callable[[], Awaitable[object]]
    #: Also run a step as soon as the runner starts (e.g. to settle what a crashed run left behind).
    at_start: bool = False


class Service(Protocol):
    """A long-running part with a loop of its own (e.g. the outbox dispatcher)."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


@dataclass
class _State:
    runs: int = 0
    failures: int = 0
    last_started: float | None = None
    last_finished: float | None = None
    last_error: str | None = None
    next_run: float | None = None
    running: bool = False
    #: Set when the keeper changed `next_run` (a lease gained): the job's loop looks again at once.
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class JobRunner:
    jobs: Sequence[Job] = ()
    services: Sequence[Service] = ()
    clock: Callable[[], float] = time.time
    #: Records each job's runs (job_runs) so that a restart resumes the schedule; None: in memory only.
    writer: GroupCommitter | None = None
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    #: Longest single wait: an injected clock, or a machine that slept, is caught up with this often.
    max_wait: float = 60.0
    #: This process in the leases (with a writer): core.instance's id.
    holder: str = field(default_factory=instance.current)
    #: Seconds of `clock` a lease lasts unrenewed: how long another process waits after this one hangs.
    lease_ttl: float = 15.0
    #: Real seconds between two renewals of every lease (a few per `lease_ttl`).
    renew_every: float = 3.0
    _states: dict[str, _State] = field(default_factory=dict)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _stop: asyncio.Event | None = None
    _started: list[Service] = field(default_factory=list)
    #: Each job's and service's lease by job/service name (none without a writer).
    _leases: dict[str, Lease] = field(default_factory=dict)
    _renewed_at: dict[str, float] = field(default_factory=dict)
    #: Whether the last renewal of the leases (or start of a gained service) worked.
    health: PartHealth = field(default_factory=PartHealth)

    def __post_init__(self) -> None:
        names = [j.name for j in self.jobs] + [s.name for s in self.services]
        if len(names) != len(set(names)):
            raise ValueError(f"job names must be unique: {names}")
        self._states = {j.name: _State() for j in self.jobs}
        if self.writer is not None:
            self._leases = {
                **{j.name: Lease(job_lease_name(j.name), self.lease_ttl, self.holder, self.clock) for j in self.jobs},
                **{
                    s.name: Lease(service_lease_name(s.name), self.lease_ttl, self.holder, self.clock)
                    for s in self.services
                },
            }

    async def start(self) -> None:
        self._stop = asyncio.Event()
        if self._leases:
            await self._renew(list(self._leases))
        stored = await self._load()
        now = self.clock()
        for job in self.jobs:
            self._resume(job, stored.get(job.name), now)
        for service in self.services:
            if self.holds(service.name):
                await service.start()
                self._started.append(service)
        self._tasks = [asyncio.create_task(self._loop(job), name=f"job:{job.name}") for job in self.jobs]
        if self._leases:
            self._tasks.append(asyncio.create_task(self._keep_leases(), name="job-leases"))

    def _resume(self, job: Job, row: store.JobRunRow | None, now: float) -> None:
        """Schedule `job` from its stored runs (at start, or when its lease is gained from another process)."""
        st = self._states[job.name]
        if row is not None:
            st.runs, st.failures, st.last_started, st.last_finished, st.last_error = (
                row.runs,
                row.failures,
                row.last_started,
                row.last_finished,
                row.last_error,
            )
        cut_off = st.last_started is not None and (st.last_finished is None or st.last_started > st.last_finished)
        # a step cut off by a crash (started, never finished) runs again at once
        st.next_run = now if cut_off or job.at_start else job.schedule.next_after(st.last_finished, now)
        st.changed.set()

    def holds(self, name: str) -> bool:
        """Does this process hold the lease of job or service `name` (always, without leases)?"""
        lease = self._leases.get(name)
        return lease is None or lease.held

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        while self._started:
            await self._started.pop().stop()
        await self._release()

    async def run_now(self, name: str) -> None:
        """Run one step of job `name` at once (operators' commands and tests), recorded as any run."""
        job = next((j for j in self.jobs if j.name == name), None)
        if job is None:
            raise KeyError(name)
        await self._run(job)

    def status(self) -> dict[str, dict[str, Any]]:
        """Each job's and service's state, for /healthz."""
        out: dict[str, dict[str, Any]] = {}
        for job in self.jobs:
            st = self._states[job.name]
            lease = {} if not self._leases else {"leader": self.holds(job.name)}
            out[job.name] = {
                "state": "running" if st.running else "scheduled",
                "schedule": f"every {job.schedule.seconds:g} s"
                if isinstance(job.schedule, Every)
                else f"daily at {job.schedule.hhmm} UTC",
                "lastRun": None if st.last_finished is None else iso_utc(st.last_finished),
                "nextRun": None if st.next_run is None else iso_utc(st.next_run),
                "lastError": st.last_error,
                "runs": st.runs,
                "failures": st.failures,
                **lease,
            }
        for service in self.services:
            if service in self._started:
                state = "running"
            else:
                state = "standby" if self._leases and not self.holds(service.name) else "stopped"
            lease = {} if not self._leases else {"leader": self.holds(service.name)}
            out[service.name] = {"state": state, **service.status(), **lease}
        return out

    def figures(self) -> dict[str, tuple[int, int, float | None, float | None, bool]]:
        """Each job's (runs, failures, last finished, next run, running), as numbers (for /metrics)."""
        return {
            job.name: (st.runs, st.failures, st.last_finished, st.next_run, st.running)
            for job in self.jobs
            for st in (self._states[job.name],)
        }

    # ---- the loop of one job ---------------------------------------------------------------------

    async def _loop(self, job: Job) -> None:
        st = self._states[job.name]
        assert self._stop is not None
        while not self._stop.is_set():
            now = self.clock()
            due = st.next_run if st.next_run is not None else now
            if now < due:
                st.changed.clear()
                await self._wait(min(self.max_wait, due - now), st.changed)
                continue
            await self._run(job)

    async def _wait(self, seconds: float, changed: asyncio.Event | None = None) -> None:
        assert self._stop is not None
        stop = asyncio.ensure_future(self._stop.wait())
        nap = asyncio.ensure_future(self.sleep(seconds))
        waits = [stop, nap]
        if changed is not None:
            waits.append(asyncio.ensure_future(changed.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def _run(self, job: Job) -> None:
        st = self._states[job.name]
        if self._leases and not await self._renew([job.name]):
            # another process runs this job: look again one interval later (or sooner, if the keeper
            # gains its lease meanwhile)
            now = self.clock()
            st.next_run = job.schedule.next_after(now, now)
            return
        st.running, st.last_started = True, self.clock()
        await self._record(job.name, st)
        try:
            await job.step()
        except asyncio.CancelledError:
            st.running = False
            raise
        except Exception as exc:
            st.failures += 1
            st.last_error = f"{type(exc).__name__}: {exc}"[:500]
            log.warning("job %s failed: %s", job.name, st.last_error)  # one line; the traceback at debug
            log.debug("job %s failure", job.name, exc_info=True)
        else:
            st.last_error = None
        st.running = False
        st.runs += 1
        st.last_finished = self.clock()
        st.next_run = job.schedule.next_after(st.last_finished, st.last_finished)
        await self._record(job.name, st)

    # ---- leases ------------------------------------------------------------------------------------

    async def _renew(self, names: list[str]) -> bool:
        """Take or renew the leases of `names` (job or service names) in one write; True if this process
        holds all of them. A lease that could not be renewed for its whole ttl counts as lost."""
        assert self.writer is not None
        leases = [self._leases[n] for n in names]

        def work(conn: Conn) -> list[int | None]:
            out = []
            for lease in leases:  # on copies: the terms count only once the write committed
                trial = Lease(lease.name, lease.ttl, lease.holder, lease.clock, lease.term)
                trial.acquire(conn)
                out.append(trial.term)
            return out

        now = self.clock()
        try:
            terms = await self.writer.run(work)
        except StoreError as exc:
            log.warning("job leases could not be renewed: %s", exc)
            self.health.failed(exc)
            for name, lease in zip(names, leases, strict=True):
                if lease.held and now - self._renewed_at.get(name, now) >= lease.ttl:
                    lease.lost()
            return all(lease.held for lease in leases)
        self.health.ok()
        for name, lease, term in zip(names, leases, terms, strict=True):
            lease.term = term
            if term is not None:
                self._renewed_at[name] = now
        return all(term is not None for term in terms)

    async def _keep_leases(self) -> None:
        """Renew every lease while the process runs; resume a job whose lease was gained from another
        process; start a service whose lease was gained, stop one whose lease was lost."""
        assert self._stop is not None
        while not self._stop.is_set():
            await asyncio.sleep(self.renew_every)
            try:
                await self._keep_once()
            except Exception as exc:  # never end the keeper: a service that failed to start is tried again
                self.health.failed(exc)
                log.exception("job leases: a renewal round failed")

    async def _keep_once(self) -> None:
        """One round of the keeper: renew, resume gained jobs, start or stop services."""
        before = {name: lease.term for name, lease in self._leases.items()}
        await self._renew(list(self._leases))
        gained = [j for j in self.jobs if self.holds(j.name) and self._leases[j.name].term != before[j.name]]
        if gained:
            log.info("jobs taken over by this process: %s", ", ".join(j.name for j in gained))
            try:
                stored = {row.name: row for row in await self.writer.run(store.job_runs)}  # type: ignore[union-attr]
            except StoreError as exc:
                log.warning("job runs could not be read: %s", exc)
                stored = {}
            now = self.clock()
            for job in gained:
                if not self._states[job.name].running:
                    self._resume(job, stored.get(job.name), now)
        for service in self.services:
            if self.holds(service.name) and service not in self._started:
                log.info("service %s starts here (its lease was gained)", service.name)
                await service.start()
                self._started.append(service)
            elif not self.holds(service.name) and service in self._started:
                log.warning("service %s stops here: its lease is held by another process", service.name)
                self._started.remove(service)
                await service.stop()

    async def _release(self) -> None:
        """A clean stop: give up every lease held, so that another process takes over at once."""
        held = [lease for lease in self._leases.values() if lease.held]
        if not held or self.writer is None:
            return

        def work(conn: Conn) -> None:
            for lease in held:
                lease.release(conn)

        try:
            await self.writer.run(work)
        except StoreError as exc:  # they expire on their own
            log.warning("job leases could not be released: %s", exc)
        for lease in held:
            lease.lost()

    # ---- persistence -------------------------------------------------------------------------------

    async def _load(self) -> dict[str, store.JobRunRow]:
        if self.writer is None:
            return {}
        rows = await self.writer.run(store.job_runs)  # in the committer's thread, not on the loop
        return {row.name: row for row in rows}

    async def _record(self, name: str, st: _State) -> None:
        if self.writer is None:
            return
        row = store.JobRunRow(name, st.runs, st.failures, st.last_started, st.last_finished, st.last_error)
        try:
            await self.writer.run(lambda conn: store.save_job_run(conn, row))
        except StoreError as exc:  # bookkeeping never stops the job: at worst a restart repeats a step
            log.warning("job %s: its run could not be recorded: %s", name, exc)
