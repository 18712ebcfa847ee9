"""The webhook dispatcher: delivers the outbox rows of webhook_deliveries (core.store.webhooks).

Rows are written by whoever makes the change (API handlers through the group committer, the
indexer in its own process) in the same transaction as that change. The dispatcher finds them
two ways: `wake()` (called by a writer right after its commit, so the first attempt goes out at
once) and a poll every `poll_interval` seconds (rows other processes queued, such as the
indexer's order transitions, and retries coming due; one indexed query, so the default 50 ms
keeps their commit-to-attempt time under 100 ms too). Each attempt POSTs the stored body bytes
with X-Service-Signature and the Standard Webhooks headers; success is a 2xx answer within
`timeout` seconds, redirects are not followed. The outcome is committed through the
dispatcher's own group committer (synchronous=FULL); until then the row stays pending, so a
crash or restart only ever repeats a delivery (at least once, same event id), never loses one.
Run one dispatcher per database file.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import aiohttp
import apsw
from aiohttp import web

from core import webhooks
from core.store import connect
from core.store import webhooks as store
from core.store.committer import GroupCommitter

log = logging.getLogger(__name__)

USER_AGENT = "agentledger-webhooks/1"


class WebhookDispatcher:
    def __init__(
        self,
        db_path: Path | str,
        clock: Callable[[], float] = time.time,
        *,
        allow_private: bool = False,
        timeout: float = 10.0,
        concurrency: int = 32,
        per_host: int = 24,
        poll_interval: float = 0.05,
        stop_grace: float = 2.0,
    ) -> None:
        self.db_path = db_path
        self.clock = clock
        self.allow_private = allow_private
        self.timeout = timeout
        self.concurrency = concurrency
        #: Attempts in flight to one host at most (default: 3/4 of the slots): however slow one
        #: tenant's endpoint, the other hosts keep at least `concurrency - per_host` slots.
        self.per_host = per_host
        self.poll_interval = poll_interval
        self.stop_grace = stop_grace
        #: Seconds from a row's created_at to its first attempt (most recent 100,000), for benchmarks.
        self.first_attempt_latency: collections.deque[float] = collections.deque(maxlen=100_000)
        self.attempts = 0  # attempts made since start
        self.delivered = 0
        self._wakeup = asyncio.Event()
        self._inflight: dict[int, asyncio.Task[None]] = {}
        self._hosts: collections.Counter[str] = collections.Counter()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._read: apsw.Connection | None = None
        self._writer: GroupCommitter | None = None
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._read = connect(self.db_path, durable=True)
        self._writer = GroupCommitter(self.db_path)
        connector = aiohttp.TCPConnector(resolver=webhooks.PinnedResolver(self.allow_private), limit=self.concurrency)
        self._http = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            headers={"User-Agent": USER_AGENT},
            auto_decompress=False,
        )
        self._stopping = False
        self._task = asyncio.create_task(self._run())

    def wake(self) -> None:
        """Look for due rows now (a writer just committed one)."""
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
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._writer is not None:
            await self._writer.close()
            self._writer = None
        if self._read is not None:
            self._read.close()
            self._read = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping:
            self._wakeup.clear()
            try:
                self._dispatch_due()
            except apsw.Error:  # e.g. the file busy beyond the timeout: try again at the next poll
                log.exception("webhook dispatcher: reading due deliveries failed")
            # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives as the
            # event is set (gh-86296), and stop() would then wait forever.
            timer = loop.call_later(self.poll_interval, self._wakeup.set)
            try:
                await self._wakeup.wait()
            finally:
                timer.cancel()

    def _dispatch_due(self) -> None:
        free = self.concurrency - len(self._inflight)
        if free <= 0 or self._read is None:
            return
        # Read past the free slots: rows for a host at its cap are skipped, not allowed to hide others.
        rows = store.due(self._read, self.clock(), len(self._inflight) + 8 * self.concurrency)
        for d in rows:
            if d.id in self._inflight:
                continue
            if free == 0:
                self._wakeup.set()  # more are due than slots: look again when one frees
                break
            host = _host(d.url)
            if self._hosts[host] >= self.per_host:
                continue
            free -= 1
            self._hosts[host] += 1
            self._inflight[d.id] = asyncio.create_task(self._attempt(d, host))

    async def _attempt(self, d: store.Delivery, host: str) -> None:
        try:
            ok, status, error = await self._post(d)
            assert self._writer is not None
            done_at = self.clock()
            try:
                outcome = await self._writer.run(
                    lambda c: store.record_attempt(c, d.id, ok=ok, status=status, error=error, now=done_at)
                )
            except apsw.Error:  # the row stays pending: attempted again (at least once)
                log.exception("webhook dispatcher: recording attempt of %s failed", d.event_id)
                return
            if outcome == "delivered":
                self.delivered += 1
            elif outcome == "dead_letter":
                log.warning("webhook %s to %s is a dead letter: %s", d.event_id, d.url, error)
        finally:
            self._inflight.pop(d.id, None)
            self._hosts[host] -= 1
            if self._hosts[host] <= 0:
                del self._hosts[host]
            self._wakeup.set()  # a slot is free

    async def _post(self, d: store.Delivery) -> tuple[bool, int | None, str | None]:
        """One HTTP attempt: (success, HTTP status or None, error text or None)."""
        now = self.clock()
        if d.attempts == 0:
            self.first_attempt_latency.append(now - d.created_at)
        self.attempts += 1
        assert self._http is not None
        try:
            webhooks.check_url_static(d.url, self.allow_private)
            headers = {
                "Content-Type": "application/json",
                "X-Service-Signature": webhooks.sign_service(d.body, d.secret),
                **webhooks.standard_headers(d.event_id, int(now), d.body, d.secret),
            }
            async with self._http.post(d.url, data=d.body, headers=headers, allow_redirects=False) as resp:
                if 200 <= resp.status < 300:
                    return True, resp.status, None
                return False, resp.status, f"HTTP {resp.status}"
        except TimeoutError:
            return False, None, f"no answer within {self.timeout:g} s"
        except webhooks.WebhookURLError as exc:
            return False, None, str(exc)
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return False, None, f"{type(exc).__name__}: {exc}"


#: The app's dispatcher, for route modules to wake after committing an enqueue.
DISPATCHER: web.AppKey[WebhookDispatcher] = web.AppKey("webhook_dispatcher", WebhookDispatcher)


def _host(url: str) -> str:
    return (urllib.parse.urlsplit(url).hostname or "").lower()


def add_webhook_dispatcher(
    app: web.Application,
    db_path: Path | str,
    clock: Callable[[], float] = time.time,
    allow_private: bool = False,
    *,
    timeout: float = 10.0,
    concurrency: int = 32,
    poll_interval: float = 0.05,
) -> WebhookDispatcher:
    """Mount a dispatcher on `app`: started on startup, stopped on cleanup."""
    dispatcher = WebhookDispatcher(
        db_path,
        clock,
        allow_private=allow_private,
        timeout=timeout,
        concurrency=concurrency,
        poll_interval=poll_interval,
    )
    app[DISPATCHER] = dispatcher

    async def _start(_app: web.Application) -> None:
        await dispatcher.start()

    async def _stop(_app: web.Application) -> None:
        await dispatcher.stop()

    app.on_startup.append(_start)
    app.on_cleanup.append(_stop)
    return dispatcher


def wake(app: web.Application | web.Request) -> None:
    """Wake the mounted dispatcher (no-op without one). Accepts a request so handlers of sub-apps
    find the dispatcher of a parent app."""
    found = app.config_dict.get(DISPATCHER) if isinstance(app, web.Request) else app.get(DISPATCHER)
    if found is not None:
        found.wake()
