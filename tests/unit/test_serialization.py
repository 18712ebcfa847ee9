"""The explicit serialization points of check-then-write (core.store.locks), on SQLite.

On SQLite the write transaction already serialises every writer of the file, so the named lock
takes nothing and FOR UPDATE is empty; what these tests can show here is that each point is taken
(inside a transaction, before the reads it protects, by every caller that decides a write by its
read). The tests with threads on separate connections (as separate processes would) hold on any
backend and are the ones to run on PostgreSQL too."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import merkle
from core import audit, spend_caps, wallets
from core.hire import standard
from core.keys import Caller
from core.marketplace import handover
from core.store import (
    Conn,
    UnsupportedDatabase,
    connect,
    for_update,
    kind_of,
    lock,
    locks,
    transaction,
)
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import wallets as wallet_store
from tests.thread_kit import run_threads

USDC = 1_000_000


def _agent(conn: Conn, n: int = 0) -> wallet_store.AgentRow:
    with transaction(conn):
        return wallets.register(
            conn,
            account_id=None,
            new_key_hash=f"{n:064x}",
            name=f"a{n}",
            specialty="email",
            referral_code=None,
            now=0,
        )


# ---- the primitive -------------------------------------------------------------------------------


def test_sqlite_needs_no_lock_and_no_for_update_but_a_transaction(tmp_path: Path) -> None:
    conn = connect(tmp_path / "l.db")
    assert kind_of(conn) == "sqlite" and for_update(conn) == ""
    with pytest.raises(locks.NotInTransaction):
        lock(conn, "audit")  # outside a transaction a lock would protect nothing
    with transaction(conn):
        lock(conn, "audit")
        lock(conn, "audit")  # taken twice in one transaction: fine (PostgreSQL's xact locks nest too)
    assert wallet_store.NotInTransaction is locks.NotInTransaction
    with pytest.raises(UnsupportedDatabase):
        kind_of(object())  # type: ignore[arg-type]


# ---- the audit log: one lock, taken first -----------------------------------------------------------


def test_audit_append_takes_the_audit_lock_before_reading_the_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = connect(tmp_path / "a.db")
    with pytest.raises(locks.NotInTransaction):  # the lock refuses: nothing is appended outside a transaction
        audit.append(conn, stream="s", kind="k", payload={}, chain=audit.order_rule, now=0.0)
    assert audit_store.size(conn) == 0
    seen: list[str] = []
    real_lock, real_head = audit.lock, audit_store.stream_head
    monkeypatch.setattr(audit, "lock", lambda c, name: (seen.append(f"lock {name}"), real_lock(c, name))[1])
    monkeypatch.setattr(audit_store, "stream_head", lambda c, s: (seen.append("head"), real_head(c, s))[1])
    with transaction(conn):
        audit.append(conn, stream="s", kind="k", payload={}, chain=audit.order_rule, now=0.0)
    assert seen == ["lock audit", "head"]


def test_appends_from_several_connections_keep_ids_seqs_and_the_tree(tmp_path: Path) -> None:
    """Four writers (as four processes would) append to shared streams at once: ids 1..n, every
    stream's seqs 1..k in id order, each entry chained to its predecessor, and the stored tree equal
    to the tree recomputed from the entries' leaves."""
    path = tmp_path / "a.db"
    connect(path).close()
    per_writer, writers = 25, 4

    def writer(i: int) -> None:
        conn = connect(path)
        for j in range(per_writer):
            with transaction(conn):
                audit.append(
                    conn, stream=f"order:o{j % 3}", kind="k", payload={"w": i, "j": j}, chain=audit.order_rule, now=0.0
                )
        conn.close()

    run_threads(writers, writer)
    conn = connect(path)
    n = audit_store.size(conn)
    assert n == per_writer * writers
    entries = [audit_store.get(conn, i) for i in range(1, n + 1)]
    assert all(e is not None for e in entries)
    for stream in ("order:o0", "order:o1", "order:o2"):
        mine = audit_store.stream_entries(conn, stream)
        assert [e.seq for e in mine] == list(range(1, len(mine) + 1))
        assert [e.id for e in mine] == sorted(e.id for e in mine)
        prev = audit.GENESIS
        for e in mine:
            assert e.prev_hash == prev and e.chain_hash == audit.order_rule(e.seq, prev, e.payload.encode())
            assert e.leaf_hash == audit.leaf_hash(e.id, e.stream, e.chain_hash)
            prev = e.chain_hash
    leaves = [e.leaf_hash for e in entries if e is not None]
    assert audit_store.root(conn, n) == merkle.root_from_leaf_hashes(leaves)


# ---- spend caps: the key's lock before the sum ------------------------------------------------------


def _capped(cap: int) -> Caller:
    return Caller(key_hash="ab" * 32, account_id="acct", agent_id=None, daily_cap=cap)


def test_a_cap_hold_locks_the_key_before_summing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = connect(tmp_path / "c.db")
    caller = _capped(10 * USDC)
    with pytest.raises(locks.NotInTransaction):
        spend_caps.hold(conn, caller, "r0", USDC, 0.0)
    assert spend_caps.used_today(conn, caller.key_hash, 0.0) == 0
    seen: list[str] = []
    real_lock = spend_caps.lock
    monkeypatch.setattr(spend_caps, "lock", lambda c, name: (seen.append(name), real_lock(c, name))[1])
    with transaction(conn):
        assert spend_caps.hold(conn, caller, "r1", USDC, 0.0) is not None
    assert seen == [spend_caps.cap_lock(caller.key_hash)] == ["cap:" + "ab" * 32]


def test_holds_from_several_connections_never_pass_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    connect(path).close()
    caller = _capped(10 * USDC)
    made: list[str] = []
    refused: list[str] = []
    guard = threading.Lock()

    def worker(i: int) -> None:
        conn = connect(path)
        for j in range(6):
            try:
                with transaction(conn):
                    spend_caps.hold(conn, caller, f"r{i}-{j}", USDC, 0.0)
                with guard:
                    made.append(f"r{i}-{j}")
            except spend_caps.ServiceError as exc:
                assert exc.code == "daily_cap_exceeded"
                with guard:
                    refused.append(f"r{i}-{j}")
        conn.close()

    run_threads(4, worker)
    conn = connect(path)
    assert len(made) == 10 and len(refused) == 14
    assert spend_caps.used_today(conn, caller.key_hash, 0.0) == 10 * USDC


# ---- balances: read FOR UPDATE by every debit decided on them ---------------------------------------


class _Stop(Exception):
    pass


def test_every_debit_reads_its_balance_for_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """spend, compound, the hire's hold and the marketplace handover decide a debit by the balance
    they read: each reads it with for_update=True (on PostgreSQL: locked until the commit)."""
    conn = connect(tmp_path / "b.db")
    agent = _agent(conn)
    with transaction(conn):
        wallets.earn(conn, agent, 10 * USDC, None, 0)
    calls: list[bool] = []
    real = wallet_store.get_balance

    def spy(c: Conn, uuid: str, *, for_update: bool = False) -> wallet_store.BalanceRow:
        calls.append(for_update)
        return real(c, uuid, for_update=for_update)

    monkeypatch.setattr(wallet_store, "get_balance", spy)
    with transaction(conn):
        wallets.spend(conn, agent, USDC, "x", 0)
        wallets.compound(conn, agent, 10, 0)
        standard._hold(conn, agent, USDC, "job-1", 0)
    assert calls == [True, True, True]

    def stop(c: Conn, uuid: str, *, for_update: bool = False) -> wallet_store.BalanceRow:
        calls.append(for_update)
        raise _Stop

    monkeypatch.setattr(wallet_store, "get_balance", stop)
    listing: Any = SimpleNamespace(id="listing-1", agent_uuid=agent.uuid)
    with pytest.raises(_Stop), transaction(conn):
        handover.hand_over(conn, listing, SimpleNamespace(buyer_address="0x0"), "0xtx", 0)  # type: ignore[arg-type]
    assert calls == [True, True, True, True]


def test_spends_and_compounds_from_several_connections_keep_the_split(tmp_path: Path) -> None:
    """Spends and compounds of one agent from four writers at once: every refusal is the friendly
    insufficient_balance (never a store Overdraft: the balance read is current), the balance never
    goes below zero and the ledger sums to it."""
    path = tmp_path / "b.db"
    conn = connect(path)
    agent = _agent(conn)
    with transaction(conn):
        wallets.earn(conn, agent, 40 * USDC, None, 0)

    def worker(i: int) -> None:
        c = connect(path)
        for j in range(12):
            try:
                with transaction(c):
                    if (i + j) % 5 == 0:
                        wallets.compound(c, agent, 5, 0)
                    else:
                        wallets.spend(c, agent, USDC, "x", 0)
            except wallets.WalletError as exc:
                assert exc.code == "insufficient_balance"
        c.close()

    run_threads(4, worker)
    bal = wallet_store.get_balance(conn, agent.uuid)
    assert bal.owner_balance >= 0 and bal.self_balance >= 0
    assert wallet_store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)


# ---- provider links: the pending row is the claim ------------------------------------------------------


def test_a_pending_provider_row_is_claimed_once_and_taken_over_by_compare_and_set(tmp_path: Path) -> None:
    conn = connect(tmp_path / "p.db")
    agent = _agent(conn)
    pending = {"agent_uuid": agent.uuid, "self_wallet": "0x" + "11" * 20, "owner_address": "0x" + "22" * 20}
    with transaction(conn):
        assert checkout_store.insert_pending_provider(
            conn, **pending, referrer_token_id=None, now=1.0, link_owner="p1", link_attempt="a1"
        )
        # a second link, from any writer: nothing inserted, the claim stays the first's
        assert not checkout_store.insert_pending_provider(
            conn, **pending, referrer_token_id=None, now=2.0, link_owner="p2", link_attempt="a2"
        )
        assert checkout_store.link_claim(conn, agent.uuid) == checkout_store.LinkClaim("p1", "a1", 1.0)
        assert not checkout_store.take_over_link(conn, agent.uuid, "stale", "p3", "a3", 3.0)
        assert checkout_store.take_over_link(conn, agent.uuid, "a1", "p3", "a3", 3.0)
        checkout_store.delete_pending_provider(conn, agent.uuid, "a1")  # the old attempt deletes nothing
        checkout_store.release_link(conn, agent.uuid, "a1")  # nor releases the new one's claim
        assert checkout_store.link_claim(conn, agent.uuid) == checkout_store.LinkClaim("p3", "a3", 3.0)
        checkout_store.release_link(conn, agent.uuid, "a3")
        assert checkout_store.link_claim(conn, agent.uuid) == checkout_store.LinkClaim(None, None, None)
        assert checkout_store.take_over_link(conn, agent.uuid, None, "p4", "a4", 4.0)  # a released claim
        checkout_store.delete_pending_provider(conn, agent.uuid, "a4")
        assert checkout_store.link_claim(conn, agent.uuid) is None
