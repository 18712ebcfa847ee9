"""The caller agent's balance and recent ledger as MCP resources, and the three prompts, with the
official `mcp` client on both revisions against the real service."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as t
import pytest
from mcp.shared.exceptions import MCPError

from tests.integration.mcp_kit import MODES, mcp, service

pytestmark = pytest.mark.timeout(120)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def text_of(result: t.ReadResourceResult) -> Any:
    [contents] = result.contents
    assert isinstance(contents, t.TextResourceContents) and contents.mime_type == "application/json"
    return json.loads(contents.text)


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_reads_its_balance_and_ledger_as_resources(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, account = await svc.account()
            _other_key, stranger, _ = await svc.account("other")
            await svc.fund(key, wallet, 250)
            r = await svc.call(
                "POST", "/api/agents/spend", {"agentId": wallet, "amount": 5, "destination": "x"}, key=key
            )
            assert r.status == 200, r.body
            http_balance = await svc.call("GET", "/api/agents/balance", key=key, params={"agentId": wallet})
            writer = svc.issue_key(account, scopes="log")
            async with mcp(svc.url, key, mode) as client:
                listed = {str(x.uri) for x in (await client.list_resources()).resources}
                templates = {x.uri_template for x in (await client.list_resource_templates()).resource_templates}
                balance = text_of(await client.read_resource(f"agentledger://agents/{wallet}/balance"))
                ledger = text_of(await client.read_resource(f"agentledger://agents/{wallet}/ledger"))
                with pytest.raises(MCPError) as foreign:
                    await client.read_resource(f"agentledger://agents/{stranger}/ledger")
            async with mcp(svc.url, writer, mode) as client:
                with pytest.raises(MCPError) as unscoped:
                    await client.read_resource(f"agentledger://agents/{wallet}/balance")
        assert {f"agentledger://agents/{wallet}/balance", f"agentledger://agents/{wallet}/ledger"} <= listed
        assert not any(stranger in uri for uri in listed)
        assert {"agentledger://agents/{agentId}/balance", "agentledger://agents/{agentId}/ledger"} <= templates
        assert balance == http_balance.body and balance["balance"] == 240  # 245 credited, 5 spent
        assert ledger["agentId"] == wallet and [e["kind"] for e in ledger["entries"]] == ["spend", "earn"]
        assert ledger["entries"][0]["amount"] == -5 and ledger["entries"][0]["balanceAfter"] == 240
        assert foreign.value.code == (-32002 if mode == "legacy" else t.INVALID_PARAMS)
        assert foreign.value.message == "Resource not found"  # another account's agent: as if absent
        assert unscoped.value.code == t.INVALID_PARAMS and "insufficient_scope" in unscoped.value.message

    run(body())


@pytest.mark.parametrize("mode", MODES)
def test_the_prompts_name_the_tools_of_their_loop(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            async with mcp(svc.url, key, mode, toolsets=None) as client:
                prompts = {p.name: p for p in (await client.list_prompts()).prompts}
                tools = {tool.name for tool in (await client.list_tools()).tools}
                hire = await client.get_prompt(
                    "hire_a_provider",
                    {"serviceType": "data_research", "input": '{"q": 1}', "maxPrice": "2", "agentId": wallet},
                )
                with pytest.raises(MCPError) as missing:
                    await client.get_prompt("earn_and_report", {"agentId": wallet})
                with pytest.raises(MCPError) as control:
                    await client.get_prompt("earn_and_report", {"agentId": wallet, "amount": "1", "source": "a\x07"})
        assert set(prompts) == {"earn_and_report", "hire_a_provider", "log_high_stakes_decision"}
        [message] = hire.messages
        assert isinstance(message.content, t.TextContent)
        text = message.content.text
        assert wallet in text and "data_research" in text
        for name in ("hire_registry", "quote_hire_agent", "hire_agent"):
            assert name in text and name in tools, name  # in the default list the prompt runs on
        assert "missing_field" in missing.value.message and "invalid_string" in control.value.message

    run(body())
