"""Agent-to-agent hire: what a standard hire adds over calling the provider directly, hires/s, and a
registry query at 10,000 providers.

    python -m benchmarks.hire [--runs 3] [--requests 300] [--seconds 5] [--concurrency 32] [--providers 10000]

Starts its own anvil, deploys every contract as `make run` does, and serves the real service in its
own process exactly as `make run` does (`python -m scripts.run` with AGENTLEDGER_RPC_URL set; a fresh
SQLite file, durable commits). A provider (a loopback aiohttp JSON endpoint in its own process,
answering at once) is linked and publishes `keyword_research`; a caller agent is funded. Per run:

    direct     POST of the same job body straight to the provider (the baseline, same run)
    hire       POST /api/a2a/hire naming that provider: reserve (one durable commit), call the provider
               with the signed request, check the output schema, settle (one durable commit)
    added      hire minus direct at p50 and p99 (milliseconds, sequential requests)
    hires/s    `--concurrency` clients for `--seconds`, against direct calls/s at the same concurrency
    registry   GET /api/a2a/registry (no filter; serviceType; minScore; escrow=true) with --providers
               services of as many agents in the database, against GET /api/agents/network (a small
               read of the same service) in the same run

Figures are medians over --runs; the ratios are computed per run, then the median taken.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from benchmarks._kit import percentile, wait_for_port
from benchmarks.checkout_flow import start_service, stop_service
from core import deployments
from core.anvil import Anvil, free_port
from core.chain import connect
from core.checkout import rules as checkout_rules
from core.networks import ANVIL_DEV_KEY
from core.store import connect as connect_db
from core.store import hire as hire_store
from core.store import transaction
from core.store import wallets as wallet_store
from scripts.compile import compile_contracts
from scripts.deploy import Roles, deploy_system

PROVIDER = """
import sys
from aiohttp import web
async def job(request):
    body = await request.json()
    return web.json_response({"keywords": [body["input"]["topic"] + " tips", "best " + body["input"]["topic"]]})
app = web.Application()
app.router.add_post("/job", job)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
"""
OWNER = "0x" + "11" * 20
SCHEMA_IN = {"type": "object", "required": ["topic"], "properties": {"topic": {"type": "string"}}}
SCHEMA_OUT = {"type": "object", "required": ["keywords"], "properties": {"keywords": {"type": "array"}}}


def setup(api: httpx.Client, chain_id: int, provider_url: str) -> tuple[str, str, str]:
    """(caller key, caller wallet, provider wallet): a linked provider with its service, a funded caller."""
    r = api.post("/api/agents/register", json={"name": "provider", "specialty": "data_research"}).json()
    pkey, pwallet = r["api_key"], r["agent"]["wallet"]
    self_acct: LocalAccount = Account.create()
    ts = int(time.time())
    msg = checkout_rules.provider_link_message(
        chain_id=chain_id, agent_wallet=pwallet, self_wallet=self_acct.address, owner=self_acct.address, timestamp=ts
    )
    sig = "0x" + bytes(self_acct.sign_message(encode_defunct(text=msg)).signature).hex()
    link = {"agent_id": pwallet, "self_wallet": self_acct.address, "owner_address": self_acct.address}
    resp = api.post(
        "/api/acp/providers",
        json={**link, "timestamp": ts, "signature": sig},
        headers={"Authorization": f"Bearer {pkey}"},
    )
    assert resp.status_code == 201, resp.text
    service = {
        "agentId": pwallet,
        "serviceType": "keyword_research",
        "price": 1,
        "description": "keywords",
        "inputSchema": SCHEMA_IN,
        "outputSchema": SCHEMA_OUT,
        "slaSeconds": 30,
        "runner": {"type": "https", "url": provider_url},
    }
    resp = api.post("/api/a2a/services", json=service, headers={"Authorization": f"Bearer {pkey}"})
    assert resp.status_code == 200, resp.text
    r = api.post("/api/agents/register", json={"name": "caller", "specialty": "data_research"}).json()
    ckey, cwallet = r["api_key"], r["agent"]["wallet"]
    resp = api.post(
        "/api/agents/earn",
        json={"agentId": cwallet, "amount": 10_000_000, "source": "bench"},
        headers={"Authorization": f"Bearer {ckey}"},
    )
    assert resp.status_code == 200, resp.text
    return ckey, cwallet, pwallet


def sequential(client: httpx.Client, url: str, body: dict[str, Any], n: int, headers: dict[str, str]) -> list[float]:
    times = []
    for i in range(n):
        body["input"] = {"topic": f"t{i}"}
        started = time.perf_counter()
        resp = client.post(url, json=body, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        assert resp.status_code == 200, resp.text
    return times


async def throughput(
    url: str, body: dict[str, Any], headers: dict[str, str], seconds: float, concurrency: int
) -> float:
    """Requests/s of `concurrency` clients posting `body` (a new topic each time) for `seconds`."""
    done = 0
    stop = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def worker(w: int) -> None:
            nonlocal done
            i = 0
            while time.perf_counter() < stop:
                payload = {**body, "input": {"topic": f"w{w}-{i}"}}
                async with session.post(url, json=payload, headers=headers) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                done += 1
                i += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(concurrency)))
        return done / (time.perf_counter() - started)


def fill_registry(db_path: Path, n: int) -> None:
    """`n` agents, each with a keyword_research (or data_research) service and a score."""
    rng = random.Random(13)
    db = connect_db(db_path)
    now = time.time()
    try:
        with transaction(db):
            account = str(uuid.uuid4())
            wallet_store.insert_account(db, account, now)
            for i in range(n):
                agent = wallet_store.AgentRow(
                    str(uuid.uuid4()), f"agl_{i + 1:012x}", account, f"p{i}", "data_research", f"R{i:07d}", None, now
                )
                wallet_store.insert_agent(db, agent)
                service_type = "keyword_research" if i % 2 else "data_research"
                row = hire_store.ServiceRow(
                    agent.uuid, service_type, agent.wallet, 1_000_000 + i, 1_000_000 + rng.randrange(10**7), "d",
                    json.dumps(SCHEMA_IN), json.dumps(SCHEMA_OUT), 30, "https", "https://example.com/job", "k",
                    None, None, True, 0, None, None, 0, 0, 0.0, None, None, None, None, None, 0.0, 0.0, 0, now, now,
                )  # fmt: skip
                hire_store.put_service(db, row)
                if i % 2 == 0:  # every other provider is for hire on-chain at its service's price
                    db.execute(
                        "INSERT INTO agents (chain_id, token_id, wallet_id, owner, self_wallet, hire_price, hire_sla,"
                        " registered_block, updated_block) VALUES (31337, ?, ?, ?, ?, ?, 604800, 1, 1)",
                        (row.token_id, agent.wallet, OWNER, OWNER, row.price),
                    )
                score = round(rng.random() * 100, 2)
                hire_store.set_reputation(
                    db, agent.uuid, service_type, jobs=rng.randrange(1, 500), successes=1, score=score,
                    success_rate=0.9, avg_ms=rng.randrange(50, 5000), p95_ms=5000, last_active_at=now, w_jobs=1.0,
                    w_successes=1.0, ok_ms_total=100, now=now,
                )  # fmt: skip
    finally:
        db.close()


def query_times(client: httpx.Client, path: str, params: dict[str, str], n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        resp = client.get(path, params=params)
        times.append((time.perf_counter() - started) * 1000)
        assert resp.status_code == 200, resp.text
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300, help="sequential requests per latency figure")
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput figure")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--providers", type=int, default=10_000)
    args = parser.parse_args()
    compile_contracts()
    results: list[dict[str, float]] = []
    registry_rows: dict[str, list[tuple[float, float]]] = {}
    for run in range(args.runs):
        with Anvil() as node, tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            w3 = connect(node.rpc_url)
            deployer: LocalAccount = Account.from_key(ANVIL_DEV_KEY)
            a = deployer.address
            dep = deploy_system(w3, deployer, Roles(admin=a, operator=a, arbiter=a, anchorer=a, treasury=a))
            deployments.save(dep, tmp / "deployments")
            pport = free_port()
            provider = subprocess.Popen([sys.executable, "-c", PROVIDER, str(pport)])
            port = free_port()
            proc = start_service(tmp, node.rpc_url, port)
            try:
                wait_for_port(pport)
                provider_url = f"http://127.0.0.1:{pport}/job"
                base = f"http://127.0.0.1:{port}"
                with httpx.Client(base_url=base, timeout=60.0) as api:
                    key, caller, pwallet = setup(api, dep.chain_id, provider_url)
                    auth = {"Authorization": f"Bearer {key}"}
                    job = {"callerWallet": caller, "serviceType": "keyword_research", "providerWallet": pwallet}
                    direct_body = {"jobId": "hire_0", "serviceType": "keyword_research", "input": {}}
                    sequential(api, provider_url, dict(direct_body), 30, {})  # warm-up
                    sequential(api, "/api/a2a/hire", dict(job), 30, auth)
                    direct = sequential(api, provider_url, dict(direct_body), args.requests, {})
                    hired = sequential(api, "/api/a2a/hire", dict(job), args.requests, auth)
                    direct_rps = asyncio.run(throughput(provider_url, direct_body, {}, args.seconds, args.concurrency))
                    hire_rps = asyncio.run(
                        throughput(base + "/api/a2a/hire", job, auth, args.seconds, args.concurrency)
                    )
                    fill_registry(tmp / "var" / "agentledger.db", args.providers)
                    network = query_times(api, "/api/agents/network", {}, args.requests)
                    row = {
                        "direct_p50": percentile(direct, 0.5),
                        "direct_p99": percentile(direct, 0.99),
                        "hire_p50": percentile(hired, 0.5),
                        "hire_p99": percentile(hired, 0.99),
                        "direct_rps": direct_rps,
                        "hire_rps": hire_rps,
                        "network_p50": percentile(network, 0.5),
                    }
                    for label, params in (
                        ("no filter", {}),
                        ("serviceType", {"serviceType": "keyword_research"}),
                        ("serviceType + minScore 90", {"serviceType": "keyword_research", "minScore": "90"}),
                        ("serviceType, page 5 (cursor)", {"serviceType": "keyword_research", "limit": "20"}),
                        ("escrow=true", {"escrow": "true"}),
                    ):
                        if "cursor" in label:
                            cursor = None
                            for _ in range(4):
                                page = api.get(
                                    "/api/a2a/registry", params={**params, **({"cursor": cursor} if cursor else {})}
                                )
                                cursor = page.json()["nextCursor"]
                            params = {**params, "cursor": cursor or ""}
                        times = query_times(api, "/api/a2a/registry", params, args.requests)
                        registry_rows.setdefault(label, []).append(
                            (percentile(times, 0.5), percentile(times, 0.5) / row["network_p50"])
                        )
                        row[f"registry {label} p99"] = percentile(times, 0.99)
                    results.append(row)
            finally:
                stop_service(proc)
                provider.terminate()
                provider.wait()
        print(f"run {run + 1}/{args.runs} done", file=sys.stderr)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    print(f"standard hire vs a direct call to the same provider ({args.runs} runs, median; ms)")
    print(f"  {'':<22} {'p50':>8} {'p99':>8}")
    print(f"  {'direct call':<22} {med('direct_p50'):8.2f} {med('direct_p99'):8.2f}")
    print(f"  {'POST /api/a2a/hire':<22} {med('hire_p50'):8.2f} {med('hire_p99'):8.2f}")
    added50 = statistics.median(r["hire_p50"] - r["direct_p50"] for r in results)
    added99 = statistics.median(r["hire_p99"] - r["direct_p99"] for r in results)
    print(f"  {'added by the hire':<22} {added50:8.2f} {added99:8.2f}")
    ratio = statistics.median(r["hire_rps"] / r["direct_rps"] for r in results)
    print(
        f"throughput at concurrency {args.concurrency}: {med('hire_rps'):.0f} hires/s against "
        f"{med('direct_rps'):.0f} direct calls/s (ratio {ratio:.2f})"
    )
    print(f"registry at {args.providers} providers (GET, sequential; ms; ratio to GET /api/agents/network p50 "
          f"{med('network_p50'):.2f} ms)")  # fmt: skip
    for label, values in registry_rows.items():
        p50 = statistics.median(v[0] for v in values)
        r = statistics.median(v[1] for v in values)
        p99 = statistics.median(row[f"registry {label} p99"] for row in results)
        print(f"  {label:<30} p50 {p50:7.2f}  p99 {p99:7.2f}  ratio {r:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
