"""The names the rest of the project uses for the store's connection and its errors.

Only core.store knows which database library runs underneath (tests/unit/test_layering.py keeps it
so): a handler, feature or indexer module types a connection as `Conn` and catches `StoreError`,
never a library's own class.

Both backends raise under one base: the PostgreSQL backend's errors derive from apsw's (apsw's classes
cannot be given another base), so `except StoreError` and `except ConstraintViolation` hold on either."""

from __future__ import annotations

from typing import TypeAlias

import apsw

Conn: TypeAlias = apsw.Connection
"""An open connection to the store: SQLite through apsw, or core.store.pg's PostgresConnection, which
offers the same surface (execute, executemany, changes, total_changes, in_transaction, close). apsw is
untyped, so this is Any to mypy either way."""

StoreError: TypeAlias = apsw.Error
"""The base of every error the store's database raises (busy, I/O, constraint, ...), on both backends."""

ConstraintViolation: TypeAlias = apsw.ConstraintError
"""A write refused by a UNIQUE, CHECK, NOT NULL or FOREIGN KEY constraint, on both backends."""


class PostgresError(apsw.Error):
    """An error of the PostgreSQL backend (the psycopg error is its __cause__; `sqlstate` its code)."""

    def __init__(self, message: str, *, sqlstate: str = "") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class PostgresConstraintViolation(PostgresError, apsw.ConstraintError):
    """SQLSTATE class 23: unique, check, foreign key or not-null violation."""


class PostgresRetryable(PostgresError):
    """A deadlock (40P01) or serialization failure (40001): the whole transaction was rolled back and
    running it again may succeed."""


class Uint256Hex(str):
    """A uint256 past int64 as SQLite keeps it: 0x-hex TEXT in an INTEGER column (an INTEGER column
    would turn a larger number into a lossy REAL). PostgreSQL stores the number itself (NUMERIC(78, 0)):
    its connection binds this class as that number."""
