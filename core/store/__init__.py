"""The SQLite store (apsw, WAL). All SQL lives in this package, so another backend can be added
behind the same functions without touching the indexer or the API handlers."""

from core.store.db import connect, transaction

__all__ = ["connect", "transaction"]
