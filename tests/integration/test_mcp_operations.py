"""Every row of the operation table is an MCP tool, and a tool never drifts from its route.

- The generated tools are exactly the table's rows (value-moving rows as a quote and an execute,
  second paths of one operation none), each runnable, with the schemas of the row's own models:
  a row added without `run`, or a model changed on one side only, fails here. The one difference:
  a row's content_fields (provider-produced content, linked over MCP) are not in the tool's schema.
- Every tool answers what its route answers: each operation is called over HTTP and as a tool with
  the same arguments (a placeholder for each path parameter, no body fields: what every operation
  can be given without a fixture), by the same key, and the two answers must be equal: the same
  JSON on success, the same status and error code on refusal. New rows are covered without a line
  of MCP-specific code.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from api import dashboard, metrics
from api.mcp import MCP_PATH
from api.mcp.server import DISCOVERY, SERVER_VERSION
from api.mcp.tools import (
    ExecuteArguments,
    QuoteAnswer,
    build_tools,
    input_schema,
    output_schema,
    path_params,
    slim,
)
from api.openapi import API_VERSION
from api.operation_table import OPERATIONS
from tests.integration.mcp_kit import mcp, service

PLACEHOLDER = "nope"


def test_every_operation_is_a_tool_with_its_models_schemas() -> None:
    tools = build_tools(OPERATIONS)
    by_op: dict[str, list[str]] = {}
    for spec in tools.values():
        by_op.setdefault(spec.op.operation_id, []).append(spec.name)
    for op in OPERATIONS:
        if op.alias_of:
            assert op.operation_id not in by_op
            assert op.alias_of in by_op, f"{op.operation_id} serves {op.alias_of}, which is no operation"
            continue
        assert op.run is not None, f"{op.operation_id} has no run: it cannot be a tool"
        names = sorted(by_op.get(op.operation_id, []))
        if op.quote is not None:
            execute = [n for n in names if not n.startswith("quote_")]
            assert len(names) == 2 and names == sorted([*execute, "quote_" + execute[0]]), names
        else:
            assert len(names) == 1, (op.operation_id, names)
        for name in names:
            tool = tools[name].tool
            kind = tools[name].kind
            if kind == "execute":
                assert tool.input_schema == slim(ExecuteArguments.model_json_schema())
            else:
                assert tool.input_schema == input_schema(op)
                props = tool.input_schema["properties"]
                for model in (op.query, op.request):
                    if model is not None:
                        schema = model.model_json_schema(mode="validation")
                        for field, prop in schema.get("properties", {}).items():
                            assert props[field] == slim(prop), (name, field)
                assert set(path_params(op)) <= set(props)
            if kind == "quote":
                assert tool.output_schema == slim(QuoteAnswer.model_json_schema(), output=True)
            elif not op.mcp_output_schema:
                assert tool.output_schema is None, name
            else:
                assert tool.output_schema == output_schema(op)
                model = slim(op.response.model_json_schema(mode="serialization"), output=True)
                if model.get("type") == "object":
                    # the one difference allowed: provider-produced content fields are links, not schema
                    for field in op.content_fields:
                        assert field in model["properties"], (name, field)
                        assert field not in tool.output_schema["properties"], (name, field)
                        assert field not in tool.output_schema.get("required", ()), (name, field)
                        model["properties"].pop(field)
                        if field in model.get("required", ()):
                            model["required"].remove(field)
                    assert tool.output_schema == model
    assert SERVER_VERSION == API_VERSION
    assert MCP_PATH == "/api/mcp"


def test_pages_and_metrics_are_no_rows_and_no_tools() -> None:
    """The dashboard (HTML for people, signed in by cookie) and /metrics (Prometheus text behind its own
    token) are not operations: no row, so no tool and no entry in /api/schema (test_openapi lists them
    as UNDOCUMENTED); every tool's path stays under /api or the other JSON routes."""
    non_api = dashboard.ROUTES | metrics.ROUTES
    assert not {(op.method, op.path) for op in OPERATIONS} & non_api
    for spec in build_tools(OPERATIONS).values():
        assert not spec.op.path.startswith(("/dashboard", "/metrics")), spec.name


def test_a_row_without_run_cannot_be_a_tool() -> None:
    from dataclasses import replace

    row = next(op for op in OPERATIONS if op.operation_id == "getBalance")
    with pytest.raises(ValueError, match="no run"):
        build_tools([replace(row, run=None)])


async def _http(svc: Any, op: Any, key: str) -> tuple[int, Any]:
    path = op.path
    for name in path_params(op):
        path = path.replace("{" + name + "}", PLACEHOLDER)
    body = {} if op.request is not None else None
    r = await svc.call(op.method, path, body, key=key, headers={"Accept": "application/json"})
    return r.status, json.loads(r.raw) if r.raw else None


def _comparable(tool_result: Any) -> tuple[int, Any]:
    meta = tool_result.meta or {}
    content = tool_result.structured_content
    if tool_result.is_error:
        return int(content["status"]), content["error"]
    return int(meta.get("agentledger/status", 200)), content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_every_tool_answers_as_its_route(tmp_path: Path, mode: str) -> None:
    async def body() -> None:
        async with service(tmp_path) as svc:
            key, _wallet, _ = await svc.account()
            tools = build_tools(OPERATIONS)
            checked = set()
            async with mcp(svc.url, key, mode) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert listed == set(tools) | set(DISCOVERY), "a key with every scope sees every tool"
                for name, spec in tools.items():
                    if spec.kind == "execute":
                        continue  # its arguments are a quote id; its quote twin is compared below
                    op = spec.op
                    args = {p: PLACEHOLDER for p in path_params(op)}
                    http_status, http_body = await _http(svc, op, key)
                    result = await client.call_tool(name, args)
                    tool_status, tool_body = _comparable(result)
                    if http_status >= 400:
                        assert (tool_status, tool_body["code"]) == (http_status, http_body["code"]), name
                        assert tool_body == http_body, name
                    elif spec.kind == "call" and op.response.model_json_schema().get("type") == "object":
                        assert (tool_status, tool_body) == (http_status, http_body), name
                    checked.add(op.operation_id)
            assert checked == {op.operation_id for op in OPERATIONS if not op.alias_of}

    asyncio.run(body())
