"""Sums of money that no number of rows can overflow, on either backend (core.store.exact).

A store query that sums money writes `exact_sum(x)` and runs through `rows()`:
- PostgreSQL: `exact_sum` is its own sum();
- SQLite: first its native sum() (C speed; exact whenever the answer fits int64, i.e. always in
  practice); on an integer overflow, or a REAL in the answer, the same query again with the aggregate
  `exact_sum` every SQLite connection has: Python integers, exact at any size.
A query run here must therefore answer no REAL of its own (sums, counts and keys only). A sum past int64
comes back from SQLite as its decimal text: read every sum with int().
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.store.backend import backend_of
from core.store.exact import INT64_MAX, INT64_MIN
from core.store.types import Conn

__all__ = ["INT64_MAX", "INT64_MIN", "rows"]


def rows(conn: Conn, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of `sql`, whose sums of money are written exact_sum(...) (module docstring)."""
    return backend_of(conn).exact_rows(conn, sql, params)
