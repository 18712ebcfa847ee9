"""/healthz's view of the indexer (api.health.indexer_view): when it is synced, behind or halted."""

from __future__ import annotations

from api.health import BEHIND_BLOCKS, STALLED_SECONDS, TipView, indexer_view
from core.indexing import Halt

NOW = 1_000_000.0


def _state(seen: int, latest: int, moved_ago: float, halt: Halt | None = None) -> str:
    tip = TipView(seen=seen, final=seen, moved_at=NOW - moved_ago, halt=halt)
    return str(indexer_view(tip, latest, None, NOW)["state"])


def test_a_few_blocks_behind_is_synced_while_the_checkpoint_moves() -> None:
    assert _state(100, 100, moved_ago=3600) == "synced"  # caught up on a quiet chain
    assert _state(100, 100 + BEHIND_BLOCKS, moved_ago=1) == "synced"  # following, a poll behind


def test_behind_past_the_bound_or_stalled_behind_is_not_synced() -> None:
    assert _state(100, 101 + BEHIND_BLOCKS, moved_ago=1) == "behind"
    # a few blocks behind and its checkpoint not moving: a stalled indexer (a frozen one said synced)
    assert _state(100, 100 + BEHIND_BLOCKS, moved_ago=STALLED_SECONDS + 1) == "behind"
    assert _state(100, 101, moved_ago=STALLED_SECONDS + 1) == "behind"


def test_a_halt_wins_and_a_missing_checkpoint_is_starting() -> None:
    assert _state(100, 100, moved_ago=1, halt=Halt("deep reorg", NOW)) == "halted"
    view = indexer_view(TipView(None, None, None, None), 5, None, NOW)
    assert view["state"] == "starting" and view["behind"] is None
