"""Which database the service runs on, and how its connections are opened.

A deployment names its database once (`AGENTLEDGER_DATABASE_URL`, or the SQLite file of `make run`);
every part that needs a connection of its own (the API's group committer, the outbox dispatcher,
the anchorer, the indexer, the scripts) opens it from the same `Database`, never from a file name,
so none of them knows which backend it runs on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import apsw

from core.store.db import connect
from core.store.types import Conn

if TYPE_CHECKING:
    from core.store.committer import GroupCommitter

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
Kind = Literal["sqlite", "postgresql"]


class UnsupportedDatabase(ValueError):
    """A connection of a kind this build does not know."""


@dataclass(frozen=True)
class Database:
    #: A SQLite file's path, or a postgresql:// URL.
    location: str

    @property
    def kind(self) -> Kind:
        return "postgresql" if self.location.startswith(POSTGRES_SCHEMES) else "sqlite"

    def connect(self, *, durable: bool = True) -> Conn:
        """A new connection (the schema migrated first). durable=False is for writers whose rows are
        re-derivable (the indexer: everything it writes comes from the chain)."""
        if self.kind == "postgresql":
            from core.store import pg_schema
            from core.store.pg import PostgresConnection

            # durable=False: `SET synchronous_commit = off` (a crash may lose the last commits, never
            # corrupt; the indexer re-derives them from the chain).
            conn = PostgresConnection(self.location, durable=durable)
            try:
                pg_schema.migrate(conn)
            except BaseException:
                conn.close()
                raise
            return conn  # type: ignore[return-value]
        return connect(self.location, durable=durable)

    def writer(self, *, max_group: int = 512) -> GroupCommitter:
        """A group committer on a durable connection of its own."""
        from core.store.committer import GroupCommitter  # the committer opens its connection from here

        return GroupCommitter(self, max_group=max_group)

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
    """The backend `conn` belongs to (core.store.locks picks its SQL by it)."""
    if isinstance(conn, apsw.Connection):
        return "sqlite"  # before the import below: this runs inside every decision's transaction
    from core.store.pg import PostgresConnection

    if isinstance(conn, PostgresConnection):
        return "postgresql"
    raise UnsupportedDatabase(f"not a connection of this build: {type(conn).__name__}")
