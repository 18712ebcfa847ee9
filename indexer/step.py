"""One indexer step: the transaction both phases write, indexer.historical for a range of final blocks
and indexer.realtime for a batch of new blocks (the newest maybe above the final block).

It holds, in this order: the leadership fence; the events and their projections (those of final blocks
unjournaled, in one batch; each later block journaled under its own number, so a reorg undoes exactly
what it wrote); the blocks' hashes (where a reorg's common ancestor is found); the checkpoint; the undo
journal pruned up to the final block; the final events to the followers (indexer.followers), whose writes
are never journaled. Only once it has committed do the followers' memory and the status move. So a
process killed at any instant resumes exactly where the last commit left it: nothing missing, nothing twice.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from core.store import Conn, begin, commit, projections, reorg, rollback
from core.store.events import Event
from indexer.followers import FinalEvents
from indexer.status import Status

_block_number = attrgetter("block_number")


def finish(conn: Conn, committed: Callable[[], None]) -> None:
    """COMMIT now, then `committed()`. A COMMIT that raises has ended its transaction (core.store.commit)."""
    commit(conn)
    committed()


class Step:
    """The step transaction of one chain's indexer (module docstring), shared by its two phases."""

    def __init__(
        self,
        *,
        chain_id: int,
        finals: FinalEvents,
        status: Status,
        clock: Callable[[], float],
        fence: Callable[[Conn], None],
    ) -> None:
        self.chain_id, self.finals, self.status, self.clock = chain_id, finals, status, clock
        #: Run first in each step's transaction: raises (and the step is rolled back) unless this process leads.
        self.fence = fence

    def write(
        self,
        conn: Conn,
        events: Sequence[Event],
        headers: Sequence[dict[str, Any]],
        head: int,
        final: int,
        commit_with: Callable[[Conn, Callable[[], None]], None] = finish,
    ) -> None:
        """Apply `events` (in chain order) of the blocks `headers` (the node's, in order; the last one is
        the new checkpoint) in one transaction, and hand it to `commit_with` with what to run once it has
        committed (default: COMMIT now). A failure before that rolls it back and raises."""
        begin(conn)
        try:
            self.fence(conn)
            last = headers[-1]
            end = int(last["number"], 16)
            fin = min(final, end)
            apply_in_order(conn, self.chain_id, events, fin)
            blocks = [(int(h["number"], 16), h["hash"], h["parentHash"], int(h["timestamp"], 16)) for h in headers]
            projections.add_blocks(conn, self.chain_id, blocks)
            projections.set_tip(conn, self.chain_id, end, last["hash"], head, fin, self.clock())
            reorg.prune(conn, self.chain_id, fin)
            self.finals.deliver(conn, self.chain_id, fin, events)
        except BaseException:
            rollback(conn)
            raise
        commit_with(conn, lambda: self._committed(events, end, fin))

    def _committed(self, events: Sequence[Event], end: int, final: int) -> None:
        self.finals.committed(events, final)
        self.status.seen = end
        self.status.final = final
        self.status.events_applied += len(events)


def apply_in_order(conn: Conn, chain_id: int, events: Sequence[Event], final: int) -> None:
    """Record and project `events`: those of blocks up to `final` in one batch, unjournaled (a final block
    never changes); those of each later block under its own number in the reorg journal, which is off
    again afterwards."""
    split = bisect_right(events, final, key=_block_number)
    reorg.set_block(conn, None)
    if split:
        projections.apply_events(conn, chain_id, events[:split])
    for number, block_events in itertools.groupby(events[split:], key=_block_number):
        reorg.set_block(conn, number)
        projections.apply_events(conn, chain_id, list(block_events))
    if split < len(events):
        reorg.set_block(conn, None)
