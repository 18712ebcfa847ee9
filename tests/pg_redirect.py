"""Run the tests written against SQLite files on PostgreSQL (`make test-postgresql`).

With AGENTLEDGER_TEST_BACKEND=postgresql, every SQLite file a test opens through `core.store.connect`
(directly, through `core.store.Database`, `Settings`, the committer, the indexer) becomes a fresh
database on the session's throwaway cluster (tests/pg_kit.py), one per file path: two connections to
one file reach one database, two files stay two databases. Nothing in the service changes: the
store's `connect` is replaced, for the session, in every module that bound it.

A child process (the crash and restart tests, `make run`, `python -m indexer`) opens what the test
names for it: `child_location(path)` / `child_env(path)` give it the URL of the database standing for
the file under the redirect, and the path otherwise. What cannot follow is a test of SQLite's own
machinery (WAL checkpoints, the busy timeout, its one write lock, query plans, the file's bytes); those
tests are listed in SQLITE_ONLY and deselected, each with its reason, and the tests that already run
on both backends through the `database` fixture run there once (on PostgreSQL)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.store import Conn, Database
from core.store import sqlite as sqlite_db
from core.store.database import POSTGRES_SCHEMES
from tests.pg_kit import PgCluster

ENV = "AGENTLEDGER_TEST_BACKEND"

#: Our packages: their modules may hold `connect` under another name (`db_connect`, `connect_db`).
PACKAGES = ("core", "api", "indexer", "service", "scripts", "sdk", "tests", "benchmarks", "merkle")


#: Tests that cannot run through the redirect, each with its reason. They run on SQLite in `make test`.
SQLITE_ONLY: dict[str, str] = {
    "tests/integration/test_leader_failover.py::test_a_stalled_leader_is_replaced_and_steps_down_when_it_wakes": (
        "SIGSTOPs the leader outside a SQLite write lock (children too)"
    ),
    "tests/integration/test_indexer.py::test_backfill_checkpoints_on_a_thread_of_its_own": "SQLite's WAL checkpoints",
    "tests/integration/test_indexer.py::test_a_database_locked_past_the_busy_timeout_fails_a_step_not_the_indexer": (
        "SQLite's busy timeout"
    ),
    "tests/integration/test_indexer.py::test_the_first_checkpoint_waits_for_the_write_lock_off_the_event_loop": (
        "holds SQLite's one write lock"
    ),
    "tests/integration/test_wallet_api.py::test_register_without_key_creates_account_and_shows_key_once": (
        "looks for the key in the SQLite file's bytes"
    ),
    "tests/integration/test_wallet_api_more.py::test_issue_key_command_scopes_to_account_or_agent": (
        "looks for the key in the SQLite file's bytes"
    ),
    "tests/integration/test_webhook_backoff.py::test_a_release_ends_the_hold_and_rows_in_flight_are_never_dead_lettered": (  # noqa: E501
        "reads SQLite's query plan"
    ),
    "tests/integration/test_webhook_dispatcher.py::test_answered_rows_wait_for_their_commit_owned_and_each_goes_out_once": (  # noqa: E501
        "stalls the dispatcher's writes with SQLite's one write lock"
    ),
}


#: The redirect installed for this session, if any (child_location asks it).
_active: Redirect | None = None


def child_location(path: Path | str) -> str:
    """What a child process is to open for the SQLite file `path` (its `--db`): under the redirect the
    URL of the database standing for that file, which the test's own connections to `path` reach too;
    otherwise the path itself."""
    if _active is None:
        return str(path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).touch()  # the file stands for its database, as for the test's own connections
    return _active.database(path).location


def child_env(path: Path | str) -> dict[str, str]:
    """The environment that points a child configured by Settings (`make run`) at the database standing
    for the SQLite file `path`: AGENTLEDGER_DATABASE_URL under the redirect, nothing otherwise (the child
    then opens `path` itself, from its data directory)."""
    return {"AGENTLEDGER_DATABASE_URL": _active.database(path).location} if _active is not None else {}


def sqlite_only(nodeid: str) -> str | None:
    """Why the test `nodeid` (parameters included) cannot run through the redirect, or None."""
    return SQLITE_ONLY.get(nodeid.split("[", 1)[0])


def wanted() -> bool:
    return os.environ.get(ENV, "sqlite") == "postgresql"


class Redirect:
    """SQLite file paths -> fresh PostgreSQL databases of `cluster`, for the session."""

    def __init__(self, cluster: PgCluster) -> None:
        self.cluster = cluster
        self.original: Callable[..., Conn] = sqlite_db.connect
        self._databases: dict[str, Database] = {}
        self._lock = threading.Lock()
        self._patched: list[tuple[Any, str]] = []
        #: What every module's `connect` becomes (one object, so `is` finds it everywhere).
        self.replacement: Callable[..., Conn] = self.connect

    def database(self, path: Path | str) -> Database:
        key = os.path.realpath(path)
        with self._lock:
            found = self._databases.get(key)
            if found is None:
                found = self._databases[key] = self.cluster.fresh()
            return found

    def connect(self, path: Path | str, *, durable: bool = True) -> Conn:
        if str(path) == ":memory:":
            return self.original(path, durable=durable)
        if str(path).startswith(POSTGRES_SCHEMES):  # a redirected connection's filename (its URL)
            return Database(str(path)).connect(durable=durable)
        database = self.database(path)
        # The file stands for its database: commands that refuse a missing SQLite file find it.
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).touch()
        return database.connect(durable=durable)

    def install(self) -> None:
        global _active
        _active = self
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(PACKAGES):
                continue
            for attr, value in list(vars(module).items()):
                if value is self.original:
                    setattr(module, attr, self.replacement)
                    self._patched.append((module, attr))

    def uninstall(self) -> None:
        global _active
        _active = None
        for module, attr in self._patched:
            setattr(module, attr, self.original)
        self._patched.clear()
