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
from core.store import connect, transaction
from core.store import wallets as store

USDC = 1_000_000


def _agent(db_path: Path, referrer_code: str | None = None) -> store.AgentRow:
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


def test_ledger_writes_refuse_to_run_outside_a_transaction(tmp_path: Path) -> None:
    agent = _agent(tmp_path / "w.db")
    conn = connect(tmp_path / "w.db")
    with pytest.raises(store.NotInTransaction):
        wallets.earn(conn, agent, USDC, None, 0)
    assert store.count_rows(conn, "ledger") == 0


def test_overdraft_is_refused_and_rolls_back(tmp_path: Path) -> None:
    agent = _agent(tmp_path / "w.db")
    conn = connect(tmp_path / "w.db")
    with transaction(conn):
        wallets.earn(conn, agent, 100 * USDC, None, 0)
    with pytest.raises(wallets.WalletError) as info, transaction(conn):
        wallets.spend(conn, agent, 98 * USDC + 1, "x", 0)
    assert info.value.code == "insufficient_balance"
    assert store.get_balance(conn, agent.uuid).balance == 98 * USDC
    assert store.count_rows(conn, "ledger") == 1


def test_unknown_specialty_and_referral_code(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    for spec, code, want in (("astrology", None, "invalid_specialty"), ("email", "ABCDEFGH", "unknown_referral_code")):
        with pytest.raises(wallets.WalletError) as info, transaction(conn):
            wallets.register(
                conn, account_id=None, new_key_hash="22" * 32, name="a", specialty=spec, referral_code=code, now=0
            )
        assert info.value.code == want
    assert store.count_rows(conn, "accounts") == 0


def test_spends_from_threads_on_separate_connections_never_overdraw(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    agent = _agent(db)
    conn = connect(db)
    with transaction(conn):
        wallets.earn(conn, agent, 50 * USDC, None, 0)  # 49 USDC credited
    ok: list[int] = []
    refused: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
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

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
