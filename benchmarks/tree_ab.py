"""Earn, decision logging and the indexer's backfill of two checkouts, side by side in one run.

    python -m benchmarks.tree_ab --old PATH [--new PATH] [--rounds 5] [--seconds 5] [--events 20000]

Each tree runs from its own .venv and code: the API server is the tree's own benchmarks._kit.API_SERVER
(the service as `make run` serves it, on a fresh durable SQLite file), loaded by `wrk -t1 -c64` with the
scripts of benchmarks.earn_throughput (one agent's earns) and benchmarks.decision_log (100 agents'
decisions); the backfill is the tree's own benchmarks.indexer_backfill.backfill (a fresh SQLite file,
deploy block to head, everything final) over one chain generated once for both (at least --events of the
contracts' events on one anvil). In each round both trees' servers are up and each figure is taken for
one tree right after the other (old first in odd rounds, new first in even ones; the backfill --backfills
times each, alternating, its median kept), so the machine's drift falls on both. Prints each round, then
per workload the medians and new/old (the median of the per-round ratios; above 1 is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks._kit import post_json, run_wrk, start_servers, stop_servers
from benchmarks.decision_log import BODY, LUA
from benchmarks.earn_throughput import WRK_SCRIPT
from benchmarks.indexer_backfill import generate
from core import deployments
from core.anvil import Anvil, free_port
from core.chain import ROOT, connect
from scripts.compile import compile_contracts
from scripts.devchain import deploy_dev_system

#: Runs the tree's own API server (benchmarks._kit.API_SERVER) with this process's argv.
TREE_API_SERVER = "from benchmarks._kit import API_SERVER; exec(API_SERVER)"

#: The tree's own backfill over the chain at argv[1] into the SQLite file argv[2], the deployment read
#: from the directory argv[3]: prints "<seconds> <events>".
TREE_BACKFILL = """
import asyncio, sys, types
from pathlib import Path
from benchmarks.indexer_backfill import backfill
from core import deployments
dep = deployments.load(31337, Path(sys.argv[3]))
elapsed, events = asyncio.run(backfill(sys.argv[1], types.SimpleNamespace(deployment=dep), sys.argv[2]))
print(elapsed, events)
"""

WORKLOADS = ("earn req/s", "decisions req/s", "backfill events/s")


def tree_env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree)
    return env


@contextmanager
def api_server(tree: Path, tmp: Path, agents: int) -> Iterator[tuple[str, Path, Path]]:
    """`tree`'s service on a fresh database, with one agent to earn and `agents` to log decisions:
    (base URL, earn wrk script, decisions wrk script)."""
    port = free_port()
    db = tmp / f"api-{time.monotonic_ns()}.db"
    python = tree / ".venv/bin/python"
    procs = start_servers(TREE_API_SERVER, [str(db), str(port)], 1, tree_env(tree), python=python, cwd=tree)
    try:
        base = f"http://127.0.0.1:{port}"
        reg = post_json(f"{base}/api/agents/register", {"name": "bench", "specialty": "data_research"})
        key, wallet = str(reg["api_key"]), str(reg["agent"]["wallet"])  # type: ignore[index]
        earn = tmp / f"earn-{port}.lua"
        body = json.dumps({"agentId": wallet, "amount": 1.5, "source": "bench"})
        earn.write_text(WRK_SCRIPT.format(key=key, body=body))
        rows = []
        for i in range(agents):
            got = post_json(f"{base}/api/agents/register", {"name": f"bench{i}", "specialty": "data_research"})
            rows.append(f'{{"/api/agents/{got["agent"]["id"]}/log", "{got["api_key"]}"}}')  # type: ignore[index]
        decisions = tmp / f"decisions-{port}.lua"
        decisions.write_text(LUA.format(agents=", ".join(rows), body=BODY))
        yield base, earn, decisions
    finally:
        stop_servers(procs)


def measure_backfill(tree: Path, tmp: Path, rpc_url: str, deployments_dir: Path) -> tuple[float, int]:
    """(events/s, events) of `tree`'s indexer backfilling the whole chain into a fresh SQLite file."""
    db = tmp / f"backfill-{time.monotonic_ns()}.db"
    out = subprocess.run(
        [str(tree / ".venv/bin/python"), "-c", TREE_BACKFILL, rpc_url, str(db), str(deployments_dir)],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    elapsed, events = float(out[0]), int(out[1])
    return events / elapsed, events


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--old", type=Path, required=True, help="the checkout before (with its .venv: make compile)")
    parser.add_argument("--new", type=Path, default=ROOT, help="the checkout after (default: this one)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5, help="wrk's duration for each HTTP figure")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--agents", type=int, default=100, help="agents logging decisions")
    parser.add_argument("--events", type=int, default=50_000, help="at least this many events to backfill")
    parser.add_argument("--backfills", type=int, default=3, help="backfills of each tree per round (median)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for name, tree in trees.items():
        if not (tree / ".venv/bin/python").exists():
            raise SystemExit(f"{name} tree {tree} has no .venv: run `make compile` there")
    found: dict[tuple[str, str], list[float]] = {}
    compile_contracts()
    with (
        tempfile.TemporaryDirectory(prefix="tree-ab-") as tmpdir,
        Anvil(extra_args=["--gas-limit", "1000000000"]) as node,
    ):
        tmp = Path(tmpdir)
        system = deploy_dev_system(connect(node.rpc_url))
        emitted = generate(system, node.rpc_url, args.events)
        deployments.save(system.deployment, tmp / "deployments")
        print(f"chain: {emitted:,} events; old {trees['old']}, new {trees['new']}", flush=True)
        for round_no in range(1, args.rounds + 1):
            # both servers up at once, each figure measured for one tree right after the other
            order = ("old", "new") if round_no % 2 else ("new", "old")
            with (
                api_server(trees[order[0]], tmp, args.agents) as first,
                api_server(trees[order[1]], tmp, args.agents) as second,
            ):
                servers = dict(zip(order, (first, second), strict=True))
                figures: dict[str, dict[str, float]] = {name: {} for name in order}
                for name in order:
                    base, earn, _ = servers[name]
                    figures[name][WORKLOADS[0]] = run_wrk(
                        f"{base}/api/agents/earn", earn, args.seconds, args.connections
                    )[0]
                for name in reversed(order):
                    base, _, decisions = servers[name]
                    figures[name][WORKLOADS[1]] = run_wrk(base, decisions, args.seconds, args.connections)[0]
            rates: dict[str, list[float]] = {name: [] for name in order}
            for _ in range(args.backfills):
                for name in order:
                    rates[name].append(measure_backfill(trees[name], tmp, node.rpc_url, tmp / "deployments")[0])
            for name in order:
                figures[name][WORKLOADS[2]] = statistics.median(rates[name])
                for workload, value in figures[name].items():
                    found.setdefault((name, workload), []).append(value)
            line = "; ".join(
                f"{name}: " + ", ".join(f"{w.split()[0]} {v:,.0f}" for w, v in f.items())
                for name, f in sorted(figures.items(), reverse=True)
            )
            print(f"  round {round_no}: {line}", flush=True)
    print(f"medians of {args.rounds} rounds; new/old is the median of the per-round ratios")
    for workload in WORKLOADS:
        old, new = found[("old", workload)], found[("new", workload)]
        ratios = [n / o for n, o in zip(new, old, strict=True)]
        each = ", ".join(f"{r:.2f}" for r in ratios)
        print(
            f"{workload}: old {statistics.median(old):,.0f}, new {statistics.median(new):,.0f},"
            f" new/old {statistics.median(ratios):.2f}x (per round {each})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
