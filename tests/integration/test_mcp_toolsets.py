"""MCP toolsets end to end, with the official `mcp` client on both revisions against the real service:
what a session lists (its choice by query or header, else its key's, else the compact default), the
size of the list as the server sends it, list_toolsets / enable_toolset with tools/list_changed where
each revision delivers it (2025-11-25: on the call's stream; 2026-07-28: on the key's listen stream,
from another process too), and the money and request rules on the default list."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as t
import pytest

from api.mcp.tools import build_tools
from api.mcp.toolsets import SESSION_ROWS_SECONDS
from api.operation import TOOLSETS
from api.operation_table import OPERATIONS
from core.store import mcp_toolsets as toolset_store
from core.store import transaction
from tests.integration.mcp_kit import MODES, error_code, mcp, service

pytestmark = pytest.mark.timeout(120)

#: The compact default: the core loop (balance, earn, spend, memory, a decision, find and hire a provider).
CORE_LOOP = {
    "get_balance",
    "earn",
    "quote_spend",
    "spend",
    "write_memory",
    "list_memories",
    "log_decision",
    "hire_registry",
    "quote_hire_agent",
    "hire_agent",
    "list_toolsets",
    "enable_toolset",
}
DEFAULT_MAX_TOOLS, DEFAULT_MAX_CHARS, ALL_MAX_CHARS, TOOL_MAX_CHARS = 16, 24_000, 70_000, 3_000


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def sizes(tools: list[t.Tool]) -> tuple[int, dict[str, int]]:
    """The tools/list result's JSON length, and each tool's, serialized as the server serializes it."""
    dumped = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    return len(json.dumps({"tools": dumped})), {d["name"]: len(json.dumps(d)) for d in dumped}


async def names(url: str, key: str | None, mode: str, toolsets: str | None) -> set[str]:
    async with mcp(url, key, mode, toolsets=toolsets) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def toolset_tools(toolset: str) -> set[str]:
    return {name for name, spec in build_tools(OPERATIONS).items() if spec.op.toolset == toolset}


def test_every_tool_is_in_one_toolset() -> None:
    tools = build_tools(OPERATIONS)
    assert {spec.op.toolset for spec in tools.values()} == set(TOOLSETS), "every toolset has tools"
    assert {name for name, spec in tools.items() if spec.op.mcp_default} | {"list_toolsets", "enable_toolset"} >= (
        CORE_LOOP
    )
    row = next(op for op in OPERATIONS if op.operation_id == "getBalance")
    with pytest.raises(ValueError, match="names no MCP toolset"):
        build_tools([replace(row, toolset=None)])


@pytest.mark.parametrize("mode", MODES)
def test_the_list_as_served_fits_its_budget(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, _wallet, _ = await svc.account()
            async with mcp(svc.url, key, mode, toolsets=None) as client:
                default = (await client.list_tools()).tools
            async with mcp(svc.url, key, mode, toolsets="all") as client:
                every = (await client.list_tools()).tools
        default_chars, default_each = sizes(default)
        all_chars, all_each = sizes(every)
        assert set(default_each) >= CORE_LOOP and len(default) <= DEFAULT_MAX_TOOLS, sorted(default_each)
        assert default_chars <= DEFAULT_MAX_CHARS, default_chars
        assert all_chars <= ALL_MAX_CHARS, all_chars
        assert len(every) == len(build_tools(OPERATIONS)) + 2
        too_big = {name: n for name, n in all_each.items() if n > TOOL_MAX_CHARS}
        assert not too_big, too_big

    run(body())


@pytest.mark.parametrize("mode", MODES)
def test_a_session_lists_its_choice_else_its_keys_else_the_default(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            made = await svc.call("POST", "/api/keys", {"email": "d@example.com", "mcpToolsets": "drop,hire"})
            assert made.status == 201, made.body
            drop_key = made.body["api_key"]
            discovery = {"list_toolsets", "enable_toolset"}
            hire = toolset_tools("hire")
            assert await names(svc.url, key, mode, "hire") == hire | discovery
            assert await names(svc.url, drop_key, mode, None) == toolset_tools("drop") | hire | discovery
            assert await names(svc.url, drop_key, mode, "decisions") == toolset_tools("decisions") | discovery
            assert await names(svc.url, None, mode, None) == {"register_agent", "hire_registry", *discovery}
            async with mcp(svc.url, key, mode, toolsets=None) as client:
                outside = await client.call_tool("get_brain", {"agentId": wallet})
            assert error_code(outside) == "toolset_not_enabled"
            assert "enable_toolset" in outside.structured_content["error"]["message"]  # type: ignore[index]

    run(body())


def test_an_unknown_toolset_is_a_400_before_the_handshake(tmp_path: Path) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            async with aiohttp.ClientSession() as http:
                async with http.post(svc.url + "?toolsets=wallet,bank", json=ping) as r:
                    assert r.status == 400
                    by_query = await r.json()
                async with http.post(svc.url, json=ping, headers={"X-MCP-Toolsets": "al"}) as r:
                    assert r.status == 400
                    by_header = await r.json()
            made = await svc.call("POST", "/api/keys", {"email": "x@example.com", "mcpToolsets": "wallet,bank"})
        assert by_query["code"] == "unknown_toolset" and by_query["param"] == "toolsets"
        assert "'bank'" in by_query["message"] and "wallet, decisions" in by_query["message"]
        assert set(by_query) == {"type", "code", "message", "param"}
        assert by_header["code"] == "unknown_toolset" and by_header["param"] == "X-MCP-Toolsets"
        assert made.status == 400 and made.body["param"] == "mcpToolsets"

    run(body())


def test_enable_toolset_on_2025_11_25_belongs_to_the_session(tmp_path: Path) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            stale = svc.clock.now - SESSION_ROWS_SECONDS - 1
            with transaction(svc.db):  # a session long gone, and a key's own (kept)
                toolset_store.enable(svc.db, "session:gone", "drop", stale)
                toolset_store.enable(svc.db, "key:old", "drop", stale)
            heard: list[Any] = []

            async def on_message(message: Any) -> None:
                if isinstance(message, t.ToolListChangedNotification):
                    heard.append(message)

            async with mcp(svc.url, key, "legacy", toolsets=None, message_handler=on_message) as client:
                before = {tool.name for tool in (await client.list_tools()).tools}
                listed = await client.call_tool("list_toolsets", {})
                enabled = await client.call_tool("enable_toolset", {"toolset": "checkout"})
                after = {tool.name for tool in (await client.list_tools()).tools}
                again = await client.call_tool("enable_toolset", {"toolset": "checkout"})
                session = await client.call_tool("create_checkout_session", {"line_items": [{"item": {"id": "nope"}}]})
                overview = await client.call_tool("list_toolsets", {})
            other_session = await names(svc.url, key, "legacy", None)
            del wallet
            kept = (toolset_store.enabled(svc.db, "session:gone"), toolset_store.enabled(svc.db, "key:old"))
        assert kept == (frozenset(), frozenset({"drop"})), "a gone session's rows are dropped, a key's kept"
        assert not before & toolset_tools("checkout")
        rows = {row["name"]: row for row in listed.structured_content["toolsets"]}  # type: ignore[index]
        assert set(rows) == set(TOOLSETS) and not rows["checkout"]["enabled"]
        assert rows["checkout"]["tools"] == len(toolset_tools("checkout")) and rows["checkout"]["description"]
        assert enabled.structured_content is not None and enabled.structured_content["listChanged"] is True
        assert len(heard) == 1, "notifications/tools/list_changed on the call's stream, once"
        assert after == before | toolset_tools("checkout")
        assert again.structured_content is not None and again.structured_content["listChanged"] is False
        assert error_code(session) != "toolset_not_enabled"  # runnable now (refused by the row for the item)
        assert {r["name"] for r in overview.structured_content["toolsets"] if r["enabled"]} == {"checkout"}  # type: ignore[index]
        assert other_session == before, "another session of the key lists its own toolsets"

    run(body())


def test_enable_toolset_on_2026_07_28_belongs_to_the_key_on_every_process(tmp_path: Path) -> None:
    """Two app instances over one database (two processes of the service): a key enables a toolset
    through one; the other lists it and its listen stream hears tools/list_changed."""

    async def body() -> None:
        async with service(tmp_path) as first, service(tmp_path) as second:
            key, _wallet, _ = await first.account()
            drop = toolset_tools("drop")
            async with mcp(second.url, key, "2026-07-28", toolsets=None) as listener:
                assert not drop & {tool.name for tool in (await listener.list_tools()).tools}
                async with listener.listen(tools_list_changed=True) as subscription:
                    async with mcp(first.url, key, "2026-07-28", toolsets=None) as client:
                        enabled = await client.call_tool("enable_toolset", {"toolset": "drop"})
                    event = await asyncio.wait_for(anext(aiter(subscription)), 30)
                listed = {tool.name for tool in (await listener.list_tools()).tools}
            fresh = await names(first.url, key, "2026-07-28", None)
            async with mcp(first.url, None, "2026-07-28", toolsets=None) as anonymous:
                refused = await anonymous.call_tool("enable_toolset", {"toolset": "drop"})
        assert enabled.structured_content is not None and enabled.structured_content["listChanged"] is True
        assert type(event).__name__ == "ToolsListChanged"
        assert drop <= listed and drop <= fresh, "the key's requests list it, on every process"
        assert error_code(refused) == "missing_api_key"

    run(body())


@pytest.mark.parametrize("mode", MODES)
def test_the_default_list_keeps_the_money_and_request_rules(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, account = await svc.account()
            await svc.fund(key, wallet, 250)
            capped = svc.issue_key(account, scopes="read spend", daily_cap=10_000_000)
            async with mcp(svc.url, capped, mode, toolsets=None) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                quote = await client.call_tool("quote_spend", {"agentId": wallet, "amount": 4, "destination": "shop"})
                assert not quote.is_error, quote.structured_content
                quote_id = quote.structured_content["quote_id"]  # type: ignore[index]
                spent = await client.call_tool("spend", {"quote_id": quote_id})
                replayed = await client.call_tool("spend", {"quote_id": quote_id})
                quote = await client.call_tool("quote_spend", {"agentId": wallet, "amount": 7, "destination": "b"})
                over = await client.call_tool("spend", {"quote_id": quote.structured_content["quote_id"]})  # type: ignore[index]
                bad = await client.call_tool("enable_toolset", {"toolset": "drop\x00"})
                extra = await client.call_tool("enable_toolset", {"toolset": "drop", "more": 1})
            assert {"earn", "log_decision", "write_memory"}.isdisjoint(listed), "the scopes still decide"
            assert not spent.is_error and spent.structured_content["spent"] == 4  # type: ignore[index]
            assert replayed.structured_content == spent.structured_content and svc.spends(wallet) == 1
            assert error_code(over) == "daily_cap_exceeded" and svc.spends(wallet) == 1
            assert error_code(bad) == "invalid_string" and error_code(extra) == "unknown_field"

    run(body())


def test_the_documented_counts_are_the_servers() -> None:
    """The MCP reference page states the counts the code makes (the test fails when a row moves)."""
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "reference" / "mcp.md").read_text().split())
    tools = build_tools(OPERATIONS)
    discovery = 2
    stated = re.search(r"The (\d+) tools are in (\d+) toolsets, each row in one \(.*?\): (.*?)\. A session", text)
    assert stated is not None, "the toolsets sentence"
    assert (int(stated[1]), int(stated[2])) == (len(tools), len(TOOLSETS))
    per_toolset = dict(re.findall(r"`(\w+)` (\d+)", stated[3]))
    assert per_toolset == {ts: str(len(toolset_tools(ts))) for ts in TOOLSETS}
    default = [spec for spec in tools.values() if spec.op.mcp_default]
    default_rows = {spec.op.operation_id for spec in default}
    public = [spec for spec in tools.values() if spec.visible_to(None)]
    counts = re.search(
        r"the (\d+) rows marked `mcp_default` .*?, so (\d+) tools with .*? with no key the default is (\d+) tools, "
        r"`all` (\d+)\.",
        text,
    )
    assert counts is not None, "the default sentence"
    assert [int(n) for n in counts.groups()] == [
        len(default_rows),
        len(default) + discovery,
        len([s for s in public if s.op.mcp_default]) + discovery,
        len(public) + discovery,
    ]
    inspector = re.search(r"no key: the (\d+) public tools", text)
    assert inspector is not None and int(inspector[1]) == len(public) + discovery
