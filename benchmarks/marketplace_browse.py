"""Browsing the drop at 10,000 listings: GET /api/a2a/drop pages (first and last) and one agent's
latest listing, served by the real create_app over loopback HTTP from a SQLite file holding 10,000
active listings, against a trivial aiohttp JSON GET in the same process and run (the baseline).

    .venv/bin/python -m benchmarks.marketplace_browse [--listings 10000] [--requests 2000] [--runs 3]

Prints, per case, the median over runs of requests/s (64 concurrent requests from one aiohttp
client) and of p50 / p99 latency, and the ratio of its requests/s to the baseline's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from api.app import create_app
from benchmarks._kit import percentile
from core import wallets
from core.deployments import Deployment
from core.store import connect, transaction
from core.store import marketplace as store

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip
CONCURRENCY = 64


def populate(path: Path, n: int) -> str:
    """`n` active listings of `n` agents; returns one agent's wallet."""
    db = connect(path)
    now = time.time()
    wallet = ""
    with transaction(db):
        account = str(uuid.uuid4())
        db.execute("INSERT INTO accounts (id, created_at) VALUES (?, ?)", (account, now))
        for i in range(n):
            agent = wallets.register(
                db, account_id=account, new_key_hash=None, name=f"a{i}", specialty="content_seo",
                referral_code=None, now=now + i,
            )  # fmt: skip
            wallet = agent.wallet
            store.insert_listing(
                db,
                store.ListingRow(
                    str(uuid.uuid4()), i + 1, agent.uuid, i + 1, account, "0x" + "2" * 40, 1000 * 10**6,
                    250 * 10**6, 100 * 10**6, True, None, "active", int(now) + 86_400 * 30, "0x" + f"{i:064x}",
                    i + 1, True, None, now + i, now + i,
                ),
            )  # fmt: skip
    db.close()
    return wallet


async def load(session: aiohttp.ClientSession, url: str, requests: int) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) of `requests` GETs, CONCURRENCY at a time."""
    latencies: list[float] = []
    todo = iter(range(requests))

    async def worker() -> None:
        for _ in todo:
            t = time.perf_counter()
            async with session.get(url) as resp:
                await resp.read()
                assert resp.status == 200, resp.status
            latencies.append((time.perf_counter() - t) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.perf_counter() - start
    return requests / elapsed, percentile(latencies, 0.5), percentile(latencies, 0.99)


async def trivial(_request: web.Request) -> web.Response:
    return web.json_response({"success": True})


async def main(listings: int, requests: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "drop.db"
        t = time.perf_counter()
        wallet = populate(db_path, listings)
        print(f"populated {listings} listings in {time.perf_counter() - t:.1f} s")
        app = create_app(DEPLOYMENT, "http://127.0.0.1:9", connect(db_path))
        app.router.add_get("/bench/trivial", trivial)
        server = TestServer(app, host="127.0.0.1", port=0)
        await server.start_server()
        base = str(server.make_url("")).rstrip("/")
        per_page = 20
        last = -(-listings // per_page)
        cases = {
            "baseline (trivial JSON GET)": "/bench/trivial",
            "browse page 1": "/api/a2a/drop?page=1",
            f"browse page {last} (last)": f"/api/a2a/drop?page={last}",
            "an agent's latest listing": f"/api/a2a/drop?agentId={wallet}",
        }
        figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
                for _ in range(runs):
                    for name, path in cases.items():
                        figures[name].append(await load(session, base + path, requests))
        finally:
            await server.close()
        base_rps = statistics.median(r for r, _, _ in figures["baseline (trivial JSON GET)"])
        print(f"{listings} active listings, {requests} requests x {runs} runs, {CONCURRENCY} concurrent")
        for name, got in figures.items():
            rps = statistics.median(r for r, _, _ in got)
            p50 = statistics.median(p for _, p, _ in got)
            p99 = statistics.median(p for _, _, p in got)
            print(f"  {name:32s} {rps:8.0f} req/s  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  ratio {rps / base_rps:5.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--listings", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.listings, args.requests, args.runs))
