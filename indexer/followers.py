"""Final events to the features' followers (core.followers.Follower), once each, in chain order.

Events are decoded once, when their range or block is applied: a backfill range is final when it
is written, so its events go to the followers in the same transaction; events of unfinalized
blocks wait here in memory until their block is final (a reorg drops those above the common
ancestor). Only what this process never held in memory, the blocks between a follower's cursor and
the tip the indexer started from (a restart, or a follower added to an existing database), is
read back from the `events` table and decoded, once, here.

Each follower has a cursor (event_cursors) advanced in the step's transaction, so a crash at any
instant repeats nothing and skips nothing. Each event is applied in a savepoint of its own; one
that raises is logged and skipped (anyone can call the contracts with hostile values), never
allowed to stop the indexer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.followers import Follower
from core.store import Conn, projections, savepoint
from core.store.events import Event
from indexer.decode import decode_stored

log = logging.getLogger("agentledger.indexer")


class FinalEvents:
    def __init__(self, followers: Sequence[Follower], addresses: dict[str, str]) -> None:
        names = [f.name for f in followers]
        if len(names) != len(set(names)):
            raise ValueError(f"follower names must be unique: {names}")
        self.followers = list(followers)
        self.addresses = addresses
        self.skipped = 0  # events a follower could not apply (logged), for tests and health
        #: Decoded events of applied blocks not yet handed to every follower, in chain order.
        self._held: list[Event] = []
        #: Every event of a block above this one passed through memory (None: not started yet).
        self._memory_from: int | None = None

    def start(self, tip: int) -> None:
        """The indexer starts from `tip`: events above it will pass through `hold`."""
        if self._memory_from is None:
            self._memory_from = tip

    def reset(self) -> None:
        """Forget what is held in memory (an operator lifted a halt, perhaps dropping the index):
        the next start() reads anything needed back from the store."""
        self._held = []
        self._memory_from = None

    def rollback(self, ancestor: int) -> None:
        """A reorg rolled back every block above `ancestor`: forget their events."""
        self._held = [e for e in self._held if e.block_number <= ancestor]

    def deliver(self, conn: Conn, chain_id: int, final: int, fresh: Sequence[Event]) -> None:
        """In the step's transaction that applies `fresh` (in chain order): every follower gets the
        events of blocks up to `final` it has not had yet, and its cursor moves to `final`. Memory
        changes only in `committed`, once that transaction has committed."""
        if not self.followers:
            return
        assert self._memory_from is not None, "start() first"
        held = [*self._held, *fresh]
        for f in self.followers:
            done = projections.event_cursor(conn, f.name, chain_id)
            if done < final:
                if done < self._memory_from:  # never held in memory: read back what is final of it
                    upto = min(final, self._memory_from)
                    self._apply(conn, chain_id, f, self._stored(conn, chain_id, f, done + 1, upto))
                    done = upto
                self._apply(conn, chain_id, f, [e for e in held if done < e.block_number <= final])
                projections.set_event_cursor(conn, f.name, chain_id, final)
            # every step, not only when `final` moved: a step that catches up with the head is one too
            self._finalized(conn, chain_id, f, final)

    def committed(self, fresh: Sequence[Event], final: int) -> None:
        """The transaction of `deliver` committed: hold `fresh` until final, forget what is final."""
        if self.followers:
            self._held = [e for e in (*self._held, *fresh) if e.block_number > final]

    def _stored(self, conn: Conn, chain_id: int, f: Follower, low: int, high: int) -> list[Event]:
        names = sorted(f.contracts & set(self.addresses))
        return decode_stored(projections.stored_events(conn, chain_id, (low, -1), high, contracts=names))

    def _finalized(self, conn: Conn, chain_id: int, f: Follower, final: int) -> None:
        """A follower with a `finalized(conn, chain_id, final)` step (core.followers) runs it in each step's
        transaction once its events up to `final` are applied, in a savepoint: a failure is logged,
        never stops the indexer."""
        step = getattr(f, "finalized", None)
        if step is None:
            return
        try:
            with savepoint(conn, "follower_final"):
                step(conn, chain_id, final)
        except Exception:
            log.exception("%s: its step at final block %d failed; it runs again at the next", f.name, final)

    def _apply(self, conn: Conn, chain_id: int, f: Follower, events: Sequence[Event]) -> None:
        for event in events:
            if event.contract not in f.contracts:
                continue
            try:
                with savepoint(conn, "follower_event"):
                    f.apply(conn, chain_id, event)
            except Exception:
                self.skipped += 1
                log.exception("%s: %s %s:%d not applied; skipped", f.name, event.key, event.tx_hash, event.log_index)
