"""The database an operator command works on: --db, else the configured one (AGENTLEDGER_DATABASE_URL,
else AGENTLEDGER_DB_PATH, else <data dir>/agentledger.db). A SQLite file must exist: a mistyped path
must not create an empty database."""

from __future__ import annotations

import sys
from pathlib import Path

from core.config import Settings
from core.store import Conn, Database


def open_database(db: Path | None) -> Conn | None:
    """A durable connection, or None after saying on stderr that there is no database there."""
    database = Database(str(db)) if db is not None else Settings.load().database
    if database.kind == "sqlite" and not Path(database.location).exists():
        print(f"error: no database at {database.location}", file=sys.stderr)
        return None
    return database.connect(durable=True)
