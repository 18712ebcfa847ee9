"""The database an operator command works on: --db, else the configured one (AGENTLEDGER_DB_PATH, else
<data dir>/agentledger.db). It must exist: a mistyped path must not create an empty database."""

from __future__ import annotations

import sys
from pathlib import Path

from core.config import Settings
from core.store import Conn, connect


def open_database(db: Path | None) -> Conn | None:
    """A durable connection, or None after saying on stderr that there is no database there."""
    path = db if db is not None else Settings.load().database
    if not path.exists():
        print(f"error: no database at {path}", file=sys.stderr)
        return None
    return connect(path, durable=True)
