"""make test-postgresql's redirect (tests/pg_redirect.py): SQLite file paths become PostgreSQL
databases, one per path, for every module that bound the store's `connect`; uninstalled, nothing
is left of it. CI runs `make test` only, so this is what keeps the redirect from breaking silently."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.store
from core.store import sqlite as sqlite_db
from core.store.pg import PostgresConnection
from tests import pg_redirect
from tests.integration import indexer_kit
from tests.pg_kit import PgCluster


def test_each_sqlite_path_is_one_postgres_database_until_uninstalled(pg_cluster: PgCluster, tmp_path: Path) -> None:
    original = sqlite_db.connect
    redirect = pg_redirect.Redirect(pg_cluster)
    redirect.install()
    try:
        # bound under another name, in a package module, in a test kit
        assert core.store.connect is sqlite_db.connect is indexer_kit.connect is redirect.replacement
        a = core.store.connect(tmp_path / "a.db")
        assert isinstance(a, PostgresConnection) and (tmp_path / "a.db").exists()
        a.execute("CREATE TABLE t (x BIGINT)")
        a.execute("INSERT INTO t VALUES (1)")
        again = core.store.open_database(tmp_path / "sub" / ".." / "a.db").connect()  # the same file
        assert again.execute("SELECT x FROM t").fetchall() == [(1,)]
        by_url = core.store.connect(a.filename)  # a redirected connection's name opens it again
        assert by_url.execute("SELECT x FROM t").fetchall() == [(1,)]
        other = core.store.connect(tmp_path / "b.db")
        assert other.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 't'").fetchall() == [
            (0,)
        ]
        for conn in (a, again, by_url, other):
            conn.close()
    finally:
        redirect.uninstall()
    assert core.store.connect is original and indexer_kit.connect is original
    assert not isinstance(core.store.connect(tmp_path / "c.db"), PostgresConnection)


@pytest.mark.parametrize(
    ("nodeid", "listed"),
    [
        (
            "tests/integration/test_indexer.py::test_backfill_checkpoints_on_a_thread_of_its_own[x]",
            True,
        ),
        ("tests/integration/test_indexer.py::test_something_else", False),
    ],
)
def test_sqlite_only_tests_are_named_with_a_reason_whatever_their_parameters(nodeid: str, listed: bool) -> None:
    assert (pg_redirect.sqlite_only(nodeid) is not None) == listed


def test_every_sqlite_only_test_exists() -> None:
    """A renamed test would silently run (and fail) on PostgreSQL, or a stale entry hide nothing."""
    root = Path(__file__).resolve().parents[2]
    for nodeid in pg_redirect.SQLITE_ONLY:
        path, name = nodeid.split("::")
        assert f"def {name}(" in (root / path).read_text(), nodeid


def test_a_child_process_is_given_the_database_standing_for_its_file(pg_cluster: PgCluster, tmp_path: Path) -> None:
    """child_location / child_env: the path itself without the redirect; under it, the URL of the database
    the test's own connections to that path reach (a crash test's child and the test see one database)."""
    path = tmp_path / "ledger.db"
    assert pg_redirect.child_location(path) == str(path) and pg_redirect.child_env(path) == {}
    redirect = pg_redirect.Redirect(pg_cluster)
    redirect.install()
    try:
        url = pg_redirect.child_location(path)
        assert url.startswith("postgresql://") and path.exists()
        assert pg_redirect.child_env(path) == {"AGENTLEDGER_DATABASE_URL": url}
        child = core.store.open_database(url).connect()  # what the child opens
        child.execute("CREATE TABLE seen_by_both (x BIGINT)")
        child.execute("INSERT INTO seen_by_both VALUES (7)")
        parent = core.store.connect(path)  # what the test opens
        assert parent.execute("SELECT x FROM seen_by_both").fetchall() == [(7,)]
        for conn in (child, parent):
            conn.close()
    finally:
        redirect.uninstall()
    assert pg_redirect.child_location(path) == str(path)
