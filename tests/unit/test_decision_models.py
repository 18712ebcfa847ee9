"""The decision-log request schema (api.decisions.parse_decision), one test per strict-schema rule,
and the decision chain rule against vectors computed here with hashlib alone."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from api.decisions import as_decision, parse_decision
from api.errors import ApiError
from core import audit, decisions
from core.isotime import iso_utc

H = "ab" * 32
H2 = "cd" * 32
AGENT = "0f8fad5b-d9cb-469f-a165-70867728950e"


def body(**over: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "event_type": "routine",
        "content_hash": H,
        "model_id": "gpt-4o",
        "model_version": "2024-08-06",
    }
    for k, v in over.items():
        if v is DROP:
            b.pop(k, None)
        else:
            b[k] = v
    return b


DROP = object()


def parse(b: dict[str, Any] | bytes) -> Any:
    return parse_decision(b if isinstance(b, bytes) else json.dumps(b).encode())[0]


def refused(b: dict[str, Any] | bytes) -> ApiError:
    with pytest.raises(ApiError) as info:
        parse(b)
    assert info.value.status == 400
    return info.value


# ---- accepted ---------------------------------------------------------------------------------


def test_minimal_and_full_bodies_are_accepted() -> None:
    r = parse(body())
    assert (r.event_type, r.content_hash, r.model_id, r.model_version) == ("routine", H, "gpt-4o", "2024-08-06")
    assert r.evidence_manifest is None and r.correlation_ref is None and r.webhook_url is None
    full = parse(
        body(
            event_type="critical",
            evidence_manifest=[
                {"type": "pdf", "sha256": H},
                {"type": "json", "sha256": H2},
                {"type": "text", "sha256": H},
            ],
            correlation_ref="c0ffee-42",
            webhook_url="https://example.com/hook",
            webhook_secret="s" * 32,
        )
    )
    assert [e.type for e in full.evidence_manifest or ()] == ["pdf", "json", "text"]
    assert parse(body(event_type="high_stakes")).event_type == "high_stakes"


# ---- strict schema: one test per rule -----------------------------------------------------------


@pytest.mark.parametrize("field", ["event_type", "content_hash", "model_id", "model_version"])
def test_required_field_missing(field: str) -> None:
    e = refused(body(**{field: DROP}))
    assert (e.code, e.param) == ("missing_field", field)


@pytest.mark.parametrize("field", ["agent_name", "user_email", "ip", "extra"])
def test_unknown_field(field: str) -> None:
    e = refused(body(**{field: "x"}))
    assert (e.code, e.param) == ("unknown_field", field)


def test_unknown_field_inside_an_evidence_item() -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf", "sha256": H, "name": "x.pdf"}]))
    assert (e.code, e.param) == ("unknown_field", "evidence_manifest[0].name")


@pytest.mark.parametrize("tier", ["ROUTINE", "low", "", 1, None])
def test_unknown_tier(tier: Any) -> None:
    e = refused(body(event_type=tier))
    assert (e.code, e.param) == ("invalid_field", "event_type")


@pytest.mark.parametrize("value", ["AB" * 32, "ab" * 31, "ab" * 33, "a" * 63, "", "0x" + "ab" * 31, 12345])
def test_malformed_content_hash(value: Any) -> None:
    e = refused(body(content_hash=value))
    assert (e.code, e.param) == ("invalid_field", "content_hash")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model_id", ""),
        ("model_id", "gpt 4o"),  # no spaces: no free text
        ("model_id", "x" * 129),
        ("model_version", "v 1"),
        ("model_version", "1" * 65),
        ("correlation_ref", "someone@example.com"),  # no e-mail addresses
        ("correlation_ref", "ticket 42"),
        ("correlation_ref", ""),
        ("webhook_secret", "short"),
        ("webhook_secret", "has spaces in it, sixteen+"),
        ("webhook_url", ""),
    ],
)
def test_identifier_patterns(field: str, value: str) -> None:
    e = refused(body(**{field: value}))
    assert (e.code, e.param) == ("invalid_field", field)


@pytest.mark.parametrize("kind", ["docx", "PDF", "", None])
def test_evidence_type_outside_the_list(kind: Any) -> None:
    e = refused(body(evidence_manifest=[{"type": kind, "sha256": H}]))
    assert (e.code, e.param) == ("invalid_field", "evidence_manifest[0].type")


def test_evidence_item_without_its_hash() -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf"}]))
    assert (e.code, e.param) == ("missing_field", "evidence_manifest[0].sha256")


def test_evidence_hash_of_wrong_length() -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf", "sha256": "ab" * 20}]))
    assert (e.code, e.param) == ("invalid_field", "evidence_manifest[0].sha256")


def test_too_many_evidence_items() -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf", "sha256": H}] * 65))
    assert (e.code, e.param) == ("invalid_field", "evidence_manifest")


def test_critical_tier_requires_evidence() -> None:
    for manifest in (DROP, []):
        e = refused(body(event_type="critical", evidence_manifest=manifest))
        assert (e.code, e.param) == ("evidence_required", "evidence_manifest")


@pytest.mark.parametrize("raw", [b"[]", b"not json", b'{"a": NaN}', b"[" * 100 + b"]" * 100])
def test_body_must_be_a_json_object(raw: bytes) -> None:
    assert refused(raw).code == "invalid_json"


# ---- raw content: evidence_content_not_accepted --------------------------------------------------

CONTENT = "evidence_content_not_accepted"


@pytest.mark.parametrize("field", ["content", "text", "prompt", "output", "evidence", "base64", "data"])
def test_content_field_at_top_level(field: str) -> None:
    e = refused(body(**{field: "the model said yes because ..."}))
    assert (e.code, e.param) == (CONTENT, field)


@pytest.mark.parametrize(
    "value",
    [
        "The applicant's income was verified against the pay slips.",  # text
        "SGVsbG8gd29ybGQsIHRoaXMgaXMgYmFzZTY0IGNvbnRlbnQ=",  # base64
        {"sha256": H},  # an object instead of a hash
        [H],
    ],
)
def test_content_instead_of_the_content_hash(value: Any) -> None:
    e = refused(body(content_hash=value))
    assert (e.code, e.param) == (CONTENT, "content_hash")


@pytest.mark.parametrize(
    "item",
    [
        "raw evidence text",
        "JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+Pg==",  # a base64 PDF
        ["pdf", H],
    ],
)
def test_content_instead_of_an_evidence_item(item: Any) -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf", "sha256": H}, item]))
    assert (e.code, e.param) == (CONTENT, "evidence_manifest[1]")


@pytest.mark.parametrize(
    "value", ["JVBERi0xLjQKJcfsj6IK", "plain text of the document", {"algo": "sha256", "digest": H}, [H]]
)
def test_content_instead_of_an_evidence_hash(value: Any) -> None:
    e = refused(body(evidence_manifest=[{"type": "text", "sha256": value}]))
    assert (e.code, e.param) == (CONTENT, "evidence_manifest[0].sha256")


@pytest.mark.parametrize("field", ["content", "data", "base64", "text"])
def test_content_field_inside_an_evidence_item(field: str) -> None:
    e = refused(body(evidence_manifest=[{"type": "pdf", "sha256": H, field: "JVBERi0x"}]))
    assert (e.code, e.param) == (CONTENT, f"evidence_manifest[0].{field}")


@pytest.mark.parametrize("manifest", ["a whole document pasted here", {"type": "pdf", "sha256": H}])
def test_evidence_manifest_that_is_not_an_array(manifest: Any) -> None:
    e = refused(body(evidence_manifest=manifest))
    assert (e.code, e.param) == (CONTENT, "evidence_manifest")


# ---- the chain rule against hand-computed vectors ----------------------------------------------------


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def test_decision_chain_rule_vectors() -> None:
    req = parse(body(evidence_manifest=[{"type": "pdf", "sha256": H2}], correlation_ref="ref-1"))
    ts = iso_utc(1_800_000_000.25)
    assert ts == "2027-01-15T08:00:00.250Z"
    payload = decisions.payload(AGENT, as_decision(req), ts)
    # RFC 8785 for this ASCII-only, number-free object is sorted keys without whitespace.
    expected_json = (
        '{"agent_id":"0f8fad5b-d9cb-469f-a165-70867728950e","content_hash":"' + H + '","correlation_ref":"ref-1",'
        '"event_type":"routine","evidence_manifest":[{"sha256":"' + H2 + '","type":"pdf"}],'
        '"model_id":"gpt-4o","model_version":"2024-08-06","timestamp":"2027-01-15T08:00:00.250Z"}'
    ).encode()
    assert audit.canonical(payload) == expected_json
    payload_hash = sha(expected_json)
    rule = decisions.chain_rule(AGENT)
    first = rule(1, "genesis", expected_json)
    assert first == sha(f"{AGENT}:1:genesis:{payload_hash}".encode())
    second = rule(2, first, expected_json)
    assert second == sha(f"{AGENT}:2:{first}:{payload_hash}".encode())
    # Fixed literal vectors, computed with `printf '%s' '<input>' | sha256sum`.
    assert audit.decision_chain_hash("agent-1", 1, "genesis", "0" * 64) == (
        "37b5c36d2724e62d517cef37799ca998f7ad0d1b01be958fd66a8ebfad49645f"
    )
    assert audit.decision_chain_hash("a", 1, "genesis", "b") == (
        "5cc94b59cb6588af8ace584d157a36d2cc13bc790511e985ac8633a28a50ae4b"
    )


def test_payload_without_optional_fields_is_explicit() -> None:
    payload = decisions.payload(AGENT, as_decision(parse(body())), "2027-01-15T08:00:00.000Z")
    assert payload["correlation_ref"] is None and payload["evidence_manifest"] == []
    assert b'"correlation_ref":null' in audit.canonical(payload)
    assert "webhook_url" not in payload and "webhook_secret" not in payload
