"""Following the chain into SQLite: historical backfill up to the final block with adaptive
eth_getLogs ranges, then block-by-block realtime following above it with a hash-linked window
for reorg detection and rollback to the common ancestor.

One step = one SQLite transaction holding the events, the projection writes, the subscribers'
writes and the new checkpoint, so a process killed at any instant resumes exactly where the last
commit left it, with nothing missing and nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from core.store import projections, reorg, transaction
from core.store.projections import Event, FinalityHook, Subscriber
from indexer.decode import Decoder, LogRow, in_chain_order, log_rows
from indexer.rpc import RpcClient, RpcError, RpcUnavailable, is_range_error, parse_reply, suggested_range

log = logging.getLogger("agentledger.indexer")

_CACHE_KIB = 64 * 1024


class DeepReorg(RuntimeError):
    """The chain reorganised below the block we treated as final: needs an operator."""


@dataclass
class Status:
    """What the API reports about the indexer."""

    head: int = 0
    seen: int = 0  # last block applied
    final: int = 0  # last block treated as final
    node_ok: bool = False
    node_syncing: bool = False
    last_error: str = ""
    reorgs: int = 0
    last_reorg_depth: int = 0
    halted: str = ""  # non-empty: stopped, needs an operator (e.g. a reorg below finality)
    updated_at: float = 0.0

    @property
    def behind(self) -> int:
        return max(0, self.head - self.seen)

    def as_dict(self) -> dict[str, Any]:
        return {
            "head": self.head,
            "seen": self.seen,
            "final": self.final,
            "behind": self.behind,
            "nodeOk": self.node_ok,
            "nodeSyncing": self.node_syncing,
            "reorgs": self.reorgs,
            "lastReorgDepth": self.last_reorg_depth,
            "lastError": self.last_error,
            "halted": self.halted,
        }


def _block_of(log: dict[str, Any]) -> int:
    return int(log["blockNumber"], 16)


def _row_block_of(row: LogRow) -> int:
    return int(row[4], 16)


@dataclass
class RangeSizer:
    """eth_getLogs range that grows on success and shrinks on "too many results" or timeouts."""

    size: int = 16  # small first: unknown density; it aims at target_logs after each range
    minimum: int = 1
    maximum: int = 100_000
    target_logs: int = 10_000

    def success(self, n_logs: int, tail_logs: int = 0, tail_blocks: int = 0) -> None:
        """Aim the next range at `target_logs` from this range's density, at most doubling. With a
        tail (the last `tail_blocks` blocks held `tail_logs` logs), aim by the denser of the two: a
        history that turns dense mid-range (a quiet deploy, then traffic) must not send the next
        range six times past the target, which would also leave the backfill one huge step."""
        aimed = self.size * self.target_logs // max(n_logs, 1)
        if tail_blocks > 0 and tail_logs > 0:
            aimed = min(aimed, tail_blocks * self.target_logs // tail_logs)
        self.size = max(self.minimum, min(self.size * 2, aimed, self.maximum))

    @staticmethod
    def measure(
        logs: Sequence[Any], start: int, stop: int, block_of: Callable[[Any], int] = _block_of
    ) -> tuple[int, int, int]:
        """(logs, logs in the range's last quarter, blocks in that quarter) for the logs of
        [start, stop], sorted by block as nodes return them; reads only the tail's block numbers."""
        tail_from = stop - (stop - start + 1) // 4
        k = len(logs)
        while k and block_of(logs[k - 1]) >= tail_from:
            k -= 1
        return len(logs), len(logs) - k, stop - tail_from + 1

    def observe(self, logs: Sequence[Any], start: int, stop: int, block_of: Callable[[Any], int] = _block_of) -> None:
        """`success` for the logs of [start, stop], with the last quarter as the tail."""
        self.success(*self.measure(logs, start, stop, block_of))

    def too_large(self, suggested: int | None = None) -> None:
        self.size = max(self.minimum, suggested if suggested else self.size // 2)


@dataclass
class Progress:
    """Backfill progress for the command line: blocks/s, events/s and ETA."""

    start_block: int
    started: float = field(default_factory=time.monotonic)
    events: int = 0
    last_print: float = 0.0

    def line(self, current: int, target: int) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        blocks = current - self.start_block
        bps = blocks / elapsed
        eta = (target - current) / bps if bps > 0 else float("inf")
        return (
            f"block {current}/{target} ({blocks / max(target - self.start_block, 1):.0%}) "
            f"{bps:,.0f} blocks/s {self.events / elapsed:,.0f} events/s ETA {eta:,.0f}s"
        )


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
    """A COMMIT in its own thread, so that the next range is parsed and decoded meanwhile (SQLite
    writes the WAL, and checkpoints it, without holding the GIL). The transaction was opened and
    filled by the caller; on failure it is rolled back and `wait` raises the error."""

    def __init__(self, conn: apsw.Connection, committed: Callable[[], None]) -> None:
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(conn, committed), name="indexer-commit", daemon=True)
        self._thread.start()

    def _run(self, conn: apsw.Connection, committed: Callable[[], None]) -> None:
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            self.error = exc
            with contextlib.suppress(apsw.Error):
                conn.execute("ROLLBACK")
            return
        committed()

    def wait(self) -> None:
        self._thread.join()
        if self.error is not None:
            raise self.error


class Indexer:
    def __init__(
        self,
        conn: apsw.Connection,
        rpc: RpcClient,
        *,
        chain_id: int,
        addresses: dict[str, str],
        start_block: int,
        confirmations: int = 0,
        use_finalized_tag: bool = True,
        realtime_batch: int = 200,
        poll_interval: float = 0.1,
        subscribers: dict[str, list[Subscriber]] | None = None,
        finality_hooks: list[FinalityHook] | None = None,
        progress: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.conn = conn
        # A page cache of up to 64 MiB on the indexer's connection (SQLite's default is 2 MiB): each
        # event lands at a random place in the events index (unique on the tx hash), and with the
        # default cache those index pages are read back from the file over and over; about a
        # third of the backfill's insert time.
        conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        self.rpc = rpc
        self.chain_id = chain_id
        self.decoder = Decoder(addresses)
        self.start_block = start_block
        self.confirmations = confirmations
        self.use_finalized_tag = use_finalized_tag
        self.realtime_batch = realtime_batch
        self.poll_interval = poll_interval
        self.subscribers = subscribers or {}
        self.finality_hooks = finality_hooks or []
        self.progress = progress
        self.clock = clock
        self.sizer = RangeSizer()
        self.status = Status()
        self._progress: Progress | None = None
        self._commit: _Commit | None = None  # a backfill range's COMMIT still running

    # ---- public ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Follow the chain until `stop` is set. Node outages are waited out, never fatal."""
        stop = stop or asyncio.Event()
        failures = 0  # consecutive steps that failed for another reason than the node
        while not stop.is_set():
            try:
                advanced = await self.step()
                self.status.last_error = ""
                failures = 0
            except RpcUnavailable as exc:
                self.status.node_ok = False
                self.status.last_error = str(exc)
                log.warning("node unavailable: %s; waiting", exc)
                advanced = False
                await _sleep_or_stop(stop, 1.0)
            except RpcError as exc:  # e.g. "header not found" from a load-balanced node: retry later
                self.status.last_error = str(exc)
                log.warning("node error: %s; retrying", exc)
                advanced = False
                await _sleep_or_stop(stop, 1.0)
            except DeepReorg as exc:
                self.status.halted = str(exc)
                log.critical("%s", exc)
                raise
            except Exception as exc:  # e.g. the file locked by another writer past the busy timeout
                # Never end the task over one failed step (in `make run` the API would go on serving a
                # frozen index): roll back whatever it left open, back off, try again.
                failures += 1
                self._abandon_transaction()
                self.status.last_error = f"{type(exc).__name__}: {exc}"
                delay = min(60.0, 2.0 ** (failures - 1))
                log.exception("indexer step failed; retrying in %g s", delay)
                advanced = False
                await _sleep_or_stop(stop, delay)
            if not advanced:
                await _sleep_or_stop(stop, self.poll_interval)

    async def run_until(self, block: int, timeout: float = 60.0) -> None:
        """Step until `block` is applied (tests and the backfill command)."""
        deadline = time.monotonic() + timeout
        await self._load_tip()
        while self.status.seen < block:
            if time.monotonic() > deadline:
                raise TimeoutError(f"indexer did not reach block {block} (at {self.status.seen})")
            if not await self.step():
                await asyncio.sleep(self.poll_interval)

    async def step(self) -> bool:
        """One round: check the head and our tip, then apply one range. True if it advanced."""
        tip = await self._load_tip()
        number, tip_hash = tip
        head_hex, final_block, tip_block, syncing = await self.rpc.batch(
            [
                ("eth_blockNumber", []),
                ("eth_getBlockByNumber", ["finalized", False]),
                ("eth_getBlockByNumber", [hex(number), False]),
                ("eth_syncing", []),
            ]
        )
        if isinstance(head_hex, RpcError):
            raise head_hex
        head = int(head_hex, 16)
        self.status.node_ok = True
        self.status.head = head
        self.status.node_syncing = bool(syncing) and not isinstance(syncing, RpcError)
        if self.status.node_syncing:
            return False  # a syncing node is not a reorg: wait
        final = head - self.confirmations
        if self.use_finalized_tag and isinstance(final_block, dict):
            final = int(final_block["number"], 16)
        final = max(min(final, head), 0)
        self.status.final = max(self.status.final, min(final, number))
        if head < number:
            return False  # the head went backwards (or a lagging node): wait, roll nothing back
        if not isinstance(tip_block, dict) or tip_block["hash"] != tip_hash:
            await self._handle_reorg(number)
            return True
        if number < final:
            await self._historical(number, final, head)
            return True
        if number < head:
            await self._realtime(number, tip_hash, head, final)
            return True
        return False

    # ---- tip ------------------------------------------------------------------------------

    async def _load_tip(self) -> tuple[int, str]:
        tip = projections.get_tip(self.conn, self.chain_id)
        if tip is not None:
            self.status.seen = tip[0]
            return tip[0], tip[1]
        # First start: the checkpoint is the block before the deployment.
        number = max(self.start_block - 1, 0)
        block = await self.rpc.call("eth_getBlockByNumber", [hex(number), False])
        with transaction(self.conn):
            projections.set_tip(self.conn, self.chain_id, number, block["hash"], number, number, self.clock())
            projections.add_blocks(
                self.conn, self.chain_id, [(number, block["hash"], block["parentHash"], int(block["timestamp"], 16))]
            )
        self.status.seen = number
        return number, block["hash"]

    # ---- historical ----------------------------------------------------------------------------

    def _range_refused(self, exc: RpcError, start: int, stop: int) -> None:
        """Shrink below the span actually refused, and never grow back past it."""
        suggested = suggested_range(exc)
        size = suggested[1] - suggested[0] + 1 if suggested and suggested[0] == start else None
        refused = stop - start + 1
        self.sizer.size = min(self.sizer.size, refused)
        self.sizer.maximum = max(self.sizer.minimum, min(self.sizer.maximum, refused - 1))
        self.sizer.too_large(size if size and size < refused else None)
        log.info("eth_getLogs range too large at %d; now %d blocks", start, self.sizer.size)

    async def _logs_from_receipts(self, block: int) -> list[dict[str, Any]]:
        """Last resort for one block with more logs than the provider returns at once."""
        receipts = await self.rpc.call("eth_getBlockReceipts", [hex(block)])
        wanted = set(self.decoder.addresses)
        return [lg for r in receipts for lg in r["logs"] if lg["address"].lower() in wanted]

    async def _historical(self, number: int, final: int, head: int, max_ranges: int = 64) -> None:
        """Backfill towards `final`, one transaction per range, in chain order. The event loop
        fetches eth_getLogs replies unparsed; one worker thread parses, decodes and writes each
        range, and hands the parsed logs back before decoding, so the next range is sized from
        them and fetched meanwhile. Each range's COMMIT runs in a thread of its own while the
        next range is parsed and decoded: SQLite holds no GIL for the whole COMMIT, whereas
        writes in one thread and a parse in another would make every row wait for the GIL
        (apsw releases and retakes it around each step)."""
        if self._progress is None:
            self._progress = Progress(number)
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
                        await ready.put(_Range(start, stop, block, None, await self._logs_from_receipts(start), None))
                        start = stop + 1
                    else:
                        self._range_refused(exc, start, stop)
                    continue
                self.sizer.success(*measured)
                unreadable = 0
                start = stop + 1

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
                    self._print_progress(item.stop, final)
        finally:
            producer.cancel()
            with contextlib.suppress(BaseException):
                await producer
            # The last range's COMMIT: done (and its error raised) before the connection is used again.
            await asyncio.shield(asyncio.to_thread(self._wait_commit))

    def _commit_range(self, item: _Range, loop: asyncio.AbstractEventLoop, head: int, final: int) -> int | None:
        """Worker thread: parse the range's reply and hand the logs to the producer, decode them
        (meanwhile the previous range's COMMIT finishes in its own thread: SQLite runs it without
        the GIL), then write the range and leave its COMMIT running (`_commit`). None: the node
        refused the range (the producer retries it)."""
        with _no_cyclic_gc():
            return self._write_range(item, loop, head, final)

    def _write_range(self, item: _Range, loop: asyncio.AbstractEventLoop, head: int, final: int) -> int | None:
        if item.body is None:
            assert item.logs is not None
            events = self.decoder.decode_all(item.logs)
        elif (rows := log_rows(item.body)) is not None:  # the common shape, without a dict per log
            _settle(loop, item.parsed, RangeSizer.measure(rows, item.start, item.stop, _row_block_of))
            events = self.decoder.decode_rows(rows)
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
        _check_order(events, item.start, item.stop)
        self._wait_commit()
        stop, block, fin = item.stop, item.block, min(final, item.stop)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            reorg.set_block(self.conn, None)  # final blocks: nothing to journal
            projections.apply_events(self.conn, self.chain_id, events, self.subscribers)
            projections.add_blocks(
                self.conn, self.chain_id, [(stop, block["hash"], block["parentHash"], int(block["timestamp"], 16))]
            )
            projections.set_tip(self.conn, self.chain_id, stop, block["hash"], head, fin, self.clock())
            reorg.prune(self.conn, self.chain_id, fin)
            self._run_finality_hooks(fin)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

        def committed() -> None:
            self.status.seen = stop
            self.status.final = fin

        self._commit = _Commit(self.conn, committed)
        return len(events)

    def _abandon_transaction(self) -> None:
        """After a failed step: wait out a COMMIT still running (its error is the step's, already
        reported) and roll back a transaction left open, so the next step starts clean."""
        with contextlib.suppress(Exception):
            self._wait_commit()
        if not self.conn.getautocommit():
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")

    def _wait_commit(self) -> None:
        """Wait for the COMMIT left running by `_commit_range`; raise its error, if any."""
        commit, self._commit = self._commit, None
        if commit is not None:
            commit.wait()

    def _print_progress(self, stop: int, final: int) -> None:
        now = time.monotonic()
        if self.progress and self._progress and (now - self._progress.last_print > 1.0 or stop == final):
            self._progress.last_print = now
            self.progress(self._progress.line(stop, final))

    # ---- realtime ------------------------------------------------------------------------------

    async def _realtime(self, number: int, tip_hash: str, head: int, final: int) -> None:
        end = min(head, number + min(self.realtime_batch, self.sizer.size))
        calls: list[tuple[str, list[Any]]] = [
            ("eth_getBlockByNumber", [hex(n), False]) for n in range(number + 1, end + 1)
        ]
        calls.append(
            ("eth_getLogs", [{"fromBlock": hex(number + 1), "toBlock": hex(end), "address": self.decoder.addresses}])
        )
        replies = await self.rpc.batch(calls)
        logs_reply = replies[-1]
        if isinstance(logs_reply, RpcError) and is_range_error(logs_reply):
            if end == number + 1:
                replies[-1] = await self._logs_from_receipts(end)
            else:
                self._range_refused(logs_reply, number + 1, end)
                return
        for r in replies:
            if isinstance(r, RpcError):
                raise r
        headers: list[dict[str, Any]] = replies[:-1]
        logs: list[dict[str, Any]] = replies[-1]
        if any(h is None for h in headers):
            return  # the node moved under us; try again
        if headers[0]["parentHash"] != tip_hash:
            await self._handle_reorg(number)
            return
        for prev, cur in itertools.pairwise(headers):
            if cur["parentHash"] != prev["hash"]:
                return  # a reorg while we fetched: the next step sees it
        hashes = {int(h["number"], 16): h["hash"] for h in headers}
        if any(hashes.get(int(lg["blockNumber"], 16)) != lg["blockHash"] for lg in logs):
            return  # logs from another fork than the headers: refetch
        events = self.decoder.decode_all(logs)
        _check_order(events, number + 1, end)
        await asyncio.to_thread(self._commit_realtime, events, headers, head, final)

    def _commit_realtime(self, events: list[Event], headers: list[dict[str, Any]], head: int, final: int) -> None:
        by_block: dict[int, list[Event]] = {}
        for e in events:
            by_block.setdefault(e.block_number, []).append(e)
        last = headers[-1]
        end = int(last["number"], 16)
        with transaction(self.conn):
            for h in headers:
                n = int(h["number"], 16)
                block_events = by_block.get(n)
                if block_events:
                    reorg.set_block(self.conn, None if n <= final else n)
                    projections.apply_events(self.conn, self.chain_id, block_events, self.subscribers)
            reorg.set_block(self.conn, None)
            projections.add_blocks(
                self.conn,
                self.chain_id,
                [(int(h["number"], 16), h["hash"], h["parentHash"], int(h["timestamp"], 16)) for h in headers],
            )
            fin = min(final, end)
            projections.set_tip(self.conn, self.chain_id, end, last["hash"], head, fin, self.clock())
            reorg.prune(self.conn, self.chain_id, fin)
            self._run_finality_hooks(fin)
        self.status.seen = end
        self.status.final = min(final, end)

    def _run_finality_hooks(self, final: int) -> None:
        """Readers of final events (e.g. the order follower) act in the same transaction as the tip
        they see, outside the reorg journal: what they write is never rolled back, and it needs no
        rollback, because final blocks never change."""
        if not self.finality_hooks:
            return
        reorg.set_block(self.conn, None)
        for hook in self.finality_hooks:
            hook(self.conn, self.chain_id, final)

    # ---- reorgs --------------------------------------------------------------------------------

    async def _handle_reorg(self, number: int) -> None:
        """Our tip is not on the canonical chain: find the common ancestor and roll back to it."""
        lowest = projections.lowest_stored_block(self.conn, self.chain_id)
        if lowest is None:
            raise DeepReorg("no stored blocks to find a common ancestor")
        n = number
        while n >= lowest:
            low = max(lowest, n - 31)
            stored = projections.stored_hashes(self.conn, self.chain_id, low, n)
            replies = await self.rpc.batch([("eth_getBlockByNumber", [hex(k), False]) for k in range(n, low - 1, -1)])
            for k, block in zip(range(n, low - 1, -1), replies, strict=True):
                if isinstance(block, RpcError):
                    raise block
                if isinstance(block, dict) and stored.get(k) == block["hash"]:
                    await asyncio.to_thread(self._rollback, k, block["hash"], number)
                    return
            n = low - 1
        raise DeepReorg(f"reorg deeper than the stored window (below block {lowest}, which was final)")

    def _rollback(self, ancestor: int, ancestor_hash: str, tip: int) -> None:
        with transaction(self.conn):
            undone = reorg.rollback_to(self.conn, self.chain_id, ancestor)
            row = projections.get_tip(self.conn, self.chain_id)
            head, final = (row[2], min(row[3], ancestor)) if row else (ancestor, ancestor)
            projections.set_tip(self.conn, self.chain_id, ancestor, ancestor_hash, head, final, self.clock())
        self.status.seen = ancestor
        self.status.reorgs += 1
        self.status.last_reorg_depth = tip - ancestor
        log.warning("reorg: rolled back %d blocks to %d (%d writes undone)", tip - ancestor, ancestor, undone)


def _check_order(events: list[Event], start: int, stop: int) -> None:
    """Refuse a reply (the step fails and is fetched again) whose logs are not strictly in chain
    order inside [start, stop]: a repeated log would count a credit twice, a log from outside the
    range would be applied under the wrong checkpoint."""
    if events and not (start <= events[0].block_number and events[-1].block_number <= stop and in_chain_order(events)):
        raise RpcError(-32603, f"eth_getLogs reply for blocks {start}-{stop} is not in chain order")


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a range is built: it makes some five tuples per log,
    all alive until the range is written, and the collector's default thresholds ran it hundreds of
    times per 10,000 logs, each pass over every object still alive (measured: a seventh of the
    worker's time). Reference counting still frees everything at once; cycles made meanwhile (by
    any thread) wait until the range is written. Nested or concurrent users leave it on if it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
