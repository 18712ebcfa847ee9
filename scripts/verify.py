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
from core.deployments import DEFAULT_DIR, path_for

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
            local = path_for(chain_id, DEFAULT_DIR)
            if local.exists():
                address = json.loads(local.read_text())["contracts"]["AuditAnchor"]
                self.out(f"AuditAnchor {address} from {local}")
            else:
                address = self._get("/api/audit/checkpoints").get("contract")
                if not isinstance(address, str):
                    raise CannotVerify("no AuditAnchor address: pass --contract")
                self.out(f"warning: AuditAnchor address {address} taken from the API; pin it with --contract")
        if not self.w3.eth.get_code(Web3.to_checksum_address(address)):
            raise VerifyFailed(f"no contract at {address} on chain {chain_id}")
        return self.w3.eth.contract(address=Web3.to_checksum_address(address), abi=ANCHOR_ABI)

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
        leaf = merkle.leaf_hash(audit.leaf_data(audit_id, stream, chain_hash))
        index = audit_id - 1
        anchor = self._anchor()
        cps = self.checkpoints(anchor)
        if not cps:
            raise VerifyFailed("nothing is anchored on-chain yet")
        latest = cps[-1]
        if latest.tree_size <= index:
            raise VerifyFailed(f"entry {audit_id} is not anchored yet (latest anchored tree size {latest.tree_size})")
        got = self._get(f"/api/audit/proof/{audit_id}", {"tree_size": latest.tree_size})
        proof = [_bytes32(p, "proof node") for p in got.get("proof", [])]
        py_ok = merkle.verify_inclusion(leaf, index, latest.tree_size, proof, latest.root)
        chain_ok = bool(anchor.functions.verifyInclusion(index, latest.tree_size, leaf, proof).call())
        if py_ok != chain_ok:
            raise VerifyFailed(f"the contract ({chain_ok}) and this verifier ({py_ok}) disagree on the inclusion proof")
        if not py_ok:
            raise VerifyFailed(
                f"inclusion proof of leaf {index} does not lead to the root anchored at tree size "
                f"{latest.tree_size} (0x{latest.root.hex()})"
            )
        self.out(f"leaf {index} is in the tree of size {latest.tree_size} anchored as checkpoint {latest.index}")
        for a, b in itertools.pairwise(cps):
            got = self._get("/api/audit/consistency", {"first": a.tree_size, "second": b.tree_size})
            nodes = [_bytes32(p, "consistency node") for p in got.get("proof", [])]
            if not merkle.verify_consistency(a.tree_size, b.tree_size, a.root, b.root, nodes):
                raise VerifyFailed(
                    f"anchors {a.index} (size {a.tree_size}) and {b.index} (size {b.tree_size}) are not consistent"
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
