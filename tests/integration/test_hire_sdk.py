"""The Python SDK's hire methods against the real service, a real anvil and a real provider:
`hire`, `registry`, `escrow_hire` (approve + createJob with the caller's own key, then the signed
POST) and `escrow_status`, async and sync."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import pytest
from agentledger_sdk import AgentLedger, AsyncAgentLedger, ServerError

from core.anvil import Anvil
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import Harness, run


async def escrow_ready(h: Harness, system: System) -> str:
    p = await h.provider(system.users[0], system.users[1])
    h.set_price(p, 2 * USDC)
    await h.index()
    return p.wallet


def test_async_sdk_hire_registry_escrow(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        provider = await escrow_ready(h, system)
        key, caller, _ = await h.caller()
        caller_acct = system.users[5]
        system.mint_usdc(caller_acct.address, 10 * USDC)
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
