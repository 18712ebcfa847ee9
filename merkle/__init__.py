"""RFC 9162 (Certificate Transparency v2) Merkle tree hashing and proofs.

Pure functions, no I/O. Hash function is SHA-256 with the RFC 9162 section 2.1.1
domain separation: leaves are ``SHA-256(0x00 || data)``, interior nodes are
``SHA-256(0x01 || left || right)`` and the empty tree hashes to ``SHA-256("")``.

Builders (``root_from_leaf_hashes``, ``inclusion_proof``, ``consistency_proof``,
``root_from_inclusion_proof``) raise ``ValueError`` on bad arguments. Checkers
(``inclusion_failure``, ``consistency_failure``) never raise: they return why a proof fails
(wrong size, too short, root mismatch, ...) or ``None`` when it holds; ``verify_inclusion`` and
``verify_consistency`` are the same checks as booleans.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "SubtreeHash",
    "consistency_failure",
    "consistency_path",
    "consistency_proof",
    "inclusion_failure",
    "inclusion_path",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root_from_inclusion_proof",
    "root_from_leaf_hashes",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE = 32
"""Length in bytes of every hash (SHA-256)."""

EMPTY_ROOT = hashlib.sha256(b"").digest()
"""MTH({}) = SHA-256 of the empty string (RFC 9162 section 2.1.1)."""

#: MTH(D[lo:hi]) for 0 <= lo < hi <= size: how a store supplies the hashes a proof needs.
SubtreeHash = Callable[[int, int], bytes]

_LEAF_PREFIX = b"\x00"
_NODE_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """Return the RFC 9162 leaf hash ``SHA-256(0x00 || data)``."""
    return hashlib.sha256(_LEAF_PREFIX + bytes(data)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Return the RFC 9162 interior node hash ``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(_NODE_PREFIX + bytes(left) + bytes(right)).digest()


# --------------------------------------------------------------------------
# Internal helpers
# --------------------------------------------------------------------------


def _is_hash(value: object) -> bool:
    return isinstance(value, (bytes, bytearray)) and len(value) == HASH_SIZE


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _hash_list(hashes: Sequence[bytes], what: str) -> list[bytes]:
    """Copy ``hashes`` into a list of ``bytes``, checking every element is 32 bytes."""
    if isinstance(hashes, (bytes, bytearray, str)):
        raise ValueError(f"{what} must be a sequence of hashes, not {type(hashes).__name__}")
    try:
        items = list(hashes)
    except TypeError as exc:
        raise ValueError(f"{what} must be a sequence of hashes") from exc
    for i, item in enumerate(items):
        if not _is_hash(item):
            raise ValueError(f"{what}[{i}] is not a {HASH_SIZE}-byte hash")
    return [bytes(item) for item in items]


def _split(n: int) -> int:
    """Largest power of two strictly smaller than ``n`` (``n >= 2``)."""
    return 1 << ((n - 1).bit_length() - 1)


def _mth(hashes: list[bytes]) -> bytes:
    """MTH over already-validated leaf hashes, computed bottom-up (no recursion).

    Pairing adjacent nodes level by level and carrying an odd last node up
    unchanged yields exactly the RFC 9162 MTH, whose left subtree is always the
    largest perfect subtree.
    """
    if not hashes:
        return EMPTY_ROOT
    level = hashes
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


# --------------------------------------------------------------------------
# Tree hash and proof generation (RFC 9162 sections 2.1.1, 2.1.3.1, 2.1.4.1)
# --------------------------------------------------------------------------


def root_from_leaf_hashes(leaf_hashes: Sequence[bytes]) -> bytes:
    """Return the Merkle Tree Hash MTH(D[n]) of a list of leaf hashes (RFC 9162 2.1.1).

    Raises ``ValueError`` if any element is not a 32-byte hash.
    """
    return _mth(_hash_list(leaf_hashes, "leaf_hashes"))


def inclusion_proof(leaf_hashes: Sequence[bytes], index: int) -> list[bytes]:
    """Return the audit path PATH(index, D[n]) (RFC 9162 2.1.3.1), leaf sibling first.

    Raises ``ValueError`` unless ``0 <= index < len(leaf_hashes)``.
    """
    hashes = _hash_list(leaf_hashes, "leaf_hashes")
    if not _is_size(index) or index >= len(hashes):
        raise ValueError(f"index {index!r} out of range for tree size {len(hashes)}")
    return inclusion_path(lambda lo, hi: _mth(hashes[lo:hi]), index, len(hashes))


def consistency_proof(leaf_hashes: Sequence[bytes], first: int) -> list[bytes]:
    """Return PROOF(first, D[n]) (RFC 9162 2.1.4.1) for ``n = len(leaf_hashes)``.

    ``first == 0`` and ``first == n`` give an empty proof. Raises ``ValueError``
    unless ``0 <= first <= n``.
    """
    hashes = _hash_list(leaf_hashes, "leaf_hashes")
    if not _is_size(first) or first > len(hashes):
        raise ValueError(f"first {first!r} out of range for tree size {len(hashes)}")
    if first == 0:
        return []
    return consistency_path(lambda lo, hi: _mth(hashes[lo:hi]), first, len(hashes))


def inclusion_path(subtree: SubtreeHash, index: int, size: int) -> list[bytes]:
    """PATH(index, D[size]) from `subtree(lo, hi)` = MTH(D[lo:hi]): for a store that keeps subtree
    hashes instead of the leaves. Asks for at most one subtree per level (arguments unchecked)."""
    # Walk from the root down to the leaf; PATH lists the siblings bottom-up.
    siblings: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        mid = lo + _split(hi - lo)
        if index < mid:
            siblings.append(subtree(mid, hi))
            hi = mid
        else:
            siblings.append(subtree(lo, mid))
            lo = mid
    siblings.reverse()
    return siblings


def consistency_path(subtree: SubtreeHash, first: int, size: int) -> list[bytes]:
    """PROOF(first, D[size]) from a subtree-hash oracle, like inclusion_path (arguments unchecked)."""
    if first == 0:
        return []
    # Iterative SUBPROOF(m, D[lo:hi], b); nodes are found top-down, emitted bottom-up.
    nodes: list[bytes] = []
    m, lo, hi, complete = first, 0, size, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            nodes.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            nodes.append(subtree(lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        nodes.append(subtree(lo, hi))
    nodes.reverse()
    return nodes


# --------------------------------------------------------------------------
# Verification (RFC 9162 sections 2.1.3.2 and 2.1.4.2)
# --------------------------------------------------------------------------


def root_from_inclusion_proof(leaf_hash: bytes, index: int, tree_size: int, proof: Sequence[bytes]) -> bytes:
    """Recompute the root implied by an inclusion proof (RFC 9162 2.1.3.2 steps 1-4).

    Raises ``ValueError`` on malformed input or if the proof length does not
    match ``(index, tree_size)``; the caller compares the result with a root.
    """
    if not _is_hash(leaf_hash):
        raise ValueError(f"leaf_hash is not a {HASH_SIZE}-byte hash")
    if not (_is_size(index) and _is_size(tree_size)):
        raise ValueError("index and tree_size must be non-negative integers")
    path = _hash_list(proof, "proof")
    # 1. Fail if leaf_index >= tree_size.
    if index >= tree_size:
        raise ValueError(f"index {index} out of range for tree size {tree_size}")
    # 2. fn = leaf_index, sn = tree_size - 1.  3. r = hash.
    fn, sn = index, tree_size - 1
    r = bytes(leaf_hash)
    # 4. For each p in inclusion_path:
    for p in path:
        if sn == 0:  # 4a
            raise ValueError("proof is too long")
        if fn & 1 or fn == sn:  # 4b
            r = node_hash(p, r)
            if not fn & 1:
                while not (fn & 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1  # 4c
        sn >>= 1
    # 5. (first half) sn must be 0.
    if sn != 0:
        raise ValueError("proof is too short")
    return r


def inclusion_failure(leaf_hash: bytes, index: int, tree_size: int, proof: Sequence[bytes], root: bytes) -> str | None:
    """Why an inclusion proof fails RFC 9162 2.1.3.2, or None when it holds; never raises.

    ``tree_size`` only steers the hash chain, so a proof also verifies for any
    other size giving the same path shape: take ``(tree_size, root)`` from one
    signed tree head / anchored checkpoint.
    """
    if not _is_hash(root):
        return f"the root is not a {HASH_SIZE}-byte hash"
    try:
        computed = root_from_inclusion_proof(leaf_hash, index, tree_size, proof)
    except ValueError as exc:
        return str(exc)
    if not hmac.compare_digest(computed, bytes(root)):
        return f"root mismatch: the proof leads to 0x{computed.hex()}, not to 0x{bytes(root).hex()}"
    return None


def verify_inclusion(leaf_hash: bytes, index: int, tree_size: int, proof: Sequence[bytes], root: bytes) -> bool:
    """Check an inclusion proof exactly as in RFC 9162 2.1.3.2; ``False`` on any bad input."""
    return inclusion_failure(leaf_hash, index, tree_size, proof, root) is None


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]) -> bool:
    """Check a consistency proof (RFC 9162 2.1.4.2); ``False`` on any bad input."""
    return consistency_failure(first, second, first_root, second_root, proof) is None


def consistency_failure(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> str | None:
    """Why a consistency proof fails RFC 9162 2.1.4.2, or None when it holds; never raises.

    The RFC algorithm covers ``0 < first < second``. Outside that range the
    only valid proof is empty: ``first == second`` needs equal roots, and
    ``first == 0`` needs ``first_root == EMPTY_ROOT`` (and ``second_root`` too
    when ``second == 0``). As with inclusion, ``second`` is only bound to
    ``second_root`` by whoever signed or anchored that pair.
    """
    if not (_is_size(first) and _is_size(second)):
        return "tree sizes must be non-negative integers"
    if not (_is_hash(first_root) and _is_hash(second_root)):
        return f"the roots must be {HASH_SIZE}-byte hashes"
    try:
        path = _hash_list(proof, "proof")
    except ValueError as exc:
        return str(exc)
    first_hash, second_hash = bytes(first_root), bytes(second_root)
    if first > second:
        return f"wrong size: the first tree ({first}) is larger than the second ({second})"
    if first == 0:
        if path:
            return "a proof from the empty tree must be empty"
        if first_hash != EMPTY_ROOT:
            return "the empty tree's root must be SHA-256 of nothing"
        if second == 0 and second_hash != EMPTY_ROOT:
            return "the empty tree's root must be SHA-256 of nothing"
        return None
    if first == second:
        if path:
            return "trees of equal size need an empty proof"
        return None if hmac.compare_digest(first_hash, second_hash) else "root mismatch: equal sizes, different roots"

    # 1. An empty consistency_path fails.
    if not path:
        return "the proof is empty"
    # 2. If first is an exact power of 2, prepend first_hash.
    if first & (first - 1) == 0:
        path.insert(0, first_hash)
    # 3. fn = first - 1, sn = second - 1.
    fn, sn = first - 1, second - 1
    # 4. While LSB(fn) is set, right-shift fn and sn.
    while fn & 1:
        fn >>= 1
        sn >>= 1
    # 5. fr = sr = consistency_path[0].
    fr = sr = path[0]
    # 6. For each subsequent value c:
    for c in path[1:]:
        if sn == 0:  # 6a
            return "proof is too long"
        if fn & 1 or fn == sn:  # 6b
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not (fn & 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1  # 6c
        sn >>= 1
    # 7. fr == first_hash, sr == second_hash and sn == 0.
    if sn != 0:
        return "proof is too short"
    if not hmac.compare_digest(fr, first_hash):
        return f"root mismatch: the proof leads to first root 0x{fr.hex()}, not 0x{first_hash.hex()}"
    if not hmac.compare_digest(sr, second_hash):
        return f"root mismatch: the proof leads to second root 0x{sr.hex()}, not 0x{second_hash.hex()}"
    return None
