"""What the running indexer knows about itself (for logs, tests and the command line)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Status:
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
    events_applied: int = 0  # events committed by this process (a reorg's re-applied ones count again)
    leader: bool = False  # this process holds the indexer's lease and follows the chain

    @property
    def behind(self) -> int:
        return max(0, self.head - self.seen)
