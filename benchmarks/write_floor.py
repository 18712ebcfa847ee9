"""The least a durable write can cost on this stack: what /earn and the decision log could reach at best.

    python -m benchmarks.write_floor [--runs 5] [--seconds 6] [--connections 64]

The goals are /earn at >= 70% of the trivial endpoint and the decision log at >= 50%. This script
measures, in the same run as the trivial endpoint (benchmarks._kit.TRIVIAL_SERVER), three bare aiohttp
handlers that keep only what a durable write cannot do without: no auth, no middleware, no
validation, no idempotency, no metrics, a fixed small answer. Each parses the JSON body like the
trivial one and then:
- `commit`: one one-row UPDATE through the GroupCommitter (BEGIN IMMEDIATE, COMMIT with
  synchronous=FULL and its fsync, shared by the group): the price of "acknowledged means on disk";
- `earn`: the earn's own storage step, core.wallets.earn (the split, the guarded balance UPDATE and
  the ledger INSERT) for one agent, through the committer;
- `decision`: the decision log's two storage steps, the key's rate-limit row (core.store.ratelimit)
  and core.audit.append (the agent's stream head, canonical JSON, the chain rule, the entry and its
  Merkle leaf and nodes), through the committer.
The ratio of `earn` to trivial bounds what POST /earn can reach however thin its other layers get;
`decision` likewise bounds POST /log. Each run measures trivial before and after the three (the
baseline is their mean: the machine drifts within a run); prints the median of --runs for each and
the per-run ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks._kit import TRIVIAL_SERVER, run_wrk, start_servers, stop_servers
from core.anvil import free_port
from core.chain import ROOT

FLOOR_SERVER = """
import asyncio, sys, time
from aiohttp import web
from core import audit, wallets
from core.decisions import chain_rule
from core.store import ratelimit
from core.store.committer import GroupCommitter
from service.runtime import settle_heap

committer = GroupCommitter(sys.argv[1])
conn = committer.conn
conn.execute("BEGIN IMMEDIATE")
agent = wallets.register(conn, account_id=None, new_key_hash="00" * 32, name="floor", specialty="data_research",
                         referral_code=None, now=time.time())
conn.execute("COMMIT")
KEY = "11" * 32

def touch(c):
    c.execute("UPDATE balances SET updated_at = ? WHERE agent_uuid = ?", (time.time(), agent.uuid))

def earn(c):
    return wallets.earn(c, agent, 1_500_000, "bench", time.time()).ledger_id

def decision(c):
    now = time.time()
    ratelimit.hit(c, KEY, now, 10**9)
    payload = {"agent_id": agent.uuid, "event_type": "routine", "content_hash": "9f" * 32, "timestamp": "t"}
    return audit.append(c, stream=audit.agent_stream(agent.uuid), kind=audit.DECISION, payload=payload,
                        chain=chain_rule(agent.uuid), now=now).id

WORK = {"commit": touch, "earn": earn, "decision": decision}[sys.argv[3]]

async def handler(request):
    body = await request.json()
    await committer.run(WORK, savepoint=False)
    return web.json_response({"success": True, "echo": len(body)})  # the trivial answer

async def main():
    app = web.Application()
    app.router.add_post("/floor", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", int(sys.argv[2])).start()
    settle_heap()
    print("ready", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""

LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"agentId": "agl_0000", "amount": 1.5, "source": "bench"}'
"""

KINDS = ("commit", "earn", "decision")


def _trivial(script: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple[float, float, float, int, int]:
    port = free_port()
    procs = start_servers(TRIVIAL_SERVER, [str(port)], 1, env)
    try:
        return run_wrk(f"http://127.0.0.1:{port}/trivial", script, args.seconds, args.connections)
    finally:
        stop_servers(procs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results: dict[str, list[tuple[float, float, float, int, int]]] = {k: [] for k in ("trivial", *KINDS)}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        script = tmpdir / "floor.lua"
        script.write_text(LUA)
        for run in range(args.runs):
            before = _trivial(script, args, env)
            for kind in KINDS:
                port = free_port()
                procs = start_servers(FLOOR_SERVER, [str(tmpdir / f"{kind}{run}.db"), str(port), kind], 1, env)
                try:
                    row = run_wrk(f"http://127.0.0.1:{port}/floor", script, args.seconds, args.connections)
                finally:
                    stop_servers(procs)
                if row[4]:
                    raise SystemExit(f"{kind}: {row[4]} requests failed")
                results[kind].append(row)
            # the machine drifts within a run: the baseline is the mean of a trivial run before and after
            after = _trivial(script, args, env)
            results["trivial"].append(tuple((a + b) / 2 for a, b in zip(before, after, strict=True)))  # type: ignore[arg-type]
            line = ", ".join(f"{k} {results[k][-1][0]:,.0f}" for k in results)
            print(f"  run {run + 1}: {line} req/s")
    trivial = results["trivial"]
    for name, rows in results.items():
        rps, p50, p99 = (statistics.median(r[i] for r in rows) for i in range(3))
        ratio = ""
        if name != "trivial":
            per = [r[0] / t[0] for r, t in zip(rows, trivial, strict=True)]
            p99s = [r[2] / t[2] for r, t in zip(rows, trivial, strict=True)]
            ratio = (
                f"; {statistics.median(per):.0%} of trivial (per run {', '.join(f'{x:.0%}' for x in per)}),"
                f" p99 {statistics.median(p99s):.1f}x trivial's"
            )
        runs = f"median of {args.runs}, -c{args.connections}"
        print(f"{name}: {rps:,.0f} req/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms{ratio} ({runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
