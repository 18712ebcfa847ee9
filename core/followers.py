"""What a feature's chain follower is: it acts on FINAL events of the contracts it names.

The indexer (indexer.followers) hands every installed follower the decoded events of each block
once it is final, in chain order, exactly once (a cursor per follower, advanced in the same
transaction), each event in a savepoint of its own: an event the follower cannot apply (anyone can
call the contracts with values of their choosing) is logged and skipped, never allowed to stop the
indexer. Final blocks never change, so what a follower writes is never rolled back.

A follower may also have `finalized(conn, chain_id, final)`: run in each step's transaction once
its events up to block `final` are applied (the checkpoint, sync_state, is already written: it
may read how far the indexer got), e.g. the order follower settles orders recorded from receipts
of blocks now final whose events never came. It must be cheap: it runs on every step.
"""

from __future__ import annotations

from typing import Protocol

from core.store import Conn
from core.store.events import Event


class Follower(Protocol):
    #: Its cursor's name (unique among followers).
    name: str
    #: The contracts whose events it is given (names as in the deployment).
    contracts: frozenset[str]

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None: ...
