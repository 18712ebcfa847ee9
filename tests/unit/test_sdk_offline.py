"""The Python SDK's pieces that need no service: amounts (never a binary float, exact to the
micro-USDC), the client-side audit checks against the service's own formulas and Merkle library, and
the webhook verifiers against what the service signs and what the Standard Webhooks library signs."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
import standardwebhooks
from agentledger_sdk import (
    AgentLedger,
    AsyncAgentLedger,
    CheckoutSession,
    DecisionLogged,
    from_units,
    to_decimal,
    to_units,
)
from agentledger_sdk import _flows as flows
from agentledger_sdk._models import dumps, loads
from agentledger_sdk.verify import (
    canonical_json,
    decision_chain_hash,
    entry_problems,
    leaf_hash,
    order_chain_hash,
    root_from_inclusion_proof,
)
from agentledger_sdk.webhooks import verify_service, verify_standard
from eth_account import Account
from eth_account.messages import encode_typed_data

import merkle
from core import audit, egress
from core.checkout import rules

# ---- amounts ----------------------------------------------------------------------------------------


def test_tenth_plus_two_tenths_is_three_tenths_and_floats_never_pass() -> None:
    assert 0.1 + 0.2 != 0.3  # the trap
    assert to_decimal("0.1") + to_decimal("0.2") == Decimal("0.3")
    assert to_units(to_decimal("0.1") + to_decimal("0.2")) == 300_000 == to_units("0.3")
    for bad in (0.1 + 0.2, 0.3, 1.0):
        with pytest.raises(TypeError, match="float"):
            to_decimal(bad)
        with pytest.raises(TypeError, match="float"):
            to_units(bad)
    with pytest.raises(TypeError):
        dumps({"amount": 0.3})
    # what goes over the wire is the decimal as written, and what comes back stays exact
    assert dumps({"amount": to_decimal("0.1") + to_decimal("0.2")}) == b'{"amount":0.3}'
    assert loads(b'{"amount": 0.30000000000000004}')["amount"] == Decimal("0.30000000000000004")


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("0.000001", 1),
        ("0.999999", 999_999),
        ("1.000001", 1_000_001),
        ("999999999.999999", 999_999_999_999_999),
        ("250", 250_000_000),
        ("12.500000", 12_500_000),
    ],
)
def test_six_decimal_edges_are_exact_both_ways(text: str, units: int) -> None:
    assert to_units(text) == units
    assert from_units(units) == Decimal(text)
    assert to_units(from_units(units)) == units
    assert dumps({"a": Decimal(text)}) == f'{{"a":{text}}}'.encode()  # never 1E-6


@pytest.mark.parametrize("text", ["0.0000001", "1.0000005", "0.1234567"])
def test_a_seventh_decimal_is_refused_not_rounded(text: str) -> None:
    with pytest.raises(ValueError, match="more than 6 decimals"):
        to_units(text)


def test_checkout_totals_in_units_read_as_exact_usdc() -> None:
    s = CheckoutSession.parse(
        {"id": "cs_1", "totals": [{"type": "subtotal", "amount": 1}, {"type": "total", "amount": 300_001}]}
    )
    assert (s.total_units, s.total) == (300_001, Decimal("0.300001"))


def test_a_value_moving_body_carries_the_decimal_as_given() -> None:
    flow = flows.create_item("agl_0123456789ab", "report", "standard", Decimal("0.1") + Decimal("0.2"), None, None)
    call = next(flow)
    assert isinstance(call, flows.Call) and call.idempotency_key
    assert json.loads(call.body or b"", parse_float=Decimal)["price"] == Decimal("0.3")
    assert b'"price":0.3' in (call.body or b"")


# ---- the audit log's formulas, checked against the service's own ---------------------------------------


def test_chain_hashes_and_canonical_json_agree_with_the_service() -> None:
    payload: dict[str, Any] = {
        "agent_id": "0c9a3c34-3d2b-4c8e-9d7e-5b1f7d6e2a10",
        "content_hash": "ab" * 32,
        "correlation_ref": None,
        "event_type": "critical",
        "evidence_manifest": [{"sha256": "cd" * 32, "type": "pdf"}],
        "model_id": "gpt-x",
        "model_version": "2026-01",
        "timestamp": "2026-11-28T04:00:00.000Z",
        "note": "café ✓ \u2028",
        "n": -(2**53 - 1),
    }
    assert canonical_json(payload) == audit.canonical(payload)
    body = audit.canonical(payload)
    ph = audit.sha256_hex(body)
    assert decision_chain_hash(payload["agent_id"], 3, "ef" * 32, ph) == audit.decision_chain_hash(
        payload["agent_id"], 3, "ef" * 32, ph
    )
    assert order_chain_hash("genesis", body) == audit.order_chain_hash("genesis", body)
    assert leaf_hash(7, "agent:x", "ab" * 32) == audit.leaf_hash(7, "agent:x", "ab" * 32)


def test_inclusion_proofs_of_the_service_merkle_library_verify_here_and_mutations_do_not() -> None:
    leaves = [merkle.leaf_hash(f"leaf {i}".encode()) for i in range(13)]
    for size in range(1, len(leaves) + 1):
        root = merkle.root_from_leaf_hashes(leaves[:size])
        for index in range(size):
            proof = merkle.inclusion_proof(leaves[:size], index)
            assert root_from_inclusion_proof(leaves[index], index, size, proof) == root
            if proof:
                flipped = [bytes([proof[0][0] ^ 1]) + proof[0][1:], *proof[1:]]
                assert root_from_inclusion_proof(leaves[index], index, size, flipped) != root
                with pytest.raises(ValueError, match="too short"):
                    root_from_inclusion_proof(leaves[index], index, size, proof[:-1])


def _verification(entries: int, seq: int) -> dict[str, Any]:
    """What GET /verify shows of entry `seq` of one decision stream of `entries`, built with the
    service's own functions."""
    agent = "0c9a3c34-3d2b-4c8e-9d7e-5b1f7d6e2a10"
    stream, prev, rows = f"agent:{agent}", "genesis", []
    for i in range(1, entries + 1):
        payload = {
            "agent_id": agent,
            "content_hash": hashlib.sha256(str(i).encode()).hexdigest(),
            "event_type": "routine",
        }
        body = audit.canonical(payload)
        chain = audit.decision_chain_hash(agent, i, prev, audit.sha256_hex(body))
        rows.append((i, payload, body, prev, chain))
        prev = chain
    leaves = [audit.leaf_hash(i, stream, chain) for i, _, _, _, chain in rows]
    i, payload, body, prev, chain = rows[seq - 1]
    return {
        "audit_id": i,
        "stream": stream,
        "seq": i,
        "payload": payload,
        "payload_canonical": body.decode(),
        "payload_hash": audit.sha256_hex(body),
        "prev_hash": prev,
        "chain_hash": chain,
        "leaf": {"hash": "0x" + leaves[i - 1].hex()},
        "inclusion": {
            "tree_size": entries,
            "root": "0x" + merkle.root_from_leaf_hashes(leaves).hex(),
            "proof": ["0x" + p.hex() for p in merkle.inclusion_proof(leaves, i - 1)],
            "anchored": False,
        },
        "anchor": None,
    }


def test_an_entry_verifies_and_every_kind_of_tampering_is_named() -> None:
    good = _verification(5, 3)
    assert entry_problems(good) == []
    changed_payload = {**good, "payload": {**good["payload"], "event_type": "critical"}}
    assert "payload_canonical is not the RFC 8785 form of payload" in entry_problems(changed_payload)
    both = {**changed_payload, "payload_canonical": good["payload_canonical"].replace("routine", "critical")}
    assert any("chain_hash does not recompute" in p for p in entry_problems(both))
    assert any("prev_hash" in p for p in entry_problems({**good, "prev_hash": "genesis"}))
    moved = {**good, "audit_id": 4}
    assert any("inclusion proof" in p or "leaf hash" in p for p in entry_problems(moved))
    other_root = {**good, "inclusion": {**good["inclusion"], "root": "0x" + "00" * 32}}
    assert any("leads to" in p for p in entry_problems(other_root))
    anchored_elsewhere = {**good, "anchor": {"root": "0x" + "11" * 32}}
    assert any("anchored root" in p for p in entry_problems(anchored_elsewhere))


# ---- webhook verification (moved here from the service, which only signs) ------------------------------


def test_the_service_no_longer_carries_the_receivers_checks() -> None:
    assert not hasattr(egress, "verify_service") and not hasattr(egress, "verify_standard")


def test_what_the_service_signs_verifies_with_the_secret_plain_or_whsec() -> None:
    secret, body, ts = egress.new_secret(), b'{"event":"job.state_changed","n":"\xc3\xa9"}', 1_800_000_000
    headers = {
        **egress.standard_headers("evt_1", ts, body, secret),
        "X-Service-Signature": egress.sign_service(body, secret),
    }
    for key in (secret, egress.standard_secret(secret)):
        assert verify_service(body, key, headers["X-Service-Signature"])
        assert verify_standard(body, key, headers, now=ts)
        assert not verify_service(body + b" ", key, headers["X-Service-Signature"])
        assert not verify_standard(body, key, headers, now=ts + 301)
    assert not verify_standard(body, "whsec_not base64!", headers, now=ts)


def test_what_the_standard_webhooks_library_signs_verifies_here() -> None:
    secret = egress.standard_secret("a shared secret of ours")
    body = '{"type":"hire.job_state_changed"}'
    when = datetime.fromtimestamp(1_800_000_000, tz=UTC)
    signature = standardwebhooks.Webhook(secret).sign("msg_1", when, body)
    headers = {"webhook-id": "msg_1", "webhook-timestamp": "1800000000", "webhook-signature": signature}
    assert verify_standard(body.encode(), secret, headers, now=1_800_000_000)
    assert verify_standard(body.encode(), "a shared secret of ours", headers, now=1_800_000_000)
    assert not verify_standard(body.encode(), "another secret", headers, now=1_800_000_000)


# ---- one flow, two drivers: retries keep the Idempotency-Key ------------------------------------------


def test_both_clients_drive_a_flow_retrying_503_and_429_with_the_same_idempotency_key() -> None:
    logged = {
        "audit_id": 9,
        "chain_hash": "ab" * 32,
        "content_hash": "cd" * 32,
        "tier": "routine",
        "timestamp": "2026-11-28T04:00:00.000Z",
        "verification_url": "http://x/verify/9",
    }
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Idempotency-Key"))
        if len(seen) % 3 == 1:
            return httpx.Response(
                503, json={"type": "service_error", "code": "unavailable", "message": "x"}, headers={"Retry-After": "0"}
            )
        if len(seen) % 3 == 2:
            return httpx.Response(
                429,
                json={"type": "invalid_request", "code": "rate_limited", "message": "x"},
                headers={"Retry-After": "0"},
            )
        return httpx.Response(201, json=logged)

    args = ("0c9a3c34-3d2b-4c8e-9d7e-5b1f7d6e2a10", "routine", "cd" * 32, "gpt-x", "1")
    with AgentLedger("http://sdk.test", "aglk_" + "0" * 32, transport=httpx.MockTransport(answer)) as al:
        sync = al.log_decision(*args)

    async def run_async() -> DecisionLogged:
        async def async_answer(request: httpx.Request) -> httpx.Response:
            return answer(request)

        async with AsyncAgentLedger(
            "http://sdk.test", "aglk_" + "0" * 32, transport=httpx.MockTransport(async_answer)
        ) as aal:
            return await aal.log_decision(*args)

    asynced = asyncio.run(run_async())
    assert sync.audit_id == asynced.audit_id == 9 and sync.chain_hash == "ab" * 32
    assert len(seen) == 6 and seen[0] is not None
    assert seen[0] == seen[1] == seen[2] and seen[3] == seen[4] == seen[5] and seen[0] != seen[3]


# ---- the checkout's funding consent: signed only when it says what the session says -------------------


def _session_with_consent(**change: Any) -> CheckoutSession:
    gateway = "0x" + "12" * 20
    typed = rules.checkout_typed_data(
        chain_id=31337,
        gateway=gateway,
        session_id="cs_1",
        buyer=gateway,
        provider_token_id=4,
        amount=300_000,
        deadline=9,
    )
    typed["message"]["buyer"] = "{payer}"
    typed = {**typed, "domain": {**typed["domain"], **change.pop("domain", {})}}
    typed["message"].update(change.pop("message", {}))
    payment = {"chain_id": 31337, "spender": gateway, "amount": 300_000, "typed_data": typed}
    body = {"id": "cs_1", "totals": [{"type": "total", "amount": 300_000}], **change}
    body["capabilities"] = {"payment": {"handlers": [{"config": payment}]}}
    return CheckoutSession.parse(body)


def test_the_funding_consent_is_the_services_typed_data_signed_by_the_payer() -> None:
    payer = Account.create()
    session = _session_with_consent()
    signature = flows.funding_consent(session, payer)
    typed = {**session.payment["typed_data"]}
    typed["message"] = {**typed["message"], "buyer": payer.address}
    assert Account.recover_message(encode_typed_data(full_message=typed), signature=signature) == payer.address


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"message": {"amount": 300_001}}, "the amount is not the session's total"),
        ({"message": {"jobId": "0x" + "00" * 32}}, "the job is not this session's"),
        ({"domain": {"chainId": 1}}, "the chain is not the session's"),
        ({"domain": {"verifyingContract": "0x" + "34" * 20}}, "the verifying contract is not the spender"),
        ({"domain": {"name": "something else"}}, "the domain is not the PaymentGateway's"),
    ],
)
def test_a_consent_that_differs_from_the_session_is_refused_before_signing(change: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        flows.funding_consent(_session_with_consent(**change), Account.create())
