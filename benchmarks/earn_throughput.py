"""POST /api/agents/earn under load, durable, against a trivial aiohttp JSON endpoint.

    python -m benchmarks.earn_throughput [--runs 3] [--seconds 10] [--connections 64]

Both servers run as their own processes on loopback; the load comes from `wrk -t1 -cN`
(Debian package `wrk`). The earn server is the service as `make run` serves it (benchmarks._kit.
API_SERVER: every route and middleware) on a fresh SQLite file (WAL, synchronous=FULL: every earn is
committed to disk before its response). The trivial
endpoint parses the JSON body and answers a small JSON object. Prints requests/s and p50/p99
latency (median of --runs) and the ratio earn / trivial (the goal: at least 70%).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import urllib.request
from pathlib import Path

from benchmarks._kit import API_SERVER, TRIVIAL_SERVER, post_json, run_wrk, start_servers, stop_servers
from core.anvil import free_port
from core.chain import ROOT

WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {key}"
wrk.body = '{body}'
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results: dict[str, list[tuple[float, float, float, int, int]]] = {"trivial": [], "earn": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for run in range(args.runs):
            t_port, w_port = free_port(), free_port()
            db = tmpdir / f"bench{run}.db"
            procs = start_servers(TRIVIAL_SERVER, [str(t_port)], 1, env)
            try:
                procs += start_servers(API_SERVER, [str(db), str(w_port)], 1, env)
                base = f"http://127.0.0.1:{w_port}/api/agents"
                reg = post_json(f"{base}/register", {"name": "bench", "specialty": "data_research"})
                key, wallet = str(reg["api_key"]), str(reg["agent"]["wallet"])  # type: ignore[index]
                body = json.dumps({"agentId": wallet, "amount": 1.5, "source": "bench"})
                script = tmpdir / "earn.lua"
                script.write_text(WRK_SCRIPT.format(key=key, body=body))
                results["trivial"].append(
                    run_wrk(f"http://127.0.0.1:{t_port}/trivial", script, args.seconds, args.connections)
                )
                results["earn"].append(run_wrk(f"{base}/earn", script, args.seconds, args.connections))
                auth = {"Authorization": f"Bearer {key}"}
                req = urllib.request.Request(f"{base}/balance?agentId={wallet}", headers=auth)  # noqa: S310
                with urllib.request.urlopen(req) as resp:  # noqa: S310 (loopback)
                    bal = json.loads(resp.read())
                trivial_rps, earn_rps = results["trivial"][-1][0], results["earn"][-1][0]
                print(
                    f"  run {run + 1}: trivial {trivial_rps:,.0f} req/s, earn {earn_rps:,.0f} req/s"
                    f" ({bal['totalTransactions']:,} earns committed)"
                )
            finally:
                stop_servers(procs)
    summary = {}
    for name, rows in results.items():
        summary[name] = tuple(statistics.median(r[i] for r in rows) for i in range(3))
        rps, p50, p99 = summary[name]
        print(f"{name}: {rps:,.0f} req/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms", end="")
        print(f" (median of {args.runs}, -c{args.connections})")
    # Paired: each run measures both back to back, so the per-run ratio cancels machine drift.
    ratios = [e[0] / t[0] for e, t in zip(results["earn"], results["trivial"], strict=True)]
    each = ", ".join(f"{r:.0%}" for r in ratios)
    print(f"earn / trivial: {statistics.median(ratios):.0%} (median of per-run ratios {each}; goal >= 70%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
