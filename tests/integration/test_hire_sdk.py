"""The Python SDK's hire methods against the real service, a real anvil and a real provider:
`hire`, `registry`, `escrow_hire` (approve + createJob with the caller's own key, then the signed
POST), `escrow_status` and `hire_audit` (a job's audit stream), async and sync."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from agentledger_sdk import AgentLedger, AsyncAgentLedger, HireAudit, InvalidRequest, NotFound, ServerError

from core.anvil import Anvil
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import Harness, run


async def escrow_ready(h: Harness, system: System) -> str:
    p = await h.provider(system.users[0], system.users[1])
    h.set_price(p, 2 * USDC)
    await h.index()
    return p.wallet


async def hirer(h: Harness, system: System) -> tuple[str, str, str, Any]:
    """(an escrow-ready provider, a caller's key and wallet, its on-chain account holding 10 USDC)."""
    provider = await escrow_ready(h, system)
    key, caller, _ = await h.caller()
    caller_acct = system.users[5]
    system.mint_usdc(caller_acct.address, 10 * USDC)
    return provider, key, caller, caller_acct


def test_async_sdk_hire_registry_escrow(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        provider, key, caller, caller_acct = await hirer(h, system)
        async with AsyncAgentLedger(h.base, key) as al:
            page = await al.registry("keyword_research", escrow=True)
            assert [p["wallet"] for p in page.providers] == [provider] and page.has_more is False
            r = await al.hire(caller, "keyword_research", {"topic": "jam"}, idempotency_key="sdk-1")
            assert r.value == {"keywords": ["jam tips", "best jam"]} and r.amount_charged == 2
            again = await al.hire(caller, "keyword_research", {"topic": "jam"}, idempotency_key="sdk-1")
            assert again.replayed and again.job_id == r.job_id
            e = await al.escrow_hire(
                provider, "keyword_research", {"topic": "tea"}, account=caller_acct.key, rpc_url=h.rpc_url
            )
            assert e.success and e.value == {"keywords": ["tea tips", "best tea"]} and e.release_tx and e.create_tx
            assert e.earn_split["ownerCut"] == Decimal("1.94")
            status = await al.escrow_status(e.job_id)
            assert status.status == "released" and status.caller == caller_acct.address and status.amount_usdc == 2
            assert system.balance(caller_acct.address) == 8 * USDC

    run(tmp_path, system, anvil.rpc_url, body)


def test_sync_sdk_and_failed_hires_are_not_retried(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        provider = await escrow_ready(h, system)
        bad = await h.provider(system.users[2], system.users[3], behaviour="error")
        key, caller, _ = await h.caller()
        caller_acct = system.users[6]
        system.mint_usdc(caller_acct.address, 10 * USDC)

        def sync_calls() -> None:
            with AgentLedger(h.base, key) as al:
                r = al.hire(caller, "keyword_research", {"topic": "oat"}, provider_wallet=provider)
                assert json.loads(r.output) == {"keywords": ["oat tips", "best oat"]}
                with pytest.raises(ServerError) as info:
                    al.hire(caller, "keyword_research", {"topic": "oat"}, provider_wallet=bad.wallet)
                assert info.value.status == 502 and info.value.code == "provider_error"
                e = al.escrow_hire(
                    provider, "keyword_research", {"topic": "rye"}, account=caller_acct, rpc_url=h.rpc_url
                )
                assert e.success and e.release_tx

        await asyncio.to_thread(sync_calls)
        failed_jobs = [j for j, n in h.provider_server.calls.items() if n]
        assert len(failed_jobs) == 3  # hire, failed hire (run once: not retried), escrow hire

    run(tmp_path, system, anvil.rpc_url, body)


def _moves(audit: HireAudit) -> list[tuple[str | None, str]]:
    return [(e["payload"]["from_state"], e["payload"]["to_state"]) for e in audit.entries]


def test_sdk_reads_each_jobs_audit_stream_standard_and_escrow(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """Both kinds of hire answer the auditId of their stream, and hire_audit reads the stream: every move
    in order, chained (rechecked here from SHA-256 alone: a changed payload breaks it), each entry a leaf
    whose proof the log serves. Public, as each entry is at /verify: no key needed."""

    async def body(h: Harness) -> None:
        provider, key, caller, caller_acct = await hirer(h, system)
        async with AsyncAgentLedger(h.base, key) as al:
            r = await al.hire(caller, "keyword_research", {"topic": "jam"})
            e = await al.escrow_hire(
                provider, "keyword_research", {"topic": "tea"}, account=caller_acct.key, rpc_url=h.rpc_url
            )
            assert e.success and e.release_tx
            assert isinstance(r.audit_id, int) and isinstance(e.audit_id, int), (r.raw, e.raw)  # both kinds name one
        async with AsyncAgentLedger(h.base) as anyone:
            standard = await anyone.hire_audit(r.job_id)
            escrow = await anyone.hire_audit(e.job_id.upper().replace("0X", "0x"))  # any hex case
            with pytest.raises(NotFound) as missing:
                await anyone.hire_audit("hire_" + "0" * 24)
            assert (missing.value.code, missing.value.param) == ("job_not_found", "jobId")
            with pytest.raises(InvalidRequest) as bad:
                await anyone.hire_audit("job-1")
            assert (bad.value.code, bad.value.param) == ("invalid_job_id", "jobId")
            assert (standard.job_id, standard.kind, escrow.job_id, escrow.kind) == (
                r.job_id,
                "standard",
                e.job_id,
                "escrow",
            )
            assert _moves(standard) == [
                (None, "reserved"),
                ("reserved", "output_committed"),
                ("output_committed", "charged"),
            ]
            assert _moves(escrow) == [
                (None, "running"),
                ("running", "output_committed"),
                ("output_committed", "releasing"),
                ("releasing", "released"),
            ]
            # the answers name their stream's entries: the charge, and the escrow job's latest move
            assert r.audit_id == standard.entries[-1]["auditId"] and r["auditId"] == r.audit_id
            assert e.audit_id == escrow.entries[-1]["auditId"]
            for audit in (standard, escrow):
                assert audit.broken_link() is None
                assert all(x["payload"]["job_id"] == audit.job_id for x in audit.entries)
                last = audit.entries[-1]
                proof = await h.call("GET", last["proofUrl"].removeprefix(h.base))
                assert proof.status == 200 and proof.body["leaf_hash"] == last["leafHash"]
            # a payload changed after the fact no longer chains
            forged = dict(standard.entries[1])
            forged["canonicalPayload"] = forged["canonicalPayload"].replace("output_committed", "charged", 1)
            tampered = HireAudit.parse({**standard.raw, "entries": [standard.entries[0], forged]})
            assert (
                tampered.broken_link()
                == f"entry {forged['auditId']} (seq 2): chainHash is not SHA-256(prevHash || canonicalPayload)"
            )

        await h.index()  # the follower sees the release final: one more move, chained to the rest

        def sync_read() -> HireAudit:
            with AgentLedger(h.base) as al:
                return al.hire_audit(e.job_id)

        final = await asyncio.to_thread(sync_read)
        assert final.entries[:-1] == escrow.entries and final.broken_link() is None
        assert final.entries[-1]["payload"]["final"] is True and _moves(final)[-1] == ("released", "released")

    run(tmp_path, system, anvil.rpc_url, body)
