"""The store (SQLite through apsw, WAL). All SQL lives in this package, so another backend can be
added behind the same functions without touching the indexer or the API handlers."""

from core.store.database import Database, UnsupportedDatabase, database_of, kind_of, open_database
from core.store.db import (
    begin,
    commit,
    connect,
    in_transaction,
    read_snapshot,
    rollback,
    savepoint,
    transaction,
    tune_for_indexing,
)
from core.store.leases import LostLease
from core.store.locks import for_update, lock
from core.store.mutex import ProcessLock
from core.store.types import Conn, ConstraintViolation, StoreError

__all__ = [
    "Conn",
    "ConstraintViolation",
    "Database",
    "LostLease",
    "ProcessLock",
    "StoreError",
    "UnsupportedDatabase",
    "begin",
    "commit",
    "connect",
    "database_of",
    "for_update",
    "in_transaction",
    "kind_of",
    "lock",
    "open_database",
    "read_snapshot",
    "rollback",
    "savepoint",
    "transaction",
    "tune_for_indexing",
]
