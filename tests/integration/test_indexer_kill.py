"""The indexer process SIGKILLed at random instants while events stream in, restarted each time:
its database ends identical, row by row, to a clean re-index of the same chain."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import deployments
from core.anvil import Anvil
from core.chain import ROOT, connect
from core.store import connect as db_connect
from core.store.projections import dump
from scripts.devchain import USDC, System, deploy_dev_system
from tests.integration.indexer_kit import index_to_head
from tests.pg_redirect import child_location


@pytest.fixture()
def chain(tmp_path: Path) -> Iterator[tuple[System, str]]:
    with Anvil() as node:
        yield deploy_dev_system(connect(node.rpc_url)), node.rpc_url


def start_indexer(rpc: str, db: Path, deploy_dir: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env["AGENTLEDGER_DEPLOYMENTS_DIR"] = str(deploy_dir)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "indexer", "--rpc", rpc, "--db", child_location(db), *extra],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )


def checkpoint(db: Path) -> int:
    if not db.exists():
        return -1
    conn = db_connect(db, durable=False)
    try:
        row = conn.execute("SELECT block_number FROM sync_state").fetchone()
        return -1 if row is None else int(row[0])  # type: ignore[arg-type]
    finally:
        conn.close()


def wait_for_progress(db: Path, since: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while checkpoint(db) <= since:
        assert time.monotonic() < deadline, "the indexer made no progress"
        time.sleep(0.01)


def test_sigkill_at_random_points_then_restart_equals_clean_reindex(chain: tuple[System, str], tmp_path: Path) -> None:
    s, rpc = chain
    deployments.save(s.deployment, tmp_path / "deployments")
    db, log = tmp_path / "killed.db", tmp_path / "indexer.log"
    rng = random.Random(7)
    owner, caller = s.users[0], s.users[1]
    token = s.register_agent(owner.address, s.users[2].address, "agl_00000000c0de")
    s.mint_usdc(caller.address, 10**6 * USDC)
    s.approve(caller, s.escrow.address, 2**255)
    s.tx(owner, s.escrow.functions.setPrice(token, 5 * USDC, 0))

    kills = 0
    proc = start_indexer(rpc, db, tmp_path / "deployments", log)
    try:
        for i in range(40):
            # a stream of events: hires, releases/refunds and price changes
            job = rng.randbytes(32)
            s.tx(caller, s.escrow.functions.createJob(job, "agl_00000000c0de", 5 * USDC, 7 * 86_400))
            if i % 3:
                s.tx(s.operator, s.escrow.functions.release(job) if i % 2 else s.escrow.functions.refund(job))
            if i % 10 == 9:
                s.tx(owner, s.escrow.functions.setPrice(token, 5 * USDC, 0))
            if rng.random() < 0.2:
                # Kill it mid-flight: once it has committed something since its start, at a random instant.
                wait_for_progress(db, since=checkpoint(db))
                time.sleep(rng.uniform(0.0, 0.05))
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                proc = start_indexer(rpc, db, tmp_path / "deployments", log)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert kills >= 3
    # One more run to the head (a restart after the last kill), then compare with a clean index.
    done = start_indexer(rpc, db, tmp_path / "deployments", log, "--until-head")
    assert done.wait(timeout=120) == 0, log.read_text()[-3000:]
    conn = db_connect(db, durable=False)
    killed_rows = dump(conn)
    conn.close()
    clean_rows = asyncio.run(index_to_head(tmp_path / "clean.db", rpc, s))
    assert killed_rows == clean_rows
    assert len(killed_rows["escrow_jobs"]) == 40
