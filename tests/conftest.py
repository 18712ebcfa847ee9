"""Fixtures for every test: the store's backends. `database` runs a test once on a SQLite file and
once on a fresh PostgreSQL database of a throwaway cluster (tests/pg_kit.py, started at the first
such test and stopped at the end of the session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Database, open_database
from tests import pg_redirect
from tests.pg_kit import PgCluster

#: make test-postgresql (tests/pg_redirect.py) runs everything on PostgreSQL, these tests included.
BACKENDS = ["postgresql"] if pg_redirect.wanted() else ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = PgCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """An empty, migrated database of each backend."""
    if request.param == "sqlite":
        yield open_database(tmp_path / "store.db")
        return
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    fresh = cluster.fresh()
    yield fresh
    cluster.drop(fresh)  # keeps the cluster small: its teardown removes a few files, not every test's


@pytest.fixture(scope="session", autouse=pg_redirect.wanted())
def _sqlite_files_on_postgresql(request: pytest.FixtureRequest) -> Iterator[None]:
    """make test-postgresql: every SQLite file a test opens is a database on the cluster."""
    redirect = pg_redirect.Redirect(request.getfixturevalue("pg_cluster"))
    redirect.install()
    try:
        yield
    finally:
        redirect.uninstall()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Said at the end of the PostgreSQL run: its deselections (pytest-xdist workers' are not counted)."""
    if pg_redirect.wanted():
        terminalreporter.write_line(
            "backend: PostgreSQL (every SQLite file on the test cluster); "
            f"{len(pg_redirect.SQLITE_ONLY)} tests of SQLite's own machinery deselected (tests/pg_redirect.py)"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """make test-postgresql: deselect the tests that cannot run through the redirect (each with its
    reason in tests/pg_redirect.py), reported as deselected, never as passed."""
    if not pg_redirect.wanted():
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if pg_redirect.sqlite_only(item.nodeid) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
