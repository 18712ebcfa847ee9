"""Historical sync: backfill up to the final block with adaptive eth_getLogs ranges.

The event loop fetches eth_getLogs replies unparsed; one worker thread parses, decodes and writes
each range, and hands the parsed logs back before decoding, so the next range is sized from them
and fetched meanwhile. Each range is one step (indexer.step: one transaction), and its COMMIT runs
in a thread of its own while the next range is parsed and decoded. Ranges (indexer.fetch) grow on
success, shrink on "too many results" or timeouts, follow a provider's suggested range, and never
grow back past a refused span; a single block too large for the provider falls back to
eth_getBlockReceipts.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core.store import Conn, StoreError, rollback
from core.store.backend import backend_of
from indexer.decode import Decoder, parse_logs, raw_block_number
from indexer.fetch import RangeSizer, check_order, logs_from_receipts
from indexer.progress import Progress, Snapshot
from indexer.rpc import RpcClient, RpcError, RpcUnavailable, is_range_error, parse_reply, suggested_range
from indexer.step import Step, finish


@dataclass
class _Range:
    """A fetched eth_getLogs range on its way to the worker thread: the reply unparsed (`body`, whose
    logs go to `parsed` once parsed, or its error), or logs already parsed (from receipts)."""

    start: int
    stop: int
    block: dict[str, Any]
    body: bytes | None
    logs: list[dict[str, Any]] | None
    parsed: asyncio.Future[tuple[int, int, int]] | None  # RangeSizer.measure of the parsed logs


def _settle(loop: asyncio.AbstractEventLoop, fut: asyncio.Future[Any] | None, outcome: Any) -> None:
    """Resolve an event-loop future from a worker thread (with an exception if `outcome` is one)."""

    def settle() -> None:
        if fut is None or fut.done():
            return
        if isinstance(outcome, BaseException):
            fut.set_exception(outcome)
        else:
            fut.set_result(outcome)

    loop.call_soon_threadsafe(settle)


class _Commit:
    """A step's COMMIT in its own thread, so that the next range is parsed and decoded meanwhile (SQLite
    writes the WAL, and checkpoints it, without holding the GIL); `wait` raises its error."""

    def __init__(self, conn: Conn, committed: Callable[[], None]) -> None:
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(conn, committed), name="indexer-commit", daemon=True)
        self._thread.start()

    def _run(self, conn: Conn, committed: Callable[[], None]) -> None:
        try:
            finish(conn, committed)
        except BaseException as exc:
            self.error = exc

    def wait(self) -> None:
        self._thread.join()
        if self.error is not None:
            raise self.error


class Historical:
    def __init__(
        self,
        conn: Conn,
        rpc: RpcClient,
        decoder: Decoder,
        *,
        step: Step,
        sizer: RangeSizer,
        progress: Callable[[Snapshot], None] | None,
    ) -> None:
        self.conn, self.rpc, self.decoder = conn, rpc, decoder
        self.step, self.sizer, self.progress = step, sizer, progress
        self._progress: Progress | None = None
        self._progress_done = False
        self._commit: _Commit | None = None  # a range's COMMIT still running
        self._checkpointer = backend_of(conn).checkpointer(conn)

    async def run(self, number: int, final: int, head: int, max_ranges: int = 64) -> None:
        """Backfill towards `final`, one transaction per range, in chain order. The event loop
        fetches eth_getLogs replies unparsed; one worker thread parses, decodes and writes each
        range, and hands the parsed logs back before decoding, so the next range is sized from
        them and fetched meanwhile. Each range's COMMIT runs in a thread of its own while the
        next range is parsed and decoded: SQLite holds no GIL for the whole COMMIT, whereas
        writes in one thread and a parse in another would make every row wait for the GIL
        (apsw releases and retakes it around each step)."""
        if self._progress is None or self._progress_done:
            self._progress, self._progress_done = Progress(number), False  # a new backfill: its own rates
        progress = self._progress
        loop = asyncio.get_running_loop()
        ready: asyncio.Queue[_Range] = asyncio.Queue(1)

        async def produce() -> None:
            start = number + 1
            unreadable = 0
            for _ in range(max_ranges):
                if start > final:
                    return
                stop = min(final, start + self.sizer.size - 1)
                flt = {"fromBlock": hex(start), "toBlock": hex(stop), "address": self.decoder.addresses}
                try:
                    body = await self.rpc.call_raw("eth_getLogs", [flt])
                except RpcUnavailable:
                    if self.sizer.size > 1:  # maybe a timeout on a heavy range: try smaller first
                        self.sizer.too_large()
                    raise
                # one request at a time: a second keep-alive connection would double the stale
                # connections each retry meets after the node restarts
                block = await self.rpc.call("eth_getBlockByNumber", [hex(stop), False])
                parsed: asyncio.Future[tuple[int, int, int]] = loop.create_future()
                await ready.put(_Range(start, stop, block, body, None, parsed))
                try:
                    measured = await parsed
                except RpcUnavailable:  # a reply that is not JSON (cut short): fetch it again, as `call` would
                    unreadable += 1
                    if unreadable >= self.rpc.policy.attempts:
                        raise
                    continue
                except RpcError as exc:
                    if not is_range_error(exc):
                        raise
                    if stop == start:  # one block is already too much for this provider
                        logs = await logs_from_receipts(self.rpc, self.decoder, start)
                        await ready.put(_Range(start, stop, block, None, logs, None))
                        start = stop + 1
                    else:
                        self.sizer.refused(suggested_range(exc), start, stop)
                    continue
                self.sizer.success(*measured)
                unreadable = 0
                start = stop + 1

        self._checkpointer.attach()
        # the cyclic GC paused for the whole step, not range by range: re-enabled between two ranges it
        # collected the range just built (10,000s of young tuples) at once, on the critical path
        with no_cyclic_gc():
            producer = asyncio.create_task(produce())
            try:
                while True:
                    get = asyncio.ensure_future(ready.get())
                    await asyncio.wait([get, producer], return_when=asyncio.FIRST_COMPLETED)
                    if not get.done():  # the producer ended (done, or an error) with nothing queued
                        get.cancel()
                        producer.result()
                        return
                    item = get.result()
                    n_events = await asyncio.to_thread(self._commit_range, item, loop, head, final)
                    if n_events is not None:
                        progress.events += n_events
                        snapshot = progress.snapshot(item.stop, final)
                        self._progress_done = snapshot.done
                        if self.progress is not None:
                            self.progress(snapshot)
            finally:
                producer.cancel()
                with contextlib.suppress(BaseException):
                    await producer
                try:
                    # The last range's COMMIT: done (and its error raised) before the connection is used again.
                    await asyncio.shield(asyncio.to_thread(self._wait_commit))
                finally:
                    self._checkpointer.detach()

    def _commit_range(self, item: _Range, loop: asyncio.AbstractEventLoop, head: int, final: int) -> int | None:
        """Worker thread: parse the range's reply and hand the logs to the producer, decode them
        (meanwhile the previous range's COMMIT finishes in its own thread: SQLite runs it without
        the GIL), then write the range and leave its COMMIT running (`_commit`). None: the node
        refused the range (the producer retries it)."""
        if item.body is None:
            assert item.logs is not None
            events = self.decoder.decode_all(item.logs)
        elif (raw := parse_logs(item.body)) is not None:  # the common case, without a dict per log
            _settle(loop, item.parsed, RangeSizer.measure(raw, item.start, item.stop, raw_block_number))
            events = self.decoder.decode_logs(raw)
        else:
            try:
                logs = parse_reply(item.body)
                if not isinstance(logs, list):
                    raise RpcError(-32603, f"eth_getLogs result is not a list: {str(logs)[:200]}")
            except (RpcError, RpcUnavailable) as exc:
                _settle(loop, item.parsed, exc)
                return None
            _settle(loop, item.parsed, RangeSizer.measure(logs, item.start, item.stop))
            events = self.decoder.decode_all(logs)
        check_order(events, item.start, item.stop)
        self._wait_commit()
        self.step.write(self.conn, events, [item.block], head, final, commit_with=self._commit_in_thread)
        return len(events)

    def _commit_in_thread(self, conn: Conn, committed: Callable[[], None]) -> None:
        self._commit = _Commit(conn, committed)

    def abandon(self) -> None:
        """After a failed step: wait out a COMMIT still running (its error is the step's, already
        reported) and roll back a transaction left open, so the next step starts clean."""
        self._wait_commit_quietly()
        with contextlib.suppress(StoreError):
            rollback(self.conn)

    def use(self, conn: Conn) -> None:
        """Write through `conn` from now on (the indexer's session was replaced after it was lost)."""
        self._wait_commit_quietly()
        self.conn = conn
        self._checkpointer = backend_of(conn).checkpointer(conn)

    def _wait_commit_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self._wait_commit()

    def restart(self) -> None:
        """This process (again) leads: the next backfill is a new one, with its own progress rates."""
        self._progress = None

    def _wait_commit(self) -> None:
        """Wait for the COMMIT left running by `_commit_range`; raise its error, if any."""
        commit, self._commit = self._commit, None
        if commit is not None:
            commit.wait()


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a backfill step runs (at most `max_ranges` ranges): a
    range makes a few tuples per log, all alive until the range is written, and the collector's
    default thresholds ran it hundreds of times per 10,000 logs, each pass over every object still
    alive (measured: a seventh of the worker's time); paused range by range instead, it collected
    each range's young objects at once between two ranges (10-20 ms a range, on the critical path).
    Reference counting still frees everything at once; cycles made meanwhile (by any thread) wait
    until the step ends. Nested or concurrent users leave it on if it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
