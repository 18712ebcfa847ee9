"""The rules of every request hold for calls that arrive as MCP
tools too, not only over HTTP: a tool's arguments become the operation's path, query and body
(api.mcp.tools.to_call) without passing api.errors' middleware, so the MCP path applies the same
rules itself. Against the real service (api.app.create_app, a real SQLite file) with the official
client on both revisions, and raw JSON-RPC where the client cannot send the bytes (a lone
surrogate, a key named twice):

- no string (value or key, at any depth; path and query arguments too) may hold a control
  character but tab/LF/CR, nor a lone surrogate: a tool error 400 invalid_string, nothing written;
- a JSON-RPC message naming one key twice in an object is refused whole (-32600, HTTP 400, the
  REST shape's duplicate_key as data), nothing written: the SDK's parser would keep the last;
- numbers: non-finite ones refused (invalid_number), free JSON within +-(2^53 - 1) (invalid_number),
  amounts within the model's bounds (invalid_amount), as over HTTP.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp_kit import MODES, Service, error_code, mcp, service

pytestmark = pytest.mark.timeout(120)

_MODERN = "2026-07-28"
_META = {"io.modelcontextprotocol/protocolVersion": _MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _written(svc: Service) -> tuple[int, int]:
    """(ledger rows, memory rows): what a refused call must leave as it was."""
    ledger = svc.db.execute("SELECT count(*) FROM ledger").fetchall()[0][0]
    memory = svc.db.execute("SELECT count(*) FROM memories").fetchall()[0][0]
    return int(ledger), int(memory)


async def _raw_call(svc: Service, key: str, name: str, arguments_json: bytes) -> tuple[int, dict[str, Any]]:
    """tools/call over 2026-07-28 (one POST, no session) with the arguments' JSON text as given."""
    head = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call"})[:-1].encode()
    params = b'"params":{"name":' + json.dumps(name).encode() + b',"arguments":' + arguments_json
    params += b',"_meta":' + json.dumps(_META).encode() + b"}"
    body = head + b"," + params + b"}"
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": _MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    async with svc.session.post(svc.url, data=body, headers=headers) as resp:
        raw = await resp.read()
        if resp.headers.get("Content-Type", "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in raw.decode().splitlines() if line.startswith("data:")]
            messages = [json.loads(d) for d in data if d]
            return resp.status, next(m for m in messages if m.get("id") == 7)
        return resp.status, json.loads(raw)


@pytest.mark.parametrize("mode", MODES)
def test_tool_arguments_obey_the_rule_of_every_request_string(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            before = _written(svc)
            async with mcp(svc.url, key, mode) as client:
                cases = [
                    ("earn", {"agentId": wallet, "amount": 5, "source": "ad\x00revenue"}, "source"),
                    ("earn", {"agentId": wallet, "amount": 5, "source": "bell\x07"}, "source"),
                    ("earn", {"agentId": wallet, "amount": 5, "source": "c1\x85"}, "source"),
                    ("write_memory", {"agentId": wallet, "key": "k", "value": {"deep": ["ok", "\x1b[31m"]}}, None),
                    ("write_memory", {"agentId": wallet, "key": "k", "value": {"k\x00ey": 1}}, None),
                    ("get_order", {"order_id": "ord_\x01"}, "order_id"),  # a path placeholder
                    ("get_balance", {"agentId": "agl_\x0b"}, "agentId"),  # a query argument
                ]
                for name, args, param in cases:
                    result = await client.call_tool(name, args)
                    assert error_code(result) == "invalid_string", (name, args, result.structured_content)
                    assert result.structured_content is not None
                    assert result.structured_content["status"] == 400
                    if param is not None:
                        assert result.structured_content["error"]["param"] == param
                # tab, LF and CR are text; so is any other character
                ok = await client.call_tool("earn", {"agentId": wallet, "amount": 5, "source": "a\tb\nc\r é 🙂"})
                assert not ok.is_error, ok.structured_content
            assert _written(svc)[0] == before[0] + 1 and _written(svc)[1] == before[1]

    run(body())


def test_a_lone_surrogate_in_tool_arguments_is_refused(tmp_path: Path) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            before = _written(svc)
            for args in (
                b'{"agentId":"' + wallet.encode() + b'","amount":5,"source":"x\\ud800y"}',
                b'{"agentId":"' + wallet.encode() + b'","key":"k","value":{"\\udfff":1}}',
            ):
                name = "earn" if b"source" in args else "write_memory"
                status, message = await _raw_call(svc, key, name, args)
                assert status == 200, message
                result = message["result"]
                assert result["isError"] is True
                assert result["structuredContent"]["error"]["code"] == "invalid_string", result
            assert _written(svc) == before

    run(body())


def test_a_message_naming_a_key_twice_is_refused_whole(tmp_path: Path) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            before = _written(svc)
            # which amount? HTTP refuses such a body (400 duplicate_key); so does MCP, before any tool runs
            args = b'{"agentId":"' + wallet.encode() + b'","amount":1,"source":"s","amount":1000000}'
            status, message = await _raw_call(svc, key, "earn", args)
            assert status == 400
            assert message["error"]["code"] == -32600
            assert message["error"]["message"].startswith("duplicate_key")
            assert message["error"]["data"]["error"] == {
                "type": "invalid_request",
                "code": "duplicate_key",
                "message": "the key 'amount' appears twice in one object",
                "param": "amount",
            }
            assert _written(svc) == before
            # the same arguments named once run (the raw path itself works)
            once = b'{"agentId":"' + wallet.encode() + b'","amount":1,"source":"s"}'
            status, message = await _raw_call(svc, key, "earn", once)
            assert status == 200 and message["result"].get("isError") is not True, message
            assert _written(svc)[0] == before[0] + 1

    run(body())


@pytest.mark.parametrize("mode", MODES)
def test_number_bounds_hold_for_tool_arguments(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, wallet, _ = await svc.account()
            before = _written(svc)
            async with mcp(svc.url, key, mode) as client:
                cases = [
                    ("write_memory", {"agentId": wallet, "key": "k", "value": 2**53}, "invalid_number"),
                    ("write_memory", {"agentId": wallet, "key": "k", "value": {"a": [-(2**60)]}}, "invalid_number"),
                    ("earn", {"agentId": wallet, "amount": 10**15, "source": "s"}, "invalid_amount"),
                    ("earn", {"agentId": wallet, "amount": 0.0000001, "source": "s"}, "invalid_amount"),
                ]
                for name, args, code in cases:
                    result = await client.call_tool(name, args)
                    assert error_code(result) == code, (name, args, result.structured_content)
                edge = await client.call_tool("write_memory", {"agentId": wallet, "key": "k", "value": 2**53 - 1})
                assert not edge.is_error, edge.structured_content
            assert _written(svc) == (before[0], before[1] + 1)
            # a number no float holds (1e400): refused as not finite, nothing written
            args = b'{"agentId":"' + wallet.encode() + b'","key":"j","value":1e400}'
            status, message = await _raw_call(svc, key, "write_memory", args)
            if status == 200:  # the SDK read it as inf: the tool refuses it
                assert message["result"]["structuredContent"]["error"]["code"] in ("invalid_number", "invalid_json")
            else:  # or the SDK's parser refused the message itself
                assert "error" in message
            assert _written(svc) == (before[0], before[1] + 1)

    run(body())
