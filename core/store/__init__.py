"""The store (SQLite through apsw, WAL). All SQL lives in this package, so another backend can be
added behind the same functions without touching the indexer or the API handlers."""

from core.store.database import Database, UnsupportedDatabase, database_of, open_database
from core.store.db import (
    begin,
    commit,
    connect,
    in_transaction,
    rollback,
    savepoint,
    transaction,
    tune_for_indexing,
)
from core.store.leases import LostLease
from core.store.types import Conn, ConstraintViolation, StoreError

__all__ = [
    "Conn",
    "ConstraintViolation",
    "Database",
    "LostLease",
    "StoreError",
    "UnsupportedDatabase",
    "begin",
    "commit",
    "connect",
    "database_of",
    "in_transaction",
    "open_database",
    "rollback",
    "savepoint",
    "transaction",
    "tune_for_indexing",
]
