"""What the benchmark scripts share: a trivial baseline server, waiting for a server, one JSON POST,
running wrk and reading its figures, percentiles, a fresh database of either backend for a run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.chain import ROOT
from tests.pg_kit import PgCluster

#: The baseline every HTTP benchmark compares with: parse a JSON body, answer a small JSON object.
TRIVIAL_SERVER = """
import sys
from aiohttp import web
async def handler(request):
    body = await request.json()
    return web.json_response({"success": True, "echo": len(body)})
app = web.Application()
app.router.add_post("/trivial", handler)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, reuse_port=True,
            print=lambda _started: print("ready", flush=True))
"""

#: The service as `make run` serves it, for the benchmarks of its hot paths: api.app.create_app (every
#: route, the metrics observer, the request rules, the key policy) through api.app.make_runner, on a
#: database given as argv[1] (a SQLite file: WAL, synchronous=FULL through the group committer; or a
#: postgresql:// URL), port argv[2] (SO_REUSEPORT: several processes may serve one port).
#: No chain: the paths measured (earn, decisions) never call it; the deployment is a local one with
#: no contracts and the RPC URL answers nothing (as the tests' dashboard app does).
API_SERVER = """
import asyncio, sys
from aiohttp import web
from api.app import create_app, make_runner
from core.config import Settings
from core.deployments import Deployment
from core.store import open_database
from service.runtime import settle_heap

DEPLOYMENT = Deployment(chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40,
                        usdc="0x" + "1" * 40, mock_usdc=True, contracts={})

async def main():
    db = open_database(sys.argv[1]).connect(durable=True)
    app = create_app(DEPLOYMENT, "http://127.0.0.1:9", db, settings=Settings.load(), sweep_interval=None)
    runner = make_runner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", int(sys.argv[2]), reuse_port=True).start()
    settle_heap()
    print("ready", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def start_servers(
    code: str,
    args: list[str],
    count: int,
    env: dict[str, str],
    *,
    python: Path | str = sys.executable,
    cwd: Path = ROOT,
) -> list[subprocess.Popen[str]]:
    """`count` processes of a server above (TRIVIAL_SERVER, API_SERVER) with `args`, each started once
    the one before it said "ready" (the first alone migrates a fresh database); `python` and `cwd` run
    it from another checkout (benchmarks.tree_ab)."""
    procs: list[subprocess.Popen[str]] = []
    try:
        for _ in range(count):
            proc = subprocess.Popen(
                [str(python), "-c", code, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, text=True
            )
            procs.append(proc)
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a server exited before it was ready: {proc.wait()}")
    except BaseException:
        stop_servers(procs)
        raise
    return procs


def stop_servers(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    """Until a server on 127.0.0.1:`port` answers HTTP (any status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
        except urllib.error.HTTPError:
            return  # it answers (404/405): up
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"server on {port} did not start")


def post_json(url: str, payload: dict[str, object], key: str | None = None) -> dict[str, object]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, json.dumps(payload).encode(), headers)  # noqa: S310 (loopback)
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310
        result: dict[str, object] = json.loads(resp.read())
        return result


def run_wrk(url: str, script: Path, seconds: int, connections: int) -> tuple[float, float, float, int, int]:
    """`wrk -t1 -cN` with a Lua script: (req/s, p50 ms, p99 ms, requests, non-2xx responses)."""
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    lat = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.MULTILINE))
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, _ms(lat["50"]), _ms(lat["99"]), total, int(bad.group(1)) if bad else 0


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 1]) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextmanager
def fresh_database(cluster: PgCluster | None, tmpdir: Path, name: str) -> Iterator[str]:
    """The location of an empty database for one run: on the cluster, else a SQLite file."""
    if cluster is None:
        yield str(tmpdir / f"{name}.db")
        return
    database = cluster.fresh()
    try:
        yield database.location
    finally:
        cluster.drop(database)
