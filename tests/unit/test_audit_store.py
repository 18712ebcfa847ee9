"""The audit log store: chain rules per stream, and the stored Merkle tree against the pure library."""

from __future__ import annotations

import hashlib

import apsw
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

import merkle
from core import audit
from core.store import Database, transaction
from core.store import audit as store


@pytest.fixture()
def conn(database: Database) -> apsw.Connection:
    return database.connect()


def _order_rule(seq: int, prev: str, body: bytes) -> str:
    return audit.order_chain_hash(prev, body)


def _append_many(conn: apsw.Connection, n: int) -> list[store.AuditEntry]:
    out = []
    with transaction(conn):
        for i in range(n):
            out.append(
                audit.append(
                    conn, stream=f"order:o{i % 3}", kind="t", payload={"i": i}, chain=_order_rule, now=float(i)
                )
            )
    return out


def test_order_chain_rule_by_hand(conn: apsw.Connection) -> None:
    with transaction(conn):
        first = audit.append(conn, stream="order:x", kind="t", payload={"b": 2, "a": "é"}, chain=_order_rule, now=1.0)
        second = audit.append(conn, stream="order:x", kind="t", payload={"n": 1}, chain=_order_rule, now=2.0)
    body1 = '{"a":"é","b":2}'.encode()
    assert first.payload == body1.decode()
    assert first.prev_hash == "genesis" and first.seq == 1
    assert first.chain_hash == hashlib.sha256(b"genesis" + body1).hexdigest()
    assert second.seq == 2 and second.prev_hash == first.chain_hash
    assert second.chain_hash == hashlib.sha256(first.chain_hash.encode() + b'{"n":1}').hexdigest()
    leaf = hashlib.sha256(b"\x00" + f"1:order:x:{first.chain_hash}".encode()).digest()
    assert first.leaf_hash == leaf


def test_decision_chain_rule_by_hand() -> None:
    got = audit.decision_chain_hash("u-1", 3, "ab" * 32, "cd" * 32)
    assert got == hashlib.sha256(f"u-1:3:{'ab' * 32}:{'cd' * 32}".encode()).hexdigest()


def test_streams_have_their_own_sequences(conn: apsw.Connection) -> None:
    entries = _append_many(conn, 7)
    assert [e.id for e in entries] == list(range(1, 8))
    assert [e.seq for e in store.stream_entries(conn, "order:o1")] == [1, 2]
    assert store.get(conn, 5) == entries[4]
    assert store.get(conn, 99) is None


def test_floats_are_refused_in_payloads(conn: apsw.Connection) -> None:
    with pytest.raises(TypeError), transaction(conn):
        audit.append(conn, stream="s", kind="t", payload={"x": [1.5]}, chain=_order_rule, now=0.0)
    assert store.size(conn) == 0


def test_roots_and_proofs_match_the_pure_library_for_every_size(conn: apsw.Connection) -> None:
    leaves = [e.leaf_hash for e in _append_many(conn, 37)]
    assert store.root(conn, 0) == merkle.EMPTY_ROOT
    for n in range(1, 38):
        assert store.root(conn, n) == merkle.root_from_leaf_hashes(leaves[:n])
        for i in range(n):
            assert store.inclusion_proof(conn, i, n) == merkle.inclusion_proof(leaves[:n], i)
        for m in range(n + 1):
            assert store.consistency_proof(conn, m, n) == merkle.consistency_proof(leaves[:n], m)


def test_bad_sizes_are_refused(conn: apsw.Connection) -> None:
    _append_many(conn, 4)
    with pytest.raises(ValueError):
        store.root(conn, 5)
    with pytest.raises(ValueError):
        store.inclusion_proof(conn, 4, 4)
    with pytest.raises(ValueError):
        store.consistency_proof(conn, 3, 2)


def test_a_missing_node_is_reported_not_guessed(conn: apsw.Connection) -> None:
    _append_many(conn, 4)
    conn.execute("DELETE FROM merkle_nodes WHERE level = 2 AND idx = 0")
    with pytest.raises(LookupError):
        store.root(conn, 4)


_json_leaf = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text()
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@given(_json)
@settings(max_examples=400, deadline=None)
def test_canonical_fast_path_equals_rfc8785(value: object) -> None:
    try:
        expected = rfc8785.dumps(value)
    except Exception as exc:  # e.g. lone surrogates: the fast path must refuse them too
        with pytest.raises(type(exc)):
            audit.canonical(value)
        return
    assert audit.canonical(value) == expected


def test_canonical_edge_cases() -> None:
    cases: list[object] = [
        {"b": 1, "a": '\u001f"\\\u2028\u00e9\U0001f600\x7f'},
        {"\u00e9": 1, "z": 2, "\U0001f600": 3, "\uff61": 4},  # non-ASCII keys: the library's UTF-16 order
        [2**53 - 1, -(2**53) + 1, True, None, "", [], {}],
    ]
    for value in cases:
        assert audit.canonical(value) == rfc8785.dumps(value)
    with pytest.raises(rfc8785.IntegerDomainError):
        audit.canonical({"x": 2**53})
