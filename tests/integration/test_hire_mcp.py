"""Hire over MCP with the official client: the tools come from the operation rows (hire_agent and
escrow_hire are value-moving: a quote, then an execute naming it), against the real service on a
real anvil and a real loopback provider. A quote moves nothing and names what will move and to whom;
the execute runs the quoted job once, and a retried execute replays it (one run, one charge). The
provider's output is third-party input to a model: an execute's result links to it (a resource the
executing key alone reads, exactly the bytes outputSha256 and outputCid name), never inlines it;
HTTP answers it inline, as the spec says."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import mcp_types as t
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from api.mcp.tools import CONTENT_TEMPLATE
from core import ipfs
from core.anvil import Anvil
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import Harness, ledger_kinds, run
from tests.integration.mcp_kit import error_code, mcp


def _output_link(result: t.CallToolResult, quote_id: str) -> str:
    """The result's one link to the output; no trace of the output in what a model reads inline."""
    assert result.structured_content is not None and "output" not in result.structured_content
    texts = [c for c in result.content if isinstance(c, t.TextContent)]
    assert len(texts) == 1 and "output" not in json.loads(texts[0].text)
    assert json.loads(texts[0].text) == result.structured_content
    links = [c for c in result.content if isinstance(c, t.ResourceLink)]
    assert len(links) == 1 and links[0].name == "output", links
    uri = str(links[0].uri)
    assert uri == f"agentledger://quotes/{quote_id}/content/output"
    assert "tea tips" not in json.dumps(result.model_dump(mode="json"))  # the provider's text is nowhere inline
    return uri


async def _read_output(client: Client, uri: str, answer: dict[str, Any]) -> bytes:
    """The linked output: exactly the bytes whose SHA-256 and CID the answer names."""
    read = await client.read_resource(uri)
    [contents] = read.contents
    assert isinstance(contents, t.TextResourceContents) and contents.mime_type == "application/json"
    data = contents.text.encode()
    assert hashlib.sha256(data).hexdigest() == answer["outputSha256"]
    assert ipfs.cid_of(data) == answer["outputCid"]  # hire's own CID builder agrees with core.ipfs
    return data


async def _schemas_leave_output_out(client: Client) -> None:
    tools = {x.name: x for x in (await client.list_tools()).tools}
    for name in ("hire_agent", "escrow_hire"):
        schema = tools[name].output_schema
        assert schema is not None and "outputSha256" in schema["properties"], name
        assert "output" not in schema["properties"] and "output" not in schema.get("required", ()), name
    templates = {x.uri_template for x in (await client.list_resource_templates()).resource_templates}
    assert CONTENT_TEMPLATE in templates


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
            assert out is not None and out["providerWallet"] == p.wallet
            assert out["amountCharged"] == 2 and out["balance"] == 96
            assert again.structured_content == out and again.meta is not None and again.meta["agentledger/replayed"]
            uri = _output_link(first, quote["quote_id"])
            assert _output_link(again, quote["quote_id"]) == uri  # the replay links the same
            data = await _read_output(client, uri, out)
            assert json.loads(data) == {"keywords": ["tea tips", "best tea"]}
            await _schemas_leave_output_out(client)
            with pytest.raises(MCPError):  # a field the execute did not answer
                await client.read_resource(uri.replace("/output", "/input"))
            assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000)]
            assert h.provider_server.calls.total() == 1  # one run

            short = await client.call_tool("quote_hire_agent", {**args, "providerWallet": p.wallet, "maxPrice": 1})
            assert error_code(short) == "price_above_max"  # refused at the quote, nothing quoted
        other_key, _, _ = await h.caller(1)
        async with mcp(h.base + "/api/mcp", other_key) as other:  # the output is the executing key's alone
            with pytest.raises(MCPError):
                await other.read_resource(uri)
        async with mcp(h.base + "/api/mcp") as anonymous:  # quotes belong to a key
            names = {x.name for x in (await anonymous.list_tools()).tools}
            assert "hire_registry" in names and not {"quote_escrow_hire", "quote_hire_agent"} & names
            with pytest.raises(MCPError):
                await anonymous.read_resource(uri)
            templates = {x.uri_template for x in (await anonymous.list_resource_templates()).resource_templates}
            assert CONTENT_TEMPLATE not in templates

        # HTTP answers the output inline, as the spec says (and the same bytes the link gives)
        http = await h.hire_call(key, caller, topic="tea", idem="http-1")
        assert http.status == 200, http.body
        assert json.loads(http.body["output"]) == {"keywords": ["tea tips", "best tea"]}
        assert hashlib.sha256(http.body["output"].encode()).hexdigest() == http.body["outputSha256"]
        assert http.body["output"].encode() == data

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
            uri = _output_link(done, quote["quote_id"])
            assert json.loads(await _read_output(client, uri, out)) == {"keywords": ["tea tips", "best tea"]}
            assert system.escrow.functions.jobStatus(bytes.fromhex(job_id[2:])).call()[0] == "released"
            assert h.provider_server.calls[job_id] == 1
            # a retried execute (its signature is spent) replays the first answer: one run, one release
            again = await client.call_tool("escrow_hire", {"quote_id": quote["quote_id"]})
            assert not again.is_error, again.structured_content
            assert again.structured_content == out and again.meta is not None and again.meta["agentledger/replayed"]
            assert _output_link(again, quote["quote_id"]) == uri
            assert h.provider_server.calls[job_id] == 1

            wrong = await client.call_tool(
                "quote_escrow_hire", h.escrow_body(payer, p, "0x" + "ab" * 32, tx, topic="tea")
            )
            assert error_code(wrong) == "escrow_not_locked"

    run(tmp_path, system, anvil.rpc_url, body)
