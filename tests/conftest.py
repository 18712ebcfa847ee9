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
    "test_overdraft_is_refused_and_rolls_back": "store.wallets.append_ledger uses last_insert_rowid (H1: RETURNING)",
    "test_spends_from_threads_on_separate_connections_never_overdraw": "last_insert_rowid (H1)",
    "test_append_ledger_refusals_write_nothing": "last_insert_rowid (H1)",
    "test_earn_refuses_a_referrer_total_past_int64_before_writing": "last_insert_rowid (H1)",
    "test_run_records_from_threads_on_separate_connections_lose_nothing": (
        "core.wallets.record_run reads then writes a memory row: lost updates under READ COMMITTED (H2: a row lock)"
    ),
    "test_rolling_back_a_journaled_batch_restores_the_state_before_it": (
        "projections' credits upsert `SET amount = amount + excluded.amount`: ambiguous column on PostgreSQL (H1)"
    ),
    "test_the_rate_limit_is_exact_with_writers_on_separate_connections": (
        "ratelimit.hit's upsert `SET count = count + 1`: ambiguous column on PostgreSQL (H1)"
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.name.split("[", 1)[0]
        if name in PENDING_ON_POSTGRES and "[postgresql" in item.name:
            racy = "READ COMMITTED" in PENDING_ON_POSTGRES[name]  # a lost update is likely, not certain
            item.add_marker(pytest.mark.xfail(reason=PENDING_ON_POSTGRES[name], strict=not racy))
