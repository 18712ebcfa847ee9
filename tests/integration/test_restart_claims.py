"""What a crashed process held is freed by the next start at once. Its
Idempotency-Key claims carry its instance id, so a retry after a restart runs instead of answering
409 idempotency_in_flight for 300 s; a session it left complete_in_progress is settled against the
chain by the checkout sweep's start-up step instead of after 10 minutes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from api.app import create_app
from core import instance
from core.anvil import Anvil, free_port
from core.config import Settings
from core.operator import Operator
from core.store import checkout as store
from core.store import connect
from tests.integration.chainkit import System
from tests.integration.proc_kit import wait_serving
from tests.integration.test_checkout import ROOT, STD, Shop, job
from tests.integration.test_providers import Harness, run
from tests.pg_redirect import child_location


def test_a_restart_frees_the_claims_and_sessions_of_the_crashed_process(
    system: System, tmp_path: Path, anvil: Anvil
) -> None:
    state: dict[str, Any] = {}

    async def prepare(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        state["sid"] = await shop.new(buyer={"email": "b@example.com"})
        state["key"] = shop.key
        state["body"] = shop.body(state["sid"])

    run(tmp_path, system, prepare)
    sid, db_path = state["sid"], tmp_path / "ledger.db"
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    port = free_port()
    cmd = [sys.executable, "-m", "tests.integration.test_checkout", "--rpc", anvil.rpc_url]
    cmd += ["--deployment", str(dep_path), "--db", child_location(db_path), "--port", str(port)]
    cmd += ["--operator-key", system.operator.key.hex(), "--exit-before-funding"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    headers = {"Authorization": f"Bearer {state['key']}", "Idempotency-Key": "complete-once"}
    try:

        async def crash() -> None:
            base = f"http://127.0.0.1:{port}"
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, base + "/api/acp/items", 200)
                url = f"{base}/api/acp/checkout_sessions/{sid}/complete"
                for _attempt in range(10):  # a 503 (the database busy past its deadline) is retried as told
                    try:
                        async with session.post(url, json=state["body"], headers=headers) as resp:
                            answer = resp.status, await resp.text(), resp.headers.get("Retry-After")
                    except aiohttp.ClientError:
                        return  # the process ended mid-request, as the seam makes it
                    assert answer[0] == 503 and answer[2], f"complete answered instead of crashing: {answer}"
                    await asyncio.sleep(float(answer[2]))
                pytest.fail(f"complete answered 503 ten times: {answer}")

        asyncio.run(crash())
        assert proc.wait(timeout=30) == 1, proc.stderr.read() if proc.stderr else b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()

    # what the dead process left: its claim on the key, the session complete_in_progress, nothing on-chain
    db = connect(db_path)
    (owner,) = db.execute("SELECT owner FROM idempotency_keys WHERE status = 'in_flight'").fetchone()
    assert owner.split(":")[1] == str(proc.pid) and instance.is_gone(owner)
    ((session, completing),) = store.completions_in_progress(db)
    assert session.id == sid and completing is not None and completing.split(":")[1] == str(proc.pid)
    assert job(system, sid)[2] == 0
    db.close()

    async def restarted() -> None:
        db = connect(db_path, durable=True)
        dep = system.deployment
        op = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
        app = create_app(dep, anvil.rpc_url, db, settings=Settings(webhook_allow_private="true"), operator=op)
        server = TestServer(app, host="127.0.0.1", port=0)
        await server.start_server()  # the checkout sweep's start-up step runs now
        try:
            deadline = time.monotonic() + 10
            while store.get_session(db, sid).status != "incomplete":  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "the start-up step did not settle the session"
                await asyncio.sleep(0.02)
            async with aiohttp.ClientSession() as http:
                url = server.make_url(f"/api/acp/checkout_sessions/{sid}/complete")
                async with http.post(url, json=state["body"], headers=headers) as r:
                    body = await r.json()
                    assert r.status == 200, body  # not 409 idempotency_in_flight: the dead claim is taken over
                    assert body["status"] == "completed" and body["order"]["status"] == "created"
                async with http.post(url, json=state["body"], headers=headers) as r:
                    assert r.headers["Idempotent-Replayed"] == "true"
        finally:
            await server.close()
            db.close()

    asyncio.run(restarted())
    assert job(system, sid)[2] == 1 and job(system, sid)[4] == STD
