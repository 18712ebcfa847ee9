"""Tests for the RFC 9162 Merkle tree library in ``merkle``.

Known-answer vectors are the RFC 6962 reference data used by
github.com/transparency-dev/merkle (``proof/verify_test.go``,
``proof/proof_test.go``, ``rfc6962/rfc6962_test.go``). Everything else is
cross-checked against a naive, recursive transcription of the RFC 9162
definitions (MTH, PATH, PROOF/SUBPROOF) written below with plain hashlib.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import merkle
from merkle import (
    EMPTY_ROOT,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_from_inclusion_proof,
    root_from_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)

# ---------------------------------------------------------------------------
# Naive reference implementation (recursive, straight from RFC 9162 2.1)
# ---------------------------------------------------------------------------


def ref_leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def ref_node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def ref_k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def ref_mth(d: Sequence[bytes]) -> bytes:
    """MTH over leaf *hashes* (2.1.1)."""
    n = len(d)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return d[0]
    k = ref_k(n)
    return ref_node(ref_mth(d[:k]), ref_mth(d[k:]))


def ref_path(m: int, d: Sequence[bytes]) -> list[bytes]:
    """PATH(m, D[n]) (2.1.3.1)."""
    n = len(d)
    if n == 1:
        return []
    k = ref_k(n)
    if m < k:
        return [*ref_path(m, d[:k]), ref_mth(d[k:])]
    return [*ref_path(m - k, d[k:]), ref_mth(d[:k])]


def ref_subproof(m: int, d: Sequence[bytes], b: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) (2.1.4.1)."""
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(d)]
    k = ref_k(n)
    if m <= k:
        return [*ref_subproof(m, d[:k], b), ref_mth(d[k:])]
    return [*ref_subproof(m - k, d[k:], False), ref_mth(d[:k])]


def ref_proof(m: int, d: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) (2.1.4.1)."""
    return ref_subproof(m, d, True)


def ref_path_shape(m: int, n: int) -> list[str]:
    """Side of each PATH(m, D[n]) element relative to the running hash, bottom-up."""
    if n == 1:
        return []
    k = ref_k(n)
    if m < k:
        return [*ref_path_shape(m, k), "right"]
    return [*ref_path_shape(m - k, n - k), "left"]


def ref_proof_shape(m: int, n: int, b: bool = True) -> list[str]:
    """Role of each SUBPROOF(m, D[n], b) element, bottom-up."""
    if m == n:
        return [] if b else ["start"]
    k = ref_k(n)
    if m <= k:
        return [*ref_proof_shape(m, k, b), "right"]
    return [*ref_proof_shape(m - k, n - k, False), "left"]


# ---------------------------------------------------------------------------
# Known-answer vectors (transparency-dev/merkle)
# ---------------------------------------------------------------------------

# proof/verify_test.go: `leaves`, `roots` (roots[i] is the root of the first i+1 leaves).
RFC_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57",
    b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
]
RFC_ROOTS = [
    bytes.fromhex(h)
    for h in (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    )
]
RFC_LEAF_HASHES = [ref_leaf(d) for d in RFC_LEAVES]

# proof/verify_test.go `inclusionProofs` ({leaf, size, proof} with a 1-based
# leaf number there; converted to 0-based indices here).
INCLUSION_VECTORS: list[tuple[int, int, list[str]]] = [
    (0, 1, []),
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]

# proof/verify_test.go `consistencyProofs` ({size1, size2, proof}).
CONSISTENCY_VECTORS: list[tuple[int, int, list[str]]] = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
]

# proof/proof_test.go TestInclusion / TestConsistency give proofs as tree node
# IDs. Each node is written here as the leaf range [a, b) it covers, so the
# expected proof element is MTH(D[a:b]); "rehashed" nodes there (an ephemeral
# node of a non-full subtree) are a single range here.
INCLUSION_SHAPES: list[tuple[int, int, list[tuple[int, int]]]] = [
    # (index, size, ranges)
    (0, 1, []),
    (0, 2, [(1, 2)]),
    (1, 2, [(0, 1)]),
    (1, 3, [(0, 1), (2, 3)]),
    (0, 7, [(1, 2), (2, 4), (4, 7)]),
    (1, 7, [(0, 1), (2, 4), (4, 7)]),
    (2, 7, [(3, 4), (0, 2), (4, 7)]),
    (3, 7, [(2, 3), (0, 2), (4, 7)]),
    (4, 7, [(5, 6), (6, 7), (0, 4)]),
    (5, 7, [(4, 5), (6, 7), (0, 4)]),
    (6, 7, [(4, 6), (0, 4)]),
    (2, 4, [(3, 4), (0, 2)]),
    (3, 5, [(2, 3), (0, 2), (4, 5)]),
    (3, 6, [(2, 3), (0, 2), (4, 6)]),
    (4, 6, [(5, 6), (0, 4)]),
    (10, 15, [(11, 12), (8, 10), (12, 15), (0, 8)]),
    (24, 31, [(25, 26), (26, 28), (28, 31), (16, 24), (0, 16)]),
    (81, 95, [(80, 81), (82, 84), (84, 88), (88, 95), (64, 80), (0, 64)]),
]
CONSISTENCY_SHAPES: list[tuple[int, int, list[tuple[int, int]]]] = [
    # (size1, size2, ranges)
    (1, 2, [(1, 2)]),
    (1, 4, [(1, 2), (2, 4)]),
    (1, 6, [(1, 2), (2, 4), (4, 6)]),
    (2, 3, [(2, 3)]),
    (2, 8, [(2, 4), (4, 8)]),
    (3, 7, [(2, 3), (3, 4), (0, 2), (4, 7)]),
    (4, 7, [(4, 7)]),
    (5, 7, [(4, 5), (5, 6), (6, 7), (0, 4)]),
    (6, 7, [(4, 6), (6, 7), (0, 4)]),
    (7, 8, [(6, 7), (7, 8), (4, 6), (0, 4)]),
    (1, 1, []),
    (2, 2, []),
    (3, 3, []),
    (4, 4, []),
    (5, 5, []),
    (7, 7, []),
    (8, 8, []),
    (2, 4, [(2, 4)]),
    (3, 5, [(2, 3), (3, 4), (0, 2), (4, 5)]),
    (3, 6, [(2, 3), (3, 4), (0, 2), (4, 6)]),
    (4, 6, [(4, 6)]),
    (1, 7, [(1, 2), (2, 4), (4, 7)]),
    (10, 15, [(8, 10), (10, 12), (12, 15), (0, 8)]),
    (24, 31, [(16, 24), (24, 31), (0, 16)]),
    (81, 95, [(80, 81), (81, 82), (82, 84), (84, 88), (88, 95), (64, 80), (0, 64)]),
]

# Distinct leaves for brute-force and property tests.
POOL = [ref_leaf(b"leaf-%d" % i) for i in range(1100)]
MAX_BRUTE = 70
BRUTE_SIZES = range(1, MAX_BRUTE + 1)
REF_ROOTS = [ref_mth(POOL[:n]) for n in range(MAX_BRUTE + 10)]

SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


def unhex(hashes: Sequence[str]) -> list[bytes]:
    return [bytes.fromhex(h) for h in hashes]


def flip(h: bytes, bit: int) -> bytes:
    b = bytearray(h)
    b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b)


# ---------------------------------------------------------------------------
# Hashing primitives and roots
# ---------------------------------------------------------------------------


def test_public_api() -> None:
    assert set(merkle.__all__) >= {
        "leaf_hash",
        "node_hash",
        "root_from_leaf_hashes",
        "inclusion_proof",
        "verify_inclusion",
        "consistency_proof",
        "verify_consistency",
        "root_from_inclusion_proof",
    }
    for name in merkle.__all__:
        assert hasattr(merkle, name)


def test_hash_primitive_vectors() -> None:
    # rfc6962/rfc6962_test.go
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert root_from_leaf_hashes([]) == EMPTY_ROOT
    assert leaf_hash(b"").hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    assert leaf_hash(b"L123456").hex() == "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    assert node_hash(b"N123", b"N456").hex() == "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"


def test_domain_separation_and_order() -> None:
    a, b = leaf_hash(b"Hello"), leaf_hash(b"World")
    assert a != b
    assert node_hash(a, b) != node_hash(b, a)
    assert node_hash(a, b) != leaf_hash(a + b)
    assert leaf_hash(b"") != EMPTY_ROOT


@pytest.mark.parametrize("size", range(1, 9))
def test_rfc_roots(size: int) -> None:
    hashes = [leaf_hash(d) for d in RFC_LEAVES[:size]]
    assert hashes == RFC_LEAF_HASHES[:size]
    assert root_from_leaf_hashes(hashes) == RFC_ROOTS[size - 1]


def test_roots_match_reference() -> None:
    for n in range(MAX_BRUTE + 10):
        assert root_from_leaf_hashes(POOL[:n]) == REF_ROOTS[n], n


def max_call_depth(fn: Callable[[], object]) -> int:
    """Deepest Python/C call nesting reached while running ``fn``."""
    depth = peak = 0

    def profiler(frame: object, event: str, arg: object) -> None:
        nonlocal depth, peak
        if event in ("call", "c_call"):
            depth += 1
            peak = max(peak, depth)
        elif event in ("return", "c_return", "c_exception"):
            depth -= 1

    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return peak


def test_builders_do_not_recurse() -> None:
    hashes = POOL[:1000] * 5  # 5000 leaves: a recursive MTH would nest 13 deep
    baseline = max_call_depth(lambda: ref_mth(hashes))
    assert baseline >= 13  # the probe does see recursion
    assert max_call_depth(lambda: root_from_leaf_hashes(hashes)) <= 8
    assert max_call_depth(lambda: inclusion_proof(hashes, 4321)) <= 8
    assert max_call_depth(lambda: consistency_proof(hashes, 3333)) <= 8


def test_large_tree() -> None:
    # 2**17 + 3 leaves: not a power of two, odd node counts on several levels.
    n = (1 << 17) + 3
    hashes = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(n)]
    expected = ref_node(ref_mth(hashes[: 1 << 17]), ref_mth(hashes[1 << 17 :]))
    assert root_from_leaf_hashes(hashes) == expected
    for index, depth in ((5, 18), (n - 2, 3), (n - 1, 2)):
        proof = inclusion_proof(hashes, index)
        assert len(proof) == depth
        assert verify_inclusion(hashes[index], index, n, proof, expected)
    first = 100_000
    proof = consistency_proof(hashes, first)
    assert verify_consistency(first, n, ref_mth(hashes[:first]), expected, proof)


def test_root_accepts_tuple_and_rejects_bad_hashes() -> None:
    assert root_from_leaf_hashes(tuple(POOL[:5])) == REF_ROOTS[5]
    with pytest.raises(ValueError):
        root_from_leaf_hashes([POOL[0], POOL[1][:31]])
    with pytest.raises(ValueError):
        root_from_leaf_hashes([POOL[0] + b"\x00"])
    with pytest.raises(ValueError):
        root_from_leaf_hashes(POOL[0])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Known proofs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("index", "size", "proof_hex"), INCLUSION_VECTORS)
def test_rfc_inclusion_vectors(index: int, size: int, proof_hex: list[str]) -> None:
    proof = unhex(proof_hex)
    hashes = RFC_LEAF_HASHES[:size]
    root = RFC_ROOTS[size - 1]
    assert inclusion_proof(hashes, index) == proof
    assert root_from_inclusion_proof(hashes[index], index, size, proof) == root
    assert verify_inclusion(hashes[index], index, size, proof, root)


@pytest.mark.parametrize(("first", "second", "proof_hex"), CONSISTENCY_VECTORS)
def test_rfc_consistency_vectors(first: int, second: int, proof_hex: list[str]) -> None:
    proof = unhex(proof_hex)
    assert consistency_proof(RFC_LEAF_HASHES[:second], first) == proof
    assert verify_consistency(first, second, RFC_ROOTS[first - 1], RFC_ROOTS[second - 1], proof)


@pytest.mark.parametrize(("index", "size", "ranges"), INCLUSION_SHAPES)
def test_inclusion_proof_shapes(index: int, size: int, ranges: list[tuple[int, int]]) -> None:
    expected = [ref_mth(POOL[a:b]) for a, b in ranges]
    proof = inclusion_proof(POOL[:size], index)
    assert proof == expected
    assert verify_inclusion(POOL[index], index, size, proof, ref_mth(POOL[:size]))


@pytest.mark.parametrize(("first", "second", "ranges"), CONSISTENCY_SHAPES)
def test_consistency_proof_shapes(first: int, second: int, ranges: list[tuple[int, int]]) -> None:
    expected = [ref_mth(POOL[a:b]) for a, b in ranges]
    proof = consistency_proof(POOL[:second], first)
    assert proof == expected
    assert verify_consistency(first, second, ref_mth(POOL[:first]), ref_mth(POOL[:second]), proof)


# ---------------------------------------------------------------------------
# Brute force against the naive reference, sizes 1..70
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", BRUTE_SIZES)
def test_inclusion_every_index(size: int) -> None:
    hashes = POOL[:size]
    root = REF_ROOTS[size]
    for index in range(size):
        proof = inclusion_proof(hashes, index)
        assert proof == ref_path(index, hashes), index
        assert root_from_inclusion_proof(hashes[index], index, size, proof) == root
        assert verify_inclusion(hashes[index], index, size, proof, root), index


@pytest.mark.parametrize("second", BRUTE_SIZES)
def test_consistency_every_pair(second: int) -> None:
    hashes = POOL[:second]
    for first in range(1, second + 1):
        proof = consistency_proof(hashes, first)
        assert proof == ref_proof(first, hashes), first
        assert verify_consistency(first, second, REF_ROOTS[first], REF_ROOTS[second], proof)


def test_consistency_from_empty_tree() -> None:
    for second in range(0, 10):
        assert consistency_proof(POOL[:second], 0) == []
        assert verify_consistency(0, second, EMPTY_ROOT, REF_ROOTS[second], [])


# ---------------------------------------------------------------------------
# Mutated proofs must be rejected
# ---------------------------------------------------------------------------


def proof_mutations(proof: list[bytes], extra: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """Structural corruptions of a proof; each yields a proof that differs from ``proof``."""
    for i in range(len(proof)):
        for bit in (0, 3, 100, 255):
            mutated = list(proof)
            mutated[i] = flip(proof[i], bit)
            yield f"flip[{i}].{bit}", mutated
    if proof:
        yield "truncated", proof[:-1]
        yield "drop-first", proof[1:]
        yield "duplicate-first", [proof[0], *proof]
        yield "duplicate-last", [*proof, proof[-1]]
    yield "extra-end", [*proof, extra]
    yield "extra-front", [extra, *proof]
    yield "extra-empty-tree-hash", [*proof, EMPTY_ROOT]
    for i in range(len(proof) - 1):
        if proof[i] != proof[i + 1]:
            swapped = list(proof)
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            yield f"swap[{i}]", swapped
    if len(proof) > 2:
        yield "reversed", proof[::-1]


@pytest.mark.parametrize("size", BRUTE_SIZES)
def test_inclusion_mutations_rejected(size: int) -> None:
    hashes = POOL[:size]
    root = REF_ROOTS[size]
    for index in range(size):
        proof = inclusion_proof(hashes, index)
        leaf = hashes[index]
        assert verify_inclusion(leaf, index, size, proof, root)
        for desc, bad in proof_mutations(proof, SOME_HASH):
            assert not verify_inclusion(leaf, index, size, bad, root), (index, desc)
        for other in range(-1, size + 1):
            if other != index:
                assert not verify_inclusion(leaf, other, size, proof, root), (index, other)
        # RFC 9162 2.1.3.2 only uses tree_size to decide, level by level, on
        # which side each proof element goes (tree_size itself is bound to the
        # root by the signed tree head). So a proof must be rejected for every
        # other size, except sizes where PATH has exactly the same shape.
        for other_size in range(0, MAX_BRUTE + 5):
            if other_size != size:
                same_shape = index < other_size and ref_path_shape(index, other_size) == ref_path_shape(index, size)
                got = verify_inclusion(leaf, index, other_size, proof, root)
                assert got is same_shape, (index, other_size)
        assert not verify_inclusion(leaf, index, size * 2, proof, root)
        assert not verify_inclusion(leaf, index, size // 2, proof, root)
        assert not verify_inclusion(flip(leaf, 7), index, size, proof, root)
        assert not verify_inclusion(POOL[size], index, size, proof, root)
        assert not verify_inclusion(leaf, index, size, proof, flip(root, 200))
        assert not verify_inclusion(leaf, index, size, proof, EMPTY_ROOT)
        # Only the leaf the proof was made for verifies at this index.
        for other in range(size):
            if other != index:
                assert not verify_inclusion(hashes[other], index, size, proof, root)


@pytest.mark.parametrize("second", BRUTE_SIZES)
def test_consistency_mutations_rejected(second: int) -> None:
    hashes = POOL[:second]
    root2 = REF_ROOTS[second]
    for first in range(1, second + 1):
        root1 = REF_ROOTS[first]
        proof = consistency_proof(hashes, first)
        assert verify_consistency(first, second, root1, root2, proof)
        for desc, bad in proof_mutations(proof, SOME_HASH):
            assert not verify_consistency(first, second, root1, root2, bad), (first, desc)
        for other in range(-1, second + 2):
            if other != first:
                assert not verify_consistency(other, second, root1, root2, proof), (first, other)
        # As for inclusion, `second` only steers the shape of the hash chain:
        # reject every other size except those giving the same PROOF shape.
        for other in range(-1, MAX_BRUTE + 5):
            if other != second:
                same_shape = (
                    first < second and first < other and ref_proof_shape(first, other) == ref_proof_shape(first, second)
                )
                got = verify_consistency(first, other, root1, root2, proof)
                assert got is same_shape, (first, other)
        if first < second:
            assert not verify_consistency(first, second * 2, root1, root2, proof)
        assert not verify_consistency(first, second, flip(root1, 9), root2, proof)
        assert not verify_consistency(first, second, root1, flip(root2, 9), proof)
        if root1 != root2:
            assert not verify_consistency(first, second, root2, root1, proof)
            assert not verify_consistency(first, second, root1, root2, [])
        # Right sizes, but the first tree is not a prefix of the second.
        forked = [*hashes[: first - 1], SOME_HASH]
        assert not verify_consistency(first, second, ref_mth(forked), root2, proof)


# ---------------------------------------------------------------------------
# Edge cases and malformed input: verifiers return False, never raise
# ---------------------------------------------------------------------------


def test_inclusion_single_entry() -> None:
    h = leaf_hash(b"data")
    assert verify_inclusion(h, 0, 1, [], h)
    assert not verify_inclusion(h, 0, 1, [], b"")
    assert not verify_inclusion(b"", 0, 1, [], h)
    assert not verify_inclusion(b"", 0, 1, [], b"")
    assert not verify_inclusion(h, 0, 1, [h], h)


@pytest.mark.parametrize(("index", "size"), [(0, 0), (0, 1), (1, 0), (2, 1), (-1, 1), (1, 1)])
def test_inclusion_invalid_positions(index: int, size: int) -> None:
    assert not verify_inclusion(SOME_HASH, index, size, [], b"")
    assert not verify_inclusion(b"", index, size, [], EMPTY_ROOT)
    assert not verify_inclusion(SOME_HASH, index, size, [], EMPTY_ROOT)


def test_consistency_edge_cases() -> None:
    r1, r2 = REF_ROOTS[1], REF_ROOTS[2]
    # Trivially consistent.
    assert verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    assert verify_consistency(0, 1, EMPTY_ROOT, r1, [])
    assert verify_consistency(1, 1, r2, r2, [])
    # Same size, different roots / non-empty proof.
    assert not verify_consistency(0, 0, EMPTY_ROOT, r1, [])
    assert not verify_consistency(1, 1, r1, r2, [])
    assert not verify_consistency(1, 1, EMPTY_ROOT, r2, [])
    assert not verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT])
    assert not verify_consistency(1, 1, r1, r1, [EMPTY_ROOT])
    # Empty first tree must have the empty root and an empty proof.
    assert not verify_consistency(0, 1, r1, r1, [])
    assert not verify_consistency(0, 1, EMPTY_ROOT, r1, [EMPTY_ROOT])
    # Time travel.
    assert not verify_consistency(1, 0, r1, EMPTY_ROOT, [])
    assert not verify_consistency(2, 1, r2, r1, [])
    # Empty proof for a real extension.
    assert not verify_consistency(1, 2, r1, r2, [])


def test_verifiers_do_not_mutate_proof() -> None:
    # first = 4 is a power of two, so the RFC algorithm prepends first_hash.
    proof = consistency_proof(POOL[:7], 4)
    snapshot = list(proof)
    assert verify_consistency(4, 7, REF_ROOTS[4], REF_ROOTS[7], proof)
    assert proof == snapshot
    assert verify_consistency(4, 7, REF_ROOTS[4], REF_ROOTS[7], tuple(proof))
    inc = inclusion_proof(POOL[:7], 3)
    inc_snapshot = list(inc)
    assert verify_inclusion(POOL[3], 3, 7, inc, REF_ROOTS[7])
    assert inc == inc_snapshot


def test_bytearray_hashes_accepted() -> None:
    proof = [bytearray(p) for p in inclusion_proof(POOL[:9], 4)]
    assert verify_inclusion(bytearray(POOL[4]), 4, 9, proof, bytearray(REF_ROOTS[9]))  # type: ignore[arg-type]


MALFORMED: list[Any] = [
    None,
    "x" * 32,
    b"",
    b"\x00" * 31,
    b"\x00" * 33,
    32,
    [b"\x00" * 32],
    1.5,
]


@pytest.mark.parametrize("bad", MALFORMED)
def test_verifiers_reject_malformed_values(bad: Any) -> None:
    size = 9
    index = 4
    root = REF_ROOTS[size]
    leaf = POOL[index]
    proof = inclusion_proof(POOL[:size], index)
    cproof = consistency_proof(POOL[:size], 3)
    root3 = REF_ROOTS[3]

    inclusion_calls: list[Callable[[], bool]] = [
        lambda: verify_inclusion(bad, index, size, proof, root),
        lambda: verify_inclusion(leaf, index, size, proof, bad),
        lambda: verify_inclusion(leaf, index, size, bad, root),
        lambda: verify_inclusion(leaf, index, size, [*proof[:-1], bad], root),
    ]
    consistency_calls: list[Callable[[], bool]] = [
        lambda: verify_consistency(3, size, bad, root, cproof),
        lambda: verify_consistency(3, size, root3, bad, cproof),
        lambda: verify_consistency(3, size, root3, root, bad),
        lambda: verify_consistency(3, size, root3, root, [*cproof[:-1], bad]),
    ]
    if not isinstance(bad, int):
        inclusion_calls += [
            lambda: verify_inclusion(leaf, bad, size, proof, root),
            lambda: verify_inclusion(leaf, index, bad, proof, root),
        ]
        consistency_calls += [
            lambda: verify_consistency(bad, size, root3, root, cproof),
            lambda: verify_consistency(3, bad, root3, root, cproof),
        ]
    for call in inclusion_calls + consistency_calls:
        assert call() is False


def test_bool_sizes_rejected() -> None:
    h = POOL[0]
    assert verify_inclusion(h, 0, 1, [], h)
    assert not verify_inclusion(h, False, True, [], h)
    assert not verify_consistency(True, True, h, h, [])


def test_builders_reject_bad_arguments() -> None:
    for bad_index in (-1, 3, 4, True, None):
        with pytest.raises(ValueError):
            inclusion_proof(POOL[:3], bad_index)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        inclusion_proof([], 0)
    for bad_first in (-1, 4, None):
        with pytest.raises(ValueError):
            consistency_proof(POOL[:3], bad_first)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        inclusion_proof([POOL[0], b"short"], 0)
    with pytest.raises(ValueError):
        root_from_inclusion_proof(POOL[0], 0, 2, [])
    with pytest.raises(ValueError):
        root_from_inclusion_proof(POOL[0], 0, 1, [POOL[1]])
    with pytest.raises(ValueError):
        root_from_inclusion_proof(POOL[0], 2, 2, [POOL[1]])


# ---------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------


@st.composite
def tree_and_index(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(min_value=1, max_value=len(POOL)))
    return size, draw(st.integers(min_value=0, max_value=size - 1))


@settings(max_examples=60, deadline=None)
@given(tree_and_index(), st.data())
def test_property_inclusion(ti: tuple[int, int], data: st.DataObject) -> None:
    size, index = ti
    hashes = POOL[:size]
    root = ref_mth(hashes)
    proof = inclusion_proof(hashes, index)
    assert proof == ref_path(index, hashes)
    assert verify_inclusion(hashes[index], index, size, proof, root)
    if proof:
        i = data.draw(st.integers(0, len(proof) - 1))
        bit = data.draw(st.integers(0, 255))
        bad = list(proof)
        bad[i] = flip(bad[i], bit)
        assert not verify_inclusion(hashes[index], index, size, bad, root)


@settings(max_examples=60, deadline=None)
@given(tree_and_index(), st.data())
def test_property_consistency(ti: tuple[int, int], data: st.DataObject) -> None:
    second, first = ti[0], ti[1] + 1
    hashes = POOL[:second]
    root1, root2 = ref_mth(hashes[:first]), ref_mth(hashes)
    proof = consistency_proof(hashes, first)
    assert proof == ref_proof(first, hashes)
    assert verify_consistency(first, second, root1, root2, proof)
    if proof:
        i = data.draw(st.integers(0, len(proof) - 1))
        bit = data.draw(st.integers(0, 255))
        bad = list(proof)
        bad[i] = flip(bad[i], bit)
        assert not verify_consistency(first, second, root1, root2, bad)


sizes = st.integers(min_value=-(2**70), max_value=2**70)
blobs = st.one_of(st.binary(max_size=40), st.binary(min_size=32, max_size=32))
proofs = st.lists(blobs, max_size=80)


@settings(max_examples=300, deadline=None)
@given(blobs, sizes, sizes, proofs, blobs)
def test_property_verify_inclusion_never_raises(
    leaf: bytes, index: int, size: int, proof: list[bytes], root: bytes
) -> None:
    result = verify_inclusion(leaf, index, size, proof, root)
    # Random data only "verifies" in the trivial one-leaf tree (leaf == root).
    trivial = len(leaf) == 32 and leaf == root and index == 0 and size == 1 and proof == []
    assert result is trivial


@settings(max_examples=300, deadline=None)
@given(sizes, sizes, blobs, blobs, proofs)
def test_property_verify_consistency_never_raises(
    first: int, second: int, root1: bytes, root2: bytes, proof: list[bytes]
) -> None:
    result = verify_consistency(first, second, root1, root2, proof)
    # Random data only "verifies" in the trivial cases (no proof needed).
    hashes_ok = len(root1) == 32 and len(root2) == 32 and proof == []
    trivial = hashes_ok and (
        (0 < first == second and root1 == root2)
        or (first == 0 and root1 == EMPTY_ROOT and (second > 0 or root2 == EMPTY_ROOT))
    )
    assert result is trivial


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.integers(1, 40))
def test_property_trivial_consistency(first: int, second: int) -> None:
    root = REF_ROOTS[second]
    assert verify_consistency(second, second, root, root, []) is True
    assert verify_consistency(0, second, EMPTY_ROOT, root, []) is True
    assert verify_consistency(first, second, root, root, []) is (first == second)


def test_failures_say_why() -> None:
    """The checkers name the reason a proof fails (what /verify and the verify command show), and
    agree with the boolean verifiers on every mutation."""
    hashes = POOL[:7]
    root = merkle.root_from_leaf_hashes(hashes)
    proof = inclusion_proof(hashes, 3)
    assert merkle.inclusion_failure(hashes[3], 3, 7, proof, root) is None
    assert merkle.inclusion_failure(hashes[3], 3, 7, proof[:-1], root) == "proof is too short"
    assert merkle.inclusion_failure(hashes[3], 3, 7, [*proof, SOME_HASH], root) == "proof is too long"
    assert merkle.inclusion_failure(hashes[3], 9, 7, proof, root) == "index 9 out of range for tree size 7"
    assert (merkle.inclusion_failure(hashes[3], 3, 7, proof, b"short") or "").startswith("the root is not")
    mismatch = merkle.inclusion_failure(hashes[4], 3, 7, proof, root) or ""
    assert mismatch.startswith("root mismatch: the proof leads to 0x") and mismatch.endswith(root.hex())
    for _desc, bad in proof_mutations(proof, SOME_HASH):
        assert merkle.inclusion_failure(hashes[3], 3, 7, bad, root) is not None
        assert not verify_inclusion(hashes[3], 3, 7, bad, root)
    r3 = merkle.root_from_leaf_hashes(hashes[:3])
    cproof = consistency_proof(hashes, 3)
    assert merkle.consistency_failure(3, 7, r3, root, cproof) is None
    assert merkle.consistency_failure(7, 3, root, r3, cproof) == (
        "wrong size: the first tree (7) is larger than the second (3)"
    )
    assert merkle.consistency_failure(3, 7, r3, root, []) == "the proof is empty"
    assert merkle.consistency_failure(3, 7, r3, root, cproof[:-1]) == "proof is too short"
    assert (merkle.consistency_failure(3, 7, r3, flip(root, 3), cproof) or "").startswith(
        "root mismatch: the proof leads to second root"
    )
    assert (merkle.consistency_failure(3, 7, flip(r3, 3), root, cproof) or "").startswith(
        "root mismatch: the proof leads to first root"
    )
    assert merkle.consistency_failure(3, 3, r3, root, []) == "root mismatch: equal sizes, different roots"
