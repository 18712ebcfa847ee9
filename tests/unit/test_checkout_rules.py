"""The pure rules of escrow checkout (core.checkout): tiers and prices, deadlines, expiry,
totals, the deterministic job id and the provider-link message."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct
from hypothesis import given
from hypothesis import strategies as st
from web3 import Web3

from core import signatures
from core.checkout import rules
from core.money import MAX_AMOUNT_UNITS


def test_tiers_and_reference_price() -> None:
    assert {n: (t.hours, t.default_price) for n, t in rules.TIERS.items()} == {
        "standard": (48, 250_000_000),
        "rush": (24, 375_000_000),
        "deep": (72, 500_000_000),
    }


def test_job_id_is_keccak_of_the_prefixed_session_id() -> None:
    sid = "cs_0123456789abcdef01234567"
    expected = "0x" + bytes(Web3.keccak(b"agentledger:checkout:" + sid.encode())).hex()
    assert rules.job_id_for(sid) == expected
    assert len(expected) == 66 and expected == expected.lower()
    assert rules.job_id_for(sid) == rules.job_id_for(sid)
    assert rules.job_id_for(sid + "x") != expected
    # not a plain SHA-256 or an unprefixed keccak (the domain string is part of the rule)
    assert expected[2:] != hashlib.sha256(sid.encode()).hexdigest()
    assert expected != "0x" + bytes(Web3.keccak(sid.encode())).hex()


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_job_ids_differ_for_different_sessions(a: str, b: str) -> None:
    assert (rules.job_id_for(a) == rules.job_id_for(b)) == (a == b)


def test_work_deadline_is_the_expiry_plus_the_slowest_tier() -> None:
    assert rules.work_deadline(1000.0, ["rush"]) == 1000 + 24 * 3600
    assert rules.work_deadline(1000.0, ["standard", "rush"]) == 1000 + 48 * 3600
    assert rules.work_deadline(0.0, ["rush", "deep", "standard"]) == 72 * 3600
    # a fractional expiry rounds up: the deadline is never before the session's expiry + the tier
    assert rules.work_deadline(1000.2, ["rush"]) == 1001 + 24 * 3600


def test_expiry_applies_only_to_incomplete_sessions() -> None:
    exp = rules.session_expires_at(100.0, 3600.0)
    assert exp == 3700.0
    assert not rules.is_expired("incomplete", exp, 3699.999)
    assert rules.is_expired("incomplete", exp, 3700.0)
    for status in ("complete_in_progress", "completed", "cancelled", "expired"):
        assert not rules.is_expired(status, exp, 10_000.0)


def test_totals_and_line_items() -> None:
    lines = [
        rules.PricedLine("item_a", "Audit", "standard", 2, 250_000_000),
        rules.PricedLine("item_b", "Rush fix", "rush", 1, 375_500_000),
    ]
    total = rules.session_total(lines)
    assert total == 875_500_000
    assert [t["amount"] for t in rules.totals_json(total)] == [total, total, total]
    assert rules.totals_json(total)[-1]["type"] == "total"
    li = rules.line_items_json(lines)
    assert [x["id"] for x in li] == ["li_1", "li_2"]
    assert li[0]["item"]["id"] == "item_a" and li[0]["quantity"] == 2 and li[0]["unit_amount"] == 250_000_000
    assert li[0]["totals"][-1] == {"type": "total", "display_text": "Total", "amount": 500_000_000}
    assert li[1]["delivery_hours"] == 24
    with pytest.raises(rules.TotalTooLarge):
        rules.session_total([rules.PricedLine("x", "x", "deep", 2, MAX_AMOUNT_UNITS)])


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("0x" + "ab" * 20, True),
        ("0x" + "AB" * 20, True),
        ("0x" + "ab" * 19, False),
        ("0x" + "ab" * 21, False),
        ("ab" * 21, False),
        ("0x" + "zz" * 20, False),
        ("", False),
    ],
)
def test_address_format(value: str, ok: bool) -> None:
    assert rules.valid_address(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("a@b.co", True),
        ("buyer.one+x@example.com", True),
        ("a@b", False),
        ("no-at.example.com", False),
        ("a b@c.d", False),
    ],
)
def test_email_format(value: str, ok: bool) -> None:
    assert rules.valid_email(value) is ok


def test_provider_link_message_is_exact_and_signable() -> None:
    acct = Account.from_key(b"\x11" * 32)
    msg = rules.provider_link_message(
        chain_id=31337,
        agent_wallet="agl_0123456789ab",
        self_wallet=acct.address,
        owner="0x" + "0" * 39 + "1",
        timestamp=5,
    )
    assert msg == (
        "agentledger provider link\nchain: 31337\nagent: agl_0123456789ab\n"
        f"self_wallet: {acct.address}\nowner: 0x0000000000000000000000000000000000000001\ntimestamp: 5"
    )
    sig = acct.sign_message(encode_defunct(text=msg)).signature
    assert Account.recover_message(encode_defunct(text=msg), signature=sig) == acct.address


def test_funding_typed_data_is_exact_and_binds_every_field() -> None:
    payer = Account.from_key(b"\x22" * 32)
    gateway = "0x" + "ab" * 20
    fields: dict[str, Any] = {
        "chain_id": 8453,
        "gateway": gateway,
        "session_id": "cs_1",
        "provider_token_id": 7,
        "amount": 250_000_000,
        "deadline": 1_900_000_000,
    }
    typed = rules.checkout_typed_data(**fields, buyer=payer.address.lower())
    assert typed == {
        "domain": {
            "name": "agentledger PaymentGateway",
            "version": "1",
            "chainId": 8453,
            "verifyingContract": Web3.to_checksum_address(gateway),
        },
        "types": rules.FUNDING_TYPES,
        "primaryType": "Funding",
        "message": {
            "jobId": rules.job_id_for("cs_1"),
            "buyer": payer.address,
            "providerTokenId": 7,
            "amount": 250_000_000,
            "deadline": 1_900_000_000,
        },
    }
    assert [f["name"] for f in rules.FUNDING_TYPES["Funding"]] == [
        "jobId",
        "buyer",
        "providerTokenId",
        "amount",
        "deadline",
    ]
    sig = payer.sign_typed_data(full_message=typed).signature.to_0x_hex()
    assert rules.valid_signature(sig) and signatures.typed_signer(typed, sig) == payer.address
    others = {
        "chain_id": 84532,
        "gateway": "0x" + "cd" * 20,
        "session_id": "cs_2",
        "provider_token_id": 8,
        "amount": 1,
        "deadline": 1_900_000_001,
    }
    for name, other in others.items():
        changed = rules.checkout_typed_data(**{**fields, name: other}, buyer=payer.address)
        assert changed != typed and signatures.typed_signer(changed, sig) != payer.address
    another_payer = rules.checkout_typed_data(**fields, buyer="0x" + "ef" * 20)
    assert signatures.typed_signer(another_payer, sig) != payer.address


def test_signature_shape_and_unrecoverable_signatures() -> None:
    good = "0x" + "1b" * 65
    assert rules.valid_signature(good) and rules.valid_signature(good.upper().replace("0X", "0x"))
    for bad in ("", "0x", good[:-2], good + "00", good[2:] + "00", "0x" + "zz" * 65):
        assert not rules.valid_signature(bad)
    typed = rules.funding_typed_data(
        chain_id=1,
        gateway="0x" + "ab" * 20,
        job_id="0x" + "00" * 32,
        buyer="0x" + "cd" * 20,
        provider_token_id=1,
        amount=1,
        deadline=1,
    )
    assert signatures.typed_signer(typed, "0x" + "00" * 65) is None  # r = s = 0: no public key
