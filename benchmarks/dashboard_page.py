"""The owner's dashboard in a real browser: page weight (bytes over the wire, and decoded) and time to
first render (first contentful paint), cold and warm, against a baseline page measured in the same run.

    python -m benchmarks.dashboard_page [--runs 7] [--agents 3] [--rows 600]

Serves the real service (api.app.create_app) on loopback over a fresh SQLite file holding an account
with --agents agents and --rows ledger rows spread over 30 days (so both charts and every table have
data), and drives Debian's headless Chromium with Playwright. Each cold run is a new browser context
(empty cache) already signed in (its session cookie set directly, so no other page warms the cache
first); the warm run reloads in the same context (the assets are cached for a year under their
versioned links). Baseline: /methodology, the service's plain server-rendered page (no script, no
stylesheet file), cold; the sign-in page (the dashboard's stylesheet and script, little else) is
shown beside it. Prints medians; the ratio is dashboard FCP / baseline FCP.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from api.app import create_app
from core import decisions, wallets
from core.config import Settings
from core.dashboard import access
from core.deployments import Deployment
from core.keys import Caller, hash_api_key, new_api_key
from core.store import connect, transaction

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={"MockUSDC": "0x" + "1" * 40},
)  # fmt: skip
SOURCES = ("gumroad", "stripe", "etsy", "youtube", "consulting", "newsletter")

#: What the page loaded: every response's bytes over the wire and decoded, and when it first painted.
MEASURE = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const all = [nav, ...res];
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  return {
    transfer: all.reduce((s, e) => s + e.transferSize, 0),
    decoded: all.reduce((s, e) => s + e.decodedBodySize, 0),
    requests: all.length,
    ttfb: nav.responseStart,
    fcp: fcp ? fcp.startTime : null,
    dcl: nav.domContentLoadedEventEnd,
    load: nav.loadEventEnd,
  };
}"""


PAINTED = "performance.getEntriesByName('first-contentful-paint').length > 0"
CHARTS = "[...document.querySelectorAll('canvas')].filter(c => window.Chart && window.Chart.getChart(c)).length === 2"


async def until_true(page: Page, expression: str, timeout: float = 15.0) -> None:
    """Poll `expression` from outside the page (page.wait_for_function evaluates its predicate with
    eval inside the page, which this page's Content-Security-Policy refuses)."""
    deadline = time.monotonic() + timeout
    while not await page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        await asyncio.sleep(0.02)


def seed(db_path: Path, n_agents: int, n_rows: int) -> tuple[str, str]:
    """An account with agents, a ledger over 30 days, memory and decisions: (key, a session token)."""
    conn = connect(db_path)
    key = new_api_key()
    now = time.time()
    with transaction(conn):
        born = now - 31 * 86400
        first = wallets.register(
            conn,
            account_id=None,
            new_key_hash=hash_api_key(key),
            name="agent-0",
            specialty="email",
            referral_code=None,
            now=born,
        )
        agents = [first]
        for i in range(1, n_agents):
            agents.append(
                wallets.register(
                    conn,
                    account_id=first.account_id,
                    new_key_hash=None,
                    name=f"agent-{i}",
                    specialty="youtube",
                    referral_code=None,
                    now=born,
                )
            )
        for i in range(n_rows):
            agent = agents[i % n_agents]
            at = now - 30 * 86400 + i * (30 * 86400 / n_rows)
            wallets.earn(conn, agent, (10 + i % 90) * 1_000_000, SOURCES[i % len(SOURCES)], at)
            if i % 10 == 9:
                wallets.spend(conn, agent, 5_000_000, "ads", at)
        for agent in agents:
            for j in range(20):
                wallets.put_memory(conn, agent, f"note:{j}", f'{{"text": "memory {j}", "n": {j}}}', now)
            for j in range(5):
                decisions.log_decision(
                    conn,
                    Caller(hash_api_key(key), first.account_id, None),
                    agent.uuid,
                    decisions.Decision("routine", f"{j:064x}", "planner", "7"),
                    webhook=None,
                    verify_base="",
                    rate_limit=1000,
                    now=now,
                )
        token, _ = access.sign_in(conn, key, now)
    conn.close()
    return key, token


async def load(browser: Browser, url: str, token: str | None, host: str) -> tuple[dict[str, Any], BrowserContext]:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    if token is not None:
        await ctx.add_cookies(
            [{"name": "agl_session", "value": token, "domain": host, "path": "/dashboard", "httpOnly": True,
              "sameSite": "Strict"}]
        )  # fmt: skip
    page = await ctx.new_page()
    await page.goto(url, wait_until="load")
    if token is not None:  # the charts are part of the page: wait until both are drawn
        await until_true(page, CHARTS)
    await until_true(page, PAINTED)
    measured: dict[str, Any] = await page.evaluate(MEASURE)
    return measured, ctx


async def poll_cost(base: str, token: str, n: int) -> tuple[float, float, int]:
    """What one live update costs: (median ms of GET /dashboard/live, median ms of a 304, gzipped bytes)."""
    headers = {"Cookie": f"agl_session={token}", "Accept-Encoding": "gzip"}
    full, unchanged = [], []
    size = 0
    async with aiohttp.ClientSession(auto_decompress=False) as http:
        for _ in range(n):
            t = time.perf_counter()
            async with http.get(base + "/dashboard/live?view=overview", headers=headers) as r:
                body = await r.read()
                etag = r.headers["ETag"]
            full.append((time.perf_counter() - t) * 1000)
            size = len(body)
            t = time.perf_counter()
            async with http.get(
                base + "/dashboard/live?view=overview", headers={**headers, "If-None-Match": etag}
            ) as r:
                assert r.status == 304
            unchanged.append((time.perf_counter() - t) * 1000)
    return statistics.median(full), statistics.median(unchanged), size


async def main_async(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="agl-dash-bench-"))
    _, token = seed(tmp / "bench.db", args.agents, args.rows)
    db = connect(tmp / "bench.db")
    app = create_app(DEPLOYMENT, "http://127.0.0.1:9", db, settings=Settings(), sweep_interval=None)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    cold: list[dict[str, Any]] = []
    warm: list[dict[str, Any]] = []
    baseline: list[dict[str, Any]] = []
    sign_in: list[dict[str, Any]] = []
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for i in range(args.runs + 1):  # the first of each is a warm-up, not counted
                b, ctx = await load(browser, base + "/methodology", None, "127.0.0.1")
                await ctx.close()
                si, ctx = await load(browser, base + "/dashboard/sign-in", None, "127.0.0.1")
                await ctx.close()
                c, ctx = await load(browser, base + "/dashboard", token, "127.0.0.1")
                page = ctx.pages[0]
                await page.reload(wait_until="load")
                await until_true(page, CHARTS)
                await until_true(page, PAINTED)
                wm: dict[str, Any] = await page.evaluate(MEASURE)
                await ctx.close()
                if i:
                    baseline.append(b)
                    sign_in.append(si)
                    cold.append(c)
                    warm.append(wm)
            await browser.close()
        live = await poll_cost(base, token, 50)
    finally:
        await server.close()
        db.close()

    def med(rows: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    print(
        f"dashboard page: {args.agents} agents, {args.rows} ledger rows, median of {args.runs} runs, headless Chromium"
    )
    print(f"{'':22}{'transfer KiB':>14}{'decoded KiB':>13}{'requests':>10}{'TTFB ms':>9}{'FCP ms':>9}{'load ms':>9}")
    for name, rows in (
        ("baseline /methodology", baseline),
        ("sign-in page, cold", sign_in),
        ("dashboard, cold", cold),
        ("dashboard, warm", warm),
    ):
        print(
            f"{name:22}{med(rows, 'transfer') / 1024:14.1f}{med(rows, 'decoded') / 1024:13.1f}"
            f"{med(rows, 'requests'):10.0f}{med(rows, 'ttfb'):9.1f}{med(rows, 'fcp'):9.1f}{med(rows, 'load'):9.1f}"
        )
    print(
        f"a live update (GET /dashboard/live, every 2 s per open page): {live[0]:.1f} ms, {live[2] / 1024:.1f} KiB"
        f" gzipped; unchanged (304): {live[1]:.1f} ms (medians of 50)"
    )
    ratios = [c["fcp"] / b["fcp"] for c, b in zip(cold, baseline, strict=True)]
    print(
        f"first contentful paint, dashboard cold / baseline: {statistics.median(ratios):.2f} (median of per-run ratios)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--rows", type=int, default=600)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
