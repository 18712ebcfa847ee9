"""Exact sums of money in SQL: what a query writes (`exact_sum(x)`) and SQLite's aggregate behind it.

A column holds one amount: an int64 of micro-USDC (or, for a uint256 from the chain past int64, its
0x-hex TEXT on SQLite: core.store.types.Uint256Hex). A sum over many rows has no such bound: every earning
of the service, every payout to an account's agents. PostgreSQL's sum() of a BIGINT or NUMERIC is a
NUMERIC, exact at any size; SQLite's sum() raises "integer overflow" past int64, and answers a lossy REAL
when a summed value is 0x-hex TEXT. Each backend runs `exact_sum` its way (core.store.sums.rows).
"""

from __future__ import annotations

import re
from functools import lru_cache

import apsw

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_EXACT_SUM = re.compile(r"\bexact_sum\(", re.IGNORECASE)


@lru_cache(maxsize=256)
def native(sql: str) -> str:
    """`sql` with the database's own sum() for exact_sum()."""
    return _EXACT_SUM.sub("sum(", sql)


class ExactSum:
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
