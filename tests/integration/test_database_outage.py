"""Losing the PostgreSQL database under the service, as production loses it: the server restarted under
load (`pg_ctl restart -m fast`, every session ended), stopped for a while, or every session of the database
terminated at once (a failover-like cut) while the indexer is in the middle of a step.

What must hold: a call that meets the outage answers 503 `database_unavailable` with Retry-After (never
500) and loses nothing; /healthz answers within a second with the database marked down; an
Idempotency-Key whose call ended without a commit runs again at once once the database is back; every
long-lived part (the writer, the reads, the indexer and its lease, the jobs, the outbox) carries on by
itself, and the index catches up and equals a clean run's. Each test has a cluster of its own (they
stop it)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from api.app import create_app, make_runner
from api.http import Hooks
from core.anvil import Anvil, free_port
from core.config import Settings
from core.money import parse_usdc
from core.store import Database
from core.store import wallets as wallet_store
from core.store.projections import dump
from indexer.rpc import RetryPolicy, RpcClient
from scripts.devchain import System, run_scenario
from tests import pg_redirect
from tests.integration.indexer_kit import index_to_head, make_indexer
from tests.integration.proc_kit import NO_CHAIN, wait_serving
from tests.integration.test_leader_failover import _health, _pays, _serve, _until, chain  # noqa: F401 (a fixture)
from tests.pg_kit import PgCluster

# The module runs once, in the first half of `make test`: it makes clusters of its own, so the second
# half (everything on PostgreSQL) would only run it again.
pytestmark = pytest.mark.skipif(pg_redirect.wanted(), reason="runs on its own clusters in the first half")


@pytest.fixture()
def cluster() -> Iterator[PgCluster]:
    own = PgCluster()
    try:
        yield own.start()
    finally:
        own.stop()


async def _json(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    body: dict[str, Any] = await resp.json()
    return body


@contextlib.asynccontextmanager
async def _serving(database: Database, rpc_url: str, hooks: Hooks | None = None) -> AsyncIterator[str]:
    """The service (no indexer) on `database`, served on loopback: its base URL."""
    conn = database.connect()
    app = create_app(
        NO_CHAIN, rpc_url, conn, settings=Settings(database_url=database.location), hooks=hooks, sweep_interval=None
    )
    runner = make_runner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
        conn.close()


async def _register(session: aiohttp.ClientSession, base: str, name: str) -> tuple[str, str]:
    async with session.post(base + "/api/agents/register", json={"name": name, "specialty": "data_research"}) as r:
        assert r.status == 201, await r.text()
        reg = await _json(r)
    return reg["api_key"], reg["agent"]["wallet"]


def test_an_outage_answers_503_reports_itself_and_frees_its_keys_at_once(cluster: PgCluster) -> None:
    """The server stops after an earn's Idempotency-Key was claimed and before its transaction: the earn
    answers 503 database_unavailable (Retry-After), so do other writes and reads while the server is down,
    and /healthz answers within a second with the database down. Once the server is back, the same key
    runs the earn at once (before: 409 idempotency_in_flight for up to 5 minutes, the claim's release lost
    with the database), and the balance holds exactly the earns that were answered 200."""
    database = cluster.fresh()
    stop_during: dict[str, bool] = {"armed": False}

    async def before_write(request: web.Request) -> None:
        if stop_during["armed"]:
            stop_during["armed"] = False
            await asyncio.to_thread(cluster.stop_server)

    async def scenario(rpc_url: str) -> None:
        async with (
            _serving(database, rpc_url, Hooks(before_write=before_write)) as base,
            aiohttp.ClientSession() as session,
        ):
            key, wallet = await _register(session, base, "outage")
            auth = {"Authorization": f"Bearer {key}"}
            earn = {"agentId": wallet, "amount": 10, "source": "t"}
            async with session.post(base + "/api/agents/earn", json=earn, headers=auth) as r:
                assert r.status == 200
            stop_during["armed"] = True
            keyed = {**auth, "Idempotency-Key": "during-the-outage"}
            async with session.post(base + "/api/agents/earn", json=earn, headers=keyed) as r:
                body = await _json(r)
                assert (r.status, body["code"]) == (503, "database_unavailable"), body
                assert r.headers["Retry-After"] == "2" and r.headers["Idempotency-Key"] == "during-the-outage"
            async with session.post(base + "/api/agents/earn", json=earn, headers=auth) as r:
                assert (r.status, (await _json(r))["code"]) == (503, "database_unavailable")
                assert r.headers["Retry-After"] == "2"
            started = time.monotonic()
            async with session.get(base + f"/api/agents/balance?agentId={wallet}", headers=auth) as r:
                assert (r.status, (await _json(r))["code"]) == (503, "database_unavailable")
            assert time.monotonic() - started < 5  # a bounded wait for a pooled connection, not a hang
            started = time.monotonic()
            async with session.get(base + "/healthz") as r:
                health = await _json(r)
            took = time.monotonic() - started
            assert r.status == 200 and took < 1.0, (r.status, took)
            assert health["status"] == "degraded" and health["database"]["state"] == "down"
            assert health["parts"]["writer"]["state"] == "failing"

            await asyncio.to_thread(cluster.start_server)
            # the first answer to the key that is not "the database is down" is the earn itself
            deadline = time.monotonic() + 15
            while True:
                async with session.post(base + "/api/agents/earn", json=earn, headers=keyed) as r:
                    status, body = r.status, await _json(r)
                if status != 503:
                    break
                assert time.monotonic() < deadline, body
                await asyncio.sleep(0.2)
            assert status == 200, body  # not 409 idempotency_in_flight
            async with session.post(base + "/api/agents/earn", json=earn, headers=keyed) as r:
                assert r.status == 200 and r.headers.get("Idempotent-Replayed") == "true"
            async with session.get(base + f"/api/agents/balance?agentId={wallet}", headers=auth) as r:
                balance = await _json(r)
            assert parse_usdc(str(balance["totalEarned"])) == 20_000_000  # the first earn and the keyed one
            # no indexer in this process ("starting"): every part of it works again
            await _until(
                session,
                base,
                lambda h: h["database"]["state"] == "up" and all(p["state"] == "ok" for p in h["parts"].values()),
                15,
            )

    with Anvil() as node:  # /healthz asks the node too
        asyncio.run(scenario(node.rpc_url))


def test_a_server_that_stops_answering_is_cut_off_within_bounds(cluster: PgCluster) -> None:
    """Every process of the server stopped (SIGSTOP): nothing answers and nothing is closed, as with a hung
    host or a network that drops packets. A write answers 503 within seconds (its statement is cut
    STATEMENT_GRACE past the session's statement_timeout, here 1.5 s, and a new session is not waited for
    past connect_timeout); /healthz answers within a second with the database down; once the server
    answers again, so does the service."""
    database = Database(cluster.fresh().location + "?options=-c%20statement_timeout%3D1500")

    async def scenario(rpc_url: str) -> None:
        async with _serving(database, rpc_url) as base, aiohttp.ClientSession() as session:
            key, wallet = await _register(session, base, "stalled")
            auth = {"Authorization": f"Bearer {key}"}
            earn = {"agentId": wallet, "amount": 10, "source": "t"}
            async with session.post(base + "/api/agents/earn", json=earn, headers=auth) as r:
                assert r.status == 200
            await asyncio.to_thread(cluster.pause)
            try:
                started = time.monotonic()
                async with session.post(base + "/api/agents/earn", json=earn, headers=auth) as r:
                    body = await _json(r)
                took = time.monotonic() - started
                assert (r.status, body["code"]) == (503, "database_unavailable"), body
                assert took < 10, f"the write waited {took:.1f} s"
                started = time.monotonic()
                async with session.get(base + "/healthz") as r:
                    health = await _json(r)
                assert time.monotonic() - started < 1.0 and health["database"]["state"] == "down", health
            finally:
                await asyncio.to_thread(cluster.resume)
            deadline = time.monotonic() + 15
            while True:
                async with session.post(base + "/api/agents/earn", json=earn, headers=auth) as r:
                    if r.status == 200:
                        break
                    assert r.status == 503 and time.monotonic() < deadline, await r.text()
                await asyncio.sleep(0.2)

    with Anvil() as node:
        asyncio.run(scenario(node.rpc_url))


def test_a_cluster_restart_under_load_loses_nothing_and_the_index_catches_up(
    chain: tuple[System, str],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    cluster: PgCluster,
) -> None:
    """Two service processes (API, jobs, outbox, indexer, as `make run` starts them) on one database; earns
    with an Idempotency-Key each go to both while the cluster restarts (`pg_ctl restart -m fast`). No call
    answers 500; every earn is eventually answered 200 by retrying its key, and is in the ledger exactly
    once; a key is never held `in_flight` for long after the restart; the indexer (whose session the restart
    ended) leads again, follows new blocks on both processes' view, and its index equals a clean run's; both
    processes report `ok` again."""
    s, rpc = chain
    database = cluster.fresh()
    run_scenario(s)
    s.tx(s.deployer, s.usdc.functions.setBlacklisted(s.users[2].address, True))  # agent 2's payouts: credits
    procs: list[subprocess.Popen[bytes]] = []
    bases: list[str] = []
    for name in ("a", "b"):
        proc, base = _serve(rpc, tmp_path, s, name, database)
        procs.append(proc)
        bases.append(base)
    try:
        statuses, stuck = asyncio.run(_restart_under_load(cluster, bases, database, s))
        assert 500 not in statuses and not {code for code in statuses if code >= 500} - {503}, statuses
        assert statuses.get(503, 0) > 0, f"no call met the outage: {statuses}"  # the restart was under load
        assert max(stuck, default=0.0) < 3.0, f"a key stayed in flight {max(stuck):.1f} s after the restart"
        for proc in procs:
            assert proc.poll() is None, "a process ended"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    conn = database.connect(durable=False)
    rows = dump(conn)
    conn.close()
    clean = asyncio.run(index_to_head(tmp_path / "clean.db", rpc, s))
    assert rows["credits"] and rows == clean


async def _restart_under_load(
    cluster: PgCluster, bases: list[str], database: Database, s: System
) -> tuple[dict[int, int], list[float]]:
    """Earns over both processes while the cluster restarts; then the checks of the ledger and the index.
    Returns every status answered (a count by status) and, for each key answered 409 after the restart,
    how long after the restart it was still in flight."""
    statuses: dict[int, int] = {}
    stuck: list[float] = []
    restarted_at: list[float] = []
    acknowledged: dict[str, int] = {}  # wallet -> earns answered 200
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        for base in bases:
            await wait_serving(session, base + "/healthz")
        agents = [await _register(session, bases[i % 2], f"a{i}") for i in range(8)]
        stop = asyncio.Event()
        counter = itertools.count()

        async def worker(w: int) -> None:
            while not stop.is_set():
                n = next(counter)
                key, wallet = agents[n % len(agents)]
                idem = f"k{n}"
                headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": idem}
                body = {"agentId": wallet, "amount": 1, "source": "load"}
                for attempt in itertools.count():
                    base = bases[(n + attempt) % 2]  # a retry goes to the other process
                    try:
                        async with session.post(base + "/api/agents/earn", json=body, headers=headers) as r:
                            status = r.status
                    except aiohttp.ClientError:
                        status = 0
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200:
                        acknowledged[wallet] = acknowledged.get(wallet, 0) + 1
                        break
                    assert status in (503, 409, 0), status
                    if status == 409 and restarted_at:
                        stuck.append(time.monotonic() - restarted_at[0])
                    await asyncio.sleep(0.1)

        workers = [asyncio.create_task(worker(w)) for w in range(8)]
        await asyncio.sleep(1.5)
        await asyncio.to_thread(cluster.restart)
        restarted_at.append(time.monotonic())
        _pays(s, 0x50, 3)  # new events while the indexer's session is gone
        await asyncio.sleep(3.0)
        stop.set()
        await asyncio.gather(*workers)
        head = s.w3.eth.block_number
        for base in bases:
            await _until(session, base, lambda h: (h["indexer"]["seen"] or -1) >= head, 30)
            await _until(session, base, lambda h: h["status"] == "ok", 30)
        leaders = [(await _health(session, base))["indexer"]["leader"] for base in bases]
        assert sorted(leaders) == [False, True]
    conn = database.connect()
    try:
        for _key, wallet in agents:
            agent = wallet_store.agent_by_wallet(conn, wallet)
            assert agent is not None
            bal = wallet_store.get_balance(conn, agent.uuid)
            earned = acknowledged.get(wallet, 0)
            assert bal.total_earned == earned * 1_000_000, (wallet, bal.total_earned, earned)
            assert wallet_store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)
        (in_flight,) = conn.execute("SELECT count(*) FROM idempotency_keys WHERE status = 'in_flight'").fetchone()
        assert in_flight == 0
    finally:
        conn.close()
    return statuses, stuck


@pytest.mark.parametrize("phase", ["historical", "realtime"])
def test_every_session_cut_while_the_indexer_is_mid_step(
    chain: tuple[System, str],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    cluster: PgCluster,
    phase: str,
) -> None:
    """A failover-like cut: every session of the database is terminated while the indexer is inside a
    step's transaction, a backfill range's (its COMMIT runs in a thread of its own) or a realtime batch's
    (a follower's step holds it there). The step fails having written nothing; the indexer opens a new
    session by itself, takes its lease again, applies the range again, and its index equals a clean run's."""
    s, rpc = chain
    run_scenario(s)
    database = cluster.fresh()
    inside, go_on = threading.Event(), threading.Event()

    class Hold:
        """A follower whose step, run in every step's transaction (core.followers), holds the phase's first
        (a realtime batch's checkpoint is above the final block, a backfill range's never)."""

        name = "hold"
        contracts = frozenset({"AgentRegistry"})

        def apply(self, conn: Any, chain_id: int, event: Any) -> None:
            pass

        def finalized(self, conn: Any, chain_id: int, final: int) -> None:
            (tip,) = conn.execute("SELECT block_number FROM sync_state WHERE chain_id = ?", (chain_id,)).fetchone()
            if (tip > final) == (phase == "realtime") and not inside.is_set():
                inside.set()
                go_on.wait(30)

    async def scenario() -> dict[str, list[tuple[Any, ...]]]:
        conn = database.connect(durable=False)
        async with RpcClient(rpc, RetryPolicy(attempts=3)) as client:
            ix = make_indexer(conn, client, s, followers=[Hold()])
            stop = asyncio.Event()
            task = asyncio.create_task(ix.run(stop))
            assert await asyncio.to_thread(inside.wait, 30)
            assert await asyncio.to_thread(cluster.terminate_sessions, database) >= 1
            go_on.set()
            head = s.w3.eth.block_number
            deadline = time.monotonic() + 30
            while ix.status.seen < head:
                assert not task.done(), task
                assert time.monotonic() < deadline, (ix.status, ix.health)
                await asyncio.sleep(0.05)
            assert ix.health.recoveries >= 1 and ix.health.failing_since is None
            stop.set()
            await task
            rows = dump(ix.conn)
            ix.conn.close()
            return rows

    rows = asyncio.run(scenario())
    clean = asyncio.run(index_to_head(tmp_path / "clean.db", rpc, s))
    assert rows == clean
