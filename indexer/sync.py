"""Following the chain into SQLite: the loop around historical sync (indexer.historical: backfill
to the final block with adaptive eth_getLogs ranges) and realtime sync (indexer.realtime: block by
block above it, hash-linked for reorg detection), with rollback to the common ancestor on a reorg
and the features' followers fed final events (indexer.followers). Each phase's step is one
transaction, written once for both (indexer.step).

Any number of processes may run an indexer on one database; one leads (the lease
"indexer:<chain_id>", core.leases) and follows the chain, the others wait and retry every
`follower_poll` seconds. Every write transaction of the indexer is fenced on the lease, so a leader
that stalled past its lease's expiry (and was replaced) writes nothing when it wakes up. A process
that gains the lease starts from the stored checkpoint with nothing held in memory.

Nothing ends the loop but `stop`: a node or a database out of reach is waited out (the database's
session is opened again once it answers: a server restart or failover ends it), a failed step is rolled
back and tried again, and the lease is contended for again afterwards, so an outage of either never
leaves an index frozen behind a live process. `health` tells whether the last round worked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from core.followers import Follower
from core.leases import Lease, LostLease, indexer_lease_name
from core.store import Conn, database_of, projections, reorg, transaction, tune_for_indexing, unavailable
from core.store.backend import backend_of
from core.store.health import PartHealth
from indexer.decode import Decoder
from indexer.fetch import RangeSizer
from indexer.followers import FinalEvents
from indexer.historical import Historical
from indexer.progress import Snapshot
from indexer.realtime import Realtime
from indexer.rpc import RpcClient, RpcError, RpcUnavailable
from indexer.status import Status
from indexer.step import Step

__all__ = ["DeepReorg", "Halted", "Indexer", "Status"]

log = logging.getLogger("agentledger.indexer")

#: Seconds a leader's lease lasts without renewal: another process takes over this long after the
#: leader stops (at once when it died on this host: core.leases).
LEADER_TTL = 5.0
#: A leader renews at least this often (real seconds) while idle; every fenced write also renews it.
RENEW_EVERY = 1.0
#: Seconds between two rounds while the database is out of reach (its outage ends by itself: a quick
#: retry catches up as soon as it is back, where the backoff of other failures would wait up to a minute).
UNAVAILABLE_RETRY = 0.5


class DeepReorg(RuntimeError):
    """The chain reorganised below the block we treated as final: needs an operator."""


class Halted(DeepReorg):
    """The database says this chain's indexer is halted (by this process earlier, or another one)."""


class Indexer:
    def __init__(
        self,
        conn: Conn,
        rpc: RpcClient,
        *,
        chain_id: int,
        addresses: dict[str, str],
        start_block: int,
        confirmations: int = 0,
        use_finalized_tag: bool = True,
        realtime_batch: int = 200,
        poll_interval: float = 0.1,
        halt_poll: float = 1.0,
        followers: Sequence[Follower] = (),
        progress: Callable[[Snapshot], None] | None = None,
        clock: Callable[[], float] = time.time,
        lease: Lease | None = None,
        follower_poll: float = 1.0,
    ) -> None:
        self.conn = conn
        tune_for_indexing(conn)
        #: Leadership: only the holder of this lease follows the chain (its `ttl` in seconds of `clock`).
        self.lease = lease or Lease(indexer_lease_name(chain_id), LEADER_TTL, clock=clock)
        self.follower_poll = follower_poll
        self._renewed_at = 0.0  # time.monotonic() of the last renewal
        self.rpc = rpc
        self.chain_id = chain_id
        self.decoder = Decoder(addresses)
        self.start_block = start_block
        self.confirmations = confirmations
        self.use_finalized_tag = use_finalized_tag
        self.poll_interval = poll_interval
        self.halt_poll = halt_poll
        self.clock = clock
        self.sizer = RangeSizer()
        self.status = Status()
        #: Whether the last round worked (a failing database or step makes it fail; the node's outages,
        #: which the status shows, do not).
        self.health = PartHealth()
        self.finals = FinalEvents(followers, addresses)
        step = Step(chain_id=chain_id, finals=self.finals, status=self.status, clock=clock, fence=self.fence)
        self.historical = Historical(conn, rpc, self.decoder, step=step, sizer=self.sizer, progress=progress)
        self.realtime = Realtime(conn, rpc, self.decoder, step=step, sizer=self.sizer, batch=realtime_batch)

    # ---- public ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Follow the chain until `stop` is set. Outages of the node and of the database are waited out,
        never fatal (module docstring)."""
        stop = stop or asyncio.Event()
        failures = 0  # consecutive rounds that failed for another reason than the node
        while not stop.is_set():
            try:
                delay = await self._round(stop)
                failures = 0
            except Exception as exc:  # e.g. the database restarting, or the file locked past the busy timeout
                # Never end the task over one failed round (in `make run` the API would go on serving a
                # frozen index): roll back whatever it left open, reconnect if the session is gone, back
                # off, try again.
                failures += 1
                self.health.failed(exc)
                self.status.last_error = f"{type(exc).__name__}: {exc}"
                await asyncio.to_thread(self._recover)
                if unavailable(exc):
                    delay = UNAVAILABLE_RETRY
                    log.warning("indexer: the database is out of reach (%s); retrying in %g s", exc, delay)
                else:
                    delay = min(60.0, 2.0 ** (failures - 1))
                    log.exception("indexer step failed; retrying in %g s", delay)
            if delay:
                await _sleep_or_stop(stop, delay)

    async def _round(self, stop: asyncio.Event) -> float:
        """One step and what its outcome asks for; the seconds to wait before the next (0: at once)."""
        try:
            advanced = await self.step()
        except LostLease as exc:  # stalled past the lease and replaced: the step wrote nothing
            self._step_down(str(exc))
            return self.follower_poll
        except RpcUnavailable as exc:
            self.health.ok()  # the database answered; /healthz shows the node's state
            self.status.node_ok = False
            self.status.last_error = str(exc)
            log.warning("node unavailable: %s; waiting", exc)
            return 1.0 + self.poll_interval
        except RpcError as exc:  # e.g. "header not found" from a load-balanced node: retry later
            self.health.ok()
            self.status.last_error = str(exc)
            log.warning("node error: %s; retrying", exc)
            return 1.0 + self.poll_interval
        except DeepReorg as exc:
            # Halted, not ended: the halt is stored (every process sharing the file sees it, and the
            # API refuses money-moving calls), and we wait here for an operator to lift it
            # (python -m scripts.indexer_admin resume | reindex), then carry on from the checkpoint.
            try:
                await asyncio.to_thread(self._halt, str(exc))
            except LostLease as lost:
                self._step_down(str(lost))
                return 0.0
            self.health.ok()
            await self._wait_for_operator(stop)
            return 0.0
        self.health.ok()
        if not self.status.leader:  # another process follows the chain: ask again later
            return self.follower_poll
        self.status.last_error = ""
        return 0.0 if advanced else self.poll_interval

    async def run_until(self, block: int, timeout: float = 60.0) -> None:
        """Step until `block` is applied (tests and the backfill command)."""
        deadline = time.monotonic() + timeout
        if await self._lead():  # else: another process leads; step() waits for the lease
            await self._load_tip()
        while self.status.seen < block:
            if time.monotonic() > deadline:
                raise TimeoutError(f"indexer did not reach block {block} (at {self.status.seen})")
            if not await self.step():
                await asyncio.sleep(self.poll_interval if self.status.leader else self.follower_poll)

    async def step(self) -> bool:
        """One round: take or renew the leadership, check the head and our tip, then apply one range.
        True if it advanced; False at once while another process leads (status.leader False).
        Raises Halted while the database says this indexer is halted, LostLease when a write found
        the leadership taken over (nothing of the step is written then)."""
        if not await self._lead():
            # the leader's, for status and run_until
            applied = await asyncio.to_thread(projections.get_tip, self.conn, self.chain_id)
            self.status.seen = applied[0] if applied is not None else self.status.seen
            return False
        halt = await asyncio.to_thread(projections.get_halt, self.conn, self.chain_id)
        if halt is not None:
            raise Halted(halt[0])
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
            await self.historical.run(number, final, head)
            return True
        if number < head:
            if not await self.realtime.run(number, tip_hash, head, final):
                await self._handle_reorg(number)
            return True
        return False

    # ---- leadership ----------------------------------------------------------------------------

    def fence(self, conn: Conn) -> None:
        """In each write transaction of the indexer: raise LostLease unless this process still leads
        (the lease renewed meanwhile)."""
        self.lease.fence(conn)
        self._renewed_at = time.monotonic()

    async def _lead(self) -> bool:
        """Take or renew the lease (at most every RENEW_EVERY s while held); on gaining it, start from
        the stored checkpoint with nothing held in memory (another leader may have moved it)."""
        if self.lease.held and time.monotonic() - self._renewed_at < RENEW_EVERY:
            return True
        before = self.lease.term
        held = await asyncio.to_thread(self.lease.acquire, self.conn)
        if held:
            self._renewed_at = time.monotonic()
            if self.lease.term != before:
                self.finals.reset()
                self.historical.restart()
                if self.status.leader or before is not None:
                    log.warning("indexer lease regained (term %s): following from the checkpoint", self.lease.term)
                else:
                    log.info("indexer leads chain %d (lease term %s)", self.chain_id, self.lease.term)
        elif self.status.leader:
            self._step_down(f"lease {self.lease.name!r} held by another process")
        self.status.leader = held
        return held

    def _recover(self) -> None:
        """After a failed step (in a thread): roll back what it left open; when the database's session is
        gone, open a new one (a server that is still down leaves the old one to try again next round).
        The lease is renewed or contended for again by the next step: while the session was gone it may
        have expired and passed to another process."""
        self.historical.abandon()
        if not backend_of(self.conn).broken(self.conn):
            return
        try:
            conn = database_of(self.conn).connect(durable=False)
        except Exception as exc:  # still out of reach: the next round tries again
            log.debug("indexer: reconnecting failed: %s", exc)
            return
        old, self.conn = self.conn, conn
        tune_for_indexing(conn)
        self.historical.use(conn)
        self.realtime.conn = conn
        self._renewed_at = 0.0  # the lease is checked at the next step, whatever its last renewal
        self.health.recoveries += 1
        log.warning("indexer: reconnected to the database; following from the checkpoint")
        old.close()

    def _step_down(self, reason: str) -> None:
        """Leadership lost: roll back what a step left open; the next leader starts from the checkpoint."""
        self.historical.abandon()
        self.lease.lost()
        self.status.leader = False
        log.warning("indexer no longer leads: %s; following again once the lease is free", reason)

    # ---- halting ---------------------------------------------------------------------------

    def _halt(self, reason: str) -> None:
        with transaction(self.conn):
            self.fence(self.conn)
            projections.set_halt(self.conn, self.chain_id, reason, self.clock())
        found = projections.get_halt(self.conn, self.chain_id)
        self.status.halted = found[0] if found else reason
        log.critical(
            "indexer halted, waiting for an operator (python -m scripts.indexer_admin): %s", self.status.halted
        )

    async def _wait_for_operator(self, stop: asyncio.Event) -> None:
        """Until the halt is lifted (resume: cleared; reindex: the checkpoint itself is gone) or `stop`."""
        while not stop.is_set():
            await _sleep_or_stop(stop, self.halt_poll)
            if await asyncio.to_thread(projections.get_halt, self.conn, self.chain_id) is None:
                log.warning("indexer halt lifted by an operator: following the chain again from the checkpoint")
                self.status.halted = ""
                self.finals.reset()  # held events may belong to what the operator threw away
                return

    # ---- tip ------------------------------------------------------------------------------

    async def _load_tip(self) -> tuple[int, str]:
        tip = await asyncio.to_thread(projections.get_tip, self.conn, self.chain_id)
        if tip is not None:
            self.status.seen = tip[0]
            self.finals.start(tip[0])
            return tip[0], tip[1]
        # First start: the checkpoint is the block before the deployment.
        number = max(self.start_block - 1, 0)
        block = await self.rpc.call("eth_getBlockByNumber", [hex(number), False])
        # In a thread, as every other write of the indexer: waiting for the write lock on the loop would
        # stop the writer holding it (the API's committer, whose items run on the same loop) from ever
        # committing, until the busy timeout failed this step.
        await asyncio.to_thread(self._store_first_tip, number, block)
        self.status.seen = number
        self.finals.start(number)
        return number, block["hash"]

    def _store_first_tip(self, number: int, block: dict[str, Any]) -> None:
        with transaction(self.conn):
            self.fence(self.conn)
            projections.set_tip(self.conn, self.chain_id, number, block["hash"], number, number, self.clock())
            projections.add_blocks(
                self.conn, self.chain_id, [(number, block["hash"], block["parentHash"], int(block["timestamp"], 16))]
            )

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
            self.fence(self.conn)
            undone = reorg.rollback_to(self.conn, self.chain_id, ancestor)
            row = projections.get_tip(self.conn, self.chain_id)
            head, final = (row[2], min(row[3], ancestor)) if row else (ancestor, ancestor)
            projections.set_tip(self.conn, self.chain_id, ancestor, ancestor_hash, head, final, self.clock())
        self.finals.rollback(ancestor)
        self.status.seen = ancestor
        self.status.reorgs += 1
        self.status.last_reorg_depth = tip - ancestor
        log.warning("reorg: rolled back %d blocks to %d (%d writes undone)", tip - ancestor, ancestor, undone)


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
