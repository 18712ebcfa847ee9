"""Hire over MCP with the official client: the tools come from the operation rows (hire_agent and
escrow_hire are value-moving: a quote, then an execute naming it), against the real service on a
real anvil and a real loopback provider. A quote moves nothing and names what will move and to whom;
the execute runs the quoted job once, and a retried execute replays it (one run, one charge)."""

from __future__ import annotations

import json
from pathlib import Path

from core.anvil import Anvil
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import Harness, ledger_kinds, run
from tests.integration.mcp_kit import error_code, mcp


def test_hire_quote_then_execute_moves_money_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller(100)  # balance 98
        args = {"callerWallet": caller, "serviceType": "keyword_research", "input": {"topic": "tea"}}
        async with mcp(h.base + "/api/mcp", key) as client:
            q = await client.call_tool("quote_hire_agent", args)
            assert not q.is_error, q.structured_content
            quote = q.structured_content
            assert quote is not None
            assert quote["amount_micro_usdc"] == 2 * USDC and quote["execute_with"] == "hire_agent"
            assert quote["source"] == caller and quote["recipient"] == p.wallet
            assert quote["details"]["chosen"] == "automatic" and quote["details"]["balanceAfter"] == "96"
            assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000)]  # a quote moves nothing
            assert h.provider_server.calls.total() == 0

            first = await client.call_tool("hire_agent", {"quote_id": quote["quote_id"]})
            again = await client.call_tool("hire_agent", {"quote_id": quote["quote_id"]})
            assert not first.is_error, first.structured_content
            out = first.structured_content
            assert out is not None and json.loads(out["output"]) == {"keywords": ["tea tips", "best tea"]}
            assert out["providerWallet"] == p.wallet and out["amountCharged"] == 2 and out["balance"] == 96
            assert again.structured_content == out and again.meta is not None and again.meta["agentledger/replayed"]
            assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000)]
            assert h.provider_server.calls.total() == 1  # one run

            short = await client.call_tool("quote_hire_agent", {**args, "providerWallet": p.wallet, "maxPrice": 1})
            assert error_code(short) == "price_above_max"  # refused at the quote, nothing quoted
        async with mcp(h.base + "/api/mcp") as anonymous:  # quotes belong to a key
            names = {t.name for t in (await anonymous.list_tools()).tools}
            assert "hire_registry" in names and not {"quote_escrow_hire", "quote_hire_agent"} & names

    run(tmp_path, system, anvil.rpc_url, body)


def test_escrow_hire_quote_names_the_lock_then_execute_releases(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        h.set_price(p, 2 * USDC)
        await h.index()
        key, _, _ = await h.caller(1)  # a key with scope spend: the signature still authenticates the job
        payer = system.users[5]
        job_id, tx = h.lock(payer, p, "mcp")
        async with mcp(h.base + "/api/mcp", key) as client:
            q = await client.call_tool("quote_escrow_hire", h.escrow_body(payer, p, job_id, tx, topic="tea"))
            assert not q.is_error, q.structured_content
            quote = q.structured_content
            assert quote is not None
            assert quote["amount_micro_usdc"] == 2 * USDC
            assert quote["source"] == payer.address and quote["recipient"] == p.wallet
            assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "locked"
            done = await client.call_tool("escrow_hire", {"quote_id": quote["quote_id"]})
            assert not done.is_error, done.structured_content
            out = done.structured_content
            assert out is not None and out["success"] is True and out["settlement"] == "released"
            assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "released"
            assert h.provider_server.calls[job_id] == 1

            wrong = await client.call_tool(
                "quote_escrow_hire", h.escrow_body(payer, p, "0x" + "ab" * 32, tx, topic="tea")
            )
            assert error_code(wrong) == "escrow_not_locked"

    run(tmp_path, system, anvil.rpc_url, body)
