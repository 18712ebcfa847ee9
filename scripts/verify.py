"""`verify <audit_id> --api URL --rpc URL`: check one audit entry without trusting the API.

The API only supplies data; every conclusion is recomputed here or read from the chain:
1. the entry's payload must be RFC 8785 canonical JSON; its chain hash is recomputed from the
   entry's fields with the stream's rule (decision or order, see /methodology), a decision's
   payload must name the stream's agent, and a first entry must have prev_hash "genesis";
2. the Merkle leaf hash is recomputed from the leaf data "<audit_id>:<stream>:<chain_hash>";
3. the roots come from the AuditAnchor contract (`--contract`, else deployments/<chainId>.json,
   else the address the API names, with a warning): the entry must lie in the latest anchored
   tree, and the inclusion proof is checked in Python AND by the contract's verifyInclusion;
4. every pair of consecutive anchors is checked with a consistency proof (the log only grew).
Exit status: 0 verified; 1 a check failed (the reason is printed); 2 could not run (network, usage).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from web3 import Web3
from web3.exceptions import Web3Exception

import merkle
from core import audit
from core.config import Settings
from core.deployments import path_for

#: The part of AuditAnchor's ABI the verifier calls (no build artifacts needed).
ANCHOR_ABI: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "checkpointCount",
        "stateMutability": "view",
        "inputs": [],
        "outputs": [{"name": "", "type": "uint256"}],
    },
    {
        "type": "function",
        "name": "checkpoint",
        "stateMutability": "view",
        "inputs": [{"name": "index", "type": "uint256"}],
        "outputs": [
            {
                "name": "",
                "type": "tuple",
                "components": [
                    {"name": "treeSize", "type": "uint64"},
                    {"name": "timestamp", "type": "uint64"},
                    {"name": "root", "type": "bytes32"},
                ],
            }
        ],
    },
    {
        "type": "function",
        "name": "verifyInclusion",
        "stateMutability": "view",
        "inputs": [
            {"name": "leafIndex", "type": "uint256"},
            {"name": "treeSize", "type": "uint256"},
            {"name": "leaf", "type": "bytes32"},
            {"name": "proof", "type": "bytes32[]"},
        ],
        "outputs": [{"name": "", "type": "bool"}],
    },
]

_HEX64 = re.compile(r"[0-9a-f]{64}")


#: What a not-yet-anchored entry waits for (the service's anchor job; AGENTLEDGER_ANCHOR_INTERVAL).
NEXT_ANCHOR = (
    "the service anchors the log every minute on make run's local chain and daily (AGENTLEDGER_ANCHOR_TIME_UTC)"
    " elsewhere; `python -m scripts.anchor --once` anchors it now"
)


class VerifyFailed(Exception):
    """A check failed: the entry, the log or the anchors are not what they claim."""


class CannotVerify(Exception):
    """The verifier could not get the data it needs (network, missing contract)."""


@dataclass(frozen=True)
class Checkpoint:
    index: int
    tree_size: int
    root: bytes


def _bytes32(text: Any, what: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", text):
        raise VerifyFailed(f"{what} is not a 32-byte hex value: {text!r}")
    return bytes.fromhex(text.removeprefix("0x"))


def check_entry(audit_id: int, entry: dict[str, Any]) -> tuple[str, str]:
    """Recompute the entry's chain hash from its fields; return (stream, chain_hash)."""
    if entry.get("audit_id") != audit_id:
        raise VerifyFailed(f"the API answered entry {entry.get('audit_id')!r} for {audit_id}")
    stream, seq, prev, stored = entry.get("stream"), entry.get("seq"), entry.get("prev_hash"), entry.get("chain_hash")
    payload = entry.get("payload_canonical")
    if not (isinstance(stream, str) and isinstance(seq, int) and isinstance(prev, str) and isinstance(payload, str)):
        raise VerifyFailed("the entry lacks stream, seq, prev_hash or payload")
    if not isinstance(stored, str) or not _HEX64.fullmatch(stored):
        raise VerifyFailed(f"chain_hash {stored!r} is not 64 lowercase hex")
    try:
        parsed = json.loads(payload)
        canonical = audit.canonical(parsed)
    except (ValueError, TypeError) as exc:
        raise VerifyFailed(f"the payload is not valid canonical JSON: {exc}") from exc
    if canonical != payload.encode():
        raise VerifyFailed("the payload is not in RFC 8785 canonical form")
    if seq < 1:
        raise VerifyFailed(f"seq {seq} is not positive")
    if (seq == 1) != (prev == audit.GENESIS):
        raise VerifyFailed(f"prev_hash {prev!r} does not fit seq {seq} (only seq 1 has prev_hash 'genesis')")
    if prev != audit.GENESIS and not _HEX64.fullmatch(prev):
        raise VerifyFailed(f"prev_hash {prev!r} is not 64 lowercase hex")
    if stream.startswith("agent:"):
        agent_id = stream.removeprefix("agent:")
        if not isinstance(parsed, dict) or parsed.get("agent_id") != agent_id:
            raise VerifyFailed(f"the payload's agent_id does not match the stream {stream}")
        recomputed = audit.decision_chain_hash(agent_id, seq, prev, audit.sha256_hex(canonical))
    elif stream.startswith("order:"):
        recomputed = audit.order_chain_hash(prev, canonical)
    else:
        raise VerifyFailed(f"unknown stream kind {stream!r}")
    if recomputed != stored:
        raise VerifyFailed(f"chain hash mismatch: recomputed {recomputed}, the log says {stored}")
    return stream, stored


class Verifier:
    def __init__(
        self,
        api: str,
        rpc: str,
        contract: str | None = None,
        *,
        out: Callable[[str], None] = print,
        timeout: float = 30,
    ) -> None:
        self.api = api.rstrip("/")
        self.http = httpx.Client(timeout=timeout, headers={"Accept": "application/json"})
        self.w3 = Web3(Web3.HTTPProvider(rpc, request_kwargs={"timeout": timeout}))
        self.contract_address = contract
        self.out = out

    def close(self) -> None:
        self.http.close()

    def _get(self, path: str, params: dict[str, int] | None = None) -> dict[str, Any]:
        try:
            resp = self.http.get(self.api + path, params=params)
        except httpx.HTTPError as exc:
            raise CannotVerify(f"GET {path}: {exc}") from exc
        if resp.status_code == 404:
            raise VerifyFailed(f"GET {path}: 404 {resp.text[:200]}")
        if resp.status_code != 200:
            raise CannotVerify(f"GET {path}: HTTP {resp.status_code} {resp.text[:200]}")
        try:
            data = resp.json()
        except ValueError as exc:
            raise CannotVerify(f"GET {path}: not JSON") from exc
        if not isinstance(data, dict):
            raise CannotVerify(f"GET {path}: not a JSON object")
        return data

    def _anchor(self) -> Any:
        try:
            chain_id = self.w3.eth.chain_id
        except Exception as exc:
            raise CannotVerify(f"the JSON-RPC node does not answer: {exc}") from exc
        address = self.contract_address
        if address is None:
            local = path_for(chain_id, Settings.load().deployments_dir)  # where make run wrote it
            if local.exists():
                address = json.loads(local.read_text())["contracts"]["AuditAnchor"]
                self.out(f"AuditAnchor {address} from {local}")
            else:
                # Never the API's word: a dishonest API could name a contract of its own.
                raise CannotVerify(
                    f"no AuditAnchor address for chain {chain_id}: pass --contract (from the deployment or a "
                    "block explorer) or keep deployments/<chainId>.json beside the verifier"
                )
        if not self.w3.eth.get_code(Web3.to_checksum_address(address)):
            raise VerifyFailed(f"no contract at {address} on chain {chain_id}")
        return self.w3.eth.contract(address=Web3.to_checksum_address(address), abi=ANCHOR_ABI)

    def _included(self, anchor: Any, cp: Checkpoint, audit_id: int, stream: str, chain_hash: str) -> None:
        """Entry `audit_id`'s leaf is in the anchored tree `cp`, by this verifier and by the contract."""
        index = audit_id - 1
        if cp.tree_size <= index:
            raise VerifyFailed(
                f"entry {audit_id} is not anchored yet (latest anchored tree size {cp.tree_size}); {NEXT_ANCHOR}"
            )
        leaf = merkle.leaf_hash(audit.leaf_data(audit_id, stream, chain_hash))
        got = self._get(f"/api/audit/proof/{audit_id}", {"tree_size": cp.tree_size})
        proof = [_bytes32(p, "proof node") for p in got.get("proof", [])]
        reason = merkle.inclusion_failure(leaf, index, cp.tree_size, proof, cp.root)
        py_ok = reason is None
        chain_ok = bool(anchor.functions.verifyInclusion(index, cp.tree_size, leaf, proof).call())
        if py_ok != chain_ok:
            raise VerifyFailed(f"the contract ({chain_ok}) and this verifier ({py_ok}) disagree on the inclusion proof")
        if not py_ok:
            raise VerifyFailed(
                f"inclusion proof of leaf {index} does not lead to the root anchored at tree size "
                f"{cp.tree_size} (0x{cp.root.hex()}): {reason}"
            )

    def _predecessor(self, audit_id: int, entry: dict[str, Any], stream: str) -> int:
        """The stream's previous entry: its chain hash recomputed must be this entry's prev_hash, and
        its leaf must be anchored too (so the link does not rest on the API's word)."""
        prev = entry.get("previous")
        prev_id = prev.get("audit_id") if isinstance(prev, dict) else None
        if not isinstance(prev_id, int) or not 1 <= prev_id < audit_id:
            raise VerifyFailed(f"entry {audit_id} (seq {entry['seq']}) names no earlier entry as its predecessor")
        before = self._get(f"/verify/{prev_id}")
        prev_stream, prev_chain = check_entry(prev_id, before)
        if prev_stream != stream or before.get("seq") != entry["seq"] - 1:
            raise VerifyFailed(f"entry {prev_id} is not seq {entry['seq'] - 1} of {stream}")
        if prev_chain != entry["prev_hash"]:
            raise VerifyFailed(f"prev_hash {entry['prev_hash']} is not entry {prev_id}'s chain hash {prev_chain}")
        anchor = self._anchor()
        self._included(anchor, self.checkpoints(anchor)[-1], prev_id, prev_stream, prev_chain)
        return prev_id

    def checkpoints(self, anchor: Any) -> list[Checkpoint]:
        count = int(anchor.functions.checkpointCount().call())
        out = []
        for i in range(count):
            size, _ts, root = anchor.functions.checkpoint(i).call()
            out.append(Checkpoint(i, int(size), bytes(root)))
        return out

    def verify(self, audit_id: int) -> None:
        entry = self._get(f"/verify/{audit_id}")
        stream, chain_hash = check_entry(audit_id, entry)
        self.out(f"entry {audit_id}: chain hash {chain_hash} recomputed from its fields")
        anchor = self._anchor()
        cps = self.checkpoints(anchor)
        if not cps:
            raise VerifyFailed(f"nothing is anchored on-chain yet; {NEXT_ANCHOR}")
        latest = cps[-1]
        self._included(anchor, latest, audit_id, stream, chain_hash)
        self.out(f"leaf {audit_id - 1} is in the tree of size {latest.tree_size} anchored as checkpoint {latest.index}")
        if entry["seq"] > 1:
            prev_id = self._predecessor(audit_id, entry, stream)
            self.out(f"its prev_hash is the chain hash of entry {prev_id}, recomputed and anchored too")
        for a, b in itertools.pairwise(cps):
            got = self._get("/api/audit/consistency", {"first": a.tree_size, "second": b.tree_size})
            nodes = [_bytes32(p, "consistency node") for p in got.get("proof", [])]
            reason = merkle.consistency_failure(a.tree_size, b.tree_size, a.root, b.root, nodes)
            if reason is not None:
                raise VerifyFailed(
                    f"anchors {a.index} (size {a.tree_size}) and {b.index} (size {b.tree_size}) are not consistent:"
                    f" {reason}"
                )
        if len(cps) > 1:
            self.out(f"{len(cps)} anchors, each consistent with the one before")
        self.out(f"verified: entry {audit_id}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="verify", description="Verify an audit entry against the on-chain anchors.")
    parser.add_argument("audit_id", type=int)
    parser.add_argument("--api", required=True, help="base URL of the service, e.g. http://127.0.0.1:8080")
    parser.add_argument("--rpc", required=True, help="JSON-RPC URL of the chain the log is anchored on")
    parser.add_argument("--contract", help="AuditAnchor address (default: deployments/<chainId>.json)")
    args = parser.parse_args(argv)
    if args.audit_id < 1:
        print("verify: FAILED: audit ids start at 1", file=sys.stderr)
        return 1
    verifier = Verifier(args.api, args.rpc, args.contract)
    try:
        verifier.verify(args.audit_id)
    except VerifyFailed as exc:
        print(f"verify: FAILED: {exc}", file=sys.stderr)
        return 1
    except CannotVerify as exc:
        print(f"verify: cannot verify: {exc}", file=sys.stderr)
        return 2
    except (OSError, Web3Exception) as exc:  # the node failed mid-way (connection, RPC error)
        print(f"verify: cannot verify: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        verifier.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
