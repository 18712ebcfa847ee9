"""Sums of money that no number of rows can overflow, on either backend.

A column holds one amount: an int64 of micro-USDC (or, for a uint256 from the chain past int64, its
0x-hex TEXT on SQLite: core.store.types.Uint256Hex). A sum over many rows has no such bound: every
earning of the service, every payout to an account's agents. PostgreSQL's sum() of a BIGINT or NUMERIC
is a NUMERIC, exact at any size. SQLite's sum() raises "integer overflow" past int64, and answers a lossy
REAL when a summed value is 0x-hex TEXT.

So a store query that sums money writes `exact_sum(x)` and runs through `rows()`:
- PostgreSQL: `exact_sum` is its own sum();
- SQLite: first its native sum() (C speed; exact whenever the answer fits int64, i.e. always in
  practice); on an integer overflow, or a REAL in the answer, the same query again with the aggregate
  `exact_sum` that `install` puts on every SQLite connection: Python integers, exact at any size.
A query run here must therefore answer no REAL of its own (sums, counts and keys only). A sum past int64
comes back from SQLite as its decimal text: read every sum with int().
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import apsw

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_EXACT_SUM = re.compile(r"\bexact_sum\(", re.IGNORECASE)


class _ExactSum:
    """SQLite's aggregate exact_sum(x): NULL skipped, an INTEGER as is, 0x-hex TEXT as the uint256 it
    holds; the total an int while it fits int64, else its decimal text (SQLite has no wider integer)."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0

    def step(self, *values: apsw.SQLiteValue) -> None:
        (value,) = values  # exact_sum takes one argument (install)
        if value is None:
            return
        if isinstance(value, str):
            self.total += int(value, 16)
        elif isinstance(value, int):
            self.total += value
        else:  # a REAL or BLOB in a money column: never written by this project; no exact sum of it exists
            raise TypeError(f"exact_sum of a {type(value).__name__}")

    def final(self) -> int | str:
        return self.total if INT64_MIN <= self.total <= INT64_MAX else str(self.total)


def install(conn: apsw.Connection) -> None:
    """Give a SQLite connection the aggregate exact_sum (core.store.db.connect does, for every one)."""
    conn.create_aggregate_function("exact_sum", _ExactSum, 1, flags=apsw.SQLITE_DETERMINISTIC)


@lru_cache(maxsize=256)
def _native(sql: str) -> str:
    return _EXACT_SUM.sub("sum(", sql)


def rows(conn: apsw.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of `sql`, whose sums of money are written exact_sum(...) (module docstring)."""
    if not isinstance(conn, apsw.Connection):  # PostgreSQL (core.store.pg)
        return list(conn.execute(_native(sql), params).fetchall())
    try:
        fast: list[tuple[Any, ...]] = conn.execute(_native(sql), params).fetchall()
    except apsw.SQLError as exc:
        if "integer overflow" not in str(exc):
            raise
    else:
        if not any(type(v) is float for row in fast for v in row):
            return fast
    return list(conn.execute(sql, params).fetchall())
