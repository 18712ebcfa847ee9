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
"""An open connection to the store: SQLite through apsw, or the PostgreSQL backend's connection (core.store.pg), which
offers the same surface (execute, executemany, changes, total_changes, in_transaction, close). apsw is
untyped, so this is Any to mypy either way."""

StoreError: TypeAlias = apsw.Error
"""The base of every error the store's database raises (busy, I/O, constraint, ...), on both backends."""

ConstraintViolation: TypeAlias = apsw.ConstraintError
"""A write refused by a UNIQUE, CHECK, NOT NULL or FOREIGN KEY constraint, on both backends."""


class UnsupportedDatabase(ValueError):
    """A connection or location of a kind this build does not know."""


class DatabaseUnavailable(apsw.Error):
    """The database cannot be reached or refuses work for now (the server restarting or shutting down, a
    connection lost or refused, a lock or statement past its time limit, every pooled connection busy
    past the wait): nothing of the transaction was committed, or its outcome is known to be a rollback,
    and the same work may succeed later. The API answers it 503 `database_unavailable` with Retry-After."""


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


class PostgresUnavailable(PostgresError, DatabaseUnavailable):
    """A PostgreSQL error of the connection or the server's state (SQLSTATE classes 08 and 57P, 53300,
    55P03 lock_timeout, 57014 statement_timeout, 25P03 idle_in_transaction timeout, or a closed session)."""


class CommitOutcomeUnknown(PostgresUnavailable):
    """The session was lost after COMMIT was sent and the server could not say in time whether the
    transaction committed: a retry with the same Idempotency-Key replays it if it did."""


def unavailable(exc: BaseException) -> bool:
    """Is `exc` the database being out of reach for now (either backend: SQLite's "database is locked"
    past the busy timeout, PostgreSQL's DatabaseUnavailable)?"""
    return isinstance(exc, (DatabaseUnavailable, apsw.BusyError))


class Uint256Hex(str):
    """A uint256 past int64 as SQLite keeps it: 0x-hex TEXT in an INTEGER column (an INTEGER column
    would turn a larger number into a lossy REAL). PostgreSQL stores the number itself (NUMERIC(78, 0)):
    its connection binds this class as that number."""
