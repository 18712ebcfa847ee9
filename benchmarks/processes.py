"""Earn, decision-log and balance-read throughput with 1, 2 and 3 API processes on one database, each as a ratio
to the trivial endpoint served by as many processes in the same run (issue 17's figures).

    python -m benchmarks.processes [--database sqlite|postgresql] [--processes 1,2,3] [--runs 5] [--seconds 6]

Every process is the service as `make run` serves it (benchmarks._kit.API_SERVER) on one port
(SO_REUSEPORT: the kernel spreads the connections); the trivial baseline runs as many processes
the same way, so each ratio is our cost per request and not the process count. `--database sqlite`
(default) gives every run a fresh SQLite file (synchronous=FULL); `--database postgresql` starts a
throwaway PostgreSQL cluster (the tests' tests/pg_kit.py, here with fsync on, as in production) and
gives every run a fresh database of it (synchronous_commit on). The load is
the issue 18 workloads: earns to one agent, and decisions rotating over 100 agents, and a read, that
agent's balance (GET /api/agents/balance), each from `wrk -t1 -c64`. Prints req/s and p99 per
process count (median of --runs) and the paired ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks._kit import (
    API_SERVER,
    TRIVIAL_SERVER,
    fresh_database,
    post_json,
    run_wrk,
    start_servers,
    stop_servers,
)
from benchmarks.decision_log import BODY, LUA, TRIVIAL_LUA
from benchmarks.earn_throughput import WRK_SCRIPT
from core.anvil import free_port
from core.chain import ROOT
from tests.pg_kit import PgCluster

Row = tuple[float, float, float, int, int]

WORKLOADS = ("earn", "decisions", "balance")
#: A read: the agent's balance (four reads, core.store.reads: off the loop on PostgreSQL).
BALANCE_SCRIPT = """
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer {key}"
"""


def _workloads(base: str, tmpdir: Path, agents: int) -> dict[str, tuple[str, Path]]:
    """(url, wrk script) of each measured workload, after registering its agents through `base`."""
    reg = post_json(f"{base}/api/agents/register", {"name": "bench", "specialty": "data_research"})
    earn = tmpdir / "earn.lua"
    body = json.dumps({"agentId": reg["agent"]["wallet"], "amount": 1.5, "source": "bench"})  # type: ignore[index]
    earn.write_text(WRK_SCRIPT.format(key=reg["api_key"], body=body))
    balance = tmpdir / "balance.lua"
    balance.write_text(BALANCE_SCRIPT.format(key=reg["api_key"]))
    balance_url = f"{base}/api/agents/balance?agentId={reg['agent']['wallet']}"  # type: ignore[index]
    rows = []
    for i in range(agents):
        reg = post_json(f"{base}/api/agents/register", {"name": f"bench{i}", "specialty": "data_research"})
        rows.append(f'{{"/api/agents/{reg["agent"]["id"]}/log", "{reg["api_key"]}"}}')  # type: ignore[index]
    decisions = tmpdir / "decisions.lua"
    decisions.write_text(LUA.format(agents=", ".join(rows), body=BODY))
    return {
        "earn": (f"{base}/api/agents/earn", earn),
        "decisions": (base, decisions),
        "balance": (balance_url, balance),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--agents", type=int, default=100)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    counts = [int(n) for n in args.processes.split(",")]
    found: dict[tuple[int, str], list[Row]] = {}
    cluster = PgCluster(fsync=True).start() if args.database == "postgresql" else None
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if cluster is not None:
            stack.callback(cluster.stop)
        tmpdir = Path(tmp)
        trivial_lua = tmpdir / "trivial.lua"
        trivial_lua.write_text(TRIVIAL_LUA.format(body=BODY))
        for run in range(args.runs):
            for n in counts:
                with fresh_database(cluster, tmpdir, f"bench_{run}_{n}") as location:
                    t_port, a_port = free_port(), free_port()
                    procs = start_servers(TRIVIAL_SERVER, [str(t_port)], n, env)
                    try:
                        procs += start_servers(API_SERVER, [location, str(a_port)], n, env)
                        work = _workloads(f"http://127.0.0.1:{a_port}", tmpdir, args.agents)
                        trivial_url = f"http://127.0.0.1:{t_port}/trivial"
                        measured = {"trivial": run_wrk(trivial_url, trivial_lua, args.seconds, args.connections)}
                        for name, (url, script) in work.items():
                            measured[name] = run_wrk(url, script, args.seconds, args.connections)
                    finally:
                        stop_servers(procs)
                for name, row in measured.items():
                    found.setdefault((n, name), []).append(row)
                figures = ", ".join(f"{name} {row[0]:,.0f}/s ({row[4]:,} non-2xx)" for name, row in measured.items())
                print(f"  run {run + 1}, {n} process(es): {figures}", flush=True)
    print(f"database: {args.database}; medians of {args.runs} runs, -c{args.connections}")
    for n in counts:
        trivial = found[(n, "trivial")]
        line = [f"{n} process(es): trivial {statistics.median(r[0] for r in trivial):,.0f}/s"]
        for name in WORKLOADS:
            rows = found[(n, name)]
            ratio = statistics.median(r[0] / t[0] for r, t in zip(rows, trivial, strict=True))
            p99 = statistics.median(r[2] / t[2] for r, t in zip(rows, trivial, strict=True))
            rps = statistics.median(r[0] for r in rows)
            line.append(f"{name} {rps:,.0f}/s = {ratio:.0%} of trivial, p99 {p99:.1f}x")
        print("; ".join(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
