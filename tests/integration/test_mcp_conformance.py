"""The MCP conformance suite (npm @modelcontextprotocol/conformance, the server scenarios) and the
MCP Inspector CLI, both on Node 22 from npm (tools/mcp, installed by `make conformance`), against
the real service on a loopback port.

The suite's scenarios speak the handshake revisions (up to 2025-11-25); it has none for 2026-07-28
yet, which tests/integration/test_mcp.py covers with the official Python client. Scenarios that need
fixture content (tools named test_*, test:// resources, test_* prompts) are expected failures, listed with
their reasons in tools/mcp/conformance-baseline.yml; the run fails on any other failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web

from api.app import create_app
from core.store import connect
from tests.integration.mcp_kit import DEPLOYMENT

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "mcp"
NODE_BIN = TOOLS / "node_modules" / "node" / "bin"
SUITE = TOOLS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
INSPECTOR = TOOLS / "node_modules" / ".bin" / "mcp-inspector"
#: Scenarios this server must pass (the others of the active suite are in the baseline).
MUST_PASS = {
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
}


def _env(home: Path) -> dict[str, str]:
    if not (NODE_BIN / "node").exists() or not SUITE.exists():
        pytest.fail("the MCP test tools are not installed: run `make conformance` (part of `make test`)")
    # the bins start with "#!/usr/bin/env node": Node 22 from npm first on PATH; HOME for the Inspector's files
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(home)}


@contextmanager
def live_service(tmp_path: Path) -> Iterator[str]:
    """The service on a free loopback port, served from a thread (node runs as a subprocess)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    db = connect(tmp_path / "ledger.db", durable=True)
    runner = web.AppRunner(create_app(DEPLOYMENT, "http://127.0.0.1:9", db, sweep_interval=None))

    async def start() -> str:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    async def stop() -> None:
        await runner.cleanup()
        # what the SDK's SSE library leaves running on a loop (its shutdown watcher), as asyncio.run would
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        db.close()


def _results(out: Path) -> dict[str, list[dict[str, str]]]:
    found: dict[str, list[dict[str, str]]] = {}
    for checks in out.glob("server-*/checks.json"):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        found[scenario] = json.loads(checks.read_text())
    return found


@pytest.mark.timeout(300)
def test_conformance_suite_server_scenarios(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with live_service(tmp_path) as base:
        url = base + "/api/mcp"
        out = tmp_path / "results"
        suite = subprocess.run(
            ["node", str(SUITE), "server", "--url", url, "--expected-failures", str(TOOLS / "conformance-baseline.yml"),
             "-o", str(out)],
            env=env, capture_output=True, text=True, timeout=240, check=False,
        )  # fmt: skip
        assert suite.returncode == 0, suite.stdout[-4000:] + suite.stderr[-2000:]
        assert "Baseline check passed" in suite.stdout
        polling = subprocess.run(
            ["node", str(SUITE), "server", "--url", url, "--scenario", "server-sse-polling", "-o", str(tmp_path / "p")],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert polling.returncode == 0, polling.stdout[-4000:]
    results = _results(out)
    for scenario in MUST_PASS:
        checks = results[scenario]
        assert checks and all(c["status"] == "SUCCESS" for c in checks), (scenario, checks)
    for checks in _results(tmp_path / "p").values():
        assert not [c for c in checks if c["status"] == "FAILURE"], checks


@pytest.mark.timeout(120)
def test_inspector_cli_lists_and_calls_tools(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with live_service(tmp_path) as base:
        url = base + "/api/mcp?toolsets=all"  # every toolset (the default list is the compact core loop)

        def inspector(*args: str) -> dict[str, object]:
            done = subprocess.run(
                [str(INSPECTOR), "--cli", url, "--transport", "http", *args],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            answer: dict[str, object] = json.loads(done.stdout)
            return answer

        listed = inspector("--method", "tools/list")
        names = {tool["name"] for tool in listed["tools"]}  # type: ignore[attr-defined]
        assert {"register_agent", "get_network", "verify_entry"} <= names and "spend" not in names
        called = inspector("--method", "tools/call", "--tool-name", "get_network")
        assert called["structuredContent"] == {"totalAgents": 0, "totalEarned": 0, "totalTolls": 0}
