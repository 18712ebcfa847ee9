"""POST /api/agents/{agent_uuid}/log under load, durable, across 100 agents, against a trivial endpoint.

    python -m benchmarks.decision_log [--runs 3] [--seconds 10] [--connections 64] [--agents 100]

Both servers run as their own processes on loopback; the load comes from `wrk -t1 -cN` with a Lua
script that rotates through the agents (each registered on its own, so each has its own key and
its own hourly rate-limit window). The decision server is the service as `make run` serves it
(benchmarks._kit.API_SERVER: every route and middleware) on a fresh SQLite file (WAL,
synchronous=FULL through the group committer: every decision is on disk before its 201). Prints
decisions/s and p50/p99 latency (median of --runs), the paired ratios against the trivial endpoint
(throughput, and p99 over the trivial p99), and checks that the log holds exactly the 201s wrk
counted (the goal: throughput >= 50% of trivial, p99 <= 2x the trivial p99).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks._kit import API_SERVER, TRIVIAL_SERVER, post_json, run_wrk, start_servers, stop_servers
from core.anvil import free_port
from core.chain import ROOT
from core.store import audit as audit_store
from core.store import connect

BODY = json.dumps(
    {
        "event_type": "routine",
        "content_hash": "9f" * 32,
        "model_id": "bench-model",
        "model_version": "1.0",
        "evidence_manifest": [{"type": "json", "sha256": "ab" * 32}],
        "correlation_ref": "bench-1",
    }
)

LUA = """
local agents = {{ {agents} }}
local body = '{body}'
local i = 0
request = function()
  i = i + 1
  local a = agents[(i % #agents) + 1]
  local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. a[2]}}
  return wrk.format("POST", a[1], headers, body)
end
"""

TRIVIAL_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{body}'
"""


def _log_size(db: Path) -> int:
    conn = connect(db)
    try:
        return audit_store.size(conn)
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--agents", type=int, default=100)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results: dict[str, list[tuple[float, float, float, int, int]]] = {"trivial": [], "decisions": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for run in range(args.runs):
            t_port, d_port = free_port(), free_port()
            db = tmpdir / f"bench{run}.db"
            procs = start_servers(TRIVIAL_SERVER, [str(t_port)], 1, env)
            try:
                procs += start_servers(API_SERVER, [str(db), str(d_port)], 1, env)
                base = f"http://127.0.0.1:{d_port}"
                agents = []
                for i in range(args.agents):
                    reg = post_json(f"{base}/api/agents/register", {"name": f"bench{i}", "specialty": "data_research"})
                    agent = reg["agent"]["id"]  # type: ignore[index]
                    agents.append(f'{{"/api/agents/{agent}/log", "{reg["api_key"]}"}}')
                script = tmpdir / "decisions.lua"
                script.write_text(LUA.format(agents=", ".join(agents), body=BODY))
                trivial = tmpdir / "trivial.lua"
                trivial.write_text(TRIVIAL_LUA.format(body=BODY))
                results["trivial"].append(
                    run_wrk(f"http://127.0.0.1:{t_port}/trivial", trivial, args.seconds, args.connections)
                )
                row = run_wrk(base, script, args.seconds, args.connections)
                results["decisions"].append(row)
                logged = _log_size(db)
                print(
                    f"  run {run + 1}: trivial {results['trivial'][-1][0]:,.0f} req/s, decisions {row[0]:,.0f}/s; "
                    f"{row[3]:,} sent, {row[4]:,} non-2xx, {logged:,} in the log"
                )
                # requests still in flight when wrk stops are committed but not counted: at most one per connection
                if not 0 <= logged - (row[3] - row[4]) <= args.connections:
                    print(f"  MISMATCH: the log holds {logged:,} entries, wrk counted {row[3] - row[4]:,} 2xx")
            finally:
                stop_servers(procs)
    for name, rows in results.items():
        rps, p50, p99 = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{name}: {rps:,.0f} req/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms", end="")
        print(f" (median of {args.runs}, -c{args.connections})")
    ratios = [d[0] / t[0] for d, t in zip(results["decisions"], results["trivial"], strict=True)]
    p99s = [d[2] / t[2] for d, t in zip(results["decisions"], results["trivial"], strict=True)]
    print(
        f"decisions / trivial: {statistics.median(ratios):.0%} (per run {', '.join(f'{r:.0%}' for r in ratios)}); "
        f"p99 / trivial p99: {statistics.median(p99s):.1f}x (per run {', '.join(f'{r:.1f}' for r in p99s)}); "
        "goal >= 50% and <= 2.0x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
