"""Three API processes (the service as `make run` serves it) on one database, requests
spread over them at once: balances never overdraw, the decision-log rate limit stays exact, an
Idempotency-Key is claimed once, and per-agent decision sequences and the audit log's Merkle tree
come out as one process would have written them.

The API runs in processes of its own (this module's entry point: no chain; the paths measured never
call it)."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

import merkle
from core import audit
from core.anvil import free_port
from core.chain import ROOT
from core.decisions import RATE_LIMIT_PER_HOUR
from core.money import parse_usdc
from core.store import audit as audit_store
from core.store import open_database
from core.store import wallets as wallet_store
from tests.conftest import BACKENDS
from tests.integration.proc_kit import NO_CHAIN, wait_serving
from tests.pg_kit import PgCluster, deadlocks_broken

PROCESSES = 3
DECISION = {
    "event_type": "routine",
    "content_hash": "9f" * 32,
    "model_id": "m",
    "model_version": "1",
    "evidence_manifest": [{"type": "json", "sha256": "ab" * 32}],
}


@pytest.fixture(scope="module", params=BACKENDS)
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[str]]]:
    """(database location, base URLs) of three API processes on one database (a SQLite file; a
    PostgreSQL database), shared by the tests of this module (each test uses agents of its own)."""
    tmp_path = tmp_path_factory.mktemp("processes")
    if request.param == "sqlite":
        location = str(tmp_path / "ledger.db")
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        location = cluster.fresh().location
    procs: list[subprocess.Popen[bytes]] = []
    bases: list[str] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    try:
        for i in range(PROCESSES):
            port = free_port()
            cmd = [sys.executable, "-m", "tests.integration.test_processes", "--db", location, "--port", str(port)]
            with open(tmp_path / f"api{i}.log", "ab") as out:
                procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out))
            bases.append(f"http://127.0.0.1:{port}")

        async def up() -> None:
            async with aiohttp.ClientSession() as session:
                for base in bases:
                    await wait_serving(session, base + "/healthz")

        asyncio.run(up())
        yield location, bases
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)


async def _post(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], key: str, idem: str | None = None
) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {key}"}
    if idem is not None:
        headers["Idempotency-Key"] = idem
    async with session.post(url, json=body, headers=headers) as r:
        return r.status, await r.json()


async def _agent(session: aiohttp.ClientSession, base: str, name: str) -> tuple[str, str, str]:
    """(api key, wallet, agent id) of a new agent."""
    async with session.post(base + "/api/agents/register", json={"name": name, "specialty": "data_research"}) as r:
        assert r.status == 201, await r.text()
        reg = await r.json()
    return reg["api_key"], reg["agent"]["wallet"], reg["agent"]["id"]


def test_hundred_spends_over_three_processes_never_overdraw(servers: tuple[str, list[str]]) -> None:
    location, bases = servers

    async def main() -> None:
        async with aiohttp.ClientSession() as session:
            key, wallet, _ = await _agent(session, bases[0], "spender")
            status, _ = await _post(
                session, bases[1] + "/api/agents/earn", {"agentId": wallet, "amount": 50, "source": "t"}, key
            )
            assert status == 200  # balance 49 (98% of 50 is the agent's)
            spend = {"agentId": wallet, "amount": 1, "destination": "x"}
            replies = await asyncio.gather(
                *(
                    _post(session, base + "/api/agents/spend", spend, key)
                    for base in itertools.islice(itertools.cycle(bases), 100)
                )
            )
        ok = [body for status, body in replies if status == 200]
        refused = [(status, body["code"]) for status, body in replies if status != 200]
        assert len(ok) == 49 and set(refused) == {(422, "insufficient_balance")}, refused[:3]
        assert sum(parse_usdc(body["spent"]) for body in ok) == 49_000_000
        conn = open_database(location).connect()
        agent = wallet_store.agent_by_wallet(conn, wallet)
        assert agent is not None
        bal = wallet_store.get_balance(conn, agent.uuid)
        assert bal.balance == 0
        assert wallet_store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)
        conn.close()

    asyncio.run(main())


def test_one_idempotency_key_sent_to_three_processes_at_once_spends_once(servers: tuple[str, list[str]]) -> None:
    location, bases = servers

    async def main() -> None:
        async with aiohttp.ClientSession() as session:
            key, wallet, _ = await _agent(session, bases[0], "payer")
            await _post(session, bases[0] + "/api/agents/earn", {"agentId": wallet, "amount": 50, "source": "t"}, key)
            body = {"agentId": wallet, "amount": 5, "destination": "x"}
            replies = await asyncio.gather(
                *(_post(session, base + "/api/agents/spend", body, key, idem="pay-once") for base in bases * 4)
            )
            done = [b for status, b in replies if status == 200]
            others = {(status, b["code"]) for status, b in replies if status != 200}
            assert done and others <= {(409, "idempotency_in_flight")}, others
            assert len({json.dumps(b, sort_keys=True) for b in done}) == 1  # one answer, replayed
            for base in bases:  # afterwards every process answers the stored reply
                assert await _post(session, base + "/api/agents/spend", body, key, idem="pay-once") == (200, done[0])
        conn = open_database(location).connect()
        agent = wallet_store.agent_by_wallet(conn, wallet)
        assert agent is not None
        assert wallet_store.get_balance(conn, agent.uuid).balance == 44_000_000  # 49 - 5, once
        conn.close()

    asyncio.run(main())


def test_decisions_over_three_processes_keep_the_limit_the_sequences_and_the_tree(
    servers: tuple[str, list[str]],
) -> None:
    """1,200 posts for one agent at once over three processes: exactly RATE_LIMIT_PER_HOUR (1,000) are
    logged, the rest refused 429; a second agent's posts interleave; each agent's seqs are 1..n with no
    gap, each entry chained to the one before, and the stored Merkle tree equals the recomputed one."""
    location, bases = servers

    async def main() -> dict[str, int]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=96)) as session:
            agents = [await _agent(session, bases[0], name) for name in ("busy", "calm")]
            posts = [(agents[0], 1200), (agents[1], 60)]
            calls = [
                _post(session, f"{base}/api/agents/{agent_id}/log", DECISION, key)
                for ((key, _, agent_id), n) in posts
                for base in itertools.islice(itertools.cycle(bases), n)
            ]
            replies = await asyncio.gather(*calls)
        statuses = [status for status, _ in replies]
        assert statuses.count(201) == RATE_LIMIT_PER_HOUR + 60, {s: statuses.count(s) for s in set(statuses)}
        assert set(statuses) == {201, 429}
        return {agent_id: n for (_, _, agent_id), n in ((a, min(n, RATE_LIMIT_PER_HOUR)) for a, n in posts)}

    expected = asyncio.run(main())
    conn = open_database(location).connect()
    size = audit_store.size(conn)
    entries = [audit_store.get(conn, i) for i in range(1, size + 1)]
    assert all(e is not None for e in entries)
    for agent_id, n in expected.items():
        mine = [e for e in entries if e is not None and e.kind == audit.DECISION and agent_id in e.stream]
        assert [e.seq for e in mine] == list(range(1, n + 1))
        prev = audit.GENESIS
        for e in mine:
            assert e.prev_hash == prev
            prev = e.chain_hash
    assert audit_store.root(conn, size) == merkle.root_from_leaf_hashes([e.leaf_hash for e in entries if e])
    conn.close()


def test_earns_and_decisions_on_shared_agents_from_every_process_never_deadlock(
    servers: tuple[str, list[str]],
) -> None:
    """Every process earns for, and logs decisions of, the same 16 agents at once (half of them referred by
    the others, so one earn credits two agents' balances), in random order: each process's groups then hold
    row locks of several agents and the audit log together. On PostgreSQL every write transaction holds the
    database's one write lock from its BEGIN, so no two groups wait for each other in a cycle: the server
    counts no deadlock (before, PostgreSQL broke one about every second). Every earn answered 200 is in the
    ledger, with its referral credit."""
    location, bases = servers
    rng = random.Random(7)

    async def main() -> tuple[list[tuple[str, str, str]], dict[str, int]]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=96)) as session:
            agents = []
            for i in range(16):
                code = None if i < 8 else codes[i - 8]
                body = {"name": f"a{i}", "specialty": "data_research", **({"referralCode": code} if code else {})}
                async with session.post(bases[i % len(bases)] + "/api/agents/register", json=body) as r:
                    assert r.status == 201, await r.text()
                    reg = await r.json()
                if i < 8:
                    codes.append(reg["agent"]["referral_code"])
                agents.append((reg["api_key"], reg["agent"]["wallet"], reg["agent"]["id"]))
            calls, earns = [], []
            for n in range(1200):
                key, wallet, agent_id = rng.choice(agents)
                base = bases[n % len(bases)]
                if n % 3 == 0:
                    calls.append(_post(session, f"{base}/api/agents/{agent_id}/log", DECISION, key))
                else:
                    earn = {"agentId": wallet, "amount": 3, "source": "s"}
                    calls.append(_post(session, base + "/api/agents/earn", earn, key))
                earns.append(None if n % 3 == 0 else wallet)
            replies = await asyncio.gather(*calls)
        statuses = {status for status, _ in replies}
        assert statuses <= {200, 201}, statuses
        earned: dict[str, int] = {}
        for wallet, (status, _) in zip(earns, replies, strict=True):
            if wallet is not None and status == 200:
                earned[wallet] = earned.get(wallet, 0) + 1
        return agents, earned

    codes: list[str] = []
    before = deadlocks_broken(open_database(location))
    agents, earned = asyncio.run(main())
    assert deadlocks_broken(open_database(location)) == before, (
        "the server broke a deadlock between two processes' groups"
    )
    conn = open_database(location).connect()
    for _, wallet, _ in agents:
        agent = wallet_store.agent_by_wallet(conn, wallet)
        assert agent is not None
        bal = wallet_store.get_balance(conn, agent.uuid)
        assert wallet_store.ledger_totals(conn, agent.uuid) == (bal.balance, bal.owner_balance, bal.self_balance)
        assert bal.tx_count >= earned.get(wallet, 0)
    assert sum(earned.values()) == 800
    conn.close()


def _serve_main() -> None:
    """One API process: the service as `make run` builds it, on a local deployment with no contracts."""
    from aiohttp import web

    from api.app import create_app, make_runner

    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()

    async def serve() -> None:
        app = create_app(NO_CHAIN, "http://127.0.0.1:9", open_database(args.db).connect(), sweep_interval=None)
        runner = make_runner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", args.port).start()
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    _serve_main()
