"""Idempotency-Key claims with several writers (core.store.idempotency, core.idempotency): a key is
claimed by one insert that never replaces a row, and an abandoned claim is taken over by a
compare-and-set on the attempt seen. Two GroupCommitters on one file stand for two API processes;
the tests hold on any backend (run them on PostgreSQL too)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import idempotency, instance
from core.store import Conn, connect, transaction
from core.store import idempotency as store
from core.store.committer import GroupCommitter

SCOPE = "k POST /api/x"


def _gone_owner() -> str:
    """The instance id of a process of this host that has exited."""
    child = subprocess.run(
        [sys.executable, "-c", "from core import instance; print(instance.current())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owner = child.stdout.strip()
    assert instance.is_gone(owner)
    return owner


def test_a_claim_never_replaces_a_row(tmp_path: Path) -> None:
    conn = connect(tmp_path / "i.db")
    with transaction(conn):
        assert store.claim(conn, SCOPE, "k1", "sha-a", "first", 1.0, "me") is None
        found = store.claim(conn, SCOPE, "k1", "sha-b", "second", 2.0, "other")
    assert found == store.IdemRow("sha-a", "in_flight", "first", None, None, 1.0, "me")
    assert store.get(conn, SCOPE, "k1") == found  # the second claim wrote nothing
    with transaction(conn):
        assert store.finish(conn, SCOPE, "k1", "first", 200, b"{}")
        done = store.claim(conn, SCOPE, "k1", "sha-a", "third", 3.0, "me")
    assert done is not None and (done.status, done.attempt, done.response_body) == ("done", "first", b"{}")


def test_a_take_over_is_a_compare_and_set_on_the_attempt_seen(tmp_path: Path) -> None:
    conn = connect(tmp_path / "i.db")
    with transaction(conn):
        store.claim(conn, SCOPE, "k1", "sha-a", "first", 1.0, "dead")
        assert store.take_over(conn, SCOPE, "k1", "first", "sha-b", "second", 5.0, "me")
        # a writer that judged the "first" claim abandoned too, but moved after the one above
        assert not store.take_over(conn, SCOPE, "k1", "first", "sha-c", "third", 6.0, "late")
        assert not store.finish(conn, SCOPE, "k1", "first", 200, b"{}")  # the original lost the key
        assert store.finish(conn, SCOPE, "k1", "second", 201, b"{}")
        assert not store.take_over(conn, SCOPE, "k1", "second", "sha-d", "fourth", 7.0, "x")  # done: never taken
    assert store.get(conn, SCOPE, "k1") == store.IdemRow("sha-b", "done", "second", 201, b"{}", 5.0, "me")


def _work(ran: list[str], name: str) -> idempotency.TxWork:
    def work(conn: Conn) -> tuple[int, bytes]:
        ran.append(name)
        return 200, json.dumps({"by": name}).encode()

    return work


def test_one_key_is_claimed_once_across_writers(tmp_path: Path) -> None:
    """Four writers (processes) run one key at once: one claims it and runs, the others answer 409
    in flight while it runs; afterwards every writer replays its answer."""
    path = tmp_path / "i.db"
    connect(path).close()
    ran: list[str] = []

    async def scenario() -> None:
        writers = [GroupCommitter(path) for _ in range(4)]
        hold = asyncio.Event()
        entered = asyncio.Event()

        async def before() -> None:
            entered.set()
            await hold.wait()

        async def call(i: int) -> idempotency.Answer | str:
            try:
                return await idempotency.execute(
                    writers[i], scope=SCOPE, key="once", body=b"{}", now=10.0, work=_work(ran, f"w{i}"), before=before
                )
            except idempotency.InFlight:
                return "in_flight"

        tasks = [asyncio.create_task(call(i)) for i in range(4)]
        await entered.wait()
        for _ in range(250):  # every other writer answers while the first still holds the key
            if sum(t.done() for t in tasks) == 3:
                break
            await asyncio.sleep(0.02)
        assert sorted(t.result() for t in tasks if t.done()) == ["in_flight"] * 3  # type: ignore[type-var]
        hold.set()
        results = await asyncio.gather(*tasks)
        winner = [r for r in results if isinstance(r, idempotency.Answer)]
        assert len(winner) == 1 and not winner[0].replayed
        replays = await asyncio.gather(
            *(
                idempotency.execute(w, scope=SCOPE, key="once", body=b"{}", now=11.0, work=_work(ran, "again"))
                for w in writers
            )
        )
        assert {(r.body, r.replayed) for r in replays} == {(winner[0].body, True)}
        for w in writers:
            await w.close()

    asyncio.run(scenario())
    assert len(ran) == 1


def test_an_abandoned_claim_is_taken_over_by_one_writer(tmp_path: Path) -> None:
    """A claim of a process that is gone, seen by four writers at once: exactly one takes it over
    and runs; the others find it in flight."""
    path = tmp_path / "i.db"
    conn = connect(path)
    with transaction(conn):
        store.claim(conn, SCOPE, "dead", idempotency.body_digest(b"{}"), "crashed", 10.0, _gone_owner())
    ran: list[str] = []

    async def scenario() -> list[idempotency.Answer | str]:
        writers = [GroupCommitter(path) for _ in range(4)]
        hold = asyncio.Event()

        async def call(i: int) -> idempotency.Answer | str:
            try:
                return await idempotency.execute(
                    writers[i],
                    scope=SCOPE,
                    key="dead",
                    body=b"{}",
                    now=11.0,
                    work=_work(ran, f"w{i}"),
                    before=hold.wait,
                )
            except idempotency.InFlight:
                return "in_flight"

        tasks = [asyncio.create_task(call(i)) for i in range(4)]
        await asyncio.sleep(0.3)
        hold.set()
        out = await asyncio.gather(*tasks)
        for w in writers:
            await w.close()
        return out

    out = asyncio.run(scenario())
    assert sorted(o if isinstance(o, str) else "ran" for o in out) == ["in_flight"] * 3 + ["ran"]
    assert len(ran) == 1
    row = store.get(conn, SCOPE, "dead")
    assert row is not None and row.status == "done" and row.owner == instance.current()


@pytest.mark.parametrize("stale", [True, False])
def test_a_live_claim_is_taken_over_only_once_stale(tmp_path: Path, stale: bool) -> None:
    conn = connect(tmp_path / "i.db")
    with transaction(conn):
        store.claim(conn, SCOPE, "k", idempotency.body_digest(b"{}"), "running", 10.0, "another-host:1:1:x")
    now = 10.0 + idempotency.STALE_AFTER_SECONDS + (1 if stale else -1)
    ran: list[str] = []

    async def scenario() -> None:
        writer = GroupCommitter(tmp_path / "i.db")
        try:
            got = await idempotency.execute(writer, scope=SCOPE, key="k", body=b"{}", now=now, work=_work(ran, "w"))
            assert stale and got.status == 200
        except idempotency.InFlight:
            assert not stale
        finally:
            await writer.close()

    asyncio.run(scenario())
    assert len(ran) == (1 if stale else 0)
