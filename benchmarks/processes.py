"""Earn, decision-log and balance-read throughput of 1, 2 and 3 API processes on one database, SQLite and
PostgreSQL side by side in one run, each as a ratio to ONE SQLite process doing the same workload.

    python -m benchmarks.processes [--databases sqlite,postgresql] [--processes 1,2,3] [--runs 3] [--seconds 4]

Every process is the service as `make run` serves it (benchmarks._kit.API_SERVER) on a port of its own,
loaded by a `wrk -t1` of its own (--connections split between them), all at once; a figure is their sum.
The workloads:
- earn, shared: every process earns for the same 40 agents (half of them referred by the others, so an
  earn credits two balances), in rotation: every group of every process updates rows the others update
  (on PostgreSQL this is where two processes' groups deadlocked before the write lock);
- earn, disjoint: process i earns only for its own share of the 40 agents (each referred agent with
  its referrer);
- decisions: every process logs decisions of the same 100 agents (the audit log is one for all);
- balance: every process reads the balance of the same agent (GET /api/agents/balance: four reads).
SQLite gets a fresh file per run (WAL, synchronous=FULL); PostgreSQL a fresh database per run of a
throwaway cluster (tests/pg_kit.py) with fsync on, as in production (synchronous_commit on). After each
PostgreSQL run the server's deadlock count of the database is printed (it must stay 0).
Prints req/s per backend and process count (median of --runs), the ratio to one SQLite process and, for
PostgreSQL, to one PostgreSQL process (the goals: shared agents over 3 processes >= 0.8x of one PostgreSQL
process; one PostgreSQL process >= 0.6x of one SQLite process).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchmarks._kit import API_SERVER, fresh_database, post_json, start_servers, stop_servers
from benchmarks.decision_log import BODY, LUA
from core.anvil import free_port
from core.chain import ROOT
from core.store import open_database
from tests.pg_kit import PgCluster, deadlocks_broken

WORKLOADS = ("earn shared", "earn disjoint", "decisions", "balance")
SHARED_AGENTS = 40
DECISION_AGENTS = 100

#: Earns rotating over a list of agents (each with its own key).
EARN_LUA = """
local agents = {{ {agents} }}
local i = 0
request = function()
  i = i + 1
  local a = agents[(i % #agents) + 1]
  local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. a[2]}}
  local body = '{{"agentId": "' .. a[1] .. '", "amount": 1.5, "source": "b"}}'
  return wrk.format("POST", "/api/agents/earn", headers, body)
end
"""
BALANCE_LUA = """
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer {key}"
"""


def _register(base: str, name: str, referral: str | None = None) -> dict[str, str]:
    body: dict[str, object] = {"name": name, "specialty": "data_research"}
    if referral is not None:
        body["referralCode"] = referral
    reg = post_json(f"{base}/api/agents/register", body)
    agent: dict[str, str] = reg["agent"]  # type: ignore[assignment]
    return {"key": str(reg["api_key"]), "wallet": agent["wallet"], "id": agent["id"], "code": agent["referral_code"]}


def _scripts(bases: list[str], tmpdir: Path) -> dict[str, list[tuple[str, Path]]]:
    """Per workload, (url, wrk script) for each process, after registering the agents through the first."""
    base = bases[0]
    referrers = [_register(base, f"r{i}") for i in range(SHARED_AGENTS // 2)]
    referred = [_register(base, f"d{i}", r["code"]) for i, r in enumerate(referrers)]
    pairs = list(zip(referrers, referred, strict=True))
    shared = [a for pair in pairs for a in pair]
    loggers = [_register(base, f"l{i}") for i in range(DECISION_AGENTS)]
    n = len(bases)

    def script(name: str, text: str) -> Path:
        path = tmpdir / f"{name}.lua"
        path.write_text(text)
        return path

    def earns(agents: list[dict[str, str]]) -> str:
        return EARN_LUA.format(agents=", ".join(f'{{"{a["wallet"]}", "{a["key"]}"}}' for a in agents))

    logs = LUA.format(agents=", ".join(f'{{"/api/agents/{a["id"]}/log", "{a["key"]}"}}' for a in loggers), body=BODY)
    one = shared[0]
    return {
        "earn shared": [(b, script(f"shared{i}", earns(shared[i:] + shared[:i]))) for i, b in enumerate(bases)],
        # a referrer and the agents it referred go to one process: an earn credits both
        "earn disjoint": [
            (b, script(f"disjoint{i}", earns([a for pair in pairs[i::n] for a in pair]))) for i, b in enumerate(bases)
        ],
        "decisions": [(b, script("decisions", logs)) for b in bases],
        "balance": [
            (f"{b}/api/agents/balance?agentId={one['wallet']}", script("balance", BALANCE_LUA.format(key=one["key"])))
            for b in bases
        ],
    }


def _wrk_all(targets: list[tuple[str, Path]], seconds: int, connections: int) -> tuple[float, int]:
    """One `wrk -t1` per target at once, the connections split between them: (req/s summed, non-2xx)."""
    each = max(1, connections // len(targets))
    procs = [
        subprocess.Popen(
            ["wrk", "-t1", f"-c{each}", f"-d{seconds}s", "-s", str(script), url],
            stdout=subprocess.PIPE,
            text=True,
        )
        for url, script in targets
    ]
    rps, bad = 0.0, 0
    for proc in procs:
        out, _ = proc.communicate()
        rps += float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
        found = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
        bad += int(found.group(1)) if found else 0
    return rps, bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    backends = args.databases.split(",")
    counts = [int(n) for n in args.processes.split(",")]
    found: dict[tuple[str, int, str], list[float]] = {}
    cluster = PgCluster(fsync=True).start() if "postgresql" in backends else None
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if cluster is not None:
            stack.callback(cluster.stop)
        tmpdir = Path(tmp)
        for run in range(args.runs):
            for backend in backends:
                for n in counts:
                    with fresh_database(
                        cluster if backend == "postgresql" else None, tmpdir, f"bench_{run}_{n}"
                    ) as location:
                        ports = [free_port() for _ in range(n)]
                        procs = []
                        try:
                            for port in ports:
                                procs += start_servers(API_SERVER, [location, str(port)], 1, env)
                            bases = [f"http://127.0.0.1:{port}" for port in ports]
                            line = []
                            for name, targets in _scripts(bases, tmpdir).items():
                                rps, bad = _wrk_all(targets, args.seconds, args.connections)
                                found.setdefault((backend, n, name), []).append(rps)
                                line.append(f"{name} {rps:,.0f}/s" + (f" ({bad:,} non-2xx)" if bad else ""))
                        finally:
                            stop_servers(procs)
                        if backend == "postgresql":
                            line.append(f"deadlocks {deadlocks_broken(open_database(location))}")
                    print(f"  run {run + 1}, {backend}, {n} process(es): {', '.join(line)}", flush=True)
    print(f"medians of {args.runs} runs, -c{args.connections} in all; ratios to one SQLite process", end="")
    print(" (and to one PostgreSQL process)" if "postgresql" in backends else "")
    for backend in backends:
        for n in counts:
            cells = []
            for name in WORKLOADS:
                rps = statistics.median(found[(backend, n, name)])
                cell = f"{name} {rps:,.0f}/s"
                if ("sqlite", 1, name) in found:
                    cell += f" = {rps / statistics.median(found[('sqlite', 1, name)]):.2f}x"
                if backend == "postgresql" and n > 1 and ("postgresql", 1, name) in found:
                    cell += f" ({rps / statistics.median(found[('postgresql', 1, name)]):.2f}x of 1)"
                cells.append(cell)
            print(f"{backend} x{n}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
