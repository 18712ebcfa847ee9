"""The outbox dispatcher: delivers the outbox rows (core.store.outbox) through their channel
(core.outbox.webhook, core.outbox.email), with one retry schedule, one dead-letter rule and one breaker.

Rows are written by whoever makes the change (API handlers through the group committer, the
indexer in its own process) in the same transaction as that change. The dispatcher finds them
two ways: `wake()` (called by a writer right after its commit, so the first attempt goes out at
once) and a poll every `poll_interval` seconds (rows other processes queued, such as the
indexer's order transitions, and retries coming due; one indexed query, so the default 50 ms
keeps their commit-to-attempt time under 100 ms too). A slot freed by an answered attempt takes
the next row the last read returned instead of reading again (a wake, a poll or a breaker
change reads again). Each attempt goes through the row's
channel (a webhook: a POST of the stored body bytes with X-Service-Signature and the Standard
Webhooks headers; success is a 2xx answer within `timeout` seconds, redirects are not
followed). The outcome is committed through the
dispatcher's own group committer (synchronous=FULL; the outcomes that arrive while it is busy
share one write); until then the row stays pending, so a
crash or restart only ever repeats a delivery (at least once, same event id), never loses one.
An answered attempt frees its slot (`concurrency` attempts on the wire) at once, but its row is
not attempted again before its outcome is committed; at most 2 x `concurrency` rows are out
without a committed outcome (on the wire or answered). One dispatcher per database delivers: the
service runner (core.jobs) starts it only on the process holding the lease "service:outbox", so with
several processes each row is delivered by one of them (and by another once that one dies).

Per-host circuit breaker (a host is the row's stored `host`: for a webhook "hostname:port" of its
URL): `failure_threshold` consecutive failed attempts to a host (no answer in time, connection refused or reset, DNS or
address refusal, 5xx, 408, 429) open its breaker for `cool_down` seconds, doubling on each failed
probe up to `max_cool_down`. Any other answer (2xx, and also 3xx/4xx: the receiver is up and
answered) resets the count. While open, the host's pending rows are held in the database (their next
attempt moved to the cool-down's end, attempts unchanged), so they neither take slots nor fill the
due query's window. At the end one probe goes out (half-open; the host's other rows are held for the
probe's length); an answer closes the breaker and releases the held rows at once, a failure re-opens
it. A host not known to be healthy (new, or failing) gets at most `failure_threshold` minus its
consecutive failures attempts in flight, so a dead host sees at most `failure_threshold` attempts
before its breaker opens, and all such hosts together get at most 3/4 of the slots (tenants choose
their URLs: many names for one dead machine cannot take every slot). The state lives in memory: a
restart forgets it and attempts the held rows when their hold ends. A row is never held longer than
`max_hold` (the retry schedule's length): if its host is still open then, it becomes a dead letter
(an operator can reset it).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.outbox import MAX_HOLD, RETRY_DELAYS
from core.outbox.channel import Attempt, Channel
from core.outbox.webhook import WebhookChannel
from core.store import Conn, Database, StoreError, open_database
from core.store import outbox as store
from core.store.backend import reads_beside
from core.store.committer import GroupCommitter
from core.store.health import PartHealth
from core.store.reads import Reads

log = logging.getLogger("agentledger.outbox")


def host_failure(ok: bool, status: int | None) -> bool:
    """Does this attempt's outcome count against its host? No answer (timeout, refused, reset, DNS),
    5xx, 408 and 429 do. 2xx does not, nor does any other answer: a 3xx or 4xx is the receiver's own
    answer about that URL (a shared host may answer 404 for one tenant and 200 for the rest), the
    row still retries on its own schedule, but the host is up and no slot is held."""
    if ok:
        return False
    return status is None or status >= 500 or status in (408, 429)


@dataclass
class Breaker:
    """One host's breaker state (in memory)."""

    failures: int = 0  # consecutive failed attempts
    opens: int = 0  # consecutive opens without an answer in between (the cool-down doubles)
    open_until: float | None = None  # set while open or half-open
    probe: int | None = None  # the row id of the half-open probe in flight
    held_until: float = 0.0  # the latest hold written for this host (released when it closes)
    holding: bool = False  # a hold write is queued


class Dispatcher:
    name = "outbox"

    def __init__(
        self,
        database: Database | Path | str,
        clock: Callable[[], float] = time.time,
        *,
        allow_private: bool = False,
        timeout: float = 10.0,
        channels: Sequence[Channel] = (),
        concurrency: int = 32,
        per_host: int = 24,
        poll_interval: float = 0.05,
        stop_grace: float = 2.0,
        failure_threshold: int = 5,
        cool_down: float = 30.0,
        max_cool_down: float = 600.0,
        max_hold: float = MAX_HOLD,
    ) -> None:
        self.database = open_database(database)
        self.clock = clock
        self.timeout = timeout
        #: The channels by name: the webhook channel (always), then `channels` (e.g. e-mail).
        self.channels: dict[str, Channel] = {c.name: c for c in (WebhookChannel(allow_private, timeout), *channels)}
        self.concurrency = concurrency
        #: Attempts in flight to one host at most (default: 3/4 of the slots): however slow one
        #: tenant's endpoint, the other hosts keep at least `concurrency - per_host` slots.
        self.per_host = per_host
        self.poll_interval = poll_interval
        self.stop_grace = stop_grace
        self.failure_threshold = failure_threshold
        self.cool_down = cool_down
        self.max_cool_down = max_cool_down
        self.max_hold = max_hold
        self.extra_pages = 3  # due-query pages read past the first while slots stay free
        #: Attempts in flight to hosts not known to answer, all together: tenants choose their URLs, and
        #: many names or ports for one dead machine must not take every slot before their breakers open;
        #: the receivers known to answer keep a quarter of the slots whatever names a tenant invents.
        self.unproven_cap = max(1, concurrency - concurrency // 4)
        #: Breaker state of hosts that failed recently or are in use (healthy idle hosts are dropped).
        self.breakers: dict[str, Breaker] = {}
        #: Seconds from a row's created_at to its first attempt (most recent 100,000), for benchmarks.
        self.first_attempt_latency: collections.deque[float] = collections.deque(maxlen=100_000)
        self.attempts = 0  # attempts made since start
        self.delivered = 0
        self._wakeup = asyncio.Event()
        #: Due rows read but not launched yet (none in flight when read, each removed when launched), in
        #: due order: a freed slot takes the next from here instead of reading the due query again.
        self._due: list[store.Delivery] = []
        self._due_hosts: collections.Counter[str] = collections.Counter()  # rows in `_due` per host
        self._due_more = False  # the last read filled its page: more rows may be due past `_due`
        self._refresh = True  # read the due query at the next dispatch (woken, polled, breaker changed)
        self._read_at = 0.0  # time.monotonic() of the last read
        #: row id -> its attempt, from launch until its outcome is committed
        self._inflight: dict[int, asyncio.Task[None]] = {}
        self._sending = 0  # attempts on the wire (the slots taken; an answered one waits for its commit)
        #: row id -> (host, counted as unproven) of each attempt in flight
        self._inflight_hosts: dict[int, tuple[str, bool]] = {}
        self._unproven = 0  # attempts in flight to hosts not known to answer (capped at unproven_cap)
        #: Hosts whose last attempt was answered (the most recent 10,000): known healthy even after their
        #: idle breaker was dropped, so they keep the full per-host cap and their share of the slots.
        self._answered: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._hosts: collections.Counter[str] = collections.Counter()
        self._background: set[asyncio.Task[None]] = set()  # hold and release writes
        #: Outcomes waiting for their write (the write item not started yet), and that write.
        self._outcomes: list[store.Outcome] | None = None
        self._outcomes_written: asyncio.Future[dict[int, str]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._read: Conn | None = None
        self._reads: Reads | None = None  # on _read (SQLite), or a 1-connection pool beside it (PostgreSQL)
        #: Rows whose attempt ended (outcome committed, left _inflight) while a due read was out: that
        #: read's snapshot may predate the commit, so it may still show them due. None: no read is out.
        self._ended_during_read: set[int] | None = None
        self._writer: GroupCommitter | None = None
        #: Whether the last read of due deliveries worked (a database out of reach makes it fail).
        self.health = PartHealth()

    async def start(self) -> None:
        self.breakers.clear()  # a restart forgets the breakers (held rows come due when their hold ends)
        self._answered.clear()
        # off the loop: after an outage the lease comes back before the database may answer quickly
        self._read = await asyncio.to_thread(self.database.connect, durable=True)
        self._reads = reads_beside(self._read, size=1)  # the due query off the loop on PostgreSQL
        self._writer = await asyncio.to_thread(GroupCommitter, self.database)
        for channel in self.channels.values():
            await channel.start(self.concurrency)
        self._stopping = False
        self._due, self._due_hosts, self._due_more, self._refresh = [], collections.Counter(), False, True
        self._outcomes, self._outcomes_written = None, None
        self._task = asyncio.create_task(self._run())

    def wake(self) -> None:
        """Look for due rows now (a writer just committed one)."""
        self._refresh = True
        self._wakeup.set()

    async def stop(self) -> None:
        """Stop polling; give attempts in flight `stop_grace` seconds, cancel the rest (their rows
        stay pending and are attempted again by the next dispatcher)."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        tasks = list(self._inflight.values())
        if tasks:
            _done, late = await asyncio.wait(tasks, timeout=self.stop_grace)
            for t in late:
                t.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self._outcomes_written is not None:  # outcomes of attempts cancelled above are written anyway
            await asyncio.gather(self._outcomes_written, return_exceptions=True)
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        for channel in self.channels.values():
            await channel.close()
        if self._writer is not None:
            await self._writer.close()
            self._writer = None
        if self._reads is not None:
            self._reads.close()
            self._reads = None
        if self._read is not None:
            self._read.close()
            self._read = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            self._wakeup.clear()
            try:
                await self._dispatch_due()
                self.health.ok()
            except StoreError as exc:  # e.g. the database restarting: try again at the next poll
                self.health.failed(exc)
                log.warning("outbox dispatcher: reading due deliveries failed: %s", exc)
            # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives as the
            # event is set (gh-86296), and stop() would then wait forever.
            # The poll is due `poll_interval` after the last read (not after the last freed slot, which
            # reads nothing); when that has passed (all slots were taken), a full interval from now.
            delay = self._read_at + self.poll_interval - time.monotonic()
            timer = loop.call_later(delay if delay > 0 else self.poll_interval, self.wake)
            try:
                await self._wakeup.wait()
            finally:
                timer.cancel()

    def _free(self) -> int:
        # Attempts on the wire up to `concurrency`; with the answered ones whose outcome is not committed
        # yet, up to 2 x `concurrency` (a stalled writer must not let every due row go out unrecorded).
        return min(self.concurrency - self._sending, 2 * self.concurrency - len(self._inflight))

    async def _due_rows(
        self, now: float, limit: int, after: tuple[float, int] | None = None
    ) -> tuple[list[store.Delivery], tuple[float, int] | None]:
        """A page of the due query (store.due) through the reads, and where the next page starts (None:
        this one was not full). Without the rows whose attempt ended while it ran: attempts go on
        meanwhile, and one whose outcome committed after the query's snapshot was taken has left
        _inflight, so the filter against _inflight alone would launch it a second time."""
        assert self._reads is not None
        ended: set[int] = set()
        self._ended_during_read = ended
        try:
            rows = await self._reads.run(lambda conn: store.due(conn, now, limit, after=after))
        finally:
            self._ended_during_read = None
        more = (rows[-1].next_attempt_at, rows[-1].id) if len(rows) >= limit else None
        return ([d for d in rows if d.id not in ended] if ended else rows), more

    async def _dispatch_due(self) -> None:
        free = self._free()
        if free <= 0 or self._reads is None:
            return
        now = self.clock()
        if not self._refresh and time.monotonic() - self._read_at < self.poll_interval:
            # Only slots freed since the last read: launch from the rows it returned. A row's state
            # changes only through this dispatcher's own attempts (launched rows leave `_due`), its
            # hold and release writes (each sets `_refresh`) or another process (seen within a poll).
            self._due, free, suspect_skipped = self._launch(self._due, self._due_hosts, now, free)
            if free <= 0 or not self._due_more or (self._due and not suspect_skipped):
                return
        self._refresh = False
        self._read_at = time.monotonic()
        # Read past the free slots: rows for a host at its cap are skipped, not allowed to hide others.
        # While slots stay free and rows were skipped for a host not known healthy (a dead one, in the
        # seconds before its circuit opens), a few more pages: its backlog must not hide other hosts.
        limit = len(self._inflight) + 8 * self.concurrency
        rows, more = await self._due_rows(now, limit)
        free = self._free()  # attempts may have ended during the read
        self._due, self._due_hosts = [], collections.Counter()
        for _page in range(self.extra_pages + 1):
            self._due_more = more is not None
            page = [d for d in rows if d.id not in self._inflight]
            self._due_hosts.update(d.host or store.host_of(d.url) for d in page)
            kept, free, suspect_skipped = self._launch(page, self._due_hosts, now, free)
            self._due += kept
            if free <= 0 or more is None or not suspect_skipped:
                return
            rows, more = await self._due_rows(now, limit, after=more)
            free = self._free()

    def _launch(
        self, rows: list[store.Delivery], hosts: collections.Counter[str], now: float, free: int
    ) -> tuple[list[store.Delivery], int, bool]:
        """Start attempts for `rows` as slots, caps and breakers allow; returns the rows not started (in
        their order), the slots left (0: full) and whether rows were skipped at the cap of a host not
        known to be healthy. `hosts` counts the rows not started per host (each start is taken off)."""
        suspect_skipped = False
        kept: list[store.Delivery] = []
        # Hosts found at their cap or held in this pass (launches only fill them further): once every
        # host of `rows` is, the rest cannot start either (one busy receiver: no walk through its backlog).
        blocked: set[str] = set()
        for i, d in enumerate(rows):
            if d.id in self._inflight:
                continue
            host = d.host or store.host_of(d.url)  # rows queued before schema 7 have no host
            if host in blocked:
                kept.append(d)
                continue
            b = self.breakers.get(host)
            if b is not None and b.open_until is not None and (now < b.open_until or b.probe is not None):
                self._hold(host, b, b.open_until if now < b.open_until else now + self.timeout + 1.0)
                kept.append(d)
                blocked.add(host)
                if hosts.keys() <= blocked:
                    kept += rows[i + 1 :]
                    break
                continue
            if free == 0:
                self._wakeup.set()  # more are due than slots: look again when one frees
                kept += rows[i:]
                return kept, 0, suspect_skipped
            unproven = not self._known_healthy(host)
            if self._hosts[host] >= self._cap(host, b) or (unproven and self._unproven >= self.unproven_cap):
                if b is not None and b.open_until is not None:  # half-open, attempts from before still out
                    self._hold(host, b, now + self.timeout + 1.0)
                suspect_skipped = suspect_skipped or unproven
                kept.append(d)
                if self._hosts[host] >= self._cap(host, b):
                    blocked.add(host)
                    if hosts.keys() <= blocked:
                        kept += rows[i + 1 :]
                        break
                continue
            if b is None:
                b = self.breakers[host] = Breaker()
            elif b.open_until is not None:  # half-open: this row is the probe; hold the rest meanwhile
                b.probe = d.id
                self._hold(host, b, now + self.timeout + 1.0)
            free -= 1
            hosts[host] -= 1
            if hosts[host] <= 0:
                del hosts[host]
            self._sending += 1
            self._hosts[host] += 1
            self._unproven += unproven
            self._inflight_hosts[d.id] = (host, unproven)
            self._inflight[d.id] = asyncio.create_task(self._attempt(d, host))
        return kept, free, suspect_skipped

    def _known_healthy(self, host: str) -> bool:
        """Its last attempt was answered (so it has no failures and its breaker is closed)."""
        return host in self._answered

    def _cap(self, host: str, b: Breaker | None) -> int:
        """Attempts allowed in flight to a host: the full per-host cap once it answered; until then
        only as many as it may still fail before its breaker opens."""
        if self._known_healthy(host):
            return self.per_host
        return max(1, min(self.per_host, self.failure_threshold - (b.failures if b is not None else 0)))

    def _hold(self, host: str, b: Breaker, until: float) -> None:
        """Hold the host's due rows in the database until `until`, out of the due query (one write
        queued per host at a time; a later target or rows that came due meanwhile get another)."""
        b.held_until = max(b.held_until, until)
        self._refresh = True  # the host's rows are (about to be) held: read what is due again
        if not b.holding:
            b.holding = True
            self._background_write(self._write_hold(host, b))

    async def _write_hold(self, host: str, b: Breaker) -> None:
        assert self._writer is not None
        error = f"not attempted: host {host} still unavailable after {self.max_hold:g} s held by the circuit breaker"
        try:
            while b.open_until is not None:
                until, now = b.held_until, self.clock()

                def work(c: Conn, until: float = until, now: float = now) -> tuple[int, int]:
                    in_flight = [i for i, (h, _) in self._inflight_hosts.items() if h == host]  # their outcome counts
                    return store.hold_host(
                        c, host, until=until, now=now, max_hold=self.max_hold, error=error, in_flight=in_flight
                    )

                _held, dead = await self._writer.run(work)
                if dead:
                    log.warning("outbox host %s: %d held deliveries are dead letters (held too long)", host, dead)
                if b.held_until <= until:
                    break
        except StoreError:  # the rows stay as they were: at worst attempted early, never lost
            log.exception("outbox dispatcher: holding deliveries to %s failed", host)
        finally:
            b.holding = False
            self.wake()  # the due query's window changed

    async def _write_release(self, host: str, held_until: float) -> None:
        assert self._writer is not None
        now = self.clock()
        try:
            await self._writer.run(lambda c: store.release_host(c, host, now=now, held_until=held_until))
        except StoreError:  # they are attempted when their hold ends
            log.exception("outbox dispatcher: releasing deliveries to %s failed", host)
        self.wake()

    def _background_write(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _note(
        self, host: str, row_id: int, ok: bool, status: int | None, error: str | None, failed: bool | None = None
    ) -> None:
        """Feed one attempt's outcome to the host's breaker (`failed`: whether it counts against the
        host, as the row's channel judges it; default the HTTP rule, host_failure)."""
        b = self.breakers.setdefault(host, Breaker())
        now = self.clock()
        if not (host_failure(ok, status) if failed is None else failed):
            b.failures = 0
            self._answered[host] = None
            self._answered.move_to_end(host)
            if len(self._answered) > 10_000:
                self._answered.popitem(last=False)
            if b.open_until is not None:
                log.info(
                    "outbox host %s answers again (HTTP %s): circuit closed, held deliveries released", host, status
                )
                held_until = b.held_until
                b.open_until, b.probe, b.opens, b.held_until = None, None, 0, 0.0
                self._refresh = True
                self._background_write(self._write_release(host, held_until))
            return
        self._answered.pop(host, None)
        if b.open_until is None:
            b.failures += 1
            if b.failures >= self.failure_threshold:
                b.opens, b.open_until = 1, now + self.cool_down
                log.warning(
                    "outbox host %s: %d consecutive failed attempts (last: %s); circuit open, its deliveries"
                    " held for %g s",
                    host,
                    b.failures,
                    error,
                    self.cool_down,
                )
                self._hold(host, b, b.open_until)
        elif b.probe == row_id:  # the half-open probe failed: open again, twice as long
            b.opens += 1
            cool = min(self.cool_down * 2 ** (b.opens - 1), self.max_cool_down)
            b.probe, b.open_until = None, now + cool
            log.debug("outbox host %s: probe failed (%s); circuit open for %g s", host, error, cool)
            self._hold(host, b, b.open_until)
        # else: an attempt started before the circuit opened; the host is already held

    async def _attempt(self, d: store.Delivery, host: str) -> None:
        sending = True
        try:
            ok, status, error = await self._post(d)
            # a channel may judge its own answers (SMTP: a refused recipient is not a relay failure)
            judge = getattr(self.channels.get(d.channel), "host_failure", host_failure)
            self._note(host, d.id, ok, status, error, judge(ok, status))
            # The answer is in: its slot and host cap are free for the next attempt while the outcome
            # waits for its commit (the row stays in _inflight until then, so it is not launched again).
            sending = False
            self._sent(d.id, host)
            try:
                outcome = await self._record((d.id, ok, status, error, self.clock()))
            except StoreError:  # the row stays pending: attempted again (at least once)
                log.exception("outbox dispatcher: recording attempt of %s failed", d.event_id)
                return
            if outcome == "delivered":
                self.delivered += 1
            elif outcome == "dead_letter":
                log.warning("%s delivery %s to %s is a dead letter: %s", d.channel, d.event_id, d.url, error)
        finally:
            if sending:
                self._sent(d.id, host)
            self._inflight.pop(d.id, None)
            self._inflight_hosts.pop(d.id, None)
            if self._ended_during_read is not None:
                self._ended_during_read.add(d.id)
            self._wakeup.set()  # a slot is free

    def _sent(self, row_id: int, host: str) -> None:
        """An attempt is off the wire (answered, failed or cancelled): free its slot and host cap."""
        self._sending -= 1
        if self._due_more and host not in self._due_hosts:
            self._refresh = True  # none of its rows left in `_due`, more may be due past it: read them
        _host, unproven = self._inflight_hosts.get(row_id, (host, False))
        self._unproven -= unproven
        b = self.breakers.get(host)
        if b is not None and b.probe == row_id:  # the probe ended without an outcome (cancelled): send another
            b.probe = None
        self._hosts[host] -= 1
        if self._hosts[host] <= 0:
            del self._hosts[host]
            b = self.breakers.get(host)
            if b is not None and self._known_healthy(host) and not b.holding:
                del self.breakers[host]  # idle and healthy: nothing worth remembering
        self._wakeup.set()  # a slot is free

    async def _record(self, outcome: store.Outcome) -> str | None:
        """Commit one attempt's outcome; returns the row's new status (None: it was not pending). The
        outcomes that arrive while the writer is busy (the previous group's fsync) share one write item
        (store.record_attempts): one read and an executemany instead of a transaction step per row."""
        assert self._writer is not None
        batch = self._outcomes
        if batch is None:
            batch = self._outcomes = []
            task = asyncio.ensure_future(self._writer.run(lambda c: self._write_outcomes(c, batch)))
            task.add_done_callback(lambda f: self._outcomes_done(f, batch))
            self._outcomes_written = task
        batch.append(outcome)
        written = self._outcomes_written
        assert written is not None
        # shielded: an attempt cancelled by stop() must not cancel the write of the others' outcomes
        return (await asyncio.shield(written)).get(outcome[0])

    def _write_outcomes(self, conn: Conn, batch: list[store.Outcome]) -> dict[int, str]:
        if self._outcomes is batch:
            self._outcomes = None  # closed: outcomes from now on go to the next write
        return store.record_attempts(conn, batch, delays=RETRY_DELAYS)

    def _outcomes_done(self, written: asyncio.Future[dict[int, str]], batch: list[store.Outcome]) -> None:
        if self._outcomes is batch:  # the write failed before it ran (BEGIN): the next outcomes get a new one
            self._outcomes = None
        if not written.cancelled():
            written.exception()  # retrieved: every waiter may have been cancelled

    async def _post(self, d: store.Delivery) -> Attempt:
        """One attempt through the row's channel: (success, status or None, error text or None)."""
        now = self.clock()
        if d.attempts == 0:
            self.first_attempt_latency.append(now - d.created_at)
        self.attempts += 1
        channel = self.channels.get(d.channel)
        if channel is None:
            return Attempt(False, None, f"no channel {d.channel!r} in this process")
        return await channel.send(d, now)

    def status(self) -> dict[str, Any]:
        """What /healthz shows of the dispatcher."""
        return {
            "attempts": self.attempts,
            "delivered": self.delivered,
            "inFlight": len(self._inflight),
            "heldHosts": sorted(h for h, b in self.breakers.items() if b.open_until is not None),
        }
