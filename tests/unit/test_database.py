"""core.store.Database: naming the database once, and opening every connection from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings
from core.store import Database, StoreError, database_of, open_database
from core.store.committer import GroupCommitter
from tests.pg_kit import PgCluster


def test_a_path_is_a_sqlite_file_and_connections_reach_the_same_one(tmp_path: Path) -> None:
    database = open_database(tmp_path / "a.db")
    assert database.kind == "sqlite"
    first = database.connect()
    first.execute("CREATE TABLE t (x INTEGER)")
    first.execute("INSERT INTO t VALUES (7)")
    again = database_of(first).connect(durable=False)
    assert again.execute("SELECT x FROM t").fetchall() == [(7,)]
    assert database_of(again) == database


def test_the_committer_opens_its_connection_from_the_database(tmp_path: Path) -> None:
    database = open_database(str(tmp_path / "b.db"))
    writer = GroupCommitter(database)
    assert database_of(writer.conn) == database
    writer.conn.close()


@pytest.mark.parametrize("url", ["postgresql://agent:s3cret@db.internal:5432/ledger", "postgres://agent@db/ledger"])
def test_a_postgres_url_is_named_without_its_password(url: str) -> None:
    database = open_database(url)
    assert database.kind == "postgresql"
    assert "s3cret" not in database.redacted
    assert database.redacted.endswith("/ledger")
    assert database.redacted.startswith(url.split("://")[0] + "://agent@")


def test_the_setting_chooses_the_database(tmp_path: Path) -> None:
    assert Settings.load({}).database == Database(str(Settings().data_dir / "agentledger.db"))
    assert Settings.load({"AGENTLEDGER_DB_PATH": str(tmp_path / "x.db")}).database == Database(str(tmp_path / "x.db"))
    url = "postgresql://u:p@localhost/agentledger"
    chosen = Settings.load({"AGENTLEDGER_DB_PATH": str(tmp_path / "x.db"), "AGENTLEDGER_DATABASE_URL": url})
    assert chosen.database.kind == "postgresql"
    assert chosen.database.location == url


def test_an_unreachable_postgres_database_raises_a_store_error() -> None:
    with pytest.raises(StoreError):
        open_database("postgresql://u:p@127.0.0.1:9/none?connect_timeout=2").connect()


def test_a_postgres_database_opens_migrated_and_names_itself(pg_cluster: PgCluster) -> None:
    database = pg_cluster.fresh()
    assert database.kind == "postgresql"
    conn = database.connect(durable=False)
    assert database_of(conn) == database
    assert conn.execute("SHOW synchronous_commit").fetchall() == [("off",)]
    assert database.connect().execute("SHOW synchronous_commit").fetchall() == [("on",)]
    writer = GroupCommitter(database)
    assert database_of(writer.conn) == database
    writer.conn.close()
    conn.close()
