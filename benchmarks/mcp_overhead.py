"""What a tool call costs over the same HTTP route: p50/p99 latency and calls/s, MCP against REST.

    python -m benchmarks.mcp_overhead [--runs 3] [--calls 400] [--seconds 5] [--concurrency 16]

The real service (api.app.create_app, a fresh durable SQLite file, no chain) runs as its own process
on loopback. One account and agent; then, per run, for a read (get_balance: GET /api/agents/balance)
and a durable write (earn: POST /api/agents/earn):

- latency, `--calls` calls one after another, each over keep-alive:
    http      the REST route (aiohttp client)
    mcp-raw   the same operation as a 2026-07-28 tools/call, one JSON-RPC POST built by hand with the
              same aiohttp client (the server-side cost of the MCP path: transport, SDK, tool layer)
    mcp-sdk   the official `mcp` client's call_tool on 2026-07-28 (what an agent sees end to end)
    legacy    the official client on 2025-11-25 (initialize once, then calls in the session)
- throughput, `--concurrency` callers for `--seconds`: REST requests/s and raw tool calls/s.

Prints the medians over runs and the ratios to the REST baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from benchmarks._kit import percentile, post_json, wait_for_port
from core.anvil import free_port
from core.chain import ROOT

SERVER = """
import sys
from aiohttp import web
from api.app import create_app
from core.deployments import Deployment
from core.store import connect
dep = Deployment(31337, "anvil", 0, "0x" + "0" * 40, "0x" + "1" * 40, True, {})
app = create_app(dep, "http://127.0.0.1:9", connect(sys.argv[2], durable=True), sweep_interval=None)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
"""

MODERN = "2026-07-28"
_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}

Call = Callable[[], Awaitable[None]]


class Target:
    def __init__(self, base: str, key: str, wallet: str) -> None:
        self.base, self.key, self.wallet = base, key, wallet
        self.headers = {"Authorization": f"Bearer {key}"}
        self._id = 0

    def http(self, session: aiohttp.ClientSession, op: str) -> Call:
        async def read() -> None:
            async with session.get(
                self.base + "/api/agents/balance", params={"agentId": self.wallet}, headers=self.headers
            ) as r:
                assert r.status == 200, await r.text()
                await r.read()

        async def write() -> None:
            body = {"agentId": self.wallet, "amount": 1, "source": "bench"}
            async with session.post(self.base + "/api/agents/earn", json=body, headers=self.headers) as r:
                assert r.status == 200, await r.text()
                await r.read()

        return read if op == "read" else write

    def raw(self, session: aiohttp.ClientSession, op: str) -> Call:
        name, args = self._tool(op)
        headers = {
            **self.headers,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }

        async def call() -> None:
            self._id += 1
            message = {
                "jsonrpc": "2.0",
                "id": self._id,
                "method": "tools/call",
                "params": {"name": name, "arguments": args, "_meta": _META},
            }
            async with session.post(self.base + "/api/mcp", json=message, headers=headers) as r:
                text = await r.text()
                assert r.status == 200 and '"isError":true' not in text, text[:300]

        return call

    def _tool(self, op: str) -> tuple[str, dict[str, Any]]:
        if op == "read":
            return "get_balance", {"agentId": self.wallet}
        return "earn", {"agentId": self.wallet, "amount": 1, "source": "bench"}

    def sdk(self, client: Client, op: str) -> Call:
        name, args = self._tool(op)

        async def call() -> None:
            result = await client.call_tool(name, args)
            assert not result.is_error, result.structured_content

        return call


async def latencies(call: Call, n: int) -> list[float]:
    for _ in range(min(20, n)):  # warm up
        await call()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def throughput(make: Callable[[], Call], seconds: float, concurrency: int) -> float:
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        call = make()
        while time.perf_counter() < deadline:
            await call()
            done += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / (time.perf_counter() - t0)


async def one_run(target: Target, calls: int, seconds: float, concurrency: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    conn = aiohttp.TCPConnector(limit=concurrency + 4)
    async with aiohttp.ClientSession(connector=conn) as session:
        for op in ("read", "write"):
            for label, call in (("http", target.http(session, op)), ("mcp-raw", target.raw(session, op))):
                lat = await latencies(call, calls)
                figures[f"{op} {label} p50"] = percentile(lat, 0.5)
                figures[f"{op} {label} p99"] = percentile(lat, 0.99)
        for mode, label in ((MODERN, "mcp-sdk"), ("legacy", "legacy")):
            async with (
                create_mcp_http_client(headers=target.headers) as http,
                Client(streamable_http_client(target.base + "/api/mcp", http_client=http), mode=mode) as client,
            ):
                for op in ("read", "write"):
                    lat = await latencies(target.sdk(client, op), calls)
                    figures[f"{op} {label} p50"] = percentile(lat, 0.5)
                    figures[f"{op} {label} p99"] = percentile(lat, 0.99)
        for op in ("read", "write"):
            figures[f"{op} http /s"] = await throughput(lambda op=op: target.http(session, op), seconds, concurrency)
            figures[f"{op} mcp-raw /s"] = await throughput(lambda op=op: target.raw(session, op), seconds, concurrency)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(port), str(Path(tmp) / "bench.db")], cwd=ROOT
        )  # fmt: skip
        try:
            wait_for_port(port)
            base = f"http://127.0.0.1:{port}"
            reg = post_json(base + "/api/agents/register", {"name": "bench", "specialty": "data_research"})
            key = str(reg["api_key"])
            wallet = str(reg["agent"]["wallet"])  # type: ignore[index]
            target = Target(base, key, wallet)
            runs = [asyncio.run(one_run(target, args.calls, args.seconds, args.concurrency)) for _ in range(args.runs)]
        finally:
            server.terminate()
            server.wait(10)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"MCP tool call vs the same REST route: median of {args.runs} runs, {args.calls} sequential calls each")
    for op, what in (("read", "get_balance / GET /api/agents/balance"), ("write", "earn / POST /api/agents/earn")):
        print(f"\n{op}: {what}")
        base50, base99 = med[f"{op} http p50"], med[f"{op} http p99"]
        for label in ("http", "mcp-raw", "mcp-sdk", "legacy"):
            p50, p99 = med[f"{op} {label} p50"], med[f"{op} {label} p99"]
            print(
                f"  {label:8} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  "
                f"(+{p50 - base50:5.2f} ms, x{p50 / base50:4.2f} at p50; x{p99 / base99:4.2f} at p99)"
            )
        rest, tools = med[f"{op} http /s"], med[f"{op} mcp-raw /s"]
        print(
            f"  throughput at concurrency {args.concurrency}: REST {rest:7.0f} req/s, tools {tools:7.0f} calls/s "
            f"({tools / rest:.0%} of REST)"
        )
    print("\nper run:", json.dumps([{k: round(v, 2) for k, v in r.items()} for r in runs]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
