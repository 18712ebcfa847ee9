"""What the MCP tool list costs an agent: its size per toolset, and the time to initialize + list.

    python -m benchmarks.mcp_tools [--runs 20]

The real service (api.app.create_app, a fresh durable SQLite file, no chain) runs as its own process
on loopback, with one account (its key has every scope). Through the official `mcp` client:

- sizes: the tools/list answer serialized as the server sends it (JSON, camelCase, no nulls), in
  characters (about 4 per token), for the compact default, each toolset alone, and all of them;
- time: `--runs` times, a new client that connects (2025-11-25: initialize, then the session;
  2026-07-28: no handshake) and lists the tools, for the default and for all; the median and its
  ratio to the default on 2026-07-28 measured in the same run.
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
from pathlib import Path

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.operation import TOOLSETS
from benchmarks._kit import post_json, wait_for_port
from benchmarks.mcp_overhead import SERVER
from core.anvil import free_port
from core.chain import ROOT

MODES = ("2026-07-28", "legacy")


async def listed(url: str, key: str, mode: str, toolsets: str | None) -> tuple[int, int, float]:
    """(tools, characters of the list, seconds to connect + list) for one new client."""
    started = time.perf_counter()
    target = url if toolsets is None else f"{url}?toolsets={toolsets}"
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        Client(streamable_http_client(target, http_client=http), mode=mode) as client,
    ):
        tools = (await client.list_tools()).tools
    seconds = time.perf_counter() - started
    dumped = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    return len(tools), len(json.dumps({"tools": dumped})), seconds


async def measure(url: str, key: str, runs: int) -> None:
    print("tools/list size (key with every scope; list_toolsets and enable_toolset in each):")
    for label, choice in (("default", None), *((name, name) for name in TOOLSETS), ("all", "all")):
        count, chars, _ = await listed(url, key, "2026-07-28", choice)
        print(f"  {label:10} {count:3} tools {chars:7,} chars (~{chars // 4:,} tokens)")
    print(f"\ninitialize + tools/list, a new client each time, median of {runs}:")
    baseline = None
    for mode in MODES:
        for label, choice in (("default", None), ("all", "all")):
            times = [(await listed(url, key, mode, choice))[2] * 1000 for _ in range(runs)]
            median = statistics.median(times)
            baseline = baseline or median
            print(f"  {mode:10} {label:8} {median:7.1f} ms  (x{median / baseline:4.2f} the 2026-07-28 default)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(Path(tmp) / "bench.db")], cwd=ROOT)
        try:
            wait_for_port(port)
            base = f"http://127.0.0.1:{port}"
            reg = post_json(base + "/api/agents/register", {"name": "bench", "specialty": "data_research"})
            asyncio.run(measure(base + "/api/mcp", str(reg["api_key"]), args.runs))
        finally:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
