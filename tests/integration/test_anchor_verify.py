"""The anchorer and the command-line verifier against a real anvil, a real API server on loopback and a
real SQLite file (the indexer projects the Anchored events): anchor -> more entries -> second anchor is
consistent and verified; tampered rows make the verifier fail (and the anchorer refuse); the contract's
inclusion check agrees with Python on proofs served by the log; the nightly schedule with an injected
clock; `python -m scripts.anchor --once`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import pytest
from aiohttp.test_utils import TestServer

import merkle
from api import audit_routes, decisions, verification
from api.app import install
from api.http import SERVICES
from api.wallets import create_wallet_app
from core import audit, deployments
from core.anchoring import Anchored, AnchorError, anchor_once
from core.anvil import Anvil
from core.chain import ROOT
from core.config import Settings
from core.jobs import DailyAt, Job, JobRunner, next_daily
from core.operator import Operator, tx_hash_of
from core.store import audit as audit_store
from core.store import connect, transaction
from scripts import anchor as anchor_cli
from scripts.anchor import operator_account
from scripts.verify import Verifier, VerifyFailed
from scripts.verify import main as verify_main
from tests.integration.chainkit import System
from tests.integration.indexer_kit import index_to_head

H = "ab" * 32


@dataclass
class Log:
    session: aiohttp.ClientSession
    base: str
    path: Path
    db: apsw.Connection
    system: System
    rpc_url: str
    key: str = ""
    agent: str = ""

    async def post(self, path: str, body: Any, key: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with self.session.post(self.base + path, json=body, headers=headers) as resp:
            assert resp.status == 201, await resp.text()
            return await resp.json()

    async def get(self, path: str) -> Any:
        async with self.session.get(self.base + path, headers={"Accept": "application/json"}) as resp:
            assert resp.status == 200, await resp.text()
            return await resp.json()

    async def decisions(self, n: int) -> list[int]:
        if not self.key:
            r = await self.post("/api/agents/register", {"name": "bot", "specialty": "content_seo"})
            self.key, self.agent = r["api_key"], r["agent"]["id"]
        ids = []
        for i in range(n):
            body = {"event_type": "routine", "content_hash": H, "model_id": "m", "model_version": str(i)}
            ids.append((await self.post(f"/api/agents/{self.agent}/log", body, self.key))["audit_id"])
        return ids

    def order_entries(self, order_id: str, n: int) -> list[int]:
        """Order-stream entries (as the checkout writes them), straight through the store."""
        ids = []
        with transaction(self.db):
            for i in range(n):
                e = audit.append(
                    self.db,
                    stream=audit.order_stream(order_id),
                    kind=audit.ORDER_TRANSITION,
                    payload={"action": "step", "n": i, "amount": "12.5"},
                    chain=lambda _seq, prev, body: audit.order_chain_hash(prev, body),
                    now=1.0,
                )
                ids.append(e.id)
        return ids

    async def anchor(self) -> Anchored | None:
        dep = self.system.deployment
        operator = Operator(self.system.w3, self.system.anchorer, dep.contracts, dep.usdc)
        result = await anchor_once(operator, self.path)
        await index_to_head(self.path, self.rpc_url, self.system)
        return result

    async def verify(self, audit_id: int) -> list[str]:
        """The verifier, in a thread (it is synchronous and this loop serves the API)."""
        lines: list[str] = []
        v = Verifier(self.base, self.rpc_url, self.system.anchor.address, out=lines.append)
        try:
            await asyncio.to_thread(v.verify, audit_id)
        finally:
            v.close()
        return lines

    async def verify_fails(self, audit_id: int) -> str:
        with pytest.raises(VerifyFailed) as info:
            await self.verify(audit_id)
        return str(info.value)


@asynccontextmanager
async def serve(tmp: Path, system: System, rpc_url: str) -> AsyncIterator[Log]:
    path = tmp / "log.db"
    db = connect(path, durable=True)
    app = create_wallet_app(db)
    app[SERVICES].deployment = system.deployment  # the anchors' chain and AuditAnchor contract
    install(app, (decisions.FEATURE, audit_routes.FEATURE, verification.FEATURE))
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield Log(session, str(server.make_url("")).rstrip("/"), path, db, system, rpc_url)
    finally:
        await server.close()
        db.close()


def run(tmp: Path, system: System, anvil: Anvil, body: Callable[[Log], Awaitable[None]]) -> None:
    async def main() -> None:
        async with serve(tmp, system, anvil.rpc_url) as log:
            await body(log)

    asyncio.run(main())


def entries(db: apsw.Connection, n: int) -> list[audit_store.AuditEntry]:
    out = [audit_store.get(db, i) for i in range(1, n + 1)]
    assert all(e is not None for e in out)
    return [e for e in out if e is not None]


def rebuild_tree(db: apsw.Connection) -> None:
    """Rewrite merkle_nodes from the (possibly forged) audit_log rows, as a forger would."""
    level = [audit.leaf_hash(e.id, e.stream, e.chain_hash) for e in entries(db, audit_store.size(db))]
    with transaction(db):
        db.execute("DELETE FROM merkle_nodes")
        height = 0
        while level:
            db.executemany(
                "INSERT INTO merkle_nodes (level, idx, hash) VALUES (?, ?, ?)",
                [(height, i, h) for i, h in enumerate(level)],
            )
            level = [merkle.node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            height += 1


def flip(b: bytes, bit: int = 0) -> bytes:
    return bytes([b[0] ^ (1 << bit)]) + b[1:]


# ---- anchor, grow, anchor again --------------------------------------------------------------------


def test_anchor_grow_anchor_again_is_consistent_and_verified(tmp_path: Path, system: System, anvil: Anvil) -> None:
    async def body(log: Log) -> None:
        await log.decisions(5)
        order_ids = log.order_entries("ord_1", 2)
        first = await log.anchor()
        assert first is not None and first.tree_size == 7
        leaves = [audit.leaf_hash(e.id, e.stream, e.chain_hash) for e in entries(log.db, 7)]
        assert first.root == merkle.root_from_leaf_hashes(leaves)
        assert await log.anchor() is None  # nothing new: no transaction
        assert system.anchor.functions.checkpointCount().call() == 1

        cps = await log.get("/api/audit/checkpoints")
        (cp,) = cps["checkpoints"]
        assert (cp["tree_size"], cp["root"], cp["tx_hash"]) == (7, "0x" + first.root.hex(), first.tx_hash)
        assert cps["contract"] == system.anchor.address
        v = await log.get("/verify/3")
        assert v["inclusion"]["anchored"] is True and v["inclusion"]["valid"] is True
        assert v["anchor"]["tx_hash"] == first.tx_hash and v["anchor"]["explorer_url"] is None  # local chain

        lines = await log.verify(3)
        assert lines[-1] == "verified: entry 3"
        assert any(line.startswith("its prev_hash is the chain hash of entry") for line in lines)
        assert (await log.verify(order_ids[1]))[-1] == f"verified: entry {order_ids[1]}"

        more = await log.decisions(6)
        assert "not anchored yet" in await log.verify_fails(more[-1])
        second = await log.anchor()
        assert second is not None and second.tree_size == 13
        lines = await log.verify(more[-1])
        assert "2 anchors, each consistent with the one before" in lines
        assert (await log.verify(1))[-1] == "verified: entry 1"
        assert (await log.get("/verify/1"))["inclusion"]["tree_size"] == 13  # the latest anchor holding it

        # The contract's on-chain check agrees with Python on every proof the log serves, and on
        # mutated ones (flipped bit, wrong index, wrong size, truncated, extended).
        fn = system.anchor.functions
        for audit_id in range(1, 14):
            p = await log.get(f"/api/audit/proof/{audit_id}?tree_size=13")
            leaf, proof, i = bytes.fromhex(p["leaf_hash"][2:]), [bytes.fromhex(x[2:]) for x in p["proof"]], audit_id - 1
            assert merkle.verify_inclusion(leaf, i, 13, proof, second.root)
            assert fn.verifyInclusion(i, 13, leaf, proof).call() is True
            bad_cases: list[tuple[int, int, bytes, list[bytes]]] = [
                (i, 13, flip(leaf), proof),
                ((i + 1) % 13, 13, leaf, proof),
                (i, 7, leaf, proof),
                (i, 13, leaf, proof[:-1]),
                (i, 13, leaf, [*proof, proof[0]]),
                (i, 13, leaf, [flip(proof[0], 7), *proof[1:]]),
            ]
            for bi, bn, bleaf, bproof in bad_cases:
                root = first.root if bn == 7 else second.root
                assert not merkle.verify_inclusion(bleaf, bi, bn, bproof, root)
                assert fn.verifyInclusion(bi, bn, bleaf, bproof).call() is False
        c = await log.get("/api/audit/consistency?first=7&second=13")
        nodes = [bytes.fromhex(x[2:]) for x in c["proof"]]
        assert merkle.verify_consistency(7, 13, first.root, second.root, nodes)
        assert not merkle.verify_consistency(7, 13, first.root, second.root, [flip(nodes[0]), *nodes[1:]])

    run(tmp_path, system, anvil, body)


# ---- tampering -----------------------------------------------------------------------------------------


def test_the_anchorer_shares_the_services_operator_and_its_nonces(tmp_path: Path, system: System) -> None:
    """In `make run` the anchor goes out through the service's one Operator: sent while other
    operator transactions are in flight, every transaction gets its own nonce and all are mined."""
    path = tmp_path / "shared.db"
    db = connect(path, durable=True)
    with transaction(db):
        for i in range(3):
            audit.append(
                db,
                stream=audit.order_stream("ord_x"),
                kind=audit.ORDER_TRANSITION,
                payload={"n": i},
                chain=lambda _seq, prev, body: audit.order_chain_hash(prev, body),
                now=1.0,
            )
    dep = system.deployment
    operator = Operator(system.w3, system.anchorer, dep.contracts, dep.usdc)
    spender = system.users[0].address

    async def main() -> tuple[Anchored | None, list[dict[str, Any]]]:
        anchored, *receipts = await asyncio.gather(
            anchor_once(operator, path), *(operator.transact("USDC", "approve", spender, i + 1) for i in range(6))
        )
        return anchored, receipts

    anchored, receipts = asyncio.run(main())
    assert anchored is not None and anchored.tree_size == 3
    assert bytes(system.anchor.functions.rootAt(3).call()) == anchored.root
    assert operator.sent == 7  # the anchor was one of the Operator's own transactions
    hashes = [anchored.tx_hash, *(tx_hash_of(r) for r in receipts)]
    nonces = sorted(system.w3.eth.get_transaction(h)["nonce"] for h in hashes)
    assert nonces == list(range(nonces[0], nonces[0] + 7))  # one sequence, no gap, no reuse
    assert system.usdc.functions.allowance(system.anchorer.address, spender).call() in range(1, 7)
    db.close()


def test_tampered_rows_make_the_verifier_fail(tmp_path: Path, system: System, anvil: Anvil) -> None:
    async def body(log: Log) -> None:
        ids = await log.decisions(6)
        assert await log.anchor() is not None
        assert (await log.verify(2))[-1] == "verified: entry 2"
        original = audit_store.get(log.db, 2)
        assert original is not None

        # 1. The stored payload is edited: the recomputed chain hash no longer matches (the real CLI).
        edited = original.payload.replace('"model_version":"1"', '"model_version":"9"')
        assert edited != original.payload
        log.db.execute("UPDATE audit_log SET payload = ? WHERE id = 2", (edited,))
        argv = ["2", "--api", log.base, "--rpc", log.rpc_url, "--contract", system.anchor.address]
        proc = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "scripts.verify", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.returncode == 1, proc.stderr
        assert "chain hash mismatch" in proc.stderr

        # 2. ... with its chain hash recomputed too: the leaf changes, the anchored root does not fit.
        agent = original.stream.removeprefix("agent:")
        forged = audit.decision_chain_hash(agent, 2, original.prev_hash, audit.sha256_hex(edited.encode()))
        log.db.execute("UPDATE audit_log SET chain_hash = ? WHERE id = 2", (forged,))
        assert "does not lead to the root anchored" in await log.verify_fails(2)

        # 3. ... and the Merkle tree rebuilt over the forged leaf: the log's root at the anchored size
        # now differs from the chain's, so the anchorer refuses to anchor over it, and the verifier
        # still fails for the forged entry and for untouched ones (their proofs cross the forged leaf).
        rebuild_tree(log.db)
        await log.decisions(1)
        with pytest.raises(AnchorError, match="refusing to anchor"):
            await log.anchor()
        assert "does not lead to the root anchored" in await log.verify_fails(2)
        assert "does not lead to the root anchored" in await log.verify_fails(ids[-1])

    run(tmp_path, system, anvil, body)


def test_inconsistent_anchors_make_the_verifier_fail(tmp_path: Path, system: System, anvil: Anvil) -> None:
    async def body(log: Log) -> None:
        await log.decisions(4)
        # a checkpoint of size 4 with a root that is not this log's (anchored behind the anchorer's back)
        system.tx(system.anchorer, system.anchor.functions.anchor(4, b"\x11" * 32))
        await log.decisions(4)
        # the anchorer sees the log disagree with the chain and refuses
        with pytest.raises(AnchorError):
            await log.anchor()
        conn = connect(log.path)
        try:
            size, root = audit_store.size(conn), audit_store.root(conn, 8)
        finally:
            conn.close()
        system.tx(system.anchorer, system.anchor.functions.anchor(size, root))
        await index_to_head(log.path, log.rpc_url, system)
        # entry 6's inclusion at size 8 holds, but anchors 0 -> 1 are not consistent
        reason = await log.verify_fails(6)
        assert "are not consistent" in reason and "anchors 0 (size 4) and 1 (size 8)" in reason
        assert "are not consistent" in await log.verify_fails(2)
        assert verify_main(["0", "--api", log.base, "--rpc", log.rpc_url, "--contract", system.anchor.address]) == 1

    run(tmp_path, system, anvil, body)


def test_verifier_never_takes_the_contract_from_the_api(
    tmp_path: Path, system: System, anvil: Anvil, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --contract and without deployments/<chainId>.json, the verifier cannot run (exit 2):
    the address the API names could be a contract of the API's own."""
    monkeypatch.setenv("AGENTLEDGER_DEPLOYMENTS_DIR", str(tmp_path / "no-deployments"))

    async def body(log: Log) -> None:
        await log.decisions(1)
        assert await asyncio.to_thread(verify_main, ["1", "--api", log.base, "--rpc", log.rpc_url]) == 2
        assert "pass --contract" in capsys.readouterr().err

    run(tmp_path, system, anvil, body)


def test_verifier_reads_the_deployment_where_make_run_wrote_it(
    tmp_path: Path, system: System, anvil: Anvil, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --contract, the AuditAnchor address comes from deployments/<chainId>.json in the
    configured deployments directory (AGENTLEDGER_DEPLOYMENTS_DIR), the one `make run` wrote."""
    deployments.save(system.deployment, tmp_path / "deployments")
    monkeypatch.setenv("AGENTLEDGER_DEPLOYMENTS_DIR", str(tmp_path / "deployments"))

    async def body(log: Log) -> None:
        await log.decisions(1)
        assert await log.anchor() is not None
        assert await asyncio.to_thread(verify_main, ["1", "--api", log.base, "--rpc", log.rpc_url]) == 0
        assert f"from {tmp_path / 'deployments'}" in capsys.readouterr().out

    run(tmp_path, system, anvil, body)


# ---- the command line and the schedule ----------------------------------------------------------------


def test_anchor_command_once(
    tmp_path: Path, system: System, anvil: Anvil, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def body(log: Log) -> None:
        await log.decisions(3)

    run(tmp_path, system, anvil, body)
    deployments.save(system.deployment, tmp_path / "deployments")
    monkeypatch.setenv("AGENTLEDGER_DEPLOYMENTS_DIR", str(tmp_path / "deployments"))
    monkeypatch.setenv("AGENTLEDGER_OPERATOR_KEY", "0x" + bytes(system.anchorer.key).hex())
    argv = ["--once", "--rpc", anvil.rpc_url, "--db", str(tmp_path / "log.db")]
    assert anchor_cli.main(argv) == 0
    assert "anchored tree size 3" in capsys.readouterr().out
    assert anchor_cli.main(argv) == 0
    assert "nothing new to anchor" in capsys.readouterr().out
    assert system.anchor.functions.latestTreeSize().call() == 3


def test_operator_key_rules() -> None:
    settings = Settings.load({})
    assert operator_account(settings, 31337).address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    with pytest.raises(AnchorError, match="AGENTLEDGER_OPERATOR_KEY"):
        operator_account(settings, 8453)
    key = "0x" + "11" * 32
    assert (
        operator_account(Settings.load({"AGENTLEDGER_OPERATOR_KEY": key}), 8453).key.hex().removeprefix("0x") == key[2:]
    )


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_next_run() -> None:
    assert next_daily(utc("2027-01-15T23:59:00"), "00:00") == utc("2027-01-16T00:00:00")
    assert next_daily(utc("2027-01-16T00:00:00"), "00:00") == utc("2027-01-17T00:00:00")
    assert next_daily(utc("2027-01-16T01:00:00"), "03:30") == utc("2027-01-16T03:30:00")
    assert next_daily(utc("2027-12-31T04:00:00"), "03:30") == utc("2028-01-01T03:30:00")
    for bad in ("24:00", "12:60", "noon"):
        with pytest.raises(ValueError):
            next_daily(0, bad)


def test_nightly_schedule_with_an_injected_clock() -> None:
    now = [utc("2027-01-15T22:00:00")]
    calls: list[float] = []
    stop = asyncio.Event()

    async def sleep(seconds: float) -> None:
        now[0] += seconds
        await asyncio.sleep(0)

    async def anchor() -> Anchored | None:
        calls.append(now[0])
        if len(calls) == 2:
            raise RuntimeError("node down")  # logged; the schedule goes on
        if len(calls) == 3:
            stop.set()
        return None

    async def main() -> JobRunner:
        runner = JobRunner([Job("anchor", DailyAt("00:00"), anchor)], clock=lambda: now[0], sleep=sleep, max_wait=3600)
        await runner.start()
        await stop.wait()
        await runner.stop()
        return runner

    runner = asyncio.run(main())
    assert calls == [utc("2027-01-16T00:00:00"), utc("2027-01-17T00:00:00"), utc("2027-01-18T00:00:00")]
    status = runner.status()["anchor"]
    assert (status["runs"], status["failures"]) == (3, 1) and status["lastError"] is None


def test_verifier_rejects_forged_entries_offline() -> None:
    """check_entry on entries forged in ways the API could try (no network needed)."""
    from scripts.verify import check_entry

    agent = "0f8fad5b-d9cb-469f-a165-70867728950e"
    payload = json.dumps({"agent_id": agent, "x": 1}, separators=(",", ":"))
    good = {
        "audit_id": 5,
        "stream": f"agent:{agent}",
        "seq": 1,
        "prev_hash": "genesis",
        "payload_canonical": payload,
        "chain_hash": audit.decision_chain_hash(agent, 1, "genesis", audit.sha256_hex(payload.encode())),
    }
    assert check_entry(5, good) == (good["stream"], good["chain_hash"])
    forged: list[tuple[dict[str, Any], str]] = [
        ({"audit_id": 6}, "answered entry"),
        ({"payload_canonical": json.dumps({"x": 1, "agent_id": agent})}, "canonical"),
        ({"seq": 2}, "does not fit seq"),
        ({"stream": "agent:someone-else"}, "agent_id does not match"),
        ({"chain_hash": "0" * 64}, "chain hash mismatch"),
        ({"stream": "misc:1"}, "unknown stream"),
    ]
    for change, reason in forged:
        with pytest.raises(VerifyFailed, match=reason):
            check_entry(5, {**good, **change})


def test_explorer_links_only_on_base() -> None:
    from core.transparency import explorer_tx_url

    tx = "0x" + "12" * 32
    assert explorer_tx_url(8453, tx) == f"https://basescan.org/tx/{tx}"
    assert explorer_tx_url(84532, tx) == f"https://sepolia.basescan.org/tx/{tx}"
    assert explorer_tx_url(31337, tx) is None


def test_rfc_9162_vectors_on_chain_and_in_python(system: System) -> None:
    """The transparency-dev known-answer inclusion vectors (tests/unit/test_merkle.py) checked by the
    contract against anchored known roots, with their mutations, agreeing with Python each time."""
    from tests.unit.test_merkle import INCLUSION_VECTORS, RFC_LEAF_HASHES, RFC_LEAVES, RFC_ROOTS

    fn = system.anchor.functions
    for data, expected in zip(RFC_LEAVES, RFC_LEAF_HASHES, strict=True):
        assert bytes(fn.leafHash(data).call()) == expected == merkle.leaf_hash(data)
    for size in sorted({n for _, n, _ in INCLUSION_VECTORS}):
        system.tx(system.anchorer, fn.anchor(size, RFC_ROOTS[size - 1]))
    for index, size, hexes in INCLUSION_VECTORS:
        leaf, proof, root = RFC_LEAF_HASHES[index], [bytes.fromhex(h) for h in hexes], RFC_ROOTS[size - 1]
        assert merkle.verify_inclusion(leaf, index, size, proof, root)
        assert fn.verifyInclusion(index, size, leaf, proof).call() is True
        mutations: list[tuple[int, int, bytes, list[bytes]]] = [(index, size, flip(leaf), proof)]
        if proof:
            mutations += [
                (index, size, leaf, [*proof[:-1], flip(proof[-1], 3)]),
                (index, size, leaf, proof[:-1]),
                (index ^ 1, size, leaf, proof),
            ]
        mutations.append((index, size, leaf, [*proof, RFC_ROOTS[0]]))
        for bi, bn, bleaf, bproof in mutations:
            py = bi < bn and merkle.verify_inclusion(bleaf, bi, bn, bproof, root)
            assert py is False and fn.verifyInclusion(bi, bn, bleaf, bproof).call() is False, (bi, bn)


def test_verifier_refuses_a_predecessor_the_api_made_up(
    tmp_path: Path, system: System, anvil: Anvil, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An API that serves a consistent entry but points at an unrelated 'previous' entry is caught."""
    from scripts.verify import Verifier

    async def body(log: Log) -> None:
        await log.decisions(3)
        await log.anchor()
        real_get = Verifier._get

        def lying_get(self: Verifier, path: str, params: dict[str, int] | None = None) -> dict[str, Any]:
            got = real_get(self, path, params)
            if path == "/verify/3":
                got = {**got, "previous": {"audit_id": 1, "chain_hash": got["prev_hash"]}}
            return got

        monkeypatch.setattr(Verifier, "_get", lying_get)
        reason = await log.verify_fails(3)
        assert "is not seq 2 of" in reason

    run(tmp_path, system, anvil, body)
