"""An escrow hire job settled by two writers at once, on both backends: the API process that sent the
release (core.hire.escrow.record_closed) and the indexer's escrow follower applying the mined
JobReleased (core.hire.follower). On PostgreSQL their transactions run side by side; whichever comes
second must wait for the first and see its move: one `releasing -> released` move, the job final."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.hire import moves
from core.hire.escrow import record_closed
from core.hire.follower import EscrowFollower
from core.store import Conn, Database, begin, transaction
from core.store import audit as audit_store
from core.store import hire as store
from core.store.events import Event
from tests.thread_kit import waits_for_commit
from tests.unit.test_checkout_orders import add_provider
from tests.unit.test_hire_rules import _job

NOW = 1_800_000_000.0
JOB = "0x" + "cd" * 32
TX = "0x" + "ee" * 32


@pytest.fixture()
def conn(database: Database) -> Conn:
    c = database.connect()
    with transaction(c):
        add_provider(c)
        job = dataclasses.replace(
            _job(), id=JOB, kind="escrow", status="releasing", provider_uuid="prov", provider_token_id=7, amount=5
        )
        assert store.insert_job(c, job)
    return c


def _released() -> Event:
    return Event(9, "0xb9", TX, 0, "AgentEscrow", "JobReleased", "", "0x", {"jobId": JOB})


def _moves(conn: Conn) -> list[tuple[str, str, bool]]:
    entries = audit_store.stream_entries(conn, moves.stream(JOB))
    payloads = [json.loads(e.payload) for e in entries]
    return [(p["from_state"], p["to_state"], bool(p.get("final"))) for p in payloads]


def test_the_followers_event_beside_the_apis_close_makes_the_job_final_once(conn: Conn, database: Database) -> None:
    begin(conn)  # the API's transaction, open while the indexer applies the event
    assert record_closed(conn, JOB, "released", TX, NOW)
    waits_for_commit(conn, database, lambda c: EscrowFollower(lambda: NOW + 1).apply(c, 31337, _released()))
    job = store.get_job(conn, JOB)
    assert job is not None and (job.status, job.final, job.settle_tx) == ("released", True, TX)
    # the API's move, then the follower's finality (before: the follower's stale read recorded a second
    # `releasing -> released` and its compare-and-set failed, so the job never became final)
    assert _moves(conn) == [("releasing", "released", False), ("released", "released", True)]


def test_the_apis_close_beside_the_followers_event_records_nothing_more(conn: Conn, database: Database) -> None:
    begin(conn)  # the indexer's transaction, open while the API records the release it saw mined
    EscrowFollower(lambda: NOW).apply(conn, 31337, _released())
    closed: list[bool] = []
    waits_for_commit(conn, database, lambda c: closed.append(record_closed(c, JOB, "released", TX, NOW + 1)))
    assert closed == [False]
    job = store.get_job(conn, JOB)
    assert job is not None and (job.status, job.final) == ("released", True)
    assert _moves(conn) == [("releasing", "released", True)]
