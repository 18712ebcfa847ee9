"""core.signatures: who signed (EIP-191), the time window and its two refusals, the once-only guard (on
both backends)."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct

from core import signatures
from core.errors import ServiceError
from core.store import Database, transaction
from core.store import signatures as store

NOW = 1_700_000_000.0


def _sign(key: bytes, text: str) -> str:
    return "0x" + bytes(Account.sign_message(encode_defunct(text=text), key).signature).hex()


def test_recovery_names_the_signer_and_nobody_for_a_malformed_signature() -> None:
    me = Account.from_key(b"\x11" * 32)
    sig = _sign(me.key, "hello")
    assert signatures.signer("hello", sig) == me.address
    assert signatures.recovered("hello", sig) == me.address
    assert signatures.signer("hello!", sig) != me.address
    malformed = "0x" + "00" * 65  # r = s = 0: no public key
    assert signatures.signer("hello", malformed) is None
    with pytest.raises(ServiceError) as refused:
        signatures.recovered("hello", malformed)
    assert (refused.value.status, refused.value.shape()) == (
        401,
        {"type": "invalid_request", "code": "invalid_signature", "message": "the signature does not recover",
         "param": "signature"},
    )  # fmt: skip
    signatures.require_signer("hello", sig, me.address)
    with pytest.raises(ServiceError) as mismatch:
        signatures.require_signer("hello", sig, "0x" + "00" * 19 + "01", param="$.signature", named="self_wallet x")
    assert (mismatch.value.status, mismatch.value.code, mismatch.value.param) == (
        401,
        "signature_mismatch",
        "$.signature",
    )
    assert mismatch.value.message == f"the signature recovers to {me.address}, not to self_wallet x"


def test_window() -> None:
    assert signatures.within_window(1000, 1300.0)
    assert signatures.within_window(1300, 1000.0)
    assert not signatures.within_window(1000, 1300.5)
    assert not signatures.within_window(1301, 1000.0)


def test_the_window_refusals_keep_their_codes() -> None:
    """Two codes for one rule, as the routes have always answered them."""
    signatures.require_fresh(1000, 1300.0)
    signatures.require_in_window(1000, 1300.0)
    with pytest.raises(ServiceError) as expired:
        signatures.require_fresh(1000, 1300.5)
    assert (expired.value.status, expired.value.shape()) == (
        401,
        {"type": "invalid_request", "code": "signature_expired",
         "message": "timestamp must be within 300 s of the server's clock (1300)", "param": "timestamp"},
    )  # fmt: skip
    with pytest.raises(ServiceError) as outside:
        signatures.require_in_window(1000, 1300.5, param="$.timestamp")
    assert (outside.value.status, outside.value.shape()) == (
        401,
        {"type": "invalid_request", "code": "timestamp_out_of_window",
         "message": "timestamp must be within 300 s of the server clock (1300)", "param": "$.timestamp"},
    )  # fmt: skip


def test_store_signatures_are_used_once_until_they_expire(database: Database) -> None:
    conn = database.connect()
    with transaction(conn):
        assert store.use(conn, "d1", NOW + 600, NOW)
        assert not store.use(conn, "d1", NOW + 600, NOW + 1)
        assert store.use(conn, "d1", NOW + 1300, NOW + 601)  # expired entry pruned


def test_a_message_is_taken_once_while_the_window_could_accept_it(database: Database) -> None:
    conn = database.connect()
    d = signatures.digest("acknowledge:ord_1:1700000000")
    with transaction(conn):
        signatures.refuse_used(conn, d, NOW)
        signatures.use_once(conn, d, NOW)
    last = NOW + 2 * signatures.WINDOW_SECONDS  # signed at NOW - window, it passes until NOW + window
    for at in (NOW, last):
        with pytest.raises(ServiceError) as replayed, transaction(conn):
            signatures.refuse_used(conn, d, at)
        assert (replayed.value.status, replayed.value.code) == (409, "signature_replayed")
        with pytest.raises(ServiceError), transaction(conn):
            signatures.use_once(conn, d, at)
    with transaction(conn):
        signatures.give_back(conn, d)  # nothing was sent: the same message may be sent again
        signatures.use_once(conn, d, NOW)
    with transaction(conn):
        signatures.use_once(conn, d, last + 1)  # past every window it could pass: its record expired
