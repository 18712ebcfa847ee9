"""PostgreSQL reads inline on the event loop (AGENTLEDGER_READ_POOL_SIZE=0) against the pool of worker
threads (the default, 8: core.store.reads), at several round-trip times to the database.

    python -m benchmarks.reads [--runs 3] [--seconds 5] [--delays direct,0,0.5] [--pool 8]

One API process (benchmarks._kit.API_SERVER) on a throwaway cluster with fsync on. `direct` connects
to the server itself (loopback); a number puts benchmarks._delay_proxy in front of it, holding each
chunk that many milliseconds each way (its timers are coarse: the round trip measured with SELECT 1
is printed). For each setting and mode, `wrk -t1 -c64` loads GET /api/agents/balance (four reads in
one read function) while `wrk -c1` times GET /api/schema beside it, a route that reads nothing: its
latency is how long the loop is held by others. Prints medians of --runs and the pool / inline ratio
of balance throughput.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks._kit import API_SERVER, fresh_database, post_json, run_wrk, start_servers, stop_servers
from benchmarks.processes import BALANCE_SCRIPT
from core.anvil import free_port
from core.chain import ROOT
from core.store import open_database
from tests.pg_kit import PgCluster

#: (balance req/s, balance p99 ms, schema p50 ms, schema p99 ms, round trip ms)
Row = tuple[float, float, float, float, float]
NOTHING = "wrk.method = 'GET'\n"


@contextlib.contextmanager
def _reached(cluster: PgCluster, location: str, delay: str) -> Iterator[str]:
    """`location` directly, or through a delay proxy of `delay` milliseconds each way."""
    if delay == "direct":
        yield location
        return
    port = free_port()
    proxy = subprocess.Popen(
        [sys.executable, "-m", "benchmarks._delay_proxy", str(port), str(cluster.port), str(float(delay) / 1000)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == "ready"
        yield location.replace(f":{cluster.port}/", f":{port}/")
    finally:
        proxy.kill()
        proxy.wait()
        if proxy.stdout is not None:
            proxy.stdout.close()


def _round_trip(location: str) -> float:
    conn = open_database(location).connect()
    try:
        started = time.perf_counter()
        for _ in range(50):
            conn.execute("SELECT 1").fetchall()
        return (time.perf_counter() - started) / 50 * 1000
    finally:
        conn.close()


def _measure(location: str, pool: int, seconds: int, tmpdir: Path) -> Row:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTLEDGER_READ_POOL_SIZE": str(pool)}
    port = free_port()
    procs = start_servers(API_SERVER, [location, str(port)], 1, env)
    try:
        base = f"http://127.0.0.1:{port}"
        reg = post_json(f"{base}/api/agents/register", {"name": "bench", "specialty": "data_research"})
        script = tmpdir / "balance.lua"
        script.write_text(BALANCE_SCRIPT.format(key=reg["api_key"]))
        plain = tmpdir / "plain.lua"
        plain.write_text(NOTHING)
        url = f"{base}/api/agents/balance?agentId={reg['agent']['wallet']}"  # type: ignore[index]
        with contextlib.ExitStack() as stack:
            beside = subprocess.Popen(
                ["wrk", "-t1", "-c64", f"-d{seconds + 2}s", "-s", str(script), url],
                stdout=subprocess.DEVNULL,
            )
            stack.callback(beside.wait)
            time.sleep(1)  # the load is on before the schema is timed
            schema = run_wrk(f"{base}/api/schema", plain, seconds, 1)
        balance = run_wrk(url, script, seconds, 64)
        return balance[0], balance[2], schema[1], schema[2], _round_trip(location)
    finally:
        stop_servers(procs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--delays", default="direct,0,0.5")
    parser.add_argument("--pool", type=int, default=8)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    delays = args.delays.split(",")
    modes = {"inline": 0, f"pool {args.pool}": args.pool}
    found: dict[tuple[str, str], list[Row]] = {}
    cluster = PgCluster(fsync=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.runs):
                for delay in delays:
                    for mode, pool in modes.items():
                        with (
                            fresh_database(cluster, Path(tmp), f"reads_{run}") as location,
                            _reached(cluster, location, delay) as reached,
                        ):
                            row = _measure(reached, pool, args.seconds, Path(tmp))
                        found.setdefault((delay, mode), []).append(row)
                        print(
                            f"  run {run + 1}, {delay}, {mode}: rtt {row[4]:.2f} ms, balance {row[0]:,.0f}/s "
                            f"p99 {row[1]:.0f} ms, schema beside it p50 {row[2]:.1f} ms p99 {row[3]:.0f} ms",
                            flush=True,
                        )
    finally:
        cluster.stop()
    print(f"medians of {args.runs} runs of {args.seconds} s")
    for delay in delays:
        med = {m: [statistics.median(r[i] for r in found[(delay, m)]) for i in range(5)] for m in modes}
        inline, pooled = med["inline"], med[f"pool {args.pool}"]
        parts = [
            f"{m}: balance {v[0]:,.0f}/s p99 {v[1]:.0f} ms, schema p50 {v[2]:.1f} ms p99 {v[3]:.0f} ms"
            for m, v in med.items()
        ]
        print(f"{delay} (rtt {inline[4]:.2f} ms): " + "; ".join(parts) + f"; pool/inline {pooled[0] / inline[0]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
