"""Standard hire over real HTTP, a real SQLite file and a real anvil (providers are linked agent
NFTs), with real provider servers on loopback: success through the earn split, every way a run
fails (error, timeout, slow, huge answer, invalid JSON, schema-failing output, down) charging
nothing, a real a2a-sdk agent, the Idempotency-Key (one run, one charge), 100 concurrent hires on
one balance, refusals, automatic choice by reputation and health, and a kill -9 of the API while a
job runs, settled by the restart.

Run as `python -m tests.integration.test_hire --serve ...` it serves the same app (the crash test's
subprocess)."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from agentledger_sdk import webhooks
from aiohttp import web
from eth_account import Account

from core import instance
from core.anvil import Anvil
from core.chain import connect as connect_chain
from core.deployments import Deployment
from core.hire import settle
from core.store import connect, transaction
from core.store import hire as store
from tests.integration.chainkit import System
from tests.integration.hire_kit import (
    A2AAgent,
    Clock,
    Harness,
    U,
    build_app,
    down_url,
    free_port,
    ledger_kinds,
    run,
)
from tests.integration.proc_kit import wait_serving
from tests.integration.test_providers import assert_error
from tests.pg_redirect import child_location

ROOT = Path(__file__).resolve().parents[2]


def audit_moves(h: Harness, job_id: str) -> list[tuple[int, str]]:
    rows = h.db.execute("SELECT id, payload FROM audit_log WHERE stream = ? ORDER BY seq", (f"hire:{job_id}",))
    return [(int(i), json.loads(p)["to_state"]) for i, p in rows]


# ---- success -------------------------------------------------------------------------------------


def test_hire_runs_the_job_and_pays_through_the_earn_split(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        assert p.published["signingSecret"].startswith("whsec_")
        key, caller, caller_uuid = await h.caller(100)  # earn 100: balance 98
        r = await h.hire_call(key, caller, provider=p.wallet, topic="coffee")
        assert r.status == 200, r.body
        b = r.body
        assert json.loads(b["output"]) == {"keywords": ["coffee tips", "best coffee"]}
        assert b["outputSha256"] == hashlib.sha256(b["output"].encode()).hexdigest()
        assert b["providerWallet"] == p.wallet and b["amountCharged"] == 2 and b["responseMs"] >= 0
        assert b["earnSplit"] == {
            "ownerCut": Decimal("1.94"),
            "agentCut": Decimal("0.02"),
            "serviceCut": Decimal("0.04"),
            "referralCut": 0,
        }
        assert b["balance"] == 96 == await h.balance(key, caller)
        # the provider is paid through earn: net 98% of 2
        assert await h.balance(p.key, p.wallet) == Decimal("1.96")
        assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000)]
        assert ledger_kinds(h.db, p.uuid) == [("earn", 1_960_000)]
        # one run, signed as Standard Webhooks (checked by the `standardwebhooks` library), input as JCS
        server = h.provider_server
        assert server.calls[b["jobId"]] == 1 and server.bad_signatures == 0
        assert server.bodies[-1] == {
            "jobId": b["jobId"],
            "serviceType": "keyword_research",
            "input": {"topic": "coffee"},
        }
        # the output's digest is in the audit chain before the payment
        moves = audit_moves(h, b["jobId"])
        assert [m for _, m in moves] == ["reserved", "output_committed", "charged"]
        committed = json.loads(
            h.db.execute("SELECT payload FROM audit_log WHERE id = ?", (moves[1][0],)).fetchall()[0][0]
        )
        assert committed["output_sha256"] == b["outputSha256"] and committed["output_cid"] == b["outputCid"]
        assert b["auditId"] == moves[2][0]
        # reputation: one paid, settled sample linked to its audit entry
        ev = await h.call("GET", "/api/a2a/reputation", params={"wallet": p.wallet, "serviceType": "keyword_research"})
        assert ev.status == 200 and ev.body["jobs"] == 1 and ev.body["successRate"] == 1
        assert ev.body["samples"][0]["auditId"] == moves[2][0]
        v = await h.call("GET", f"/verify/{moves[2][0]}", headers={"Accept": "application/json"})
        assert v.status == 200

    run(tmp_path, system, anvil.rpc_url, body)


def test_slow_provider_within_its_sla_succeeds(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        h.provider_server.slow_seconds = 0.4
        p = await h.provider(system.users[0], system.users[1], behaviour="slow", sla=3)
        key, caller, _ = await h.caller()
        r = await h.hire_call(key, caller, provider=p.wallet)
        assert r.status == 200, r.body
        assert r.body["responseMs"] >= 400

    run(tmp_path, system, anvil.rpc_url, body)


# ---- failures charge nothing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "status", "code"),
    [
        ("error", 502, "provider_error"),
        ("timeout", 504, "provider_timeout"),
        ("invalid", 502, "provider_invalid_output"),
        ("badschema", 502, "output_schema_mismatch"),
        ("huge", 502, "provider_response_too_large"),
        ("down", 502, "provider_unreachable"),
    ],
)
def test_a_failed_run_charges_nothing(
    system: System, tmp_path: Path, anvil: Anvil, behaviour: str, status: int, code: str
) -> None:
    async def body(h: Harness) -> None:
        url = down_url() if behaviour == "down" else None
        p = await h.provider(system.users[0], system.users[1], behaviour=behaviour, url=url, sla=1)
        key, caller, caller_uuid = await h.caller(100)
        r = await h.hire_call(key, caller, provider=p.wallet)
        assert r.status == status, r.body
        assert r.body["code"] == code and r.body["type"] == "provider_error"
        assert r.body["amountCharged"] == 0 and r.body["jobId"].startswith("hire_")
        assert await h.balance(key, caller) == 98
        assert await h.balance(p.key, p.wallet) == 0
        assert ledger_kinds(h.db, caller_uuid) == [
            ("earn", 98_000_000),
            ("hire_reserve", -2_000_000),
            ("hire_release", 2_000_000),
        ]
        job = store.get_job(h.db, r.body["jobId"])
        assert job is not None and job.status == "released" and job.error_code == code
        assert [m for _, m in audit_moves(h, job.id)] == ["reserved", "released"]
        svc = store.get_service(h.db, p.uuid, "keyword_research")
        assert svc is not None and svc.consecutive_failures == 1 and svc.jobs == 1 and svc.successes == 0

    run(tmp_path, system, anvil.rpc_url, body)


def test_a2a_provider(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        agent = await A2AAgent().start()
        failing = await A2AAgent(fail=True).start()
        try:
            p = await h.provider(system.users[0], system.users[1], runner="a2a", url=agent.card_url)
            assert "signingSecret" in p.published
            key, caller, _ = await h.caller()
            r = await h.hire_call(key, caller, provider=p.wallet, topic="tea")
            assert r.status == 200, r.body
            # the task's artifact is the output; A2A data parts carry numbers as doubles: 1.0 is 1 again
            assert r.body["output"] == '{"keywords":["tea via a2a"],"n":1}'
            (message,) = agent.messages
            assert message.metadata["jobId"] == r.body["jobId"]
            assert message.metadata["serviceType"] == "keyword_research"
            q = await h.provider(system.users[2], system.users[3], runner="a2a", url=failing.card_url)
            f = await h.hire_call(key, caller, provider=q.wallet)
            assert f.status == 502 and f.body["code"] == "provider_error", f.body
            assert "TASK_STATE_FAILED" in f.body["message"]
            assert await h.balance(key, caller) == 96
        finally:
            await agent.stop()
            await failing.stop()

    run(tmp_path, system, anvil.rpc_url, body)


# ---- Idempotency-Key: one run, one charge --------------------------------------------------------


def test_same_key_runs_once_and_charges_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller()
        first = await h.hire_call(key, caller, provider=p.wallet, idem="job-1")
        again = await h.hire_call(key, caller, provider=p.wallet, idem="job-1")
        assert first.status == again.status == 200
        assert again.headers.get("Idempotent-Replayed") == "true" and again.raw == first.raw
        assert h.provider_server.calls[first.body["jobId"]] == 1 and len(h.provider_server.calls) == 1
        assert await h.balance(key, caller) == 96
        other = await h.hire_call(key, caller, provider=p.wallet, idem="job-1", topic="other")
        assert_error(other, 422, "idempotency_conflict", "Idempotency-Key")
        # a failed run is stored too: the retry replays the failure, the job is not run again
        bad = await h.provider(system.users[2], system.users[3], behaviour="error")
        f1 = await h.hire_call(key, caller, provider=bad.wallet, idem="job-2")
        f2 = await h.hire_call(key, caller, provider=bad.wallet, idem="job-2")
        assert f1.status == f2.status == 502 and f2.headers.get("Idempotent-Replayed") == "true"
        assert h.provider_server.calls[f1.body["jobId"]] == 1
        # a refusal (no balance) is stored as well
        assert (await h.hire_call(key, caller, provider=p.wallet, idem="big", maxPrice=1)).status == 422

    run(tmp_path, system, anvil.rpc_url, body)


def test_same_key_at_once_runs_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller()
        h.provider_server.gate = asyncio.Event()
        first = asyncio.create_task(h.hire_call(key, caller, provider=p.wallet, idem="k"))
        while not h.provider_server.bodies:
            await asyncio.sleep(0.01)
        second = await h.hire_call(key, caller, provider=p.wallet, idem="k")
        assert_error(second, 409, "idempotency_in_flight", "Idempotency-Key")
        h.provider_server.gate.set()
        assert (await first).status == 200
        assert sum(h.provider_server.calls.values()) == 1 and await h.balance(key, caller) == 96

    run(tmp_path, system, anvil.rpc_url, body)


# ---- concurrency ---------------------------------------------------------------------------------


def test_100_concurrent_hires_on_one_balance_never_overdraw(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller(50)  # balance 49: room for 24 hires at 2 USDC
        replies = await asyncio.gather(
            *(h.hire_call(key, caller, provider=p.wallet, topic=f"t{i}") for i in range(100))
        )
        statuses = sorted(r.status for r in replies)
        assert statuses.count(200) == 24 and statuses.count(422) == 76, statuses
        assert all(r.body["code"] == "insufficient_balance" for r in replies if r.status == 422)
        assert await h.balance(key, caller) == 1
        assert sum(h.provider_server.calls.values()) == 24  # refused hires never reach the provider
        assert await h.balance(p.key, p.wallet) == Decimal("1.96") * 24
        total = h.db.execute("SELECT sum(amount) FROM ledger WHERE agent_uuid = ?", (caller_uuid,)).fetchall()[0][0]
        assert total == 1_000_000  # the ledger is the balance

    run(tmp_path, system, anvil.rpc_url, body)


# ---- refusals --------------------------------------------------------------------------------------


def test_refusals_write_nothing(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller()
        r = await h.hire_call(key, caller, provider=p.wallet, input={"topic": 7})
        assert_error(r, 422, "input_schema_mismatch", "input/topic")
        r = await h.call(
            "POST", "/api/a2a/hire", {"callerWallet": caller, "serviceType": "keyword_research", "input": {}}, key=key
        )
        assert_error(r, 422, "input_schema_mismatch", "input")
        assert_error(
            await h.hire_call(key, caller, provider="agl_000000000000"), 404, "service_not_found", "providerWallet"
        )
        r = await h.call(
            "POST", "/api/a2a/hire", {"callerWallet": caller, "serviceType": "nobody_does", "input": {}}, key=key
        )
        assert_error(r, 404, "no_provider_available", "serviceType")
        assert_error(
            await h.hire_call(key, caller, provider=p.wallet, maxPrice=1.5), 422, "price_above_max", "maxPrice"
        )
        assert_error(await h.hire_call(p.key, p.wallet, provider=p.wallet), 422, "self_hire", "providerWallet")
        other_key, _, _ = await h.register()
        assert_error(await h.hire_call(other_key, caller, provider=p.wallet), 404, "agent_not_found", "callerWallet")
        poor_key, poor, _ = await h.register()
        assert_error(await h.hire_call(poor_key, poor, provider=p.wallet), 422, "insufficient_balance", "callerWallet")
        r = await h.hire_call(key, caller, provider=p.wallet, webhookUrl="http://127.0.0.1:9/x")
        assert_error(r, 422, "missing_field", "webhookSecret")
        assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000)]
        assert h.db.execute("SELECT count(*) FROM hire_jobs").fetchall()[0][0] == 0
        assert not h.provider_server.calls

    run(tmp_path, system, anvil.rpc_url, body)


def test_publishing_checks(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        key, wallet, _ = await h.register()
        good = {
            "agentId": wallet,
            "serviceType": "keyword_research",
            "price": 2,
            "description": "d",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object"},
            "runner": {"type": "https", "url": h.provider_server.url("ok")},
        }
        assert_error(await h.call("POST", "/api/a2a/services", good, key=key), 403, "provider_not_linked", None)
        await h.link(key, wallet, system.users[0], system.users[1].address)
        bad_schema = {**good, "inputSchema": {"type": "objectish"}}
        assert_error(
            await h.call("POST", "/api/a2a/services", bad_schema, key=key), 422, "invalid_schema", "inputSchema"
        )
        remote = {**good, "outputSchema": {"$ref": "http://127.0.0.1:9/schema.json"}}  # never fetched
        assert_error(await h.call("POST", "/api/a2a/services", remote, key=key), 422, "invalid_schema", "outputSchema")
        r = await h.call("POST", "/api/a2a/services", {**good, "runner": {"type": "https", "url": "ftp://x"}}, key=key)
        assert_error(r, 422, "invalid_url", "runner.url")
        assert_error(
            await h.call("POST", "/api/a2a/services", {**good, "slaSeconds": 999}, key=key),
            400,
            "invalid_field",
            "slaSeconds",
        )
        created = await h.call("POST", "/api/a2a/services", good, key=key)
        assert created.status == 200 and created.body["created"] is True
        assert created.body["signingSecret"].startswith("whsec_")
        again = await h.call("POST", "/api/a2a/services", {**good, "price": 3}, key=key)
        assert again.status == 200 and again.body["created"] is False and "signingSecret" not in again.body
        assert again.body["priceUsdc"] == 3
        mine = await h.call("GET", "/api/a2a/services", key=key, params={"agentId": wallet})
        assert [s["serviceType"] for s in mine.body["services"]] == ["keyword_research"]
        assert b"signingSecret" not in mine.raw and b"signingSecretRaw" not in mine.raw
        gone = await h.call("DELETE", "/api/a2a/services/keyword_research", key=key, params={"agentId": wallet})
        assert gone.status == 200 and gone.body["active"] is False
        reg = await h.call("GET", "/api/a2a/registry")
        assert reg.body["providers"] == []

    run(tmp_path, system, anvil.rpc_url, body)


# ---- automatic choice, registry, reputation -------------------------------------------------------


def test_automatic_choice_takes_the_best_healthy_provider(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        a = await h.provider(system.users[0], system.users[1])
        b = await h.provider(system.users[2], system.users[3])
        key, caller, _ = await h.caller(200)
        # 3 paid jobs at b earn it a score; a has none
        for i in range(3):
            assert (await h.hire_call(key, caller, provider=b.wallet, topic=f"b{i}")).status == 200
        auto = await h.hire_call(key, caller)
        assert auto.status == 200 and auto.body["providerWallet"] == b.wallet
        reg = await h.call("GET", "/api/a2a/registry", params={"serviceType": "keyword_research"})
        assert [e["wallet"] for e in reg.body["providers"]] == [b.wallet, a.wallet]
        best = reg.body["providers"][0]
        assert best["jobs"] == 4 and best["successRate"] == 1 and best["reputationScore"] > 0
        assert best["priceUsdc"] == 2 and best["escrow"]["available"] is False
        # b turns unhealthy (3 failed runs): never chosen automatically, still hirable by name
        svc = store.get_service(h.db, b.uuid, "keyword_research")
        assert svc is not None
        await h.hire.writer.run(
            lambda c: c.execute("UPDATE hire_services SET endpoint = ? WHERE provider_uuid = ?", (down_url(), b.uuid))
        )
        for _ in range(3):
            assert (await h.hire_call(key, caller, provider=b.wallet)).status == 502
        auto = await h.hire_call(key, caller)
        assert auto.status == 200 and auto.body["providerWallet"] == a.wallet
        healthy = await h.call("GET", "/api/a2a/registry", params={"healthy": "true"})
        assert [e["wallet"] for e in healthy.body["providers"]] == [a.wallet]

    run(tmp_path, system, anvil.rpc_url, body)


def test_a_paused_agent_is_never_hired_and_hires_nobody(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """An agent listed in the drop (AgentMarketplace.list by its NFT owner, recorded by POST /drop/list)
    is paused: not in the registry, never chosen, 409 when named, and it hires nobody (a hire is a
    spend), though it still earns."""

    async def body(h: Harness) -> None:
        listed = await h.provider(system.users[0], system.users[1])
        other = await h.provider(system.users[2], system.users[3], price=3)
        key, caller, _ = await h.caller(100)
        for _ in range(3):  # the listed one is the better-scored provider before it is listed
            assert (await h.hire_call(key, caller, provider=listed.wallet)).status == 200
        s = system
        s.tx(system.users[1], s.registry.functions.approve(s.market.address, listed.token))
        receipt = s.tx(system.users[1], s.list_fn(system.users[1].address, listed.token, 100 * U, 30 * U))
        tx = "0x" + bytes(receipt["transactionHash"]).hex()
        drop = {"agentId": listed.wallet, "txHash": tx, "askingPriceUsdc": 100, "acceptOffers": True}
        r = await h.call("POST", "/api/a2a/drop/list", drop, key=listed.key)
        assert r.status in (200, 201), r.body

        reg = await h.call("GET", "/api/a2a/registry", params={"serviceType": "keyword_research"})
        assert [e["wallet"] for e in reg.body["providers"]] == [other.wallet]
        named = await h.hire_call(key, caller, provider=listed.wallet)
        assert (named.status, named.body["code"]) == (409, "provider_paused")
        auto = await h.hire_call(key, caller)
        assert auto.status == 200 and auto.body["providerWallet"] == other.wallet
        own = await h.call("GET", "/api/a2a/services", key=listed.key, params={"agentId": listed.wallet})
        assert own.body["services"][0]["paused"] is True and own.body["services"][0]["escrow"]["available"] is False

        await h.fund(listed.key, listed.wallet, 50)  # a paused agent still earns
        before = ledger_kinds(h.db, listed.uuid)
        hired = await h.hire_call(listed.key, listed.wallet, provider=other.wallet)
        assert (hired.status, hired.body["code"]) == (409, "agent_paused")
        assert ledger_kinds(h.db, listed.uuid) == before  # nothing reserved
        assert h.provider_server.calls.total() == 4  # three hires of `listed`, one automatic of `other`

    run(tmp_path, system, anvil.rpc_url, body)


def test_registry_filters_pages_and_ties(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        ps = [await h.provider(system.users[i], system.users[i + 5], price=i + 1) for i in range(4)]
        reg = await h.call("GET", "/api/a2a/registry", params={"limit": "2"})
        assert reg.status == 200 and reg.body["hasMore"] is True
        wallets = [e["wallet"] for e in reg.body["providers"]]
        nxt = await h.call("GET", "/api/a2a/registry", params={"limit": "2", "cursor": reg.body["nextCursor"]})
        wallets += [e["wallet"] for e in nxt.body["providers"]]
        assert nxt.body["hasMore"] is False
        assert wallets == sorted(p.wallet for p in ps)  # all score 0: ties by wallet, deterministic
        cheap = await h.call("GET", "/api/a2a/registry", params={"maxPrice": "2"})
        assert sorted(e["priceUsdc"] for e in cheap.body["providers"]) == [1, 2]
        assert (await h.call("GET", "/api/a2a/registry", params={"minScore": "1"})).body["providers"] == []
        one = await h.call("GET", "/api/a2a/registry", params={"wallet": ps[2].wallet})
        assert [e["priceUsdc"] for e in one.body["providers"]] == [3]
        assert one.body["providers"][0]["inputSchema"]["required"] == ["topic"]
        assert_error(
            await h.call("GET", "/api/a2a/registry", params={"cursor": "nope"}), 422, "invalid_cursor", "cursor"
        )
        # escrow availability follows the indexed on-chain price
        h.set_price(ps[0], 1_000_000)
        await h.index()
        esc = await h.call("GET", "/api/a2a/registry", params={"escrow": "true"})
        assert [e["wallet"] for e in esc.body["providers"]] == [ps[0].wallet]
        entry = esc.body["providers"][0]["escrow"]
        assert entry == {"available": True, "slaSeconds": 7 * 86400, "onChainPriceUsdc": 1, "reason": None}
        assert esc.body["escrowContract"]["address"] == system.escrow.address

    run(tmp_path, system, anvil.rpc_url, body)


def test_self_dealing_earns_no_reputation(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        _, sibling, _ = await h.register(key=p.key, name="sibling")  # the provider's own account
        await h.fund(p.key, sibling, 50)
        for i in range(3):
            assert (await h.hire_call(p.key, sibling, provider=p.wallet, topic=f"s{i}")).status == 200
        svc = store.get_service(h.db, p.uuid, "keyword_research")
        assert svc is not None and svc.jobs == 0 and svc.score == 0

    run(tmp_path, system, anvil.rpc_url, body)


# ---- webhooks ------------------------------------------------------------------------------------


def test_every_move_is_a_signed_webhook_to_caller_and_provider(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        hooks = h.provider_server
        p = await h.provider(system.users[0], system.users[1], webhookUrl=hooks.url("hook") + "/provider")
        provider_secret = p.published["webhookSecret"]
        key, caller, _ = await h.caller()
        caller_secret = "c" * 32
        r = await h.hire_call(
            key, caller, provider=p.wallet, webhookUrl=hooks.url("hook") + "/caller", webhookSecret=caller_secret
        )
        assert r.status == 200, r.body
        for _ in range(200):  # the dispatcher sends them at once
            if len(hooks.hooks) == 6:
                break
            await asyncio.sleep(0.02)
        got: dict[str, list[str]] = {}
        for path, headers, raw in hooks.hooks:
            who = path.rsplit("/", 1)[1]
            secret = provider_secret if who == "provider" else caller_secret
            assert webhooks.verify_standard(raw, secret, headers, now=time.time())
            assert webhooks.verify_service(raw, secret, headers["X-Service-Signature"])
            payload = json.loads(raw)
            assert payload["event"] == "hire.job_state_changed" and payload["jobId"] == r.body["jobId"]
            got.setdefault(who, []).append(payload["status"])
        # the provider learns of the new job; both see every move, each with its audit entry
        assert sorted(got) == ["caller", "provider"]
        for who in got:
            assert sorted(got[who]) == sorted(["reserved", "output_committed", "charged"])

    run(tmp_path, system, anvil.rpc_url, body)


# ---- a crash while the job runs --------------------------------------------------------------------


def test_kill_9_while_a_job_runs_is_settled_by_the_restart(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """The API process is SIGKILLed while the provider holds the job: the caller's balance stays
    reserved on disk; the restart gives it back and stores `hire_interrupted` under the key, so the
    retry with the same key replays it and the job is never run again."""
    state: dict[str, Any] = {}

    async def prepare(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller()
        state.update(key=key, caller=caller, uuid=caller_uuid, provider=p.wallet)

    run(tmp_path, system, anvil.rpc_url, prepare)
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    port = free_port()

    async def crash() -> None:
        from tests.integration.hire_kit import ProviderServer

        server = await ProviderServer(gate=asyncio.Event()).start()
        # the published service points at the old (stopped) provider server: point it at this one
        db = connect(tmp_path / "ledger.db")
        with transaction(db):
            db.execute("UPDATE hire_services SET endpoint = ?", (server.url("ok"),))
        db.close()
        cmd = [sys.executable, "-m", "tests.integration.test_hire", "--serve", "--rpc", anvil.rpc_url]
        cmd += ["--deployment", str(dep_path), "--db", child_location(tmp_path / "ledger.db"), "--port", str(port)]
        cmd += ["--operator-key", system.operator.key.hex()]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            base = f"http://127.0.0.1:{port}"
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, base + "/api/a2a/registry", 400)
                body = {"callerWallet": state["caller"], "serviceType": "keyword_research", "input": {"topic": "x"}}
                headers = {"Authorization": f"Bearer {state['key']}", "Idempotency-Key": "crash-1"}
                pending = asyncio.create_task(session.post(base + "/api/a2a/hire", json=body, headers=headers))
                while not server.bodies:
                    await asyncio.sleep(0.01)
                os.kill(proc.pid, signal.SIGKILL)  # kill -9 while the provider holds the job
                with pytest.raises(aiohttp.ClientError):
                    await pending
            assert proc.wait(timeout=30) == -signal.SIGKILL
            state["job"] = server.bodies[0]["jobId"]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr:
                proc.stderr.close()
            await server.stop()

    asyncio.run(crash())
    db = connect(tmp_path / "ledger.db")
    job = store.get_job(db, state["job"])
    assert job is not None and job.status == "reserved"  # on disk: reserved, the key in flight
    assert ledger_kinds(db, state["uuid"])[-1] == ("hire_reserve", -2_000_000)
    db.close()

    async def after(h: Harness) -> None:  # the restart (create_app's start-up recovery) settled it
        job = store.get_job(h.db, state["job"])
        assert job is not None and job.status == "released" and job.error_code == "hire_interrupted"
        assert await h.balance(state["key"], state["caller"]) == 98
        r = await h.hire_call(state["key"], state["caller"], topic="x", idem="crash-1")  # the same body
        assert r.status == 503 and r.body["code"] == "hire_interrupted" and r.headers["Idempotent-Replayed"] == "true"
        assert not h.provider_server.calls  # never run again for this key
        assert ledger_kinds(h.db, state["uuid"])[-2:] == [("hire_reserve", -2_000_000), ("hire_release", 2_000_000)]
        svc = store.get_service(h.db, job.provider_uuid, "keyword_research")
        assert svc is not None and svc.jobs == 0  # an interruption is not the provider's failure

    run(tmp_path, system, anvil.rpc_url, after)


def test_recovery_settles_only_jobs_whose_process_is_gone(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """Several API processes serve one database: a process starting (its recovery) settles the hires
    of a process that is gone, never those another live process is running."""
    live = subprocess.Popen(
        [sys.executable, "-c", "from core import instance; print(instance.current(), flush=True); input()"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert live.stdout is not None
    live_owner = live.stdout.readline().strip()
    gone = subprocess.run(
        [sys.executable, "-c", "from core import instance; print(instance.current())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller(100)
        r = await h.hire_call(key, caller, provider=p.wallet, topic="coffee")
        assert r.status == 200, r.body
        done = store.get_job(h.db, r.body["jobId"])
        assert done is not None and done.owner == instance.current()  # the process that ran it
        now = h.clock()
        owners = {
            "live": (live_owner, now),  # another process of this host, still running
            "remote": ("another-host:7:7:x", now),  # another host's: not judged, and recent
            "gone": (gone, now),  # a process of this host that exited
            "legacy": (None, now),  # from before owners were recorded
            "stale": ("another-host:7:7:x", now - settle.ABANDONED_AFTER_SECONDS - 1),
        }
        with transaction(h.db):
            for name, (owner, at) in owners.items():
                store.insert_job(
                    h.db,
                    replace(
                        done,
                        id=f"job-{name}",
                        status="reserved",
                        outcome=None,
                        idem_scope=None,
                        idem_key=None,
                        idem_attempt=None,
                        owner=owner,
                        updated_at=at,
                    ),
                )
        assert await settle.recover(h.hire) == 3
        status = {name: store.get_job(h.db, f"job-{name}") for name in owners}
        assert {n: j.status for n, j in status.items() if j is not None} == {
            "live": "reserved",
            "remote": "reserved",
            "gone": "released",
            "legacy": "released",
            "stale": "released",
        }
        assert await settle.recover(h.hire) == 0  # nothing of the live ones, ever

    try:
        run(tmp_path, system, anvil.rpc_url, body)
    finally:
        live.kill()
        live.wait()
        live.stdout.close()
        if live.stdin is not None:
            live.stdin.close()


# ---- the subprocess entry point -------------------------------------------------------------------


def _serve_main() -> None:
    """The whole service in a process of its own (the crash tests SIGKILL it)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true")
    for name in ("--rpc", "--deployment", "--db", "--port", "--operator-key"):
        parser.add_argument(name, required=True)
    parser.add_argument("--exit-after-output", action="store_true")
    parser.add_argument("--exit-after-release", action="store_true")
    parser.add_argument("--exit-before-run", action="store_true")
    args = parser.parse_args()
    from core.hire.context import Seams
    from scripts.devchain import System as _System  # noqa: F401 (the same modules as the tests)

    dep = Deployment(**json.loads(Path(args.deployment).read_text()))
    w3 = connect_chain(args.rpc)

    async def exit_now(_job: str) -> None:
        os._exit(1)

    seams = Seams(
        before_run=exit_now if args.exit_before_run else None,
        after_output=(lambda _job: os._exit(1)) if args.exit_after_output else None,
        after_release=(lambda _job: os._exit(1)) if args.exit_after_release else None,
    )
    fake = _Sys(w3, dep, Account.from_key(args.operator_key))
    app, _db = build_app(args.db, fake, args.rpc, Clock(), seams)  # type: ignore[arg-type]
    web.run_app(app, host="127.0.0.1", port=int(args.port), print=None)


class _Sys:
    """What build_app reads of a System."""

    def __init__(self, w3: Any, deployment: Deployment, operator: Any) -> None:
        self.w3, self.deployment, self.operator = w3, deployment, operator


if __name__ == "__main__":
    _serve_main()
