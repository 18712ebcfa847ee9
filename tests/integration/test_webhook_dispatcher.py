"""The webhook dispatcher against a real aiohttp receiver on loopback and a real SQLite file, with an
injected clock: signed delivery verified by the receiver, the retry schedule to dead letter, the
operator reset, recovery, timeouts, redirects, restarts and the private-target refusal. No chain."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import pytest
from agentledger_sdk import webhooks
from aiohttp import web
from aiohttp.test_utils import TestServer

from api.http import DISPATCHER
from core import outbox
from core.jobs import JobRunner
from core.outbox.channel import Attempt
from core.outbox.dispatcher import Dispatcher as WebhookDispatcher
from core.store import connect, transaction
from core.store import outbox as store
from core.store.committer import GroupCommitter
from scripts import webhooks as command
from tests.integration.http_kit import mount_dispatcher

T0 = 1_800_000_000.0
SECRET = "a1" * 32


@dataclass
class Clock:
    now: float = T0

    def __call__(self) -> float:
        return self.now


@dataclass
class Hit:
    at: float  # the injected clock when the request arrived
    path: str
    headers: dict[str, str]
    body: bytes
    service_ok: bool
    standard_ok: bool


@dataclass
class Receiver:
    clock: Clock
    url: str = ""
    hits: list[Hit] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # answers in turn; 200 once used up
    delay: float = 0.0
    secret: str = SECRET
    gate: asyncio.Event | None = None  # set: answers wait for it

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        expected = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        self.hits.append(
            Hit(
                self.clock(),
                request.path,
                dict(request.headers),
                body,
                hmac.compare_digest(expected, request.headers.get("X-Service-Signature", "")),
                webhooks.verify_standard(body, self.secret, request.headers, now=self.clock()),
            )
        )
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.gate is not None:
            await self.gate.wait()
        if request.path == "/redirect":
            raise web.HTTPTemporaryRedirect("/hook")
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)


@asynccontextmanager
async def receiver(clock: Clock) -> AsyncIterator[Receiver]:
    rx = Receiver(clock)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rx.handle)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    rx.url = str(server.make_url("/hook"))
    try:
        yield rx
    finally:
        await server.close()


@asynccontextmanager
async def running(path: Path, clock: Clock, **options: Any) -> AsyncIterator[WebhookDispatcher]:
    options.setdefault("allow_private", True)
    d = WebhookDispatcher(path, clock, **options)
    await d.start()
    try:
        yield d
    finally:
        await d.stop()


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


def enqueue(
    conn: apsw.Connection, url: str, now: float, source: str = "order:ord_1", payload: dict[str, Any] | None = None
) -> str:
    """As a writer does it (here: another connection on the file, like the indexer process)."""
    with transaction(conn):
        return outbox.enqueue_webhook(
            conn,
            event="job.state_changed",
            source=source,
            url=url,
            secret=SECRET,
            payload={"event": "job.state_changed", "job_id": source.split(":")[1], **(payload or {})},
            now=now,
        )


def status_of(conn: apsw.Connection, event_id: str) -> store.DeliveryStatus:
    st = store.get_status(conn, event_id)
    assert st is not None
    return st


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(body())


def test_delivery_is_signed_both_ways_and_verified_by_the_receiver(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            payload = {"status": "acknowledged", "timestamp": "2027-01-15T08:00:00Z", "metadata": {"to_state": "x"}}
            event_id = enqueue(conn, rx.url, clock(), payload=payload)
            d.wake()
            await until(lambda: d.delivered == 1)  # counted once the outcome is committed
            (hit,) = rx.hits
            assert hit.service_ok and hit.standard_ok
            assert hit.body == outbox.encode_body({"event": "job.state_changed", "job_id": "ord_1", **payload})
            assert hit.headers["Content-Type"] == "application/json"
            assert hit.headers["webhook-id"] == event_id
            assert hit.headers["webhook-timestamp"] == str(int(T0))
            assert hit.headers["User-Agent"].startswith("agentledger-webhooks/")
            st = status_of(conn, event_id)
            assert (st.attempts, st.last_status, st.last_error, st.delivered_at) == (1, 200, None, T0)
            assert conn.execute("SELECT secret FROM outbox").fetchall() == [("",)]
            assert list(d.first_attempt_latency) == [0.0]  # injected clock: attempted at its enqueue time
            assert (d.attempts, d.delivered) == (1, 1)

    run(body)


async def _step_schedule(d: WebhookDispatcher, rx: Receiver, clock: Clock, delays: tuple[float, ...]) -> None:
    """For each delay: one second early nothing happens; at the exact time the next attempt goes out."""
    for delay in delays:
        seen = len(rx.hits)
        clock.now += delay - 1
        d.wake()
        await asyncio.sleep(0.05)
        assert len(rx.hits) == seen, "attempted before its time"
        clock.now += 1
        d.wake()

        def attempted(target: int = seen + 1) -> bool:
            return len(rx.hits) == target and not d._inflight

        await until(attempted)


def test_retry_schedule_dead_letter_and_operator_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            rx.statuses = [500] * 6
            event_id = enqueue(conn, rx.url, clock())
            d.wake()
            await until(lambda: len(rx.hits) == 1 and not d._inflight)
            await _step_schedule(d, rx, clock, (60, 300, 900, 3600, 14400))
            assert [h.at - T0 for h in rx.hits] == [0, 60, 360, 1260, 4860, 19260]
            assert {h.headers["webhook-id"] for h in rx.hits} == {event_id}  # stable across retries
            assert [int(h.headers["webhook-timestamp"]) for h in rx.hits] == [int(h.at) for h in rx.hits]
            assert all(h.service_ok and h.standard_ok for h in rx.hits)
            st = status_of(conn, event_id)
            assert (st.status, st.attempts, st.last_status, st.last_error) == ("dead_letter", 6, 500, "HTTP 500")
            clock.now += 10**6
            d.wake()
            await asyncio.sleep(0.05)
            assert len(rx.hits) == 6  # a dead letter is never attempted again by itself

            assert command.main(["list-dead", "--db", str(tmp_path / "w.db")]) == 0
            out = capsys.readouterr().out
            assert event_id in out and "HTTP 500" in out and SECRET not in out
            assert command.main(["list-dead", "--json", "--db", str(tmp_path / "w.db")]) == 0
            (listed,) = json.loads(capsys.readouterr().out)
            assert listed["event_id"] == event_id and "secret" not in listed
            assert command.main(["reset", "evt_" + "0" * 32, "--db", str(tmp_path / "w.db")]) == 2
            # the command stamps reset rows with the wall clock: long past this test's clock
            clock.now = 4_000_000_000.0
            assert command.main(["reset", event_id, "--db", str(tmp_path / "w.db")]) == 0
            await until(lambda: status_of(conn, event_id).status == "delivered")  # found by the poll, no wake
            assert len(rx.hits) == 7 and rx.hits[-1].headers["webhook-id"] == event_id
            assert status_of(conn, event_id).attempts == 1

    run(body)


def test_receiver_that_fails_then_recovers(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            rx.statuses = [500, 503]
            event_id = enqueue(conn, rx.url, clock())
            d.wake()
            await until(lambda: len(rx.hits) == 1 and not d._inflight)
            assert status_of(conn, event_id).last_status == 500
            await _step_schedule(d, rx, clock, (60, 300))
            st = status_of(conn, event_id)
            assert (st.status, st.attempts, st.last_status, st.delivered_at) == ("delivered", 3, 200, T0 + 360)
            assert [h.at - T0 for h in rx.hits] == [0, 60, 360]

    run(body)


def test_slow_receiver_counts_as_failure(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, timeout=0.3) as d:
            rx.delay = 0.6
            event_id = enqueue(conn, rx.url, clock())
            d.wake()
            await until(lambda: status_of(conn, event_id).attempts == 1)
            st = status_of(conn, event_id)
            assert (st.status, st.last_status, st.last_error) == ("pending", None, "no answer within 0.3 s")
            assert st.next_attempt_at == T0 + 60
            rx.delay = 0.0
            clock.now += 60
            d.wake()
            await until(lambda: status_of(conn, event_id).status == "delivered")

    run(body)


def test_redirects_are_not_followed(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock) as d:
            event_id = enqueue(conn, rx.url.replace("/hook", "/redirect"), clock())
            d.wake()
            await until(lambda: status_of(conn, event_id).attempts == 1)
            st = status_of(conn, event_id)
            assert (st.status, st.last_status, st.last_error) == ("pending", 307, "HTTP 307")
            assert [h.path for h in rx.hits] == ["/redirect"]

    run(body)


def test_restart_delivers_what_was_pending_with_the_same_event_id(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx:
            rx.statuses = [500]
            async with running(tmp_path / "w.db", clock) as d1:
                first = enqueue(conn, rx.url, clock())
                d1.wake()
                await until(lambda: status_of(conn, first).attempts == 1)
            # queued while no dispatcher runs (e.g. by the indexer during a restart)
            second = enqueue(conn, rx.url, clock(), source="order:ord_2")
            clock.now += 60
            async with running(tmp_path / "w.db", clock):  # a new dispatcher on the same file, never woken
                await until(lambda: {status_of(conn, e).status for e in (first, second)} == {"delivered"})
            ids = [h.headers["webhook-id"] for h in rx.hits]
            assert ids[0] == first and sorted(ids[1:]) == sorted([first, second])
            assert all(h.service_ok and h.standard_ok for h in rx.hits)

    run(body)


def test_private_targets_refused_at_delivery_when_not_allowed(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, allow_private=False) as d:
            by_ip = enqueue(conn, rx.url, clock())  # http://127.0.0.1:<port>/hook
            by_name = enqueue(conn, rx.url.replace("127.0.0.1", "localhost"), clock())  # through the resolver
            d.wake()
            await until(lambda: all(status_of(conn, e).attempts == 1 for e in (by_ip, by_name)))
            for e in (by_ip, by_name):
                st = status_of(conn, e)
                assert st.status == "pending" and st.last_status is None
                assert st.last_error is not None and "non-public address" in st.last_error
            assert rx.hits == []
            assert d._task is not None and not d._task.done()  # still running

    run(body)


def test_many_deliveries_each_exactly_once(tmp_path: Path) -> None:
    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, concurrency=4) as d:
            with transaction(conn):
                ids = [
                    outbox.enqueue_webhook(
                        conn, event="e", source=f"order:o{i}", url=rx.url, secret=SECRET, payload={"i": i}, now=T0
                    )
                    for i in range(60)
                ]
            d.wake()
            await until(lambda: d.delivered == 60)
            assert sorted(h.headers["webhook-id"] for h in rx.hits) == sorted(ids)
            assert all(h.service_ok for h in rx.hits)

    run(body)


def test_answered_rows_wait_for_their_commit_owned_and_each_goes_out_once(tmp_path: Path) -> None:
    """An answered attempt frees its slot at once, but its row stays the attempt's until the outcome
    commits: while another process holds the write lock, the polls that re-read the due rows (still
    pending) send none of them again, and at most 2 x concurrency rows go out unrecorded."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, concurrency=4, poll_interval=0.02) as d:
            with transaction(conn):
                ids = [
                    outbox.enqueue_webhook(
                        conn, event="e", source=f"order:o{i}", url=rx.url, secret=SECRET, payload={"i": i}, now=T0
                    )
                    for i in range(30)
                ]
            blocker = connect(tmp_path / "w.db")
            blocker.execute("BEGIN IMMEDIATE")  # the dispatcher's outcome writes wait for this lock
            try:
                d.wake()
                await until(lambda: len(rx.hits) >= 8)
                await asyncio.sleep(0.3)  # a dozen polls, each reading the 30 rows as pending
                assert len(rx.hits) == 8 and d.delivered == 0 and len(d._inflight) == 8
                assert len({h.headers["webhook-id"] for h in rx.hits}) == 8
            finally:
                blocker.execute("COMMIT")
            await until(lambda: d.delivered == 30)
            assert sorted(h.headers["webhook-id"] for h in rx.hits) == sorted(ids)
            assert all(status_of(conn, e).status == "delivered" for e in ids)

    run(body)


class _AnswerDuringTheRead:
    """The dispatcher's reads, with the timing PostgreSQL allows (the due query runs in a worker thread,
    core.store.reads): the query's snapshot is taken while an attempt waits for its answer, and the
    answer and its committed outcome come in before the rows reach the dispatcher."""

    def __init__(self, d: WebhookDispatcher, rx: Receiver) -> None:
        assert d._reads is not None and rx.gate is not None
        self.inner, self.d, self.gate = d._reads, d, rx.gate

    async def run(self, fn: Callable[[Any], Any]) -> Any:
        rows = await self.inner.run(fn)  # the row is pending in this snapshot, its attempt in flight
        self.gate.set()
        await until(lambda: self.d.delivered == 1)  # outcome committed: the row has left _inflight
        return rows


def test_a_row_whose_attempt_ends_during_a_due_read_goes_out_once(tmp_path: Path) -> None:
    """The due rows are read off the loop on PostgreSQL, so attempts end while a read is out: a row whose
    outcome committed after the read's snapshot comes back due, with its attempt no longer in flight.
    It is not sent again (the dispatcher drops rows whose attempt ended during the read)."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, poll_interval=3600) as d:
            rx.gate = asyncio.Event()
            event_id = enqueue(conn, rx.url, T0)
            d.wake()
            await until(lambda: len(rx.hits) == 1)  # sent; its answer waits for the gate
            own = d._reads
            d._reads = _AnswerDuringTheRead(d, rx)  # type: ignore[assignment]
            try:
                d.wake()  # a read while the attempt is out
                await until(lambda: d.delivered == 1)
                await asyncio.sleep(0.3)  # time for a second attempt to arrive, were one sent
            finally:
                d._reads = own
            assert len(rx.hits) == 1 and d.attempts == 1
            assert status_of(conn, event_id).status == "delivered"

    run(body)


def test_a_host_whose_read_rows_ran_out_reads_more_at_once_past_a_slow_hosts_rows(tmp_path: Path) -> None:
    """A freed slot launches from the rows already read; when they hold none of its host's rows but
    more are due past them, it reads again at once (no poll here: poll_interval is an hour), not only
    once a slow host's rows at its cap are gone."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as fast, receiver(clock) as slow:
            options = {"concurrency": 4, "per_host": 2, "poll_interval": 3600}
            async with running(tmp_path / "w.db", clock, **options) as d:
                enqueue(conn, slow.url, T0, source="order:s0")
                d.wake()
                await until(lambda: d.delivered == 1)  # the slow host answered once: known healthy
                slow.delay = 3.0
                with transaction(conn):
                    for i in range(10):  # queued first: the first read's page (4 x 8 rows) starts with them
                        outbox.enqueue_webhook(
                            conn, event="e", source=f"order:s{i + 1}", url=slow.url, secret=SECRET, payload={}, now=T0
                        )
                    fast_ids = [
                        outbox.enqueue_webhook(
                            conn, event="e", source=f"order:f{i}", url=fast.url, secret=SECRET, payload={}, now=T0
                        )
                        for i in range(60)
                    ]
                d.wake()
                # 60 fast deliveries, 2 at a time, while the slow host holds its 2 slots for 3 s each
                await until(lambda: len(fast.hits) == 60, timeout=2.5)
                assert sorted(h.headers["webhook-id"] for h in fast.hits) == sorted(fast_ids)
                assert len(slow.hits) == 1 + 2

    run(body)


def test_mounted_dispatcher_is_woken_by_a_handler_after_its_commit(tmp_path: Path) -> None:
    async def body() -> None:
        clock = Clock()
        async with receiver(clock) as rx:
            app = web.Application()
            # a poll interval far longer than the test: only wake() can make the delivery happen
            mount_dispatcher(app, WebhookDispatcher(tmp_path / "w.db", clock, allow_private=True, poll_interval=3600))
            writer = connect(tmp_path / "w.db")

            async def handler(request: web.Request) -> web.Response:
                event_id = enqueue(writer, rx.url, clock())
                request.app[DISPATCHER].wake()
                return web.json_response({"event_id": event_id})

            app.router.add_post("/change", handler)
            server = TestServer(app, host="127.0.0.1", port=0)
            await server.start_server()
            try:
                d = app[DISPATCHER]
                await until(lambda: d._task is not None)
                await asyncio.sleep(0.05)  # the loop's first pass is over: it now sleeps for an hour
                async with aiohttp.ClientSession() as s, s.post(server.make_url("/change")) as resp:
                    event_id = (await resp.json())["event_id"]
                await until(lambda: d.delivered == 1, timeout=2.0)
                assert rx.hits[0].headers["webhook-id"] == event_id
            finally:
                await server.close()
            assert d._task is None  # stopped on cleanup

    run(body)


def test_stop_right_after_a_wake_does_not_hang(tmp_path: Path) -> None:
    """A wake() landing just before stop() once made the poll loop swallow its cancellation
    (asyncio.wait_for on Python 3.11) and stop() wait forever."""

    async def body() -> None:
        for _ in range(40):
            d = WebhookDispatcher(tmp_path / "w.db", allow_private=True)
            await d.start()
            await asyncio.sleep(0.002)
            d.wake()
            await asyncio.sleep(0)
            await asyncio.wait_for(d.stop(), 3)
            assert d._task is None

    run(body)


def test_a_slow_host_cannot_take_every_slot(tmp_path: Path) -> None:
    """Six deliveries to a host that answers after 2 s, queued first, and one to another host: with 4
    slots and 2 per host, the other host's delivery goes out while the slow ones still hang."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        async with receiver(clock) as slow, receiver(clock) as fast:
            slow.delay = 2.0
            slow_ids = [enqueue(conn, slow.url, clock(), source=f"order:ord_s{i}") for i in range(6)]
            other = fast.url.replace("127.0.0.1", "localhost")  # another host name, same machine
            fast_id = enqueue(conn, other, clock(), source="order:ord_f")
            async with running(tmp_path / "w.db", clock, concurrency=4, per_host=2, timeout=5.0) as d:
                d.wake()
                await until(lambda: status_of(conn, fast_id).status == "delivered", timeout=1.5)
                assert len(slow.hits) == 2  # never more than two at the slow host at once
                assert all(status_of(conn, e).status == "pending" for e in slow_ids)

    run(body)


class RecordingChannel:
    """A second outbox channel (as e-mail will be): it answers each attempt as told and records it."""

    name = "test"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.sent: list[tuple[str, bytes, float]] = []
        self.ok = False
        self.started = False

    async def start(self, concurrency: int) -> None:
        self.started = True

    async def close(self) -> None:
        self.started = False

    async def send(self, d: store.Delivery, now: float) -> Attempt:
        self.sent.append((d.event_id, d.body, now))
        return Attempt(True, 250, None) if self.ok else Attempt(False, None, "relay refused the message")


def test_a_second_channel_shares_the_schedule_dead_letters_and_operator_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The outbox is channel-neutral: a row names its channel; rows of another channel go through it
    with the same retry schedule, the same dead letters and the same reset command, while webhook
    rows still go out as webhooks."""

    async def body() -> None:
        clock, conn = Clock(), connect(tmp_path / "w.db")
        channel = RecordingChannel(clock)
        async with receiver(clock) as rx, running(tmp_path / "w.db", clock, channels=[channel]) as d:
            assert channel.started
            with transaction(conn):
                store.enqueue(
                    conn,
                    channel="test",
                    event_id="evt_" + "7" * 32,
                    event="listing.notice",
                    source="listing:1",
                    url="mailto:seller@example.com",
                    host="smtp:relay",
                    secret="",
                    body=b"Subject: hi\r\n\r\nhello",
                    now=clock(),
                )
            hook_id = enqueue(conn, rx.url, clock())
            d.wake()
            await until(lambda: len(channel.sent) == 1 and len(rx.hits) == 1 and not d._inflight)
            assert channel.sent[0][:2] == ("evt_" + "7" * 32, b"Subject: hi\r\n\r\nhello")
            assert rx.hits[0].headers["webhook-id"] == hook_id  # the webhook row took the webhook channel
            for delay in (60, 300, 900, 3600, 14400):
                clock.now += delay
                d.wake()
                count = len(channel.sent)
                await until(lambda count=count: len(channel.sent) == count + 1 and not d._inflight)
            assert [round(at - T0) for _e, _b, at in channel.sent] == [0, 60, 360, 1260, 4860, 19260]
            st = status_of(conn, "evt_" + "7" * 32)
            assert (st.status, st.attempts, st.last_error) == ("dead_letter", 6, "relay refused the message")
            assert command.main(["list-dead", "--db", str(tmp_path / "w.db")]) == 0
            assert "evt_" + "7" * 32 in capsys.readouterr().out
            assert d.breakers["smtp:relay"].open_until is not None  # its own host's breaker, not a URL's
            channel.ok = True
            assert command.main(["reset", "evt_" + "7" * 32, "--db", str(tmp_path / "w.db")]) == 0
            clock.now += 600  # past the breaker's cool-down (it doubled on the failed probe): one probe, answered
            d.wake()
            await until(lambda: status_of(conn, "evt_" + "7" * 32).status == "delivered")
        assert not channel.started  # closed with the dispatcher

    run(body)


def test_a_second_dispatcher_on_the_file_delivers_nothing_while_the_first_holds_the_lease(tmp_path: Path) -> None:
    """Two processes' runners (two holders) with a dispatcher each on one file: only the holder of the
    lease "service:outbox" runs its dispatcher, so each row goes out once; when it stops, the other
    one's dispatcher starts and delivers what comes next."""

    async def body() -> None:
        path = tmp_path / "w.db"
        clock, conn = Clock(), connect(path)
        async with receiver(clock) as rx:
            parts = []
            for holder in ("process-a", "process-b"):
                writer = GroupCommitter(path)
                d = WebhookDispatcher(path, clock, allow_private=True)
                runner = JobRunner(services=[d], writer=writer, holder=holder, renew_every=0.05)
                parts.append((runner, d, writer))
            (ra, da, wa), (rb, db, wb) = parts
            await ra.start()
            await rb.start()
            try:
                first = [enqueue(conn, rx.url, clock(), source=f"order:ord_{i}") for i in range(20)]
                da.wake()
                db.wake()  # woken (a writer in b's process committed): still sends nothing
                await until(lambda: da.delivered == 20)
                await asyncio.sleep(0.3)  # several of b's lease renewals
                assert (db.attempts, len(rx.hits)) == (0, 20)
                assert rb.status()["outbox"]["state"] == "standby" and ra.status()["outbox"]["state"] == "running"
                assert sorted(h.headers["webhook-id"] for h in rx.hits) == sorted(first)
                await ra.stop()  # a's process stops: its lease is released and b's dispatcher starts
                await until(lambda: rb.status()["outbox"]["state"] == "running")
                later = [enqueue(conn, rx.url, clock(), source=f"order:ord_{i}") for i in range(20, 30)]
                db.wake()
                await until(lambda: db.delivered == 10)
                assert da.attempts == 20 and len(rx.hits) == 30
                assert sorted(h.headers["webhook-id"] for h in rx.hits) == sorted(first + later)
            finally:
                await ra.stop()
                await rb.stop()
                await wa.close()
                await wb.close()

    run(body)
