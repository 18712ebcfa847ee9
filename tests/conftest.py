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
