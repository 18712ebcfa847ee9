"""kill -9 during a settle sweep, then a restart: exactly one settlement.

The service runs in a process of its own (this module's entry point) with a fast settle sweep. With
anvil's automine off, the sweep signs, records and sends its settle transaction, which then waits in
the pool; the process is SIGKILLed while it waits for the receipt. The block is mined, the service is
started again: its sweep (cut off by the crash, so it runs at once) reconciles the recorded
transaction with the chain and sends nothing more. One settle transaction from the operator, one
SaleSettled, one recorded row."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from aiohttp import web
from eth_account import Account

from api.app import create_app
from core.anvil import Anvil, free_port
from core.chain import ROOT
from core.chain import connect as connect_chain
from core.config import Settings
from core.deployments import Deployment
from core.operator import Operator
from core.store import connect, open_database
from core.store import marketplace as store
from tests.integration.chainkit import System
from tests.integration.drop_kit import BASE, DAY, USDC, World, running, seller_pair
from tests.pg_redirect import child_location

SETTLED = 3  # AgentMarketplace.Status.Settled


def _serve(tmp_path: Path, system: System, anvil: Anvil) -> subprocess.Popen[bytes]:
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    cmd = [sys.executable, "-m", "tests.integration.test_drop_sweep_kill", "--rpc", anvil.rpc_url]
    cmd += ["--deployment", str(dep_path), "--db", child_location(tmp_path / "ledger.db"), "--port", str(free_port())]
    cmd += ["--operator-key", system.operator.key.hex(), "--data-dir", str(tmp_path)]
    return subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(check: object, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_kill_during_a_sweep_then_restart_settles_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    state: dict[str, int] = {}

    async def prepare(w: World) -> None:
        seller, buyer = system.users[0], system.users[1]
        key, wallet, _ = await w.register("sold")
        token = await w.mint(key, wallet, seller, seller_pair(0)[1])
        listing = await w.list(key, wallet, seller, token, 500 * USDC, 10 * USDC)
        w.fund(buyer, 500 * USDC)
        tx = w.buy(buyer, listing["chainListingId"])
        await w.ok("POST", f"{BASE}/accept", {"listingId": listing["id"], "buyNow": True, "txHash": tx}, 201, key=key)
        await w.until(lambda: w.db.execute("SELECT status FROM listings").fetchall() == [("committed",)])
        state["listing"] = listing["chainListingId"]

    async def go() -> None:
        async with running(tmp_path, system) as w:
            await prepare(w)

    asyncio.run(go())
    listing_id = state["listing"]
    system.advance(7 * DAY + 1)
    w3 = system.w3
    sent_before = w3.eth.get_transaction_count(system.operator.address)
    db = connect(tmp_path / "ledger.db")
    w3.provider.make_request("evm_setAutomine", [False])  # type: ignore[arg-type]
    proc = _serve(tmp_path, system, anvil)
    try:
        _wait_for(lambda: [t.state for t in store.sweep_txs(db, listing_id)] == ["sent"], proc)
        time.sleep(0.2)  # it is waiting for the receipt now
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert w3.eth.get_block("pending")["transactions"], "the settle transaction is in the pool"
        w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    finally:
        w3.provider.make_request("evm_setAutomine", [True])  # type: ignore[arg-type]
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
    assert system.market.functions.getListing(listing_id).call()[2] == SETTLED
    proc = _serve(tmp_path, system, anvil)
    try:
        _wait_for(lambda: [t.state for t in store.sweep_txs(db, listing_id)] == ["mined"], proc)
        runs = lambda: db.execute("SELECT runs FROM job_runs WHERE name = 'drop-settle'").fetchall()[0][0]  # noqa: E731
        first = runs()
        _wait_for(lambda: runs() >= first + 2, proc)  # later sweeps find nothing to send
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()
    assert w3.eth.get_transaction_count(system.operator.address) == sent_before + 1
    settled = system.market.events.SaleSettled().get_logs(from_block=0)
    assert [int(e["args"]["listingId"]) for e in settled].count(listing_id) == 1
    (row,) = store.sweep_txs(db, listing_id)
    assert row.state == "mined"
    db.close()


def _serve_main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--rpc", "--deployment", "--db", "--port", "--operator-key", "--data-dir"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    dep = Deployment(**json.loads(Path(args.deployment).read_text()))
    w3 = connect_chain(args.rpc)
    operator = Operator(w3, Account.from_key(args.operator_key), dep.contracts, dep.usdc)
    settings = Settings(webhook_allow_private="true", data_dir=Path(args.data_dir), drop_settle_interval=0.2)
    app = create_app(dep, args.rpc, open_database(args.db).connect(), settings=settings, operator=operator)
    web.run_app(app, host="127.0.0.1", port=int(args.port), print=None)


if __name__ == "__main__":
    _serve_main()
