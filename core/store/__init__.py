"""The store (SQLite through apsw, WAL). All SQL lives in this package, so another backend can be
added behind the same functions without touching the indexer or the API handlers."""

from core.store.database import Database, UnsupportedDatabase, database_of, kind_of, open_database
from core.store.db import connect, read_snapshot, transaction
from core.store.locks import for_update, lock
from core.store.mutex import ProcessLock
from core.store.types import Conn, ConstraintViolation, StoreError

__all__ = [
    "Conn",
    "ConstraintViolation",
    "Database",
    "ProcessLock",
    "StoreError",
    "UnsupportedDatabase",
    "connect",
    "database_of",
    "for_update",
    "kind_of",
    "lock",
    "open_database",
    "read_snapshot",
    "transaction",
]
