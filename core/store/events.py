"""The decoded contract event: what the indexer decodes, the store records and projects, and the
features' followers act on. Its home is the store because its first fields are its `events` row."""

from __future__ import annotations

from typing import Any, NamedTuple


class Event(NamedTuple):
    """One decoded log (built by indexer.decode). A named tuple: the backfill builds 10,000s a second,
    and a tuple is the cheapest immutable record to build. The first eight fields are the columns of
    its `events` row, in order: the row is `event[:EVENT_COLUMNS]`, no second tuple per event."""

    block_number: int
    block_hash: str
    tx_hash: str
    log_index: int
    contract: str
    name: str
    topics: str  # as returned by the node, comma-separated
    data: str
    args: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.contract}.{self.name}"


EVENT_COLUMNS = 8
