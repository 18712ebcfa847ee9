"""Fixtures for every test: the store's backends. `database` runs a test once on a SQLite file and
once on a fresh PostgreSQL database of a throwaway cluster (tests/pg_kit.py, started at the first
such test and stopped at the end of the session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Database, open_database
from tests.pg_kit import PgCluster

BACKENDS = ["sqlite", "postgresql"]


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


#: Store tests that do not pass on PostgreSQL yet, and why (xfail; strict unless the failure is a race:
#: once fixed, the entry must go).
PENDING_ON_POSTGRES: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.name.split("[", 1)[0]
        if name in PENDING_ON_POSTGRES and "[postgresql" in item.name:
            racy = "READ COMMITTED" in PENDING_ON_POSTGRES[name]  # a lost update is likely, not certain
            item.add_marker(pytest.mark.xfail(reason=PENDING_ON_POSTGRES[name], strict=not racy))
