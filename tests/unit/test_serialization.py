"""Check-then-write under the database's one write lock (core.store.serialization, core.store.backend), on both
backends: a serialization point refuses to run outside a write transaction, a second writer waits for the
first's COMMIT and then reads what it wrote, and writers on separate connections (as separate processes
would be) keep every invariant that a read decides."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import merkle
from core import audit, spend_caps, wallets
from core.keys import Caller
from core.store import (
    Conn,
    Database,
    UnsupportedDatabase,
    connect,
    kind_of,
    lock,
    read_snapshot,
    serialization,
    transaction,
)
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import spend_caps as spend_caps_store
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


def test_a_serialization_point_needs_a_write_transaction(database: Database) -> None:
    conn = database.connect()
    with pytest.raises(serialization.NotInTransaction):
        lock(conn, "audit")  # outside a transaction it would protect nothing
    with read_snapshot(conn), pytest.raises(serialization.NotInTransaction):
        lock(conn, "audit")  # nor in a read-only one
    with transaction(conn):
        lock(conn, "audit")
        lock(conn, "audit")  # reached twice in one transaction: fine
    with pytest.raises(serialization.NotInTransaction):
        lock(conn, "audit")  # the transaction ended with its lock
    with pytest.raises(serialization.NotInTransaction):  # nothing is appended outside a write transaction
        audit.append(conn, stream="s", kind="k", payload={}, chain=audit.order_rule, now=0.0)
    assert audit_store.size(conn) == 0
    assert wallet_store.NotInTransaction is serialization.NotInTransaction
    with pytest.raises(UnsupportedDatabase):
        kind_of(object())  # type: ignore[arg-type]
    conn.close()


def test_a_second_writer_waits_for_the_first_commit_and_reads_what_it_wrote(database: Database) -> None:
    """Two write transactions on separate connections never overlap: the second's BEGIN returns only after
    the first's COMMIT, so the balance it reads is the one the first left (on PostgreSQL its BEGIN takes the
    advisory write lock; READ COMMITTED gives its next statement a snapshot taken after that COMMIT)."""
    first, second = database.connect(), database.connect()
    agent = _agent(first)
    with transaction(first):
        wallets.earn(first, agent, 10 * USDC, None, 0)
    begun = threading.Event()
    seen: list[int] = []

    def other() -> None:
        with transaction(second):
            begun.set()
            seen.append(wallet_store.get_balance(second, agent.uuid).owner_balance)

    with transaction(first):
        wallets.spend(first, agent, USDC, "x", 0)
        thread = threading.Thread(target=other)
        thread.start()
        assert not begun.wait(0.3)  # it waits for this transaction's lock
        after = wallet_store.get_balance(first, agent.uuid).owner_balance
    thread.join(10)
    assert begun.is_set() and seen == [after]
    first.close()
    second.close()


def test_appends_from_several_connections_keep_ids_seqs_and_the_tree(database: Database) -> None:
    """Four writers (as four processes would) append to shared streams at once: ids 1..n, every
    stream's seqs 1..k in id order, each entry chained to its predecessor, and the stored tree equal
    to the tree recomputed from the entries' leaves."""
    per_writer, writers = 25, 4

    def writer(i: int) -> None:
        conn = database.connect()
        for j in range(per_writer):
            with transaction(conn):
                audit.append(
                    conn, stream=f"order:o{j % 3}", kind="k", payload={"w": i, "j": j}, chain=audit.order_rule, now=0.0
                )
        conn.close()

    run_threads(writers, writer)
    conn = database.connect()
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


def test_a_cap_hold_needs_a_write_transaction(database: Database) -> None:
    conn = database.connect()
    caller = _capped(10 * USDC)
    with pytest.raises(serialization.NotInTransaction):
        spend_caps.hold(conn, caller, "r0", USDC, 0.0)
    assert spend_caps_store.used(conn, caller.key_hash, spend_caps.day_of(0.0)) == 0
    conn.close()


def test_holds_from_several_connections_never_pass_the_cap(database: Database) -> None:
    caller = _capped(10 * USDC)
    made: list[str] = []
    refused: list[str] = []
    guard = threading.Lock()

    def worker(i: int) -> None:
        conn = database.connect()
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
    conn = database.connect()
    assert len(made) == 10 and len(refused) == 14
    assert spend_caps_store.used(conn, caller.key_hash, spend_caps.day_of(0.0)) == 10 * USDC


# ---- balances ---------------------------------------------------------------------------------------


def test_spends_and_compounds_from_several_connections_keep_the_split(database: Database) -> None:
    """Spends and compounds of one agent from four writers at once: every refusal is the friendly
    insufficient_balance (never a store Overdraft: the balance read is current), the balance never
    goes below zero and the ledger sums to it."""
    conn = database.connect()
    agent = _agent(conn)
    with transaction(conn):
        wallets.earn(conn, agent, 40 * USDC, None, 0)

    def worker(i: int) -> None:
        c = database.connect()
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
