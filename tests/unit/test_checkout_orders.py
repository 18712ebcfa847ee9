"""The order state machine: the transition table, and what one move writes (order, history, audit
entry, webhook) in one transaction."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

import apsw
import pytest

from core import audit
from core.checkout import orders, views
from core.checkout.follower import OrderFollower
from core.store import Database, begin, transaction
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import orders as store
from core.store.events import Event
from tests.thread_kit import waits_for_commit

NOW = 1_800_000_000.0
JOB = "0x" + "ab" * 32


@pytest.fixture()
def conn(database: Database) -> apsw.Connection:
    c = database.connect()
    with transaction(c):
        add_provider(c)
    return c


def add_provider(c: apsw.Connection) -> None:
    """Provider agent 'prov' (token 7) of account 'acc' (inside the caller's transaction)."""
    c.execute("INSERT INTO accounts (id, created_at) VALUES ('acc', 0)")
    c.execute(
        "INSERT INTO wallet_agents (uuid, wallet, account_id, name, specialty, referral_code, created_at)"
        " VALUES ('prov', 'agl_000000000001', 'acc', 'p', 'content_seo', 'REFCODE1', 0)"
    )
    c.execute(
        "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
        " VALUES ('prov', ?, ?, 7, 0)",
        ("0x" + "11" * 20, "0x" + "22" * 20),
    )


def _session(conn: apsw.Connection, sid: str, webhook: str | None) -> None:
    with transaction(conn):
        checkout_store.insert_session(
            conn,
            checkout_store.SessionRow(
                sid,
                "keyhash",
                "complete_in_progress",
                [{"item_id": "i", "quantity": 1}],
                {"email": "b@x.io"},
                "prov",
                250_000_000,
                webhook,
                "s3cret" if webhook else None,
                JOB if sid == "s1" else None,
                "0x3333333333333333333333333333333333333333",
                None,
                None,
                NOW + 3600,
                NOW,
                NOW,
            ),
        )


def _record(conn: apsw.Connection, sid: str = "s1", job: str = JOB, **funding: Any) -> store.OrderRow:
    """create_order for the fixture's session, inside the caller's transaction."""
    return orders.create_order(
        conn,
        session_id=sid,
        job_id=job,
        provider_uuid="prov",
        provider_token_id=7,
        buyer_address="0x3333333333333333333333333333333333333333",
        amount=250_000_000,
        deadline=int(NOW) + 48 * 3600,
        funding_tx="0xf0",
        now=NOW,
        **funding,
    )


def _create(conn: apsw.Connection, sid: str = "s1", job: str = JOB) -> store.OrderRow:
    with transaction(conn):
        return _record(conn, sid, job)


def test_transition_table_is_closed_and_released_is_final() -> None:
    for (a, b), actors in orders.TRANSITIONS.items():
        assert a in orders.STATES and b in orders.STATES and a != b
        assert actors <= set(orders.ACTORS)
    assert not [k for k in orders.TRANSITIONS if k[0] == "released"]
    # released only ever comes from the chain
    assert all(actors == {"chain"} for (a, b), actors in orders.TRANSITIONS.items() if b == "released")
    for a in orders.STATES:
        for b in orders.STATES:
            for actor in orders.ACTORS:
                allowed = actor in orders.TRANSITIONS.get((a, b), frozenset())
                if allowed:
                    orders.check_transition(a, b, actor)
                else:
                    with pytest.raises(orders.InvalidTransition):
                        orders.check_transition(a, b, actor)


def test_create_order_is_once_per_session_and_writes_history_audit_and_webhook(conn: apsw.Connection) -> None:
    _session(conn, "s1", "https://example.com/hook")
    first = _create(conn)
    again = _create(conn)
    assert again == first and first.status == "created"
    session = checkout_store.get_session(conn, "s1")
    assert session is not None and session.status == "completed" and session.order_id == first.id
    hist = store.history(conn, first.id)
    assert [(h.from_state, h.to_state, h.actor) for h in hist] == [(None, "created", "service")]
    entries = audit_store.stream_entries(conn, audit.order_stream(first.id))
    assert len(entries) == 1 and entries[0].id == hist[0].audit_id
    assert entries[0].chain_hash == hashlib.sha256(b"genesis" + entries[0].payload.encode()).hexdigest()
    rows = conn.execute("SELECT event, source, body FROM outbox").fetchall()
    assert len(rows) == 1
    event, source, body = rows[0]
    assert (event, source) == ("job.state_changed", f"order:{first.id}")
    sent = json.loads(body)
    assert sent["job_id"] == first.id and sent["status"] == "created"
    assert sent["metadata"] == {"from_state": None, "to_state": "created"}


def test_the_followers_funding_event_beside_the_apis_order_settles_that_order(
    conn: apsw.Connection, database: Database
) -> None:
    """The API records the order from its receipt (not final yet) while the indexer applies the job's
    JobFunded on another connection. On PostgreSQL the two transactions run side by side: the follower
    must wait for the API's, then settle its order, not create a second one (the unique session_id
    refused it at the API's commit, the event was skipped and the funding never settled: a CI run)."""
    _session(conn, "s1", None)
    begin(conn)  # the API's transaction, open while the follower starts
    api_order = _record(conn, funding_block=5, funding_final=False)
    event = Event(5, "0xb5", "0xf0", 0, "PaymentGateway", "JobFunded", "", "0x", {
        "jobId": JOB, "providerTokenId": 7, "buyer": "0x3333333333333333333333333333333333333333",
        "amount": 250_000_000, "deadline": int(NOW) + 48 * 3600,
    })  # fmt: skip
    waits_for_commit(conn, database, lambda indexer: OrderFollower(lambda: NOW).apply(indexer, 31337, event))
    rows = conn.execute("SELECT id, funding_settled, funding_block FROM orders WHERE session_id = 's1'").fetchall()
    assert rows == [(api_order.id, 1, 5)]


def test_a_move_is_checked_and_chained(conn: apsw.Connection) -> None:
    _session(conn, "s1", None)
    order = _create(conn)
    with transaction(conn):
        orders.transition(conn, order.id, "acknowledged", actor="provider", now=NOW + 1)
        orders.transition(conn, order.id, "in_progress", actor="provider", now=NOW + 2)
    with pytest.raises(orders.InvalidTransition), transaction(conn):
        orders.transition(conn, order.id, "released", actor="provider", now=NOW + 3)
    got = store.get_order(conn, order.id)
    assert got is not None and got.status == "in_progress"
    entries = audit_store.stream_entries(conn, audit.order_stream(order.id))
    assert [e.seq for e in entries] == [1, 2, 3]
    for prev, cur in itertools.pairwise(entries):
        assert cur.prev_hash == prev.chain_hash
        assert cur.chain_hash == hashlib.sha256(prev.chain_hash.encode() + cur.payload.encode()).hexdigest()
    assert json.loads(entries[2].payload)["to_state"] == "in_progress"
    assert conn.execute("SELECT count(*) FROM outbox").fetchall()[0][0] == 0  # no webhook_url


def test_unknown_columns_are_refused(conn: apsw.Connection) -> None:
    _session(conn, "s1", None)
    order = _create(conn)
    with pytest.raises(ValueError), transaction(conn):
        orders.transition(conn, order.id, "acknowledged", actor="provider", now=NOW, updates={"status; --": 1})
    with pytest.raises(ValueError), transaction(conn):
        store.update_order(conn, order.id, NOW, amount=1)


def test_views_by_visibility(conn: apsw.Connection) -> None:
    _session(conn, "s1", "https://example.com/hook")
    order = _create(conn)
    public = views.order_view(conn, order.id, "public")
    assert public is not None
    assert "line_items" not in public and "buyer_details" not in public and "webhook_delivery" not in public
    assert public["audit_chain"]["entries"][0]["chain_hash"] and public["history"][0]["to_state"] == "created"
    auth = views.order_view(conn, order.id, "authenticated")
    assert auth is not None and "line_items" in auth and "buyer_details" not in auth
    funder = views.order_view(conn, order.id, "funder")
    assert funder is not None and funder["buyer_details"]["email"] == "b@x.io"
    assert funder["webhook_delivery"][0]["status"] == "pending"
    assert "secret" not in json.dumps(funder["webhook_delivery"])
    assert views.order_view(conn, "ord_missing", "public") is None


def test_operator_command_fails_and_recovers(
    conn: apsw.Connection, database: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    from scripts import orders as command

    _session(conn, "s1", None)
    order = _create(conn)
    db = database.location
    assert command.main(["--db", db, "recover", order.id]) == 2  # created -> in_progress is not a recovery
    assert command.main(["--db", db, "fail", order.id, "--reason", "provider vanished"]) == 0
    assert command.main(["--db", db, "recover", order.id]) == 0
    assert command.main(["--db", db, "fail", "ord_nope", "--reason", "x"]) == 1
    assert command.main(["--db", db, "show", order.id]) == 0
    shown = json.loads(capsys.readouterr().out.split("\n", 2)[-1])
    assert shown["status"] == "in_progress"
    assert [(h["to_state"], h["actor"]) for h in shown["history"]][-2:] == [
        ("failed", "operator"),
        ("in_progress", "operator"),
    ]


def test_settled_earnings_count_the_providers_payouts_only(conn: apsw.Connection) -> None:
    from core.store import wallets as wallet_store

    assert wallet_store.settled_earnings(conn, "prov") == 0
    with transaction(conn):
        for i, (token, amount) in enumerate([(7, 250_000_000), (7, 1), (8, 999)]):
            conn.execute(
                "INSERT INTO payouts (chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount,"
                " owner_cut, agent_cut, service_cut, referral_cut, owner, self_wallet)"
                " VALUES (31337, ?, ?, 1, 'r', ?, 'p', ?, 0, 0, 0, 0, 'o', 's')",
                (f"0x{i}", i, token, amount),
            )
    assert wallet_store.settled_earnings(conn, "prov") == 250_000_001  # token 8 is another agent's
