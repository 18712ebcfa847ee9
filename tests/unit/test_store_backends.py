"""The store on both backends (the `database` fixture): reorg rollback through each backend's undo
journal, the decision rate limit exact with writers on separate connections, and the PostgreSQL
connection's translation of SQLite's placeholders and values."""

from __future__ import annotations

import random
import threading
import time

import pytest

from core import decisions
from core.keys import Caller
from core.store import Conn, ConstraintViolation, Database, StoreError, reorg, sqlite, transaction
from core.store import ratelimit as rl
from core.store.pg import WRITE_BEGIN, translate
from core.store.projections import apply_events, dump
from core.store.types import PostgresRetryable
from tests.thread_kit import run_threads
from tests.unit.test_projections import CHAIN, KINDS, TOKENS, _history
from tests.unit.test_serialization import _agent


def _ops(seed: int, n: int, kinds: tuple[str, ...] = (*KINDS, "PaymentCredited")) -> list[tuple[str, int, int]]:
    rng = random.Random(seed)
    return [(rng.choice(kinds), rng.choice(TOKENS), rng.randint(1, 50)) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rolling_back_a_journaled_batch_restores_the_state_before_it(database: Database, seed: int) -> None:
    _rollback_restores(database, _ops(seed, 60))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rolling_back_journaled_agent_writes_restores_them(database: Database, seed: int) -> None:
    """Inserts, updates (NUMERIC prices included) and their undo on the agents table alone."""
    _rollback_restores(database, _ops(seed, 60, KINDS))


def _rollback_restores(database: Database, ops: list[tuple[str, int, int]]) -> None:
    events = _history(ops)
    final, tail = events[: len(events) // 2], events[len(events) // 2 :]
    conn = database.connect()
    with transaction(conn):
        apply_events(conn, CHAIN, final)
    state = dump(conn)
    with transaction(conn):
        reorg.set_block(conn, 10_000)
        apply_events(conn, CHAIN, [e._replace(block_number=10_000) for e in tail])
        reorg.set_block(conn, None)
    assert dump(conn) != state
    (journaled,) = conn.execute("SELECT count(*) FROM reorg_undo").fetchone()  # type: ignore[misc]
    assert journaled > 0
    with transaction(conn):
        undone = reorg.rollback_to(conn, CHAIN, 9_999)
    assert undone == journaled
    assert dump(conn) == state
    assert conn.execute("SELECT count(*) FROM reorg_undo").fetchone() == (0,)
    conn.close()


def test_writes_outside_a_journaled_block_are_not_journaled(database: Database) -> None:
    conn = database.connect()
    with transaction(conn):
        apply_events(conn, CHAIN, _history(_ops(7, 10, KINDS)))
    assert conn.execute("SELECT count(*) FROM reorg_undo").fetchone() == (0,)
    conn.close()


def test_the_rate_limit_is_exact_with_writers_on_separate_connections(database: Database) -> None:
    """8 writers x 40 hits on one key with a limit of 100: exactly 100 are let in (on PostgreSQL the
    upsert's WHERE is re-checked on the latest row under READ COMMITTED)."""
    allowed: list[int] = []
    lock = threading.Lock()

    def writer(_: int) -> None:
        conn = database.connect()
        try:
            for _ in range(40):
                with transaction(conn):
                    got = rl.hit(conn, "k" * 64, 1_800_000_000.0, 100)
                if got.allowed:
                    with lock:
                        allowed.append(got.count)
        finally:
            conn.close()

    run_threads(8, writer)
    assert sorted(allowed) == list(range(1, 101))
    conn = database.connect()
    assert rl.count(conn, "k" * 64, 1_800_000_000.0) == 100
    conn.close()


def test_constraint_and_other_errors_are_the_stores(database: Database) -> None:
    conn = database.connect()
    conn.execute("INSERT INTO accounts (id, created_at) VALUES ('a', 0)")
    with pytest.raises(ConstraintViolation):
        conn.execute("INSERT INTO accounts (id, created_at) VALUES ('a', 0)")
    with pytest.raises(ConstraintViolation):  # foreign key
        conn.execute(
            "INSERT INTO wallet_agents (uuid, wallet, account_id, name, specialty, referral_code, created_at)"
            " VALUES ('u', 'w', 'nobody', 'n', 's', 'r', 0)"
        )
    with pytest.raises(ConstraintViolation):  # check
        conn.execute("INSERT INTO spend_holds (key_hash, ref, day, amount) VALUES ('k', 'r', 'd', -1)")
    with pytest.raises(StoreError):
        conn.execute("SELECT no_such_column FROM accounts")
    conn.close()


def test_values_read_back_as_sqlite_gives_them(database: Database) -> None:
    conn = database.connect()
    conn.execute("INSERT INTO accounts (id, created_at) VALUES (?, ?)", ("b", 1.5))
    conn.execute(
        "INSERT INTO api_keys (key_hash, account_id, created_at, operator) VALUES (:k, :a, :t, :op)",
        {"k": "h", "a": "b", "t": 2.25, "op": True},  # a bool binds as 1
    )
    assert conn.execute("SELECT operator, created_at FROM api_keys").fetchall() == [(1, 2.25)]
    summed = "SELECT sum(operator), count(*) FROM api_keys WHERE key_hash = ?1 OR key_hash = ?1"
    assert conn.execute(summed, ("h",)).fetchall() == [(1, 1)]
    assert conn.changes() == 1  # a SELECT leaves the last write's count
    conn.execute("UPDATE api_keys SET operator = 0 WHERE key_hash = 'none'")
    assert conn.changes() == 0
    conn.close()


def test_placeholders_are_translated_outside_literals() -> None:
    assert translate("SELECT ? FROM t WHERE a = :name AND b = '?:x%' AND c::text = ?2 -- ?\n")[0] == (
        "SELECT %s FROM t WHERE a = %(name)s AND b = '?:x%%' AND c::text = %(p2)s -- ?\n"
    )
    assert translate("BEGIN IMMEDIATE") == (WRITE_BEGIN, False)  # SQLite's "take the write lock now"
    assert translate("BEGIN DEFERRED") == ("BEGIN", False)
    assert translate("SELECT ?1, ?1")[1] is True


def test_a_deadlock_is_retryable() -> None:
    assert issubclass(PostgresRetryable, StoreError)


def test_a_process_lock_excludes_another_holder_on_either_backend(database: Database) -> None:
    """Two ProcessLocks of one name (as two processes hold them): never inside at once."""
    from core.store import ProcessLock

    inside: list[int] = []
    overlaps: list[int] = []
    guard = threading.Lock()

    def hold(lock: ProcessLock) -> None:
        for _ in range(5):
            with lock.held():
                with guard:
                    inside.append(1)
                    if len(inside) > 1:
                        overlaps.append(1)
                time.sleep(0.01)
                with guard:
                    inside.pop()
        lock.close()

    locks = [ProcessLock(database, "operator:0xabc") for _ in range(2)]
    run_threads(2, lambda i: hold(locks[i]))
    assert overlaps == []


def test_a_uint256_past_int64_is_kept_exactly(database: Database) -> None:
    """SQLite keeps it as 0x-hex TEXT, PostgreSQL as NUMERIC(78, 0) (read back as an int)."""
    from core.store.events import Event

    conn = database.connect()
    price = 2**200 + 7
    set_price = Event(2, "0x" + "bb" * 32, "0x" + "01" * 32, 0, "AgentEscrow", "PriceSet", "0x01", "0x",
                      {"tokenId": 1, "price": price, "slaSeconds": 60})  # fmt: skip
    with transaction(conn):
        apply_events(conn, CHAIN, [*_history([])[:1], set_price])
    ((stored,),) = conn.execute("SELECT hire_price FROM agents WHERE token_id = 1").fetchall()
    assert (int(stored, 16) if isinstance(stored, str) else stored) == price
    assert conn.execute("SELECT count(*) FROM agents WHERE hire_price > 0").fetchall() == [(1,)]
    conn.close()


def test_a_read_snapshot_does_not_see_later_commits(database: Database) -> None:
    from core.store import read_snapshot

    reader, writer = database.connect(), database.connect()
    writer.execute("INSERT INTO accounts (id, created_at) VALUES ('a', 0)")
    with read_snapshot(reader):
        assert reader.execute("SELECT count(*) FROM accounts").fetchall() == [(1,)]
        with transaction(writer):
            writer.execute("INSERT INTO accounts (id, created_at) VALUES ('b', 0)")
        assert reader.execute("SELECT count(*) FROM accounts").fetchall() == [(1,)]
    assert reader.execute("SELECT count(*) FROM accounts").fetchall() == [(2,)]
    reader.close()
    writer.close()


def test_opening_a_current_sqlite_file_takes_no_write_lock_and_changes_no_schema(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every connection checks the schema; a file already current is only read, so a connection opens
    while another holds the write lock (CI once saw eight writing threads starve a ninth's connect
    past the busy timeout), and the schema is not rewritten (which would make every other
    connection re-prepare its statements). A missing journaling trigger is put back."""
    from core.store import connect

    path = tmp_path / "w.db"
    first = connect(path)
    assert first.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    (schema_version,) = first.execute("PRAGMA schema_version").fetchone()  # type: ignore[misc]
    first.execute("BEGIN IMMEDIATE")
    first.execute("INSERT INTO accounts (id, created_at) VALUES ('a', 0)")
    second = connect(path)  # while the write transaction is open
    assert second.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert second.execute("SELECT count(*) FROM accounts").fetchone() == (0,)
    first.execute("COMMIT")
    assert second.execute("SELECT count(*) FROM accounts").fetchone() == (1,)
    assert first.execute("PRAGMA schema_version").fetchone() == (schema_version,)
    assert sqlite.triggers_current(first)
    first.execute("DROP TRIGGER agents_undo_U")
    assert not sqlite.triggers_current(first)
    connect(path).close()
    assert sqlite.triggers_current(first)
    first.close()
    second.close()


def test_two_writers_logging_decisions_for_two_keys_in_opposite_order_do_not_deadlock(database: Database) -> None:
    """Two transactions (two processes' groups on PostgreSQL) each log a decision for key 1 and key 2,
    in opposite orders, the second writer starting while the first is between its two decisions.
    Before log_decision took the audit log's lock ahead of the key's rate-limit row, the first held
    key 1's row and the log's lock while waiting for key 2's row, which the second held while waiting
    for the log's lock: PostgreSQL aborted one with a deadlock. Both commit, and the log is one chain."""
    conn = database.connect()
    agents = [_agent(conn, 1), _agent(conn, 2)]
    conn.close()
    callers = [Caller(f"{n:064x}", a.account_id, None) for n, a in zip((1, 2), agents, strict=True)]
    first_logged_one = threading.Event()

    def log(c: Conn, i: int) -> None:
        decisions.log_decision(
            c,
            callers[i],
            agents[i].uuid,
            decisions.Decision(event_type="routine", content_hash="ab" * 32, model_id="m", model_version="1"),
            webhook=None,
            verify_base="http://x",
            rate_limit=1000,
            now=1_800_000_000.0,
        )

    def writer(n: int) -> None:
        order, wait = ((0, 1), False) if n == 0 else ((1, 0), True)
        c = database.connect()
        try:
            if wait:
                first_logged_one.wait(10)
            with transaction(c):
                log(c, order[0])
                if not wait:
                    first_logged_one.set()
                    time.sleep(0.4)  # the other writer reaches its first decision meanwhile
                log(c, order[1])
        finally:
            c.close()

    run_threads(2, writer)
    conn = database.connect()
    assert conn.execute("SELECT count(*) FROM audit_log").fetchone() == (4,)
    assert [r[0] for r in conn.execute("SELECT count FROM rate_windows ORDER BY key_hash")] == [2, 2]
    conn.close()
