"""The service's figures as the operator reads them: the indexer's progress, the outbox's backlog and
the anchors of the audit log. The operator's dashboard shows them (core.dashboard.operator) and
/metrics reports them (api.metrics); they read the stores only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from core import indexing
from core.store import Conn
from core.store import audit as audit_store
from core.store import dashboard as store
from core.store import outbox as outbox_store
from core.transparency import explorer_tx_url

#: The indexer counts as behind when the head is more than this many blocks past what it applied
#: (here and in /healthz).
BEHIND_BLOCKS = 5


class IndexerStatus(Protocol):
    """The in-process indexer's own status (indexer.status.Status), when this process runs it."""

    head: int
    halted: str
    last_error: str
    node_ok: bool


@dataclass(frozen=True)
class Indexer:
    state: str  # starting, synced, behind, halted
    seen: int | None  # last block applied
    final: int | None
    head: int | None  # the node's head as last seen by the indexer (or this process's own indexer)
    lag: int | None
    updated_at: float | None
    halted: str
    last_error: str


def indexer(conn: Conn, chain_id: int, status: IndexerStatus | None = None) -> Indexer:
    """The indexer's progress as its checkpoint records it (whichever process indexes), with the
    in-process indexer's own head, halt and last error when this process runs it."""
    row = store.sync_state(conn, chain_id)
    halt = indexing.halt_of(conn, chain_id)  # stored with the checkpoint: seen whichever process indexes
    halted = halt.reason if halt is not None else status.halted if status is not None else ""
    error = status.last_error if status is not None else ""
    if row is None:
        return Indexer("halted" if halted else "starting", None, None, None, None, None, halted, error)
    head = max(row.head_number, status.head if status is not None else 0)
    lag = max(0, head - row.block_number)
    state = "halted" if halted else "behind" if lag > BEHIND_BLOCKS else "synced"
    return Indexer(state, row.block_number, row.finalized_number, head, lag, row.updated_at, halted, error)


@dataclass(frozen=True)
class Outbox:
    counts: store.OutboxCounts
    hosts: list[outbox_store.HostBacklog]
    dead: list[store.DeadLetter]


def outbox(conn: Conn, now: float, limit: int = 50) -> Outbox:
    return Outbox(
        store.outbox_counts(conn, now), outbox_store.hosts(conn, now)[:limit], store.dead_letters(conn, limit)
    )


@dataclass(frozen=True)
class AnchorView:
    anchor: audit_store.Anchor
    explorer_url: str | None  # Base / Base Sepolia: the block explorer's page of the anchor transaction


@dataclass(frozen=True)
class Anchors:
    log_size: int
    count: int  # checkpoints anchored
    anchored_size: int  # entries the latest one covers
    recent: list[AnchorView]  # newest first


def anchors(conn: Conn, chain_id: int, limit: int = 20) -> Anchors:
    latest = store.recent_anchors(conn, chain_id, limit)
    recent = [AnchorView(a, explorer_tx_url(chain_id, a.tx_hash)) for a in latest]
    return Anchors(
        store.audit_size(conn), store.anchor_count(conn, chain_id), latest[0].tree_size if latest else 0, recent
    )
