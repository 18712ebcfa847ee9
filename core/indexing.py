"""What the rest of the service needs to know of the indexer: whether an operator must act.

A fork below the block the indexer treated as final halts it (indexer.sync): the projections can no
longer be trusted to be the chain's, so nothing that moves money on the strength of them may run.
The halt is stored with the checkpoint (sync_state), so every process sharing the database sees
it, whichever of them runs the indexer, and it outlives restarts until an operator resumes or
re-indexes (`python -m scripts.indexer_admin`, see the README).

`require_running` is the one check for every money-moving call that needs the indexer (checkout
complete, order complete, and any later one): 503 `indexer_halted` while halted.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ServiceError
from core.isotime import iso_utc
from core.store import Conn, projections

#: Seconds a client is told to wait before trying again (an operator has to act first).
RETRY_AFTER_SECONDS = 60


@dataclass(frozen=True)
class Halt:
    reason: str
    since: float


def halt_of(conn: Conn, chain_id: int) -> Halt | None:
    """The indexer's halt, if it is halted."""
    found = projections.get_halt(conn, chain_id)
    return None if found is None else Halt(*found)


def require_running(conn: Conn, chain_id: int) -> None:
    """503 indexer_halted while the indexer waits for an operator (nothing is written)."""
    halt = halt_of(conn, chain_id)
    if halt is not None:
        raise ServiceError(
            503,
            "indexer_halted",
            f"the chain indexer halted at {iso_utc(halt.since)} ({halt.reason}) and waits for an operator; "
            "calls that move money are refused until it is resumed or re-indexed",
            type_="service_error",
            replayable=False,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
