"""Indexer speed: backfill throughput against plain eth_getLogs, live lag, peak RSS.

    python -m benchmarks.indexer_backfill [--events 100000] [--runs 5] [--database sqlite|postgresql|both]

1. Generates a history of at least --events contract events on a fresh anvil (batched
   eth_sendTransaction with explicit nonces, automine off): PriceSet events and hire cycles
   (JobCreated, then JobReleased + Payout + EarningsRecorded).
2. Baseline: fetches every log of our contracts with eth_getLogs, in the ranges the indexer's
   range sizer would use, through the same client, and parses each reply with the fastest parser
   we have: the indexer's own (indexer.decode.parse_logs, msgspec from the reply bytes into
   structs); nothing else. So the ratio is what decoding, projecting and committing add. Also
   printed: the ratio to the same fetch parsed with json.loads (the baseline before msgspec decoding).
3. Backfill: a fresh SQLite file (or, with --database postgresql, a fresh database on a throwaway
   PostgreSQL cluster with fsync on), the Indexer from the deploy block to the head (everything
   final: decode, project, commit). Figures: median of --runs of each, events/s, the ratio
   backfill time / fetch time of each run and of the medians (goal: ratio <= 1.5). With --database
   both, each run backfills SQLite then PostgreSQL, and the ratio of their medians is printed (goal <= 1.5).
4. Rebuild from the recorded events (`indexer_admin reindex --from-events`) on the database each
   backfill just wrote, without the node: median time and the ratio backfill/rebuild (goal >= 3).
5. Live lag: automine on, one transaction at a time while the indexer follows: from the
   receipt (mined) to the row being visible from another connection; p50 and p99.
6. Peak RSS of `python -m indexer --until-head` doing the same backfill in its own process, and its time
   from process start to exit over the in-process backfill's median (goal <= 1.5).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._kit import fresh_database
from core import deployments
from core.anvil import Anvil
from core.chain import ROOT, connect
from core.store import open_database
from indexer.decode import Decoder, parse_logs, raw_block_number
from indexer.fetch import RangeSizer
from indexer.rebuild import rebuild_from_events
from indexer.rpc import RpcClient
from indexer.sync import Indexer
from scripts.compile import compile_contracts
from scripts.devchain import USDC, System, deploy_dev_system
from tests.pg_kit import PgCluster

ANVIL_ACCOUNTS = 10


def _rpc(w3: Any, method: str, params: list[Any]) -> Any:
    reply = w3.provider.make_request(method, params)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply.get("result")


def generate(s: System, rpc_url: str, n_events: int) -> int:
    """Fill the chain with at least n_events of our events; return how many were emitted."""
    import json
    import urllib.request

    w3 = s.w3
    senders = [w3.to_checksum_address(a) for a in w3.eth.accounts[:ANVIL_ACCOUNTS]]  # anvil's unlocked accounts
    operator = s.operator.address
    _rpc(w3, "anvil_impersonateAccount", [operator])
    tokens = []
    for i, acct in enumerate(senders):
        tokens.append(s.register_agent(acct, s.users[i].address, f"agl_{0xBE00 + i:012x}"))
        s.mint_usdc(acct, 10**9 * USDC)
    esc, usdc = s.escrow, s.usdc
    nonces = {a: w3.eth.get_transaction_count(a) for a in [*senders, operator]}

    def tx(sender: str, fn: Any) -> dict[str, Any]:
        data = fn._encode_transaction_data()
        t = {"from": sender, "to": fn.address, "data": data, "gas": hex(300_000), "nonce": hex(nonces[sender])}
        nonces[sender] += 1
        return t

    def send_batch(txs: list[dict[str, Any]]) -> None:
        for i in range(0, len(txs), 2000):
            body = [
                {"jsonrpc": "2.0", "id": k, "method": "eth_sendTransaction", "params": [t]}
                for k, t in enumerate(txs[i : i + 2000])
            ]
            headers = {"Content-Type": "application/json"}
            req = urllib.request.Request(rpc_url, json.dumps(body).encode(), headers)  # noqa: S310 (loopback)
            with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310
                for r in json.loads(resp.read()):
                    if "error" in r:
                        raise RuntimeError(r["error"])

    def mine_all() -> None:
        while int(_rpc(w3, "txpool_status", [])["pending"], 16):
            _rpc(w3, "evm_mine", [])

    _rpc(w3, "evm_setAutomine", [False])
    send_batch([tx(a, usdc.functions.approve(esc.address, 2**255)) for a in senders])
    mine_all()
    emitted = 0
    round_no = 0
    while emitted < n_events:
        round_no += 1
        batch: list[dict[str, Any]] = []
        jobs: list[bytes] = []
        for i, a in enumerate(senders):
            for k in range(200):  # PriceSet: 1 event each
                batch.append(tx(a, esc.functions.setPrice(tokens[i], (1 + (k + round_no) % 50) * USDC, 0)))
            emitted += 200
            batch.append(tx(a, esc.functions.setPrice(tokens[i], 5 * USDC, 0)))
            emitted += 1
        for i, a in enumerate(senders):
            target = tokens[(i + 1) % len(tokens)]
            for k in range(50):  # hire cycles: JobCreated, then JobReleased + Payout + EarningsRecorded
                job = round_no.to_bytes(8, "big") + i.to_bytes(8, "big") + k.to_bytes(16, "big")
                jobs.append(job)
                batch.append(
                    tx(
                        a,
                        esc.functions.createJob(
                            job, f"agl_{0xBE00 + (i + 1) % len(tokens):012x}", 5 * USDC, 7 * 86_400
                        ),
                    )
                )
            emitted += 50
            del target
        send_batch(batch)
        mine_all()
        send_batch([tx(operator, esc.functions.release(j)) for j in jobs])
        emitted += 3 * len(jobs)
        mine_all()
    _rpc(w3, "evm_setAutomine", [True])
    return emitted


async def fetch_only(
    rpc_url: str, addresses: list[str], start: int, end: int, *, json: bool = False
) -> tuple[float, int]:
    """The plain fetch: each range's reply parsed by parse_logs (json=True: by json.loads)."""
    sizer = RangeSizer()
    t0 = time.perf_counter()
    n = 0
    async with RpcClient(rpc_url) as rpc:
        block = start
        while block <= end:
            stop = min(end, block + sizer.size - 1)
            flt = {"fromBlock": hex(block), "toBlock": hex(stop), "address": addresses}
            if json:
                logs = await rpc.call("eth_getLogs", [flt])
                sizer.observe(logs, block, stop)  # the indexer's own sizing, so the same ranges
            else:
                raw = parse_logs(await rpc.call_raw("eth_getLogs", [flt]))
                assert raw is not None, "not an eth_getLogs reply"
                sizer.observe(raw, block, stop, raw_block_number)
                logs = raw
            n += len(logs)
            block = stop + 1
    return time.perf_counter() - t0, n


async def backfill(rpc_url: str, s: System, location: str) -> tuple[float, int]:
    conn = open_database(location).connect(durable=False)
    dep = s.deployment
    async with RpcClient(rpc_url) as rpc:
        ix = Indexer(
            conn,
            rpc,
            chain_id=dep.chain_id,
            addresses=dep.contracts,
            start_block=dep.deploy_block,
            use_finalized_tag=False,
            confirmations=0,
        )
        head = int(await rpc.call("eth_blockNumber", []), 16)
        t0 = time.perf_counter()
        await ix.run_until(head, timeout=3600)
        elapsed = time.perf_counter() - t0
    n = int(conn.execute("SELECT count(*) FROM events").fetchone()[0])  # type: ignore[index, arg-type]
    conn.close()
    return elapsed, n


def rebuild(location: str, chain_id: int) -> tuple[float, int]:
    conn = open_database(location).connect(durable=False)
    t0 = time.perf_counter()
    n = rebuild_from_events(conn, chain_id)
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed, n


def live_lag(rpc_url: str, s: System, location: str, samples: int) -> list[float]:
    stop = threading.Event()

    def follow() -> None:
        async def main() -> None:
            conn = open_database(location).connect(durable=False)
            dep = s.deployment
            async with RpcClient(rpc_url) as rpc:
                ix = Indexer(
                    conn,
                    rpc,
                    chain_id=dep.chain_id,
                    addresses=dep.contracts,
                    start_block=dep.deploy_block,
                    poll_interval=0.02,
                )
                ev = asyncio.Event()
                task = asyncio.create_task(ix.run(ev))
                while not stop.is_set():
                    await asyncio.sleep(0.05)
                ev.set()
                await task
            conn.close()

        asyncio.run(main())

    thread = threading.Thread(target=follow)
    thread.start()
    reader = open_database(location).connect(durable=False)
    owner = s.w3.eth.accounts[0]
    token = s.registry.functions.tokenOfWalletId(f"agl_{0xBE00:012x}").call()
    head = s.w3.eth.block_number
    deadline = time.perf_counter() + 300
    while True:  # let it catch up first
        row = reader.execute("SELECT block_number FROM sync_state").fetchone()
        if row is not None and int(row[0]) >= head:  # type: ignore[arg-type]
            break
        if time.perf_counter() > deadline:
            raise TimeoutError("the indexer did not catch up")
        time.sleep(0.05)
    lags = []
    for i in range(samples):
        price = (1000 + i) * USDC
        tx_hash = s.escrow.functions.setPrice(token, price, 0).transact({"from": owner})
        s.w3.eth.wait_for_transaction_receipt(tx_hash, poll_latency=0.001)
        mined = time.perf_counter()
        while (
            reader.execute("SELECT 1 FROM agents WHERE token_id = ? AND hire_price = ?", (token, price)).fetchone()
            is None
        ):
            time.sleep(0.0005)
        lags.append(time.perf_counter() - mined)
    stop.set()
    thread.join()
    reader.close()
    return lags


def peak_rss_backfill(rpc_url: str, s: System, tmp: Path, location: str) -> tuple[float, float]:
    deployments.save(s.deployment, tmp / "deployments")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env.update(AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp / "deployments"), AGENTLEDGER_CONFIRMATIONS="0")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "indexer", "--rpc", rpc_url, "--db", location, "--until-head"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    elapsed = time.perf_counter() - t0
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lag-samples", type=int, default=200)
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="sqlite")
    args = parser.parse_args()
    compile_contracts()
    with (
        tempfile.TemporaryDirectory() as tmpdir,
        Anvil(extra_args=["--gas-limit", "1000000000"]) as node,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmpdir)
        kinds = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
        clusters: dict[str, PgCluster | None] = {"sqlite": None}
        if "postgresql" in kinds:
            clusters["postgresql"] = PgCluster(fsync=True).start()
            stack.callback(clusters["postgresql"].stop)  # type: ignore[union-attr]
        print(f"database: {args.database}")
        s = deploy_dev_system(connect(node.rpc_url))
        t0 = time.perf_counter()
        emitted = generate(s, node.rpc_url, args.events)
        head = s.w3.eth.block_number
        print(
            f"history: {emitted:,} events in {head - s.deployment.deploy_block:,} blocks "
            f"(generated in {time.perf_counter() - t0:.1f}s)"
        )
        addresses = Decoder(s.deployment.contracts).addresses
        fetch_times: list[float] = []
        json_times: list[float] = []
        fill_times: dict[str, list[float]] = {kind: [] for kind in kinds}
        rebuild_times: dict[str, list[float]] = {kind: [] for kind in kinds}
        n_logs = n_events = 0
        for run in range(args.runs):
            ft, n_logs = asyncio.run(fetch_only(node.rpc_url, addresses, s.deployment.deploy_block, head))
            jt, _ = asyncio.run(fetch_only(node.rpc_url, addresses, s.deployment.deploy_block, head, json=True))
            fetch_times.append(ft)
            json_times.append(jt)
            line = f"  run {run + 1}: eth_getLogs only {ft:.2f}s ({n_logs:,} logs; {jt:.2f}s with json.loads)"
            for kind in kinds:
                with fresh_database(clusters[kind], tmp, f"bench{run}") as location:
                    bt, n_events = asyncio.run(backfill(node.rpc_url, s, location))
                    rt, n_rebuilt = rebuild(location, s.deployment.chain_id)
                assert n_rebuilt == n_events, (n_rebuilt, n_events)
                fill_times[kind].append(bt)
                rebuild_times[kind].append(rt)
                line += f"; {kind} backfill {bt:.2f}s ({n_events:,} events), ratio {bt / ft:.2f}, rebuild {rt:.2f}s"
            print(line)
        ft, jt = statistics.median(fetch_times), statistics.median(json_times)
        assert n_logs == n_events >= args.events, (n_logs, n_events)  # every generated event was mined
        medians = {kind: statistics.median(times) for kind, times in fill_times.items()}
        for kind in kinds:
            bt = medians[kind]
            ratios = sorted(b / f for b, f in zip(fill_times[kind], fetch_times, strict=True))
            per_run = ", ".join(f"{r:.2f}" for r in ratios)
            rt = statistics.median(rebuild_times[kind])
            print(
                f"{kind}: backfill {n_events / bt:,.0f} events/s (median of {args.runs}; eth_getLogs alone"
                f" {n_logs / ft:,.0f} logs/s); ratio backfill/fetch {bt / ft:.2f} (goal <= 1.5), per run sorted:"
                f" {per_run}; rebuild from the recorded events {rt:.2f}s, ratio backfill/rebuild {bt / rt:.2f}"
                f" (goal >= 3); ratio to the fetch parsed with json.loads {bt / jt:.2f}"
            )
        if len(kinds) == 2:
            pg_ratios = sorted(p / q for p, q in zip(fill_times["postgresql"], fill_times["sqlite"], strict=True))
            print(
                f"ratio backfill PostgreSQL/SQLite: {medians['postgresql'] / medians['sqlite']:.2f} (goal <= 1.5);"
                f" per run sorted: {', '.join(f'{r:.2f}' for r in pg_ratios)}"
            )
        kind = kinds[0]
        cluster = clusters[kind]
        with fresh_database(cluster, tmp, "rss") as location:
            rss, elapsed = peak_rss_backfill(node.rpc_url, s, tmp, location)
        print(
            f"peak RSS of `python -m indexer --until-head` over the same history ({kind}): {rss:,.0f} MiB"
            f" ({elapsed:.2f}s incl. start-up; ratio to the in-process backfill {elapsed / medians[kind]:.2f},"
            " goal <= 1.5)"
        )
        with fresh_database(cluster, tmp, "live") as location:
            lags = sorted(live_lag(node.rpc_url, s, location, args.lag_samples))
        p50 = statistics.median(lags)
        p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
        print(
            f"live lag mined -> committed (poll 20 ms, {len(lags)} samples):"
            f" p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
