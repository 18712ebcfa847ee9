"""AuditAnchor against a real anvil: anchoring checkpoints (roles, strictly increasing sizes,
pause) and on-chain RFC 9162 inclusion proofs, cross-checked against the Python `merkle` library:
for every tree size 1..40 and a 1000-leaf tree, valid proofs verify on-chain and in Python, and
mutated proofs fail in both; gas of a proof check at 2^20 leaves goes to the gas report."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

import pytest
from eth_abi import decode as abi_decode
from eth_abi import encode as abi_encode
from eth_utils import keccak
from web3.contract.contract import ContractFunction
from web3.exceptions import ContractLogicError

import merkle
from core.chain import deploy, load_artifact
from tests.integration.chainkit import System, assert_reverts

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
ZERO32 = b"\x00" * 32
MAX_U64 = 2**64 - 1
MAX_U256 = 2**256 - 1


def entry(i: int) -> bytes:
    return f'{{"seq":{i},"kind":"payout","amount":"{i * 1000}"}}'.encode()


LEAVES = [merkle.leaf_hash(entry(i)) for i in range(1100)]


@cache
def root(n: int) -> bytes:
    assert n <= len(LEAVES)
    return merkle.root_from_leaf_hashes(LEAVES[:n])


def batch_call(system: System, fns: Sequence[ContractFunction], chunk: int = 250) -> list[Any]:
    """A few view calls through web3 in JSON-RPC batches."""
    out: list[Any] = []
    for k in range(0, len(fns), chunk):
        with system.w3.batch_requests() as batch:
            for fn in fns[k : k + chunk]:
                batch.add(fn)
            out.extend(batch.execute())
    return out


Case = tuple[int, int, bytes, Sequence[bytes]]  # (leafIndex, treeSize, leaf, proof)
_PROOF_ARGS = ["uint256", "uint256", "bytes32", "bytes32[]"]


def _raw_eth_calls(system: System, signature: str, cases: Sequence[Case], out_types: list[str]) -> list[Any]:
    """eth_call `signature` on AuditAnchor for each case in raw JSON-RPC batches, encoding with
    eth_abi directly: web3's per-call ABI machinery would make thousands of checks too slow."""
    selector = "0x" + load_artifact("AuditAnchor")["methodIdentifiers"][signature]
    to = system.anchor.address
    requests = [
        (
            "eth_call",
            [{"to": to, "data": selector + abi_encode(_PROOF_ARGS, [i, n, leaf, list(proof)]).hex()}, "latest"],
        )
        for i, n, leaf, proof in cases
    ]
    out: list[Any] = []
    for k in range(0, len(requests), 500):
        responses = system.w3.provider.make_batch_request(requests[k : k + 500])  # type: ignore[attr-defined]
        assert isinstance(responses, list), responses
        for r in responses:
            assert "error" not in r, r  # a view that must never revert
            out.append(abi_decode(out_types, bytes.fromhex(r["result"][2:])))
    assert len(out) == len(cases)
    return out


def verify_many(system: System, cases: Sequence[Case]) -> list[bool]:
    sig = "verifyInclusion(uint256,uint256,bytes32,bytes32[])"
    return [r[0] for r in _raw_eth_calls(system, sig, cases, ["bool"])]


def roots_many(system: System, cases: Sequence[Case]) -> list[tuple[bool, bytes]]:
    sig = "rootFromInclusionProof(uint256,uint256,bytes32,bytes32[])"
    return [(r[0], r[1]) for r in _raw_eth_calls(system, sig, cases, ["bool", "bytes32"])]


def py_root(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> tuple[bool, bytes]:
    """What rootFromInclusionProof must return, per the Python library."""
    try:
        return True, merkle.root_from_inclusion_proof(leaf, index, size, proof)
    except ValueError:
        return False, ZERO32


@pytest.fixture()
def anchor(system: System) -> Iterator[Any]:
    yield system.anchor


def do_anchor(system: System, size: int, root_: bytes, label: str | None = None) -> Any:
    return system.tx(system.anchorer, system.anchor.functions.anchor(size, root_), label)


# ---- checkpoints ---------------------------------------------------------------------------


def test_roles_and_empty_state(system: System, anchor: Any) -> None:
    a = anchor.functions
    assert a.ANCHORER_ROLE().call() == keccak(text="ANCHORER_ROLE")
    assert a.PAUSER_ROLE().call() == keccak(text="PAUSER_ROLE")
    assert a.hasRole(a.ANCHORER_ROLE().call(), system.anchorer.address).call()
    assert not a.hasRole(a.ANCHORER_ROLE().call(), system.deployer.address).call()
    assert a.hasRole(a.PAUSER_ROLE().call(), system.deployer.address).call()
    assert a.hasRole(a.DEFAULT_ADMIN_ROLE().call(), system.deployer.address).call()
    assert a.checkpointCount().call() == 0
    assert a.latestTreeSize().call() == 0
    assert a.rootAt(0).call() == ZERO32
    assert a.rootAt(1).call() == ZERO32
    assert a.paused().call() is False
    assert a.getRoleAdmin(a.ANCHORER_ROLE().call()).call() == a.DEFAULT_ADMIN_ROLE().call()
    assert a.supportsInterface(bytes.fromhex("7965db0b")).call()  # IAccessControl
    assert not a.supportsInterface(bytes.fromhex("ffffffff")).call()
    with pytest.raises(ContractLogicError):  # Panic: array index out of bounds
        a.checkpoint(0).call()


def test_constructor_rejects_zero_admin(system: System) -> None:
    assert_reverts(lambda: deploy(system.w3, system.deployer, "AuditAnchor", ZERO_ADDRESS), "ZeroAddress")
    fresh, _ = deploy(system.w3, system.deployer, "AuditAnchor", system.users[0].address)
    assert fresh.functions.hasRole(b"\x00" * 32, system.users[0].address).call()


def test_anchor_only_by_anchorer_role(system: System, anchor: Any) -> None:
    a = anchor.functions
    role = a.ANCHORER_ROLE().call()
    for who in (system.deployer, system.operator, system.treasury, system.users[0]):
        assert_reverts(lambda who=who: system.tx(who, a.anchor(1, root(1))), "AccessControlUnauthorizedAccount")
    assert a.checkpointCount().call() == 0
    # The admin can grant and revoke the role.
    user = system.users[0]
    system.tx(system.deployer, a.grantRole(role, user.address))
    system.tx(user, a.anchor(1, root(1)), "AuditAnchor.anchor")
    system.tx(system.deployer, a.revokeRole(role, user.address))
    assert_reverts(lambda: system.tx(user, a.anchor(2, root(2))), "AccessControlUnauthorizedAccount")
    assert_reverts(lambda: system.tx(user, a.grantRole(role, user.address)), "AccessControlUnauthorizedAccount")
    assert a.latestTreeSize().call() == 1


def test_anchor_records_checkpoints_with_strictly_increasing_sizes(system: System, anchor: Any) -> None:
    a = anchor.functions
    r3, r10 = root(3), root(10)
    # Size 0 is never larger than the (empty) last size.
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(0, r3)), "SizeNotIncreasing")

    receipt = do_anchor(system, 3, r3, "AuditAnchor.anchor")
    ts = system.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
    (ev,) = system.events(receipt, "AuditAnchor", "Anchored")
    assert dict(ev["args"]) == {"index": 0, "treeSize": 3, "root": r3, "anchorer": system.anchorer.address}
    assert a.checkpointCount().call() == 1
    assert tuple(a.checkpoint(0).call()) == (3, ts, r3)
    assert a.latestTreeSize().call() == 3
    assert a.rootAt(3).call() == r3

    # Equal and smaller sizes are refused; so is a zero root.
    for size in (3, 2, 1, 0):
        assert_reverts(lambda size=size: system.tx(system.anchorer, a.anchor(size, r10)), "SizeNotIncreasing")
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(10, ZERO32)), "ZeroRoot")
    # The size check comes first.
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(3, ZERO32)), "SizeNotIncreasing")
    assert a.checkpointCount().call() == 1

    system.advance(60)
    receipt = do_anchor(system, 10, r10, "AuditAnchor.anchor")
    ts10 = system.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
    (ev,) = system.events(receipt, "AuditAnchor", "Anchored")
    assert (ev["args"]["index"], ev["args"]["treeSize"], ev["args"]["root"]) == (1, 10, r10)
    assert a.checkpointCount().call() == 2
    assert tuple(a.checkpoint(1).call()) == (10, ts10, r10)
    assert tuple(a.checkpoint(0).call()) == (3, ts, r3)  # earlier checkpoints are kept
    assert a.latestTreeSize().call() == 10
    assert (a.rootAt(3).call(), a.rootAt(10).call(), a.rootAt(4).call()) == (r3, r10, ZERO32)
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(10, r10)), "SizeNotIncreasing")
    with pytest.raises(ContractLogicError):
        a.checkpoint(2).call()

    # Sizes need not be contiguous; the uint64 maximum is the last size that can ever be anchored.
    do_anchor(system, MAX_U64, keccak(b"huge"))
    assert a.latestTreeSize().call() == MAX_U64
    assert a.rootAt(MAX_U64).call() == keccak(b"huge")
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(MAX_U64, keccak(b"x"))), "SizeNotIncreasing")


def test_pause_stops_anchoring_but_not_verification(system: System, anchor: Any) -> None:
    a = anchor.functions
    do_anchor(system, 5, root(5))
    assert_reverts(lambda: system.tx(system.anchorer, a.pause()), "AccessControlUnauthorizedAccount")
    assert_reverts(lambda: system.tx(system.users[0], a.pause()), "AccessControlUnauthorizedAccount")
    system.tx(system.deployer, a.pause())
    assert a.paused().call()
    assert_reverts(lambda: system.tx(system.anchorer, a.anchor(6, root(6))), "EnforcedPause")
    assert_reverts(lambda: system.tx(system.deployer, a.pause()), "EnforcedPause")
    # Views keep working while paused.
    proof = merkle.inclusion_proof(LEAVES[:5], 2)
    assert a.verifyInclusion(2, 5, LEAVES[2], proof).call() is True
    assert a.latestTreeSize().call() == 5
    assert_reverts(lambda: system.tx(system.anchorer, a.unpause()), "AccessControlUnauthorizedAccount")
    system.tx(system.deployer, a.unpause())
    assert_reverts(lambda: system.tx(system.deployer, a.unpause()), "ExpectedPause")
    do_anchor(system, 6, root(6))
    assert a.latestTreeSize().call() == 6


# ---- leaf hash -----------------------------------------------------------------------------


def test_leaf_hash_matches_python(system: System, anchor: Any) -> None:
    samples = [b"", b"\x00", b"\x01", bytes(range(32)), bytes(range(256)) * 4, entry(7), "é∑ unicode".encode()]
    got = batch_call(system, [anchor.functions.leafHash(d) for d in samples])
    for data, onchain in zip(samples, got, strict=True):
        assert onchain == merkle.leaf_hash(data)
    # The RFC 9162 empty-leaf vector.
    assert got[0].hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    # The leaf prefix matters: it is not the plain SHA-256 of the data.
    assert got[0] != merkle.EMPTY_ROOT


# ---- inclusion proofs ------------------------------------------------------------------------


def test_every_leaf_of_every_tree_size_1_to_40_and_1000_verifies(system: System, anchor: Any) -> None:
    a = anchor.functions
    sizes = [*range(1, 41), 1000]
    for n in sizes:
        do_anchor(system, n, root(n))
    # Every leaf of the small trees; edges, subtree boundaries and every 7th leaf of the 1000-leaf tree.
    big = sorted({*range(0, 1000, 7), 1, 2, 255, 256, 511, 512, 513, 767, 768, 991, 992, 998, 999})
    cases = [(n, i) for n in sizes[:-1] for i in range(n)] + [(1000, i) for i in big]
    proofs = {(n, i): merkle.inclusion_proof(LEAVES[:n], i) for n, i in cases}
    for (n, i), proof in proofs.items():
        assert merkle.verify_inclusion(LEAVES[i], i, n, proof, root(n))

    calls = [(i, n, LEAVES[i], proofs[n, i]) for n, i in cases]
    assert verify_many(system, calls) == [True] * len(cases)
    for (n, _), got in zip(cases, roots_many(system, calls), strict=True):
        assert got == (True, root(n))
    # Spot-check the raw batch path against web3's own encoding.
    for n, i in ((1, 0), (7, 6), (40, 31)):
        assert a.verifyInclusion(i, n, LEAVES[i], proofs[n, i]).call() is True
        assert tuple(a.rootFromInclusionProof(i, n, LEAVES[i], proofs[n, i]).call()) == (True, root(n))


Mutation = tuple[str, int, int, bytes, list[bytes]]  # (label, index, size, leaf, proof)


def _mutations(n: int, i: int, proof: list[bytes], rng: random.Random) -> list[Mutation]:
    """(label, index, size, leaf, proof) variants of a valid proof that must all fail."""
    leaf = LEAVES[i]
    out: list[Mutation] = []
    for k in range(len(proof)):
        bit = rng.randrange(256)
        flipped = bytearray(proof[k])
        flipped[bit // 8] ^= 1 << (bit % 8)
        out.append((f"flip bit {bit} of element {k}", i, n, leaf, [*proof[:k], bytes(flipped), *proof[k + 1 :]]))
    for j in {i ^ 1, i + 1, i - 1, n - 1 - i, n, n + 5, MAX_U256} - {i}:
        if j >= 0:
            out.append((f"index {j}", j, n, leaf, proof))
    for m in {n - 1, n + 1, 2 * n, n + 100} - {n}:
        out.append((f"size {m}", i, m, leaf, proof))
    if proof:
        out.append(("truncated", i, n, leaf, proof[:-1]))
        out.append(("first element dropped", i, n, leaf, proof[1:]))
        out.append(("reversed", i, n, leaf, proof[::-1]) if len(proof) > 1 else ("dup", i, n, leaf, proof * 2))
    out.append(("extra element", i, n, leaf, [*proof, LEAVES[(i + 1) % len(LEAVES)]]))
    out.append(("extra zero element", i, n, leaf, [*proof, ZERO32]))
    out.append(("wrong leaf", i, n, LEAVES[(i + 1) % n] if n > 1 else LEAVES[1], proof))
    out.append(("leaf replaced by an interior node hash", i, n, merkle.node_hash(ZERO32, leaf), proof))
    unprefixed = hashlib.sha256(entry(i)).digest()
    out.append(("leaf hashed without the 0x00 prefix", i, n, unprefixed, proof))
    if n > 1:
        out.append(("root as leaf", i, n, root(n), proof))
    return out


@pytest.mark.parametrize("sizes", [range(1, 41), [1000]], ids=["1-40", "1000"])
def test_mutated_proofs_fail_on_chain_and_in_python(system: System, sizes: Sequence[int]) -> None:
    rng = random.Random(9162)
    # Anchor the sizes under test and their neighbours, so a "wrong size" meets a real root.
    roots: dict[int, bytes] = {}
    for m in [*sorted({m for n in sizes for m in (n - 1, n, n + 1)} - {0}), 2 * max(sizes)]:
        roots[m] = root(m) if m <= len(LEAVES) else keccak(m.to_bytes(32, "big"))
        do_anchor(system, m, roots[m])
    cases: list[tuple[str, int, int, bytes, list[bytes], bytes]] = []
    valid: list[tuple[int, int, list[bytes]]] = []
    for n in sizes:
        if n <= 16:
            indexes = list(range(n))
        elif n <= 40:
            indexes = sorted({0, 1, n // 2, n - 2, n - 1, rng.randrange(n)})
        else:
            indexes = sorted({0, 1, 2, 510, 511, 512, 513, 767, 768, 991, 992, 998, 999, *rng.sample(range(n), 12)})
        for i in indexes:
            proof = merkle.inclusion_proof(LEAVES[:n], i)
            valid.append((n, i, proof))
            for label, j, m, leaf, bad in _mutations(n, i, proof, rng):
                anchored_root = roots.get(m, ZERO32)
                cases.append((f"n={n} i={i}: {label}", j, m, leaf, bad, anchored_root))

    # The unmutated proofs verify (so a failure below is due to the mutation alone).
    assert verify_many(system, [(i, n, LEAVES[i], p) for n, i, p in valid]) == [True] * len(valid)

    calls = [(j, m, leaf, bad) for _, j, m, leaf, bad, _ in cases]
    verified = verify_many(system, calls)
    implied = roots_many(system, calls)
    assert len(cases) > 200
    for (label, j, m, leaf, bad, anchored_root), onchain, got in zip(cases, verified, implied, strict=True):
        assert onchain is False, label
        assert merkle.verify_inclusion(leaf, j, m, bad, anchored_root) is False, label
        # rootFromInclusionProof agrees exactly with the Python library, including which inputs are malformed.
        assert got == py_root(leaf, j, m, bad), label


def test_unanchored_tree_size_is_false_even_for_a_valid_proof(system: System, anchor: Any) -> None:
    a = anchor.functions
    for n in (1, 2, 40):
        do_anchor(system, n, root(n))
    # 41 was never anchored: the proof is valid for the 41-leaf tree but there is no root to check.
    proof = merkle.inclusion_proof(LEAVES[:41], 17)
    assert tuple(a.rootFromInclusionProof(17, 41, LEAVES[17], proof).call()) == (True, root(41))
    assert a.verifyInclusion(17, 41, LEAVES[17], proof).call() is False
    assert a.rootAt(41).call() == ZERO32
    # Sizes 3..39 are unanchored as well, though 2 and 40 are.
    proof = merkle.inclusion_proof(LEAVES[:3], 2)
    assert a.verifyInclusion(2, 3, LEAVES[2], proof).call() is False
    assert a.verifyInclusion(1, 2, LEAVES[1], merkle.inclusion_proof(LEAVES[:2], 1)).call() is True
    # Size 0 and index >= size never verify and never revert.
    calls: list[Callable[[], Any]] = [
        lambda: a.verifyInclusion(0, 0, LEAVES[0], []).call(),
        lambda: a.verifyInclusion(1, 1, LEAVES[0], []).call(),
        lambda: a.verifyInclusion(MAX_U256, MAX_U256, LEAVES[0], []).call(),
        lambda: a.verifyInclusion(0, MAX_U256, LEAVES[0], [ZERO32] * 3).call(),
    ]
    for call in calls:
        assert call() is False
    assert tuple(a.rootFromInclusionProof(0, 0, LEAVES[0], []).call()) == (False, ZERO32)
    assert tuple(a.rootFromInclusionProof(5, 5, LEAVES[0], []).call()) == (False, ZERO32)
    # The single-leaf tree: the root is the leaf hash and the proof is empty.
    assert tuple(a.rootFromInclusionProof(0, 1, LEAVES[0], []).call()) == (True, LEAVES[0])
    assert a.verifyInclusion(0, 1, LEAVES[0], []).call() is True
    assert a.verifyInclusion(0, 1, LEAVES[1], []).call() is False


def test_perfect_tree_of_equal_leaves_at_2_20(system: System, anchor: Any) -> None:
    """A 2^20-leaf tree of identical leaves: level k's subtree root is node(h_{k-1}, h_{k-1})."""
    a = anchor.functions
    levels = [merkle.leaf_hash(b"same entry")]
    for _ in range(20):
        levels.append(merkle.node_hash(levels[-1], levels[-1]))
    size, tree_root, proof = 2**20, levels[20], levels[:20]
    do_anchor(system, size, tree_root)
    indexes = [0, 1, 2**19 - 1, 2**19, 123_456, size - 1]
    for i in indexes:
        assert merkle.verify_inclusion(levels[0], i, size, proof, tree_root)
    assert verify_many(system, [(i, size, levels[0], proof) for i in indexes]) == [True] * 6
    assert a.verifyInclusion(size, size, levels[0], proof).call() is False
    assert a.verifyInclusion(0, size, levels[0], proof[:-1]).call() is False
    assert a.verifyInclusion(0, size + 1, levels[0], proof).call() is False


def test_gas_of_inclusion_check_at_2_20_leaves(system: System, anchor: Any) -> None:
    """Random siblings for leaf i of a 2^20-leaf tree imply a root; anchor it and verify on-chain."""
    a = anchor.functions
    rng = random.Random(2**20)
    size = 2**20
    index = rng.randrange(size)
    leaf = merkle.leaf_hash(b"entry at depth 20")
    proof = [rng.randbytes(32) for _ in range(20)]
    tree_root = merkle.root_from_inclusion_proof(leaf, index, size, proof)
    do_anchor(system, size, tree_root)
    assert merkle.verify_inclusion(leaf, index, size, proof, tree_root)

    fn = a.verifyInclusion(index, size, leaf, proof)
    assert fn.call() is True
    gas = fn.estimate_gas()
    assert 21_000 < gas < 100_000
    system.gas.setdefault("AuditAnchor.verifyInclusion@2^20", []).append(gas)

    # The same proof against a neighbouring index, or with one sibling changed, fails.
    assert a.verifyInclusion(index ^ 1, size, leaf, proof).call() is False
    assert a.verifyInclusion(index, size, leaf, [*proof[:7], rng.randbytes(32), *proof[8:]]).call() is False
    # A non-power-of-two size just above 2^20: the right-most leaf has a shorter path.
    size2 = 2**20 + 12_345
    index2 = size2 - 1
    lengths = [k for k in range(64) if py_root(leaf, index2, size2, [ZERO32] * k)[0]]
    assert len(lengths) == 1  # exactly one proof length is well-formed for (index, size)
    proof2 = [rng.randbytes(32) for _ in range(lengths[0])]
    implied = merkle.root_from_inclusion_proof(leaf, index2, size2, proof2)
    do_anchor(system, size2, implied)
    assert a.verifyInclusion(index2, size2, leaf, proof2).call() is True
    assert tuple(a.rootFromInclusionProof(index2, size2, leaf, proof2).call()) == (True, implied)
    assert a.verifyInclusion(index2, size2, leaf, [*proof2, ZERO32]).call() is False
