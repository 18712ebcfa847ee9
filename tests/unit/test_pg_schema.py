"""The PostgreSQL schema cannot drift from SQLite's: the same tables with the same columns (plus the
few PostgreSQL-only ones core.store.pg_schema names), indexes and triggers in place, types mapped."""

from __future__ import annotations

import apsw
import pytest

from core.store import pg_schema, schema
from core.store.pg_ddl import UntranslatableMigration, translate
from tests.pg_kit import PgCluster


def sqlite_columns() -> dict[str, list[str]]:
    conn = apsw.Connection(":memory:")
    for script in schema.MIGRATIONS:
        conn.execute(script)
    tables = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: sorted(str(r[1]) for r in conn.execute(f"PRAGMA table_info({t})")) for t in tables}


def test_the_baseline_equals_sqlites_history_up_to_its_version() -> None:
    assert len(schema.MIGRATIONS) >= pg_schema.BASELINE_VERSION


def test_postgres_has_sqlites_tables_and_columns(pg_cluster: PgCluster) -> None:
    conn = pg_cluster.fresh().connect()
    rows = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
    ).fetchall()
    pg: dict[str, set[str]] = {}
    for table, column in rows:
        if (table, column) not in pg_schema.PG_ONLY_COLUMNS:
            pg.setdefault(str(table), set()).add(str(column))
    pg.pop("schema_version", None)
    lite = sqlite_columns()
    missing = sorted(set(lite) - set(pg))
    assert not missing, (
        f"tables of SQLite's schema missing on PostgreSQL: {missing}. Write their migration so that "
        "core.store.pg_ddl translates it (plain CREATE TABLE / INDEX / ADD COLUMN) or add it to pg_schema."
    )
    assert sorted(set(pg) - set(lite)) == []
    differ = {t: (sorted(set(lite[t]) ^ pg[t])) for t in lite if set(lite[t]) != pg[t]}
    assert differ == {}, f"columns differ between SQLite and PostgreSQL (table: symmetric difference): {differ}"
    (version,) = conn.execute("SELECT version FROM schema_version").fetchone()  # type: ignore[misc]
    assert version == len(schema.MIGRATIONS)
    conn.close()


def test_types_are_mapped_for_64_bits_doubles_bytes_and_byte_order(pg_cluster: PgCluster) -> None:
    conn = pg_cluster.fresh().connect()
    types = {
        (str(t), str(c)): (str(d), n)
        for t, c, d, n in conn.execute(
            "SELECT table_name, column_name, data_type, collation_name FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        ).fetchall()
    }
    assert types[("ledger", "amount")][0] == "bigint"
    assert types[("ledger", "created_at")][0] == "double precision"
    assert types[("audit_log", "leaf_hash")][0] == "bytea"
    assert types[("memories", "key")] == ("text", "C")
    assert types[("listings", "price")][0] == "numeric"
    assert not [k for k, (d, _) in types.items() if d in ("integer", "real", "smallint")]
    assert not [k for k, (d, n) in types.items() if d == "text" and n != "C"]
    conn.close()


def test_indexes_checks_and_reorg_triggers_exist(pg_cluster: PgCluster) -> None:
    conn = pg_cluster.fresh().connect()
    lite = apsw.Connection(":memory:")
    for script in schema.MIGRATIONS:
        lite.execute(script)
    named = "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    wanted = {str(r[0]) for r in lite.execute(named)}
    have = {str(r[0]) for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
    assert wanted - have == set()
    checks = conn.execute("SELECT count(*) FROM pg_constraint WHERE contype = 'c'").fetchone()
    assert checks is not None and checks[0] >= 25
    triggers = {str(r[0]) for r in conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
    from core.store.schema import TRACKED_TABLES

    assert triggers == {f"{t}_undo" for t in TRACKED_TABLES}
    conn.close()


def test_every_migration_after_the_baseline_translates() -> None:
    """A migration appended to schema.MIGRATIONS must be plain (core.store.pg_ddl) or get its PostgreSQL
    form by hand; this names the first one that is neither."""
    for number, script in enumerate(
        schema.MIGRATIONS[pg_schema.BASELINE_VERSION :], start=pg_schema.BASELINE_VERSION + 1
    ):
        try:
            translate(script)
        except UntranslatableMigration as exc:
            pytest.fail(f"migration {number} cannot run on PostgreSQL: {exc}")


def test_a_migration_that_is_not_plain_is_refused_by_name() -> None:
    assert "BIGINT" in translate("ALTER TABLE t ADD COLUMN n INTEGER NOT NULL DEFAULT 0")
    assert 'TEXT COLLATE "C"' in translate("CREATE TABLE x (k TEXT PRIMARY KEY) WITHOUT ROWID")
    assert translate("UPDATE t SET a = 1; DROP INDEX i") == "UPDATE t SET a = 1;\nDROP INDEX i;\n"
    with pytest.raises(UntranslatableMigration, match="ledger_rebuild"):
        translate("ALTER TABLE ledger_rebuild RENAME TO ledger")


def test_several_processes_may_migrate_at_once(pg_cluster: PgCluster) -> None:
    """Concurrent first connections to an empty database: one migrates, the others wait and find it done."""
    import threading

    from core.store.pg import PostgresConnection

    admin = pg_cluster.connect_admin()
    admin.execute("CREATE DATABASE concurrent_migrate")
    admin.close()
    database = pg_cluster.database("concurrent_migrate")
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            database.connect().close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    conn = PostgresConnection(database.location)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(len(schema.MIGRATIONS),)]
    conn.close()


def test_a_plain_migration_appended_later_reaches_postgres(
    pg_cluster: PgCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = pg_cluster.fresh()  # at the current version
    appended = (
        "CREATE TABLE leases_x (name TEXT PRIMARY KEY, holder TEXT, term INTEGER NOT NULL DEFAULT 0, "
        "expires_at REAL NOT NULL) WITHOUT ROWID; ALTER TABLE hire_jobs ADD COLUMN owner_x TEXT; "
        "UPDATE hire_jobs SET owner_x = 'nobody'"
    )
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, appended])
    conn = database.connect()
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(len(schema.MIGRATIONS),)]
    conn.execute("INSERT INTO leases_x (name, expires_at) VALUES ('indexer', 1.5)")
    assert conn.execute("SELECT name, holder, term, expires_at FROM leases_x").fetchall() == [("indexer", None, 0, 1.5)]
    assert conn.execute("SELECT owner_x FROM hire_jobs").fetchall() == []
    conn.close()
