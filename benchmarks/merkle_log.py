"""The transparency log at scale: appending leaves, proofs at 2^20 leaves, and anchoring gas.

    python -m benchmarks.merkle_log [--leaves 1048576] [--batch 10000] [--proofs 1000]

Appends --leaves decision entries through core.store.audit.append (the path the API takes: the
stream's chain hash, the audit_log row and the Merkle subtrees it completes) into a fresh SQLite
file (synchronous=FULL), --batch appends per transaction, and reports the time to the first
1,000,000 and to all of them. Then, at the full size: the time to produce one inclusion proof and
one consistency proof (median and p99 of --proofs random ones, each checked), and the root. Finally,
on a fresh anvil: gas of AuditAnchor.anchor(size, root) of this log, and eth_estimateGas of
verifyInclusion with a real proof from it (2^20 leaves by default: a 20-node proof). Goal: one
inclusion proof in under 5 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import merkle
from benchmarks._kit import percentile
from core import audit
from core.anvil import Anvil
from core.chain import connect, deploy, send
from core.store import audit as audit_store
from core.store import connect as connect_db
from core.store import transaction
from scripts.compile import compile_contracts
from scripts.devchain import dev_account

ETH = 10**18


def _rule(agent: str) -> audit.ChainRule:
    def rule(seq: int, prev: str, body: bytes) -> str:
        return audit.decision_chain_hash(agent, seq, prev, audit.sha256_hex(body))

    return rule


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=1 << 20)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--proofs", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(7)
    agents = [f"00000000-0000-4000-8000-{i:012d}" for i in range(100)]
    rules = [_rule(a) for a in agents]
    with tempfile.TemporaryDirectory() as tmp:
        db = connect_db(Path(tmp) / "merkle.db", durable=True)
        start = time.perf_counter()
        at_million: float | None = None
        n = 0
        while n < args.leaves:
            with transaction(db):
                for _ in range(min(args.batch, args.leaves - n)):
                    k = n % len(agents)
                    payload = {"agent_id": agents[k], "content_hash": f"{n:064x}", "event_type": "routine"}
                    audit.append(
                        db,
                        stream=audit.agent_stream(agents[k]),
                        kind=audit.DECISION,
                        payload=payload,
                        chain=rules[k],
                        now=0.0,
                    )
                    n += 1
            if at_million is None and n >= 1_000_000:
                at_million = time.perf_counter() - start
        total = time.perf_counter() - start
        if at_million is not None:
            print(f"append: 1,000,000 leaves in {at_million:.1f} s ({1_000_000 / at_million:,.0f} appends/s)")
        print(f"append: {n:,} leaves in {total:.1f} s ({n / total:,.0f} appends/s, {args.batch:,} per transaction)")

        t = time.perf_counter()
        root = audit_store.root(db, n)
        print(f"root at {n:,}: 0x{root.hex()} in {(time.perf_counter() - t) * 1000:.2f} ms")
        inc: list[float] = []
        proof: list[bytes] = []
        index = 0
        for _ in range(args.proofs):
            index = rng.randrange(n)
            t = time.perf_counter()
            proof = audit_store.inclusion_proof(db, index, n)
            inc.append((time.perf_counter() - t) * 1000)
            entry = audit_store.get(db, index + 1)
            assert entry is not None and merkle.verify_inclusion(entry.leaf_hash, index, n, proof, root)
        print(
            f"inclusion proof at {n:,} leaves: median {statistics.median(inc):.3f} ms, "
            f"p99 {percentile(inc, 0.99):.3f} ms "
            f"({len(proof)} nodes; goal < 5 ms)"
        )
        cons: list[float] = []
        for _ in range(min(args.proofs, 200)):
            first = rng.randrange(1, n)
            t = time.perf_counter()
            nodes = audit_store.consistency_proof(db, first, n)
            cons.append((time.perf_counter() - t) * 1000)
            assert merkle.verify_consistency(first, n, audit_store.root(db, first), root, nodes)
        print(
            f"consistency proof to {n:,}: median {statistics.median(cons):.3f} ms, p99 {percentile(cons, 0.99):.3f} ms"
        )
        leaf = audit_store.get(db, index + 1)
        assert leaf is not None
        db.close()

    compile_contracts()
    with Anvil() as node:
        w3 = connect(node.rpc_url)
        admin = dev_account(0)
        w3.provider.make_request("anvil_setBalance", [admin.address, hex(10 * ETH)])  # type: ignore[arg-type]
        contract, _ = deploy(w3, admin, "AuditAnchor", admin.address)
        send(w3, admin, contract.functions.grantRole(contract.functions.ANCHORER_ROLE().call(), admin.address))
        receipt = send(w3, admin, contract.functions.anchor(n, root))
        view = contract.functions.verifyInclusion(index, n, leaf.leaf_hash, proof)
        assert view.call() is True
        print(f"gas: AuditAnchor.anchor (first checkpoint) {receipt['gasUsed']:,}")
        again = send(w3, admin, contract.functions.anchor(n + 1, root))
        print(f"gas: AuditAnchor.anchor (a later checkpoint) {again['gasUsed']:,}")
        print(
            f"gas: verifyInclusion at {n:,} leaves ({len(proof)}-node proof, eth_estimateGas) {view.estimate_gas():,}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
