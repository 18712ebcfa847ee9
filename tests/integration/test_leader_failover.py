"""Two service processes (API, jobs, outbox dispatcher and indexer, as `make run` starts them) on one
database (the kill -9 test on SQLite and on PostgreSQL): exactly one leads the indexer and the jobs;
kill -9 it and the other takes over within seconds, indexes the new blocks, and the index equals a
single clean run's (no event applied twice: the credits, which add up, included).

The service runs in processes of its own (this module's entry point)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import pytest

from core.anvil import Anvil, free_port
from core.chain import ROOT, connect
from core.config import Settings
from core.deployments import Deployment
from core.store import Database, open_database
from core.store import connect as db_connect
from core.store.projections import dump
from scripts.devchain import USDC, System, deploy_dev_system, run_scenario
from tests.integration.indexer_kit import index_to_head
from tests.integration.proc_kit import wait_serving

JOBS = {"checkout-sweep", "hire-health", "hire-reputation", "hire-settle", "drop-settle", "drop-expire"}


@pytest.fixture()
def chain() -> Iterator[tuple[System, str]]:
    with Anvil() as node:
        yield deploy_dev_system(connect(node.rpc_url)), node.rpc_url


def _serve(
    rpc: str, tmp_path: Path, system: System, name: str, database: Database | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """A service process on `database` (None: the SQLite file ledger.db in tmp_path)."""
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    port = free_port()
    where = database.location if database is not None else str(tmp_path / "ledger.db")
    cmd = [sys.executable, "-m", "tests.integration.test_leader_failover", "--rpc", rpc, "--deployment", str(dep_path)]
    cmd += ["--database", where, "--port", str(port), "--data-dir", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    with open(tmp_path / f"{name}.log", "ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=out)
    return proc, f"http://127.0.0.1:{port}"


async def _health(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    async with session.get(base + "/healthz") as r:
        body: dict[str, Any] = await r.json()
        return body


async def _until(session: aiohttp.ClientSession, base: str, check: Any, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body = await _health(session, base)
        if check(body):
            return body
        assert time.monotonic() < deadline, f"timed out; last /healthz: {json.dumps(body)[:2000]}"
        await asyncio.sleep(0.1)


def _leads_at(head: int) -> Any:
    """A /healthz check: this process leads the indexer and has applied block `head`."""
    return lambda h: h["indexer"]["leader"] and (h["indexer"]["seen"] or -1) >= head


def _pid(holder: str | None) -> int | None:
    return None if holder is None else int(holder.rsplit(":", 3)[1])


def _pays(s: System, first: int, n: int) -> None:
    """`n` payouts to agent 2, whose owner is blacklisted: each adds to a credit (credits add up)."""
    payer = s.users[6]
    for i in range(first, first + n):
        s.tx(payer, s.payouts.functions.pay(2, 10 * USDC, bytes([i]) * 32))


def test_one_leader_and_a_takeover_within_seconds_after_kill_9(
    chain: tuple[System, str], tmp_path: Path, database: Database
) -> None:
    s, rpc = chain
    run_scenario(s)  # every event type, a credit among them
    s.tx(s.deployer, s.usdc.functions.setBlacklisted(s.users[2].address, True))  # agent 2's owner: credits
    a, a_url = _serve(rpc, tmp_path, s, "a", database)
    started: list[tuple[subprocess.Popen[bytes], str]] = []
    try:

        async def before_kill() -> None:
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, a_url + "/healthz")
                head = s.w3.eth.block_number
                await _until(session, a_url, _leads_at(head))
                b, b_url = _serve(rpc, tmp_path, s, "b", database)
                started.append((b, b_url))
                await wait_serving(session, b_url + "/healthz")
                _pays(s, 0x10, 3)
                head = s.w3.eth.block_number
                seen_a = await _until(session, a_url, lambda h: (h["indexer"]["seen"] or -1) >= head)
                # b has been up for a few lease renewals: it still leads nothing
                await asyncio.sleep(4)
                ha, hb = await _health(session, a_url), await _health(session, b_url)
                assert ha["backend"] == hb["backend"] == database.kind
                assert ha["indexer"]["leader"] and not hb["indexer"]["leader"]
                assert _pid(ha["indexer"]["holder"]) == _pid(hb["indexer"]["holder"]) == a.pid
                assert set(ha["jobs"]) >= JOBS and set(ha["jobs"]) == set(hb["jobs"])
                for name in ha["jobs"]:
                    assert ha["jobs"][name]["leader"] and not hb["jobs"][name]["leader"], name
                    assert _pid(ha["jobs"][name]["holder"]) == _pid(hb["jobs"][name]["holder"]) == a.pid, name
                assert ha["jobs"]["outbox"]["state"] == "running" and hb["jobs"]["outbox"]["state"] == "standby"
                assert seen_a["indexer"]["seen"] >= head

        asyncio.run(before_kill())
        ((b, b_url),) = started
        a.send_signal(signal.SIGKILL)
        a.wait()
        killed_at = time.monotonic()
        _pays(s, 0x20, 3)
        head = s.w3.eth.block_number

        async def after_kill() -> float:
            async with aiohttp.ClientSession() as session:
                hb = await _until(session, b_url, _leads_at(head))
                took = time.monotonic() - killed_at
                assert _pid(hb["indexer"]["holder"]) == b.pid
                # A service is started once its lease is gained: /healthz may show the lease before the start.
                await _until(
                    session,
                    b_url,
                    lambda h: (
                        all(j.get("leader") for j in h["jobs"].values()) and h["jobs"]["outbox"]["state"] == "running"
                    ),
                    15,
                )
                return took

        took = asyncio.run(after_kill())
        print(f"indexer taken over {took:.2f} s after kill -9")
        assert took < 10, f"the takeover took {took:.1f} s"
        b.send_signal(signal.SIGTERM)
        assert b.wait(timeout=30) == 0
    finally:
        for proc in (a, *(p for p, _ in started)):
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    conn = database.connect(durable=False)
    rows = dump(conn)
    conn.close()
    clean = asyncio.run(index_to_head(tmp_path / "clean.db", rpc, s))  # one process, on SQLite
    assert rows["credits"] and rows["credits"] == clean["credits"]
    assert rows == clean


def _stop_outside_a_write(proc: subprocess.Popen[bytes], db: Path) -> None:
    """SIGSTOP `proc` at an instant it holds no SQLite write lock (a process stopped inside a write
    would block every writer of the file, which is SQLite's rule, not the lease's): stop it, try the
    lock, and if it was held, let it run a moment and try again."""
    conn = db_connect(db)
    conn.setbusytimeout(300)
    try:
        for _ in range(50):
            proc.send_signal(signal.SIGSTOP)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
                return
            except apsw.BusyError:
                proc.send_signal(signal.SIGCONT)
                time.sleep(0.05)
        raise AssertionError("the process never let go of the write lock")
    finally:
        conn.close()


def test_a_stalled_leader_is_replaced_and_steps_down_when_it_wakes(chain: tuple[System, str], tmp_path: Path) -> None:
    """SIGSTOP the leader (alive, not renewing): after its leases expire the other process leads the
    indexer and the jobs; SIGCONT it: it finds its leases taken and steps down (its outbox dispatcher
    stopped), and the index still equals a single clean run's."""
    s, rpc = chain
    run_scenario(s)
    s.tx(s.deployer, s.usdc.functions.setBlacklisted(s.users[2].address, True))
    a, a_url = _serve(rpc, tmp_path, s, "a")
    started = [a]
    try:

        async def scenario() -> None:
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, a_url + "/healthz")
                head = s.w3.eth.block_number
                await _until(
                    session,
                    a_url,
                    lambda h: (
                        h["indexer"]["leader"]
                        and (h["indexer"]["seen"] or -1) >= head
                        and all(j.get("leader") for j in h["jobs"].values())
                    ),
                )
                b, b_url = _serve(rpc, tmp_path, s, "b")
                started.append(b)
                await wait_serving(session, b_url + "/healthz")
                leader, leader_url, other, other_url = a, a_url, b, b_url
                _stop_outside_a_write(leader, tmp_path / "ledger.db")
                stopped_at = time.monotonic()
                _pays(s, 0x30, 3)
                head = s.w3.eth.block_number
                await _until(session, other_url, _leads_at(head))
                print(f"indexer taken over {time.monotonic() - stopped_at:.2f} s after SIGSTOP")
                await _until(session, other_url, lambda h: all(j.get("leader") for j in h["jobs"].values()), 40)
                print(f"jobs taken over {time.monotonic() - stopped_at:.2f} s after SIGSTOP")
                leader.send_signal(signal.SIGCONT)
                late = await _until(
                    session,
                    leader_url,
                    lambda h: (
                        not h["indexer"]["leader"]
                        and not any(j.get("leader") for j in h["jobs"].values())
                        and h["jobs"]["outbox"]["state"] == "standby"
                    ),
                )
                assert _pid(late["indexer"]["holder"]) == other.pid
                _pays(s, 0x40, 2)
                head = s.w3.eth.block_number
                await _until(session, other_url, lambda h: (h["indexer"]["seen"] or -1) >= head)

        asyncio.run(scenario())
        for proc in started:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    conn = db_connect(tmp_path / "ledger.db", durable=False)
    rows = dump(conn)
    conn.close()
    clean = asyncio.run(index_to_head(tmp_path / "clean.db", rpc, s))
    assert rows["credits"] and rows == clean


def _serve_main() -> None:
    from service.runtime import serve

    parser = argparse.ArgumentParser()
    for name in ("--rpc", "--deployment", "--database", "--port", "--data-dir"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    dep = Deployment(**json.loads(Path(args.deployment).read_text()))
    where = (
        {"database_url": args.database}
        if open_database(args.database).kind == "postgresql"
        else {"db_path": args.database}
    )
    settings = Settings(**where, api_port=int(args.port), data_dir=Path(args.data_dir), webhook_allow_private="true")
    asyncio.run(serve(settings, dep, args.rpc))


if __name__ == "__main__":
    _serve_main()
