"""Escrow hire on a real anvil: the caller approves and calls AgentEscrow.createJob itself, then
POSTs /api/a2a/escrow with its EIP-191 signature; the service verifies the lock, runs the job at a
real loopback provider and releases through the payout path (97/1/2) or refunds. Release, refund,
refund by anyone after the SLA, wrong amount, wrong provider, wrong signer, replayed signature, two
POSTs at once (one run), a release that fails and is retried until mined, the follower's final
record and reputation, and a crash between the job and its release (then a restart: one release)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from core.anvil import Anvil
from core.hire import rules
from core.hire.settle import settle_due
from core.store import connect, transaction
from core.store import hire as store
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import Clock, Harness, Provider, ProviderServer, free_port, run
from tests.integration.proc_kit import wait_serving
from tests.integration.test_providers import assert_error
from tests.pg_redirect import child_location

ROOT = Path(__file__).resolve().parents[2]
PRICE = 2 * USDC
DAY = 86_400


async def escrow_provider(h: Harness, system: System, behaviour: str = "ok", **kw: Any) -> Provider:
    """A linked provider whose service price is also its on-chain price (SLA: the default 7 days), indexed."""
    p = await h.provider(system.users[0], system.users[1], behaviour=behaviour, **kw)
    h.set_price(p, PRICE)
    await h.index()
    return p


def released_events(system: System, job_id: str) -> int:
    logs = system.escrow.events.JobReleased().get_logs(
        from_block=0, argument_filters={"jobId": bytes.fromhex(job_id[2:])}
    )
    return len(logs)


def test_escrow_hire_releases_through_the_payout_path(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller = system.users[5]
        reg = await h.call("GET", "/api/a2a/registry", params={"escrow": "true"})
        (entry,) = reg.body["providers"]
        assert entry["priceUsdc"] == 2 and entry["escrow"]["available"] and entry["escrow"]["slaSeconds"] == 7 * DAY
        owner, self_wallet, treasury = p.owner.address, p.self_acct.address, system.treasury.address
        before = {a: system.balance(a) for a in (owner, self_wallet, treasury)}
        job_id, tx = h.lock(caller, p, "release")
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx, topic="tea"))
        assert r.status == 200, r.body
        b = r.body
        assert b["success"] is True and b["status"] == "released" and b["settlement"] == "released"
        assert json.loads(b["output"]) == {"keywords": ["tea tips", "best tea"]}
        assert b["earnSplit"] == {
            "ownerCut": Decimal("1.94"),
            "agentCut": Decimal("0.02"),
            "serviceCut": Decimal("0.04"),
            "referralCut": 0,
        }
        receipt = system.w3.eth.get_transaction_receipt(b["releaseTx"])
        assert receipt["status"] == 1 and receipt["from"] == system.operator.address
        assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "released"
        after = {a: system.balance(a) for a in (owner, self_wallet, treasury)}
        assert after[owner] - before[owner] == 1_940_000
        assert after[self_wallet] - before[self_wallet] == 20_000
        assert after[treasury] - before[treasury] == 40_000
        # the output's digest entered the audit chain before the release
        moves = [
            (int(i), json.loads(pl))
            for i, pl in h.db.execute(
                "SELECT id, payload FROM audit_log WHERE stream = ? ORDER BY seq", (f"hire:{job_id}",)
            )
        ]
        states = [m["to_state"] for _, m in moves]
        assert states == ["running", "output_committed", "releasing", "released"]
        assert moves[1][1]["output_sha256"] == b["outputSha256"] == rules.sha256_hex(b["output"].encode())
        assert moves[3][1]["tx_hash"] == b["releaseTx"]
        # GET /escrow reads the chain
        g = await h.call("GET", "/api/a2a/escrow", params={"jobId": job_id})
        assert g.body["status"] == "released" and g.body["released"] is True and g.body["caller"] == caller.address
        assert g.body["amountUsdc"] == 2
        # final on-chain: the follower records it, and only then does it count for reputation
        svc = store.get_service(h.db, p.uuid, "keyword_research")
        assert svc is not None and svc.jobs == 0
        await h.index()
        job = store.get_job(h.db, job_id)
        assert job is not None and job.final and job.settle_tx == b["releaseTx"]
        svc = store.get_service(h.db, p.uuid, "keyword_research")
        assert svc is not None and svc.jobs == 1 and svc.successes == 1
        assert released_events(system, job_id) == 1

    run(tmp_path, system, anvil.rpc_url, body)


def test_escrow_hire_refunds_a_failed_run(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system, behaviour="badschema")
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, "refund")
        held = system.balance(caller.address)
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert r.status == 200, r.body
        assert r.body["success"] is False and r.body["error"] == "output_schema_mismatch"
        assert (
            r.body["status"] == "refunded" and system.w3.eth.get_transaction_receipt(r.body["refundTx"])["status"] == 1
        )
        assert system.balance(caller.address) == held + PRICE
        await h.index()
        svc = store.get_service(h.db, p.uuid, "keyword_research")
        assert svc is not None and svc.jobs == 1 and svc.successes == 0  # a final refund of a failed run

    run(tmp_path, system, anvil.rpc_url, body)


def test_a_job_nobody_acts_on_is_refundable_by_anyone_after_the_sla(
    system: System, tmp_path: Path, anvil: Anvil
) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        h.set_price(p, PRICE, 3600)  # the shortest SLA: 1 hour
        await h.index()
        caller, stranger = system.users[5], system.users[9]
        job_id, tx = h.lock(caller, p, "reclaim")
        held = system.balance(caller.address)
        system.advance(3600 + 3600 + 1)  # SLA + settlement grace
        system.tx(stranger, system.escrow.functions.reclaim(bytes.fromhex(job_id[2:])))
        assert system.balance(caller.address) == held + PRICE  # to the caller, whoever sent it
        g = await h.call("GET", "/api/a2a/escrow", params={"jobId": job_id})
        assert g.body["status"] == "refunded" and g.body["refunded"] is True
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert_error(r, 409, "escrow_not_locked", "escrowJobId")
        assert not h.provider_server.calls

    run(tmp_path, system, anvil.rpc_url, body)


def test_wrong_amount_is_refunded_without_running(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, "amount")
        h.set_price(p, 3 * USDC)  # the provider changes its price under the locked job
        await h.index()
        held = system.balance(caller.address)
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert r.status == 200 and r.body["success"] is False and r.body["error"] == "price_mismatch", r.body
        assert r.body["refundTx"] and system.balance(caller.address) == held + PRICE
        assert not h.provider_server.calls

    run(tmp_path, system, anvil.rpc_url, body)


def test_wrong_provider_and_bad_receipts_are_refused(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        q = await h.provider(system.users[2], system.users[3])
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, "provider")
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, q, job_id, tx))
        assert_error(r, 422, "provider_mismatch", "providerWallet")
        other_tx = (
            "0x" + bytes(system.tx(caller, system.usdc.functions.approve(caller.address, 1))["transactionHash"]).hex()
        )
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, other_tx))
        assert_error(r, 422, "job_not_in_transaction", "txHash")
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, "0x" + "ab" * 32))
        assert_error(r, 409, "transaction_not_found", "txHash")
        r = await h.call(
            "POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx, timestamp=int(h.clock()) - 400)
        )
        assert_error(r, 401, "signature_expired", "timestamp")
        assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "locked"
        assert h.db.execute("SELECT count(*) FROM hire_jobs").fetchall()[0][0] == 0
        # the right provider then runs it
        ok = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert ok.status == 200 and ok.body["success"] is True, ok.body

    run(tmp_path, system, anvil.rpc_url, body)


def test_only_the_caller_runs_and_reads_once_per_signature(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller, thief = system.users[5], system.users[6]
        job_id, tx = h.lock(caller, p, "signer")
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx, signer=thief))
        assert_error(r, 401, "signature_mismatch", "signature")
        first_body = h.escrow_body(caller, p, job_id, tx)
        first = await h.call("POST", "/api/a2a/escrow", first_body)
        assert first.status == 200 and first.body["success"] is True
        replay = await h.call("POST", "/api/a2a/escrow", first_body)
        assert_error(replay, 409, "signature_replayed", "signature")
        stolen = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx, signer=thief))
        assert_error(stolen, 401, "signature_mismatch", "signature")  # nobody else reads the output
        await asyncio.sleep(1.01)  # a fresh timestamp: a new message
        again = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert again.status == 200 and again.body["replayed"] is True
        assert again.body["output"] == first.body["output"] and again.body["releaseTx"] == first.body["releaseTx"]
        assert sum(h.provider_server.calls.values()) == 1 and released_events(system, job_id) == 1

    run(tmp_path, system, anvil.rpc_url, body)


def test_two_posts_at_once_run_the_job_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, "race")
        h.provider_server.gate = asyncio.Event()
        one = asyncio.create_task(h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx)))
        while not h.provider_server.bodies:
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.01)
        two = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert_error(two, 409, "job_in_progress", "escrowJobId")
        assert two.headers["Retry-After"] == "1"
        h.provider_server.gate.set()
        first = await one
        assert first.status == 200 and first.body["success"] is True
        assert sum(h.provider_server.calls.values()) == 1 and released_events(system, job_id) == 1

    run(tmp_path, system, anvil.rpc_url, body)


def test_a_release_that_fails_is_retried_until_mined(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, "retry")
        system.tx(system.deployer, system.escrow.functions.pause())  # release reverts while paused
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert r.status == 200 and r.body["success"] is True, r.body
        assert r.body["releaseTx"] is None and r.body["settlement"] == "pending" and r.body["output"]
        assert "EnforcedPause" in r.body["settlementError"]
        system.tx(system.deployer, system.escrow.functions.unpause())
        h.clock.offset += 3600  # the settle job's next attempt is due
        assert await settle_due(h.hire) == 1
        job = store.get_job(h.db, job_id)
        assert job is not None and job.status == "released" and job.settle_tx
        assert released_events(system, job_id) == 1
        await asyncio.sleep(1.01)
        again = await h.call("POST", "/api/a2a/escrow", h.escrow_body(caller, p, job_id, tx))
        assert again.body["releaseTx"] == job.settle_tx and again.body["settlement"] == "released"
        assert await settle_due(h.hire) == 0  # nothing left to do

    run(tmp_path, system, anvil.rpc_url, body)


# ---- a crash between the job and its release ------------------------------------------------------


@pytest.mark.parametrize("seam", ["--exit-after-output", "--exit-after-release", "--exit-before-run"])
def test_crash_between_job_and_release_then_restart_releases_once(
    system: System, tmp_path: Path, anvil: Anvil, seam: str
) -> None:
    """The API process dies (os._exit at the seam: no clean-up, as kill -9) once the output is
    committed (before the release is sent) or once the release is mined (before it is recorded).
    The restart reads the chain before sending anything: exactly one JobReleased either way."""
    state: dict[str, Any] = {}

    async def prepare(h: Harness) -> None:
        p = await escrow_provider(h, system)
        caller = system.users[5]
        job_id, tx = h.lock(caller, p, f"crash{seam}")
        state.update(p=p, caller=caller, job=job_id, tx=tx)

    run(tmp_path, system, anvil.rpc_url, prepare)
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    port = free_port()

    async def crash() -> None:
        server = await ProviderServer().start()
        db = connect(tmp_path / "ledger.db")
        with transaction(db):
            db.execute("UPDATE hire_services SET endpoint = ?", (server.url("ok"),))
        db.close()
        cmd = [sys.executable, "-m", "tests.integration.test_hire", "--serve", "--rpc", anvil.rpc_url]
        cmd += ["--deployment", str(dep_path), "--db", child_location(tmp_path / "ledger.db"), "--port", str(port)]
        cmd += ["--operator-key", system.operator.key.hex(), seam]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            base = f"http://127.0.0.1:{port}"
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, base + "/api/a2a/registry", 400)
                h = _FakeHarness(system)
                body = h.escrow_body(state["caller"], state["p"], state["job"], state["tx"])
                with pytest.raises(aiohttp.ClientError):
                    await session.post(base + "/api/a2a/escrow", json=body)
            assert proc.wait(timeout=30) == 1, proc.stderr.read() if proc.stderr else b""
            assert server.calls[state["job"]] == (0 if seam == "--exit-before-run" else 1)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr:
                proc.stderr.close()
            await server.stop()

    asyncio.run(crash())
    job_id = state["job"]
    db = connect(tmp_path / "ledger.db")
    job = store.get_job(db, job_id)
    db.close()
    if seam == "--exit-before-run":  # cut off while running: the restart refunds it, the job never runs
        assert job is not None and job.status == "running"
        run(tmp_path, system, anvil.rpc_url, lambda h: _refunded_after_restart(h, system, state))
        return
    assert job is not None and job.status == "releasing" and job.output_sha256  # committed, not recorded released
    expected_before = 0 if seam == "--exit-after-output" else 1
    assert released_events(system, job_id) == expected_before

    async def after(h: Harness) -> None:
        # the restart's start-up settlement (create_app) sends what is missing, after reading the chain
        for _ in range(200):
            job = store.get_job(h.db, job_id)
            if job is not None and job.status == "released":
                break
            await asyncio.sleep(0.05)
        assert job is not None and job.status == "released", job
        assert released_events(system, job_id) == 1
        sent = h.hire.operator.sent
        assert sent == (1 if seam == "--exit-after-output" else 0)
        assert not h.provider_server.calls  # the job did not run again
        await asyncio.sleep(1.01)
        again = await h.call("POST", "/api/a2a/escrow", h.escrow_body(state["caller"], state["p"], job_id, state["tx"]))
        assert again.status == 200 and again.body["releaseTx"] == job.settle_tx and again.body["replayed"] is True

    run(tmp_path, system, anvil.rpc_url, after)
    run(tmp_path, system, anvil.rpc_url, lambda h: _nothing_sent(h, system, job_id))  # and again: nothing more


async def _refunded_after_restart(h: Harness, system: System, state: dict[str, Any]) -> None:
    job_id = state["job"]
    for _ in range(200):
        job = store.get_job(h.db, job_id)
        if job is not None and job.status == "refunded":
            break
        await asyncio.sleep(0.05)
    assert job is not None and job.status == "refunded" and job.error_code == "hire_interrupted", job
    assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "refunded"
    await asyncio.sleep(1.01)
    again = await h.call("POST", "/api/a2a/escrow", h.escrow_body(state["caller"], state["p"], job_id, state["tx"]))
    assert again.status == 200 and again.body["success"] is False and again.body["error"] == "hire_interrupted"
    assert again.body["refundTx"] == job.settle_tx and not h.provider_server.calls


async def _nothing_sent(h: Harness, system: System, job_id: str) -> None:
    await asyncio.sleep(0.3)
    assert h.hire.operator.sent == 0 and released_events(system, job_id) == 1


class _FakeHarness:
    """escrow_body without a running service (the crash test's service is a subprocess)."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.clock = Clock()

    escrow_body = Harness.escrow_body
