"""CIDs of deliverables, exactly as `ipfs add --cid-version=1` of Kubo computes them (pure, no I/O).

Kubo's importer with those flags (its defaults for CIDv1):

- chunking: fixed 262144-byte (256 KiB) chunks; the last one may be shorter; the empty file is
  one empty chunk.
- leaves: raw blocks (the chunk bytes themselves), CID codec raw (0x55), sha2-256.
- one chunk (and so the empty file): the file's CID is that raw leaf's CID, no wrapper node.
- more chunks: a balanced tree. The leaves are taken 174 at a time (Kubo's max links per node),
  each group becomes one dag-pb (0x70) node; the resulting nodes are grouped 174 at a time again,
  and so on until one node remains, the root. Every node on a level is full except the last one.
  So 175 chunks give a root with two children (one of 174 leaves, one of 1 leaf).
- a dag-pb node is the protobuf PBNode, serialised Links first (field 2, each a PBLink) then Data
  (field 1), as every dag-pb encoder does:
    PBLink { Hash (1): the child's binary CID, Name (2): "" (present, empty), Tsize (3): the
             byte size of the child's whole DAG (a raw leaf: its length; a node: its own block
             plus its links' Tsizes) }
    Data = UnixFS Data { Type (1): File (2), filesize (3): content bytes below the node,
                         blocksizes (4, repeated, not packed): each child's content bytes }
- CIDv1 in base32 (multibase prefix "b"), multihash sha2-256.

The reference in tests is the npm ipfs-unixfs-importer run with those settings
(tests/ipfs_reference.js); the CIDv0 mode (non-raw leaves, Kubo's old default) is kept private
so that tests can also compare against CIDs a real Kubo computed in that mode.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from multiformats import CID, multihash

CHUNK_SIZE = 262_144
MAX_LINKS = 174

_RAW = "raw"
_DAG_PB = "dag-pb"
_UNIXFS_FILE = 2


@dataclass(frozen=True)
class _Node:
    cid: CID
    #: The PBLink Tsize of a link to this node: the bytes of its whole DAG.
    tsize: int
    #: Content bytes of the file below this node (the UnixFS blocksize entry of a link to it).
    filesize: int


# ---- a minimal protobuf writer (varints and length-delimited fields are all dag-pb needs) -----


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _field_bytes(number: int, value: bytes) -> bytes:
    return _varint((number << 3) | 2) + _varint(len(value)) + value


def _unixfs_file(filesize: int, blocksizes: list[int], data: bytes = b"") -> bytes:
    out = _field_varint(1, _UNIXFS_FILE)
    if data:
        out += _field_bytes(2, data)
    out += _field_varint(3, filesize)
    for size in blocksizes:
        out += _field_varint(4, size)
    return out


def _pb_node(links: list[_Node], data: bytes) -> bytes:
    out = bytearray()
    for child in links:
        link = _field_bytes(1, bytes(child.cid)) + _field_bytes(2, b"") + _field_varint(3, child.tsize)
        out += _field_bytes(2, link)
    out += _field_bytes(1, data)
    return bytes(out)


# ---- the importer --------------------------------------------------------------------------------


def _cid(block: bytes, codec: str, version: int) -> CID:
    digest = multihash.wrap(hashlib.sha256(block).digest(), "sha2-256")
    return CID("base32" if version == 1 else "base58btc", version, codec, digest)


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    if not data:
        yield b""
        return
    view = memoryview(data)
    for start in range(0, len(data), size):
        yield bytes(view[start : start + size])


def _leaf(chunk: bytes, raw_leaves: bool, version: int) -> tuple[_Node, bytes]:
    if raw_leaves:
        return _Node(_cid(chunk, _RAW, version), len(chunk), len(chunk)), chunk
    block = _pb_node([], _unixfs_file(len(chunk), [], chunk))
    return _Node(_cid(block, _DAG_PB, version), len(block), len(chunk)), block


def _parent(children: list[_Node], version: int) -> tuple[_Node, bytes]:
    sizes = [c.filesize for c in children]
    block = _pb_node(children, _unixfs_file(sum(sizes), sizes))
    tsize = len(block) + sum(c.tsize for c in children)
    return _Node(_cid(block, _DAG_PB, version), tsize, sum(sizes)), block


def _build(
    data: bytes,
    *,
    raw_leaves: bool = True,
    version: int = 1,
    chunk_size: int = CHUNK_SIZE,
    max_links: int = MAX_LINKS,
) -> tuple[CID, list[tuple[CID, bytes]]]:
    """The root CID and every block (leaves first, the root last). Only tests change the keyword
    arguments (Kubo's CIDv0 mode; small chunks and fan-out to reach deep trees cheaply)."""
    blocks: list[tuple[CID, bytes]] = []
    level: list[_Node] = []
    for chunk in _chunks(data, chunk_size):
        node, block = _leaf(chunk, raw_leaves, version)
        level.append(node)
        blocks.append((node.cid, block))
    if len(level) == 1:  # one chunk: the leaf is the file
        return level[0].cid, blocks
    while True:
        parents: list[_Node] = []
        for start in range(0, len(level), max_links):
            node, block = _parent(level[start : start + max_links], version)
            parents.append(node)
            blocks.append((node.cid, block))
        if len(parents) == 1:
            return parents[0].cid, blocks
        level = parents


def cid_of(data: bytes) -> str:
    """The CIDv1 (base32) `ipfs add --cid-version=1` gives for `data`."""
    return str(_build(data)[0])


def blocks_of(data: bytes) -> list[tuple[str, bytes]]:
    """Every block of `data`'s DAG as (CIDv1 text, block bytes), leaves first and the root last
    (the root's CID is cid_of(data)). For a one-chunk file this is the single raw leaf."""
    return [(str(cid), block) for cid, block in _build(data)[1]]


def parse_cid(text: str) -> CID:
    """A CID in any multibase (v1) or base58btc "Qm..." (v0); ValueError when it is not one."""
    if not text or len(text) > 512 or not text.isascii():
        raise ValueError("not a CID")
    try:
        cid = CID.decode(text)
    except Exception as exc:  # multiformats raises several kinds (KeyError, ValueError, its own)
        raise ValueError(f"not a CID: {exc}") from exc
    if cid.version not in (0, 1):
        raise ValueError("unsupported CID version")
    return cid


def is_cid(text: str) -> bool:
    try:
        parse_cid(text)
    except ValueError:
        return False
    return True


def canonical(text: str) -> str:
    """The CIDv1 base32 text of a CID given as v0 or v1 in any base: the key content is stored under."""
    cid = parse_cid(text)
    return str(cid.set(version=1, base="base32") if cid.version == 0 else cid.set(base="base32"))
