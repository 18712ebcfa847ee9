"""core.wallets over the SQLite store, without HTTP: the ledger invariant, overdraft refusal,
and check-and-debit across separate connections (threads), as another process would."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import wallets
from core.money import split
from core.store import Conn, Database, open_database, transaction
from core.store import wallets as store
from tests.thread_kit import run_threads

USDC = 1_000_000


def connect(target: Database | Path) -> Conn:
    """A connection to the test's database (`database`: each backend in turn; a path: SQLite)."""
    return open_database(target).connect()


def _agent(db_path: Database | Path, referrer_code: str | None = None) -> store.AgentRow:
    conn = connect(db_path)
    with transaction(conn):
        agent = wallets.register(
            conn,
            account_id=None,
            new_key_hash="00" * 32 if referrer_code is None else "11" * 32,
            name="a",
            specialty="email",
            referral_code=referrer_code,
            now=0,
        )
    conn.close()
    return agent


def test_ledger_writes_refuse_to_run_outside_a_transaction(database: Database) -> None:
    agent = _agent(database)
    conn = connect(database)
    with pytest.raises(store.NotInTransaction):
        wallets.earn(conn, agent, USDC, None, 0)
    assert store.count_rows(conn, "ledger") == 0


def test_overdraft_is_refused_and_rolls_back(database: Database) -> None:
    agent = _agent(database)
    conn = connect(database)
    with transaction(conn):
        wallets.earn(conn, agent, 100 * USDC, None, 0)
    with pytest.raises(wallets.WalletError) as info, transaction(conn):
        wallets.spend(conn, agent, 98 * USDC + 1, "x", 0)
    assert info.value.code == "insufficient_balance"
    assert store.get_balance(conn, agent.uuid).balance == 98 * USDC
    assert store.count_rows(conn, "ledger") == 1


def test_unknown_specialty_and_referral_code(database: Database) -> None:
    conn = connect(database)
    for spec, code, want in (("astrology", None, "invalid_specialty"), ("email", "ABCDEFGH", "unknown_referral_code")):
        with pytest.raises(wallets.WalletError) as info, transaction(conn):
            wallets.register(
                conn, account_id=None, new_key_hash="22" * 32, name="a", specialty=spec, referral_code=code, now=0
            )
        assert info.value.code == want
    assert store.count_rows(conn, "accounts") == 0


def test_spends_from_threads_on_separate_connections_never_overdraw(database: Database) -> None:
    db = database
    agent = _agent(db)
    conn = connect(db)
    with transaction(conn):
        wallets.earn(conn, agent, 50 * USDC, None, 0)  # 49 USDC credited
    ok: list[int] = []
    refused: list[str] = []
    lock = threading.Lock()

    def worker(_: int) -> None:
        c = connect(db)
        try:
            for _ in range(10):
                try:
                    with transaction(c):
                        wallets.spend(c, agent, USDC, "x", 0)
                    with lock:
                        ok.append(USDC)
                except wallets.WalletError as exc:
                    with lock:
                        refused.append(exc.code)
        finally:
            c.close()

    run_threads(10, worker)
    bal = store.get_balance(conn, agent.uuid)
    assert sum(ok) == 49 * USDC and len(refused) == 51 and bal.balance == 0
    assert store.ledger_totals(conn, agent.uuid) == (0, 0, 0)


@settings(max_examples=100, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(min_value=1, max_value=10**9)), max_size=30))
def test_balance_always_equals_the_ledger(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[bool, int]]
) -> None:
    db = tmp_path_factory.mktemp("prop") / "w.db"
    referrer = _agent(db)
    agent = _agent(db, referrer.referral_code)
    conn = connect(db)
    referral_total = 0
    for is_earn, units in ops:
        try:
            with transaction(conn):
                if is_earn:
                    wallets.earn(conn, agent, units, None, 0)
                    referral_total += split(units, True).referral_cut
                else:
                    wallets.spend(conn, agent, units, "x", 0)
        except wallets.WalletError as exc:
            assert exc.code == "insufficient_balance"
        bal = store.get_balance(conn, agent.uuid)
        assert bal.owner_balance >= 0 and bal.self_balance >= 0
        assert store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)
    assert store.get_balance(conn, referrer.uuid).balance == referral_total
    conn.close()


# ---- second slice: compound, weights, run records ------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("earn"), st.integers(min_value=1, max_value=10**9)),
            st.tuples(st.just("spend"), st.integers(min_value=1, max_value=10**9)),
            st.tuples(st.just("compound"), st.integers(min_value=1, max_value=100)),
        ),
        max_size=30,
    )
)
def test_compound_keeps_balance_plus_reinvested_equal_to_the_ledger(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int]]
) -> None:
    db = tmp_path_factory.mktemp("compound") / "w.db"
    agent = _agent(db)
    conn = connect(db)
    moved_total = 0
    for op, n in ops:
        try:
            with transaction(conn):
                if op == "earn":
                    wallets.earn(conn, agent, n, None, 0)
                elif op == "spend":
                    wallets.spend(conn, agent, n, "x", 0)
                else:
                    before = store.get_balance(conn, agent.uuid)
                    r = wallets.compound(conn, agent, n, 0)
                    assert r.moved == before.owner_balance * n // 100 + before.self_balance * n // 100
                    assert r.balance.balance == before.balance - r.moved
                    moved_total += r.moved
        except wallets.WalletError as exc:
            assert exc.code == "insufficient_balance"
        bal = store.get_balance(conn, agent.uuid)
        assert bal.reinvested == moved_total
        assert store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)
    conn.close()


@settings(max_examples=200, deadline=None)
@given(
    mine=st.dictionaries(
        st.sampled_from(["email", "podcast", "x_1"]), st.tuples(st.integers(0, 50), st.integers(0, 50)), max_size=3
    ),
    network=st.dictionaries(
        st.sampled_from(["email", "youtube", "y_2"]), st.tuples(st.integers(0, 500), st.integers(0, 500)), max_size=3
    ),
)
def test_weights_are_normalised_and_never_zero(
    mine: dict[str, tuple[int, int]], network: dict[str, tuple[int, int]]
) -> None:
    brain = wallets.Brain({n: store.NicheStats(listed, sold) for n, (listed, sold) in mine.items()}, None)
    net = {n: store.NicheStats(listed, sold) for n, (listed, sold) in network.items()}
    w = wallets.weights(brain, net)
    assert set(w) == set(wallets.SPECIALTIES) | set(mine) | set(network)
    assert all(v > 0 for v in w.values())
    assert abs(sum(w.values()) - 1) < 1e-4
    for n, (listed, sold) in mine.items():
        if n not in network and sold > listed // 2 + 1:  # better than an unseen niche's 1/2
            assert w[n] > w["linkedin"]


def test_weights_favour_better_win_rates() -> None:
    brain = wallets.Brain({"email": store.NicheStats(10, 8), "podcast": store.NicheStats(10, 1)}, None)
    w = wallets.weights(brain, {"email": store.NicheStats(10, 8), "podcast": store.NicheStats(10, 1)})
    assert w["email"] > w["sales"] > w["podcast"] > 0


def test_run_records_from_threads_on_separate_connections_lose_nothing(database: Database) -> None:
    db = database
    agent = _agent(db)

    def worker(i: int) -> None:
        c = connect(db)
        try:
            for j in range(10):
                with transaction(c):
                    wallets.record_run(c, agent, (i + j) % 2 == 0, "email", 1_800_000_000)
        finally:
            c.close()

    run_threads(8, worker)
    conn = connect(db)
    row = store.get_memory(conn, agent.uuid, "run:2027-01-15:email")
    assert row is not None and row.value == '{"success":40,"failure":40}'
    assert wallets.run_key(1_800_000_000 - 8 * 3600 - 1, None) == "run:2027-01-14:general"


# ---- the ledger's single-statement balance update ---------------------------------------------


def test_append_ledger_refusals_write_nothing(database: Database) -> None:
    """Overdraft of either part or of the reinvested bucket, a total past int64, an agent without
    a balances row: each refused by the balance update itself, with no row written."""
    agent = _agent(database)
    conn = connect(database)
    with transaction(conn):
        wallets.earn(conn, agent, 100 * USDC, None, 0)  # owner 97, self 1
    before = (store.get_balance(conn, agent.uuid), store.count_rows(conn, "ledger"))

    def entry(owner_delta: int = 0, self_delta: int = 0, **kw: int) -> store.LedgerEntry:
        return store.LedgerEntry(agent.uuid, "spend", owner_delta, self_delta, "x", **kw)

    refusals: list[tuple[store.LedgerEntry, type[Exception]]] = [
        (entry(owner_delta=-97 * USDC - 1), store.Overdraft),
        (entry(self_delta=-USDC - 1), store.Overdraft),
        (entry(reinvested_delta=-1), store.Overdraft),
        (entry(earned=store.MAX_TOTAL_UNITS - 100 * USDC + 1), store.TotalLimit),
        (store.LedgerEntry(agent_uuid="nobody", kind="spend", owner_delta=0, self_delta=0, source="x"), LookupError),
    ]
    for e, error in refusals:
        with pytest.raises(error), transaction(conn):
            store.append_ledger(conn, e, 1)
        assert (store.get_balance(conn, agent.uuid), store.count_rows(conn, "ledger")) == before
    with transaction(conn):  # exactly at the limits: accepted
        ledger_id, bal = store.append_ledger(
            conn, entry(owner_delta=-97 * USDC, self_delta=-USDC, earned=store.MAX_TOTAL_UNITS - 100 * USDC), 1
        )
    assert bal == store.get_balance(conn, agent.uuid) == store.BalanceRow(0, 0, store.MAX_TOTAL_UNITS, 2, 0)
    row = conn.execute("SELECT amount, balance_after FROM ledger WHERE id = ?", (ledger_id,)).fetchall()
    assert row == [(-98 * USDC, 0)]
    conn.close()


def test_earn_refuses_a_referrer_total_past_int64_before_writing(database: Database) -> None:
    db = database
    referrer = _agent(db)
    agent = _agent(db, referrer.referral_code)
    conn = connect(db)
    with transaction(conn):  # the referrer's total one referral cut short of the ceiling
        store.append_ledger(
            conn,
            store.LedgerEntry(referrer.uuid, "referral", 0, 0, "x", earned=store.MAX_TOTAL_UNITS - 49),
            0,
        )
    rows = store.count_rows(conn, "ledger")
    with pytest.raises(wallets.WalletError) as info, transaction(conn):
        wallets.earn(conn, agent, 10_000, None, 0)  # referral cut 50
    assert info.value.code == "balance_limit"
    assert store.count_rows(conn, "ledger") == rows and store.get_balance(conn, agent.uuid).tx_count == 0
    conn.close()
