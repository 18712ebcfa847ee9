"""The client set-up of docs/how-to/mcp-clients.md, executed against the live service: the Python (`mcp`, on
both revisions) and TypeScript (`@modelcontextprotocol/sdk` on Node 22) snippets run as written,
each listing toolsets, enabling one, hearing tools/list_changed and spending by quote -> execute; the
JSON configs (Claude Desktop, Claude Code, Cursor, VS Code) are parsed, their URL, header names and
toolsets checked against the endpoint, and the official client connects with exactly what they say."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.mcp import toolsets
from api.mcp.tools import build_tools
from api.operation import DEFAULT_TOOLS, parse_toolsets
from api.operation_table import OPERATIONS
from tests.integration.mcp_kit import Service, service

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "how-to" / "mcp-clients.md"
NODE_MODULES = ROOT / "tools" / "mcp" / "node_modules"
NODE = NODE_MODULES / ".bin" / "node"
DOCUMENTED = "http://127.0.0.1:8080"
PLACEHOLDERS = ("aglk_...", "${AGENTLEDGER_KEY}", "${input:agentledger-key}")


def snippets() -> dict[str, tuple[str, str]]:
    """name -> (language, code) of the doc's marked snippets."""
    found = re.findall(r"<!-- snippet: (\S+) -->\n```(\w+)\n(.*?)```", DOC.read_text(), re.DOTALL)
    return {name: (language, code) for name, language, code in found}


def test_the_doc_has_every_client() -> None:
    assert set(snippets()) == {"claude-desktop", "claude-code", "cursor", "vscode", "python", "typescript"}


def connection_of(name: str, config: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """(URL, headers) a JSON config makes its client send, its placeholders as written."""
    if name == "vscode":
        [server] = config["servers"].values()
        assert server["type"] == "http"
        ids = {i["id"] for i in config["inputs"]}
        assert "${input:agentledger-key}" in server["headers"]["Authorization"] and "agentledger-key" in ids
        return server["url"], dict(server["headers"])
    [server] = config["mcpServers"].values()
    if name == "claude-desktop":
        args = server["args"]
        assert args[:2] == ["-y", "mcp-remote"] and server["command"] == "npx"
        url = next(a for a in args if a.startswith("http"))
        headers = {}
        for i, arg in enumerate(args):
            if arg == "--header":
                header, _, value = args[i + 1].partition(":")
                for var, text in server.get("env", {}).items():
                    value = value.replace("${" + var + "}", text)
                headers[header] = value
        return url, headers
    if name == "claude-code":
        assert server["type"] == "http"
    return server["url"], dict(server["headers"])


def expected_tools(choice: frozenset[str]) -> set[str]:
    tools = build_tools(OPERATIONS)
    return {name for name, spec in tools.items() if toolsets.includes(choice, spec.op)} | {
        "list_toolsets",
        "enable_toolset",
    }


@pytest.mark.parametrize("name", ["claude-desktop", "claude-code", "cursor", "vscode"])
def test_a_json_config_reaches_the_endpoint_with_its_toolsets(tmp_path: Path, name: str) -> None:
    language, code = snippets()[name]
    assert language == "json"
    url, headers = connection_of(name, json.loads(code))
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == DOCUMENTED and parts.path == "/api/mcp", url
    assert set(headers) <= {"Authorization", toolsets.HEADER}, headers
    assert headers["Authorization"].startswith("Bearer ")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    assert set(query) <= {toolsets.QUERY}
    chosen = toolsets.requested(query, headers)  # a 400 here is a config the endpoint refuses
    expected = expected_tools(chosen or frozenset({DEFAULT_TOOLS}))

    async def body() -> None:
        async with service(tmp_path) as svc:
            key, _wallet, _ = await svc.account()
            sent = {k: _with_key(v, key) for k, v in headers.items()}
            live = svc.url + (f"?{parts.query}" if parts.query else "")
            async with (
                create_mcp_http_client(headers=sent) as http,
                Client(streamable_http_client(live, http_client=http), mode="legacy") as client,
            ):
                listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == expected, sorted(listed ^ expected)

    asyncio.run(body())


def _with_key(value: str, key: str) -> str:
    for placeholder in PLACEHOLDERS:
        value = value.replace(placeholder, key)
    return value


async def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, (out.decode() + err.decode())[-4000:]
    return out.decode()


async def _funded(svc: Service) -> tuple[str, str, dict[str, str]]:
    key, wallet, _ = await svc.account()
    await svc.fund(key, wallet, 10)
    env = {**os.environ, "AGENTLEDGER_MCP_URL": svc.url, "AGENTLEDGER_KEY": key, "AGENTLEDGER_WALLET": wallet}
    return key, wallet, env


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_python_snippet_runs_as_written(tmp_path: Path, mode: str) -> None:
    language, code = snippets()["python"]
    assert language == "python"
    script = tmp_path / "agent.py"
    script.write_text(code)

    async def body() -> None:
        async with service(tmp_path) as svc:
            _key, wallet, env = await _funded(svc)
            out = await _run([sys.executable, str(script)], tmp_path, {**env, "MCP_MODE": mode})
            assert svc.spends(wallet) == 1
        assert "('checkout', False)" in out and "checkout enabled: True" in out, out
        assert "'spent': 1.5" in out, out

    asyncio.run(body())


def test_the_typescript_snippet_runs_as_written(tmp_path: Path) -> None:
    language, code = snippets()["typescript"]
    assert language == "js"
    if not NODE.exists():
        pytest.fail("Node 22 is not installed: run `make mcp-tools`")
    (tmp_path / "node_modules").symlink_to(NODE_MODULES)  # the SDK resolves as from an npm project
    (tmp_path / "agent.mjs").write_text(code)

    async def body() -> None:
        async with service(tmp_path) as svc:
            _key, wallet, env = await _funded(svc)
            out = await _run([str(NODE), "agent.mjs"], tmp_path, env)
            assert svc.spends(wallet) == 1
        assert "checkout:false" in out and "checkout enabled: true" in out, out
        spent = json.loads(out.split("spent:", 1)[1])
        assert spent["spent"] == 1.5 and spent["balance"] == 8.3, spent

    asyncio.run(body())


def test_the_documented_toolsets_are_valid() -> None:
    for name, (_language, code) in snippets().items():
        for choice in re.findall(r"toolsets=([a-z,]+)", code) + re.findall(r'"X-MCP-Toolsets": "([a-z,]+)"', code):
            parse_toolsets(choice, name)
