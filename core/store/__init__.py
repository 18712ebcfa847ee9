"""The store: all SQL lives in this package, written once for both databases (SQLite through apsw,
PostgreSQL through psycopg); what differs between them is core.store.backend's protocol, chosen once
where the database is opened, so the indexer and the API never know which one runs underneath."""

from core.store.database import Database, UnsupportedDatabase, database_of, kind_of, open_database
from core.store.leases import LostLease
from core.store.process_lock import ProcessLock
from core.store.serialization import lock
from core.store.sqlite import connect
from core.store.transactions import (
    begin,
    commit,
    in_transaction,
    read_snapshot,
    rollback,
    savepoint,
    transaction,
    tune_for_indexing,
)
from core.store.types import Conn, ConstraintViolation, DatabaseUnavailable, StoreError, unavailable

__all__ = [
    "Conn",
    "ConstraintViolation",
    "Database",
    "DatabaseUnavailable",
    "LostLease",
    "ProcessLock",
    "StoreError",
    "UnsupportedDatabase",
    "begin",
    "commit",
    "connect",
    "database_of",
    "in_transaction",
    "kind_of",
    "lock",
    "open_database",
    "read_snapshot",
    "rollback",
    "savepoint",
    "transaction",
    "tune_for_indexing",
    "unavailable",
]
