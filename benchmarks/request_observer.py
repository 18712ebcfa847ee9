"""What observing every request costs: POST /api/agents/earn under load, durable, on the wallet app
alone (the baseline) and with the request observer (Prometheus counters and latency histogram, the
group-commit histograms, a request id), then also with the JSON access log (one line per request,
written to /dev/null).

    python -m benchmarks.request_observer [--runs 3] [--seconds 8] [--connections 64]

Each server is its own process on loopback over a fresh SQLite file (synchronous=FULL); the load is
`wrk -t1 -cN` (Debian package `wrk`). Each run measures the three back to back; the ratios are
median per-run ratios to the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._kit import post_json, run_wrk, wait_for_port
from benchmarks.earn_throughput import WALLET_SERVER, WRK_SCRIPT
from core.anvil import free_port
from core.chain import ROOT

OBSERVED_SERVER = """
import sys
from aiohttp import web
from api.errors import error_middleware
from api.http import services_of
from api.metrics import Metrics, add_metrics_routes, observer
from api.wallets import add_wallet_routes
from core import logs
from core.store import connect
access = sys.argv[3] == "json"
if access:
    logs.configure("json", stream=open("/dev/null", "w"))
db = connect(sys.argv[2], durable=True)
metrics = Metrics()
app = web.Application(middlewares=[observer(metrics, access_log=access), error_middleware])
add_metrics_routes(app, metrics)
add_wallet_routes(app, db)
metrics.watch(services_of(app).writer)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
"""

VARIANTS = ("plain", "observed", "observed+json log")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results: dict[str, list[float]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for run in range(args.runs):
            for variant in VARIANTS:
                port, db = free_port(), tmpdir / f"{run}-{variant.replace('+', '-').replace(' ', '')}.db"
                if variant == "plain":
                    cmd = [sys.executable, "-c", WALLET_SERVER, str(port), str(db)]
                else:
                    mode = "json" if "json" in variant else "metrics"
                    cmd = [sys.executable, "-c", OBSERVED_SERVER, str(port), str(db), mode]
                proc = subprocess.Popen(cmd, env=env, cwd=ROOT)
                try:
                    wait_for_port(port)
                    base = f"http://127.0.0.1:{port}/api/agents"
                    reg = post_json(f"{base}/register", {"name": "bench", "specialty": "data_research"})
                    key, wallet = str(reg["api_key"]), str(reg["agent"]["wallet"])  # type: ignore[index]
                    body = json.dumps({"agentId": wallet, "amount": 1.5, "source": "bench"})
                    script = tmpdir / "earn.lua"
                    script.write_text(WRK_SCRIPT.format(key=key, body=body))
                    rps, p50, p99, _, bad = run_wrk(f"{base}/earn", script, args.seconds, args.connections)
                    assert bad == 0, f"{variant}: {bad} non-2xx answers"
                    results[variant].append(rps)
                    print(f"  run {run + 1} {variant}: {rps:,.0f} req/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms")
                finally:
                    proc.terminate()
                    proc.wait()
    for variant in VARIANTS:
        print(f"{variant}: {statistics.median(results[variant]):,.0f} req/s (median of {args.runs})")
    for variant in VARIANTS[1:]:
        ratios = [o / p for o, p in zip(results[variant], results["plain"], strict=True)]
        print(f"{variant} / plain: {statistics.median(ratios):.0%} (median of per-run ratios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
