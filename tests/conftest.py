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
PENDING_ON_POSTGRES = {
    "test_the_outbox_view_shows_dead_letters_without_their_url_or_secret_and_resets_them": (
        "store.outbox.record_attempts joins json_each(?) (SQLite's; the outbox claims are being rewritten, H3)"
    ),
    "test_spends_from_threads_on_separate_connections_never_overdraw": (
        "never overdraws on PostgreSQL, but core.wallets.spend's balance read is stale under READ COMMITTED, so a "
        "racing spend fails with Overdraft instead of insufficient_balance (H2: get_balance FOR UPDATE)"
    ),
    "test_run_records_from_threads_on_separate_connections_lose_nothing": (
        "core.wallets.record_run reads then writes a memory row: lost updates under READ COMMITTED (H2: a row lock)"
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.name.split("[", 1)[0]
        if name in PENDING_ON_POSTGRES and "[postgresql" in item.name:
            racy = "READ COMMITTED" in PENDING_ON_POSTGRES[name]  # a lost update is likely, not certain
            item.add_marker(pytest.mark.xfail(reason=PENDING_ON_POSTGRES[name], strict=not racy))
