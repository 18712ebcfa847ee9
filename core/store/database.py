"""Which database the service runs on, and how its connections are opened.

A deployment names its database once (`AGENTLEDGER_DATABASE_URL`, or the SQLite file of `make run`);
every part that needs a connection of its own (the API's group committer, the outbox dispatcher,
the anchorer, the indexer, the scripts) opens it from the same `Database`, never from a file name,
so none of them knows which backend it runs on (core.store.backend)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.store.backend import POSTGRES_SCHEMES, Backend, Kind, backend_for, backend_of
from core.store.types import Conn, UnsupportedDatabase

__all__ = ["POSTGRES_SCHEMES", "Database", "Kind", "UnsupportedDatabase", "database_of", "kind_of", "open_database"]


@dataclass(frozen=True)
class Database:
    #: A SQLite file's path, or a postgresql:// URL.
    location: str

    @property
    def backend(self) -> Backend:
        return backend_for(self.location)

    @property
    def kind(self) -> Kind:
        return self.backend.kind

    def connect(self, *, durable: bool = True) -> Conn:
        """A new connection (the schema migrated first). durable=False is for writers whose rows are
        re-derivable (the indexer: everything it writes comes from the chain)."""
        return self.backend.connect(self.location, durable=durable)

    @property
    def redacted(self) -> str:
        """The location without a password, for logs and /healthz."""
        if self.kind == "sqlite" or "@" not in self.location:
            return self.location
        scheme, rest = self.location.split("://", 1)
        credentials, host = rest.rsplit("@", 1)
        return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"


def open_database(target: Database | Path | str) -> Database:
    """`target` as a Database: a path is a SQLite file, a postgresql:// URL a PostgreSQL database."""
    return target if isinstance(target, Database) else Database(str(target))


def database_of(conn: Conn) -> Database:
    """The database `conn` is connected to (for opening another connection to the same one)."""
    return Database(conn.filename)  # a PostgreSQL connection's filename is its URL


def kind_of(conn: Conn) -> Kind:
    """The backend `conn` belongs to."""
    return backend_of(conn).kind
