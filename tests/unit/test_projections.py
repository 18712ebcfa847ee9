"""Projections: a batch of events leaves the tables exactly as applying them one at a time would
(the batch collapses repeated overwrites of a row), rollback of a batch written under the reorg
journal restores the state before it, and schema 6 keeps the rows of older files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from core.store import connect, reorg, schema, transaction
from core.store.events import Event
from core.store.projections import _Pending, apply_events, dump

CHAIN = 31337
TOKENS = (1, 2, 3)


def _addr(n: int) -> str:
    return "0x" + f"{n:040x}"


def _event(i: int, op: tuple[str, int, int]) -> Event:
    """The i-th event of a history: block i + 1, log index 0 (each write's updated_block tells it apart)."""
    name, token, value = op
    contract, args = {
        "AgentRegistered": (
            "AgentRegistry",
            {
                "tokenId": token,
                "walletId": f"agl_{token}",
                "owner": _addr(value),
                "selfWallet": _addr(token),
                "referrerTokenId": 0,
            },
        ),
        "Transfer": ("AgentRegistry", {"from": _addr(0), "to": _addr(value), "tokenId": token}),
        # every fifth change is a reset to the zero address (the agent changed hands)
        "SelfWalletChanged": (
            "AgentRegistry",
            {"tokenId": token, "current": _addr(0 if value % 5 == 0 else 1000 + value)},
        ),
        "AgentPauseChanged": ("AgentRegistry", {"tokenId": token, "paused": value % 2 == 1, "seller": _addr(value)}),
        "EarningsRecorded": ("AgentRegistry", {"tokenId": token, "lifetimeEarnings": value}),
        "PriceSet": ("AgentEscrow", {"tokenId": token, "price": value, "slaSeconds": value * 3600}),
        "PaymentCredited": ("AgentPayouts", {"payee": _addr(token), "amount": value}),
    }[name]
    return Event(i + 1, "0x" + "bb" * 32, "0x" + f"{i:064x}", 0, contract, name, "0x01", "0x", args)


KINDS = ("AgentRegistered", "Transfer", "SelfWalletChanged", "AgentPauseChanged", "EarningsRecorded", "PriceSet")
OPS = st.lists(
    st.tuples(
        st.sampled_from([*KINDS, "PaymentCredited"]),
        st.sampled_from(TOKENS),
        st.integers(min_value=1, max_value=50),
    ),
    max_size=60,
)


def _history(ops: list[tuple[str, int, int]]) -> list[Event]:
    """Events for `ops` after tokens 1 and 2 are registered; token 3 only if an op registers it (its
    earlier writes miss); each token registered once (the registry mints a token once)."""
    registered = {1, 2}
    kept = [("AgentRegistered", 1, 1), ("AgentRegistered", 2, 2)]
    for op in ops:
        if op[0] == "AgentRegistered":
            if op[1] in registered:
                continue
            registered.add(op[1])
        kept.append(op)
    return [_event(i, op) for i, op in enumerate(kept)]


def _db() -> apsw.Connection:
    return connect(":memory:")


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_a_batch_leaves_every_row_as_one_event_at_a_time_would(ops: list[tuple[str, int, int]]) -> None:
    events = _history(ops)
    batched, single = _db(), _db()
    with transaction(batched):
        apply_events(batched, CHAIN, events)
    with transaction(single):
        for e in events:
            apply_events(single, CHAIN, [e])
    assert dump(batched) == dump(single)


@settings(max_examples=100, deadline=None)
@given(OPS, OPS)
def test_rolling_back_a_journaled_batch_restores_the_state_before_it(
    before: list[tuple[str, int, int]], after: list[tuple[str, int, int]]
) -> None:
    events = _history(before + after)
    final, tail = events[: len(events) // 2], events[len(events) // 2 :]
    conn = _db()
    with transaction(conn):
        apply_events(conn, CHAIN, final)
    state = dump(conn)
    with transaction(conn):
        reorg.set_block(conn, 10_000)
        apply_events(conn, CHAIN, [e._replace(block_number=10_000) for e in tail])
        reorg.set_block(conn, None)
    with transaction(conn):
        reorg.rollback_to(conn, CHAIN, 9_999)
    assert dump(conn) == state


def test_repeated_overwrites_of_a_row_run_once_each_kind_in_the_order_of_their_last_writes() -> None:
    pending = _Pending()
    price = "UPDATE agents SET hire_price = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?"
    owner = "UPDATE agents SET owner = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?"
    insert = "INSERT INTO agents (chain_id, token_id) VALUES (?, ?)"
    pending.add(price, (5, 1, CHAIN, 1), overwrite=True)
    pending.add(owner, ("0xa", 2, CHAIN, 1), overwrite=True)
    pending.add(price, (6, 3, CHAIN, 1), overwrite=True)  # replaces the first: runs after the owner's
    pending.add(price, (7, 3, CHAIN, 2), overwrite=True)  # another row: kept
    pending.add(insert, (CHAIN, 3), overwrite=False)  # pins what came before it on agents
    pending.add(price, (8, 4, CHAIN, 1), overwrite=True)  # so this one cannot replace an earlier price
    queued = [s for s in pending.statements if s is not None]
    assert queued == [
        (owner, ("0xa", 2, CHAIN, 1)),
        (price, (6, 3, CHAIN, 1)),
        (price, (7, 3, CHAIN, 2)),
        (insert, (CHAIN, 3)),
        (price, (8, 4, CHAIN, 1)),
    ]


def test_schema_6_keeps_the_events_and_payouts_of_a_version_5_file(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    old = apsw.Connection(str(path))
    with transaction(old):
        for script in schema.MIGRATIONS[:5]:
            old.execute(script)
        old.execute("PRAGMA user_version=5")
        old.execute(
            "INSERT INTO events (chain_id, block_number, block_hash, tx_hash, log_index, contract, event, topics, data)"
            " VALUES (1, 7, '0xb', '0xt', 3, 'AgentEscrow', 'PriceSet', '0x01', '0x')"
        )
        old.execute(
            "INSERT INTO payouts (rowid, chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount,"
            " owner_cut, agent_cut, service_cut, referral_cut, owner, self_wallet) VALUES (41, 1, '0xt', 4, 7, 'r', 9,"
            " 'p', 100, 97, 1, 2, 0, 'o', 's')"
        )
    old.close()
    conn = connect(path)
    version = conn.execute("PRAGMA user_version").fetchall()[0][0]
    assert version == len(schema.MIGRATIONS)
    rows: dict[str, Any] = dump(conn)
    assert rows["events"] == [(1, 7, "0xb", "0xt", 3, "AgentEscrow", "PriceSet", "0x01", "0x")]
    assert [r[:8] for r in rows["payouts"]] == [(1, "0xt", 4, 7, "r", 9, "p", 100)]
    assert conn.execute("SELECT rowid FROM payouts").fetchall() == [(41,)]  # the journal names rows by rowid
    # the same log again is ignored; another log of the block is kept
    with transaction(conn):
        again = Event(
            7, "0xb", "0xt", 3, "AgentEscrow", "PriceSet", "0x01", "0x", {"tokenId": 9, "price": 1, "slaSeconds": 3600}
        )
        apply_events(conn, 1, [again])
        apply_events(conn, 1, [Event(7, "0xb", "0xt", 5, "AgentEscrow", "Other", "0x02", "0x", {})])
    assert [r[4] for r in dump(conn)["events"]] == [3, 5]
    # payouts are journaled for reorgs again after the rebuild (its triggers were dropped with it)
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"payouts_undo_I", "payouts_undo_U", "payouts_undo_D"} <= triggers


def test_price_set_records_the_sla_and_a_reset_self_wallet_is_the_zero_address() -> None:
    conn = _db()
    events = _history([("PriceSet", 1, 5), ("SelfWalletChanged", 2, 7), ("SelfWalletChanged", 2, 10)])
    with transaction(conn):
        apply_events(conn, CHAIN, events)
    rows = conn.execute("SELECT token_id, hire_price, hire_sla, self_wallet FROM agents ORDER BY token_id").fetchall()
    assert rows == [(1, 5, 5 * 3600, _addr(1)), (2, 0, 0, _addr(0))]
