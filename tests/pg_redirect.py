"""Run the tests written against SQLite files on PostgreSQL (`make test-postgresql`).

With AGENTLEDGER_TEST_BACKEND=postgresql, every SQLite file a test opens through `core.store.connect`
(directly, through `core.store.Database`, `Settings`, the committer, the indexer) becomes a fresh
database on the session's throwaway cluster (tests/pg_kit.py), one per file path: two connections to
one file reach one database, two files stay two databases. Nothing in the service changes: the
store's `connect` is replaced, for the session, in every module that bound it.

What cannot follow: a child process (it opens its file itself) and SQL a test writes for SQLite
(PRAGMAs, `BEGIN IMMEDIATE`, apsw's errors); those tests are listed in SQLITE_ONLY and deselected,
each with its reason, and the tests that already run on both backends through the `database` fixture
run there once (on PostgreSQL)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.store import Conn, Database
from core.store import db as sqlite_db
from core.store.database import POSTGRES_SCHEMES
from tests.pg_kit import PgCluster

ENV = "AGENTLEDGER_TEST_BACKEND"

#: Our packages: their modules may hold `connect` under another name (`db_connect`, `connect_db`).
PACKAGES = ("core", "api", "indexer", "service", "scripts", "sdk", "tests", "benchmarks", "merkle")


_CHILD = "a child process opens the SQLite file itself"

#: Tests that cannot run through the redirect, each with its reason. They run on SQLite in `make test`;
#: what they test on several processes is tested on PostgreSQL by the tests taking `database`.
SQLITE_ONLY: dict[str, str] = {
    "tests/integration/test_checkout.py::test_crash_after_funding_heals_exactly_once": _CHILD,
    "tests/integration/test_checkout_e2e.py::test_with_the_indexer_as_its_own_process_an_order_is_released_and_its_webhook_sent": _CHILD,  # noqa: E501
    "tests/integration/test_deploy_command.py::test_make_run_serves_healthz_and_ctrl_c_stops_everything": _CHILD,
    "tests/integration/test_drop_sweep_kill.py::test_kill_during_a_sweep_then_restart_settles_once": _CHILD,
    "tests/integration/test_hire.py::test_kill_9_while_a_job_runs_is_settled_by_the_restart": _CHILD,
    "tests/integration/test_hire_escrow.py::test_crash_between_job_and_release_then_restart_releases_once": _CHILD,
    "tests/integration/test_indexer_kill.py::test_sigkill_at_random_points_then_restart_equals_clean_reindex": _CHILD,
    "tests/integration/test_restart_claims.py::test_a_restart_frees_the_claims_and_sessions_of_the_crashed_process": _CHILD,  # noqa: E501
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
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(PACKAGES):
                continue
            for attr, value in list(vars(module).items()):
                if value is self.original:
                    setattr(module, attr, self.replacement)
                    self._patched.append((module, attr))

    def uninstall(self) -> None:
        for module, attr in self._patched:
            setattr(module, attr, self.original)
        self._patched.clear()
