"""service.runtime.settle_heap: start-up's objects leave the collector's sight, the young generation
is collected less often, and cyclic garbage made afterwards is still collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from service.runtime import YOUNG_GENERATION_THRESHOLD, settle_heap


@pytest.fixture()
def restored_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_settle_heap_freezes_start_up_and_raises_the_young_threshold(restored_gc: None) -> None:
    older = gc.get_threshold()[1:]
    alive = _Node()
    settle_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, *older)
    assert all(alive is not o for o in gc.get_objects())  # frozen: not in any generation the collector scans
    garbage = _Node()
    ref = weakref.ref(garbage)
    del garbage
    gc.collect()
    assert ref() is None  # a cycle made after start-up is still freed
