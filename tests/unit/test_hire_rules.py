"""core.hire's pure rules: the canonical input digest (and the SDK's own JCS, which must agree with
the rfc8785 library the service uses), the escrow caller's message, the runner's request bytes, the
output parser's limits and the JSON Schema guard rails."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import rfc8785
from agentledger_sdk import _escrow as sdk_escrow
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ServiceError
from core.hire import rules, schemas
from core.hire.runners import request_body
from core.store.hire import ServiceRow

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_sdk_digest_is_the_services(value: object) -> None:
    assert sdk_escrow.jcs(value).encode() == rfc8785.dumps(value)
    assert sdk_escrow.input_sha256({"v": value}) == rules.input_digest({"v": value})[1]


def test_decimals_hash_as_doubles() -> None:
    assert rules.input_digest({"x": Decimal("1.50")})[0] == b'{"x":1.5}'
    assert rules.input_digest({"b": 2, "a": [Decimal("0.1"), "é"]})[0] == '{"a":[0.1,"é"],"b":2}'.encode()
    with pytest.raises(ServiceError) as info:
        rules.input_digest({"x": 2**60})
    assert info.value.code == "invalid_input"
    with pytest.raises(ServiceError) as info:
        rules.input_digest({"x": "a" * (rules.MAX_INPUT_BYTES + 1)})
    assert info.value.status == 413


def test_escrow_message_is_exact() -> None:
    msg = rules.escrow_message(chain_id=8453, escrow="0xAb", job_id="0x" + "0" * 64, input_sha256="ff", timestamp=7)
    assert msg == f"agentledger escrow hire\nchain: 8453\nescrow: 0xAb\njob: 0x{'0' * 64}\ninput: ff\ntimestamp: 7"
    assert msg == sdk_escrow.escrow_message(
        chain_id=8453, escrow="0xAb", job_id="0x" + "0" * 64, input_sha="ff", timestamp=7
    )


def test_the_runner_sends_the_canonical_input() -> None:
    s = ServiceRow(
        provider_uuid="p", service_type="keyword_research", wallet="agl_000000000001", token_id=1, price=1,
        description="d", input_schema="{}", output_schema="{}", sla_seconds=5, runner="https", endpoint="u",
        signing_secret="k", webhook_url=None, webhook_secret=None, active=True, consecutive_failures=0,
        last_checked_at=None, last_error=None, jobs=0, successes=0, score=0.0, success_rate=None, avg_ms=None,
        p95_ms=None, last_active_at=None, score_at=None, created_at=0.0, updated_at=0.0,
    )  # fmt: skip
    data, _ = rules.input_digest({"b": 1, "a": "x"})
    body = request_body(s, "hire_1", data)
    assert json.loads(body) == {"jobId": "hire_1", "serviceType": "keyword_research", "input": {"a": "x", "b": 1}}
    assert body.endswith(b'"input":{"a":"x","b":1}}')


def test_output_parsing_limits() -> None:
    assert rules.parse_output(b'{"a":[1,2.5]}') == {"a": [1, 2.5]}
    assert rules.output_value({"n": 3.0, "x": [1.5, 2.0]}) == {"n": 3, "x": [1.5, 2]}
    with pytest.raises(ValueError):
        rules.parse_output(b"[" * 100_000)  # refused before the C scanner recurses
    with pytest.raises(ValueError):
        rules.parse_output(b'{"a": NaN}')


def test_schemas_are_offline_and_bounded() -> None:
    text = schemas.compile_schema({"type": "object", "properties": {"a": {"pattern": "^(a+)+$"}}}, "outputSchema")
    with pytest.raises(schemas.SchemaMismatch):
        schemas.check(text, {"a": "a" * 64 + "!"})  # a catastrophic pattern fails, it does not hang
    with pytest.raises(ServiceError) as info:
        schemas.compile_schema({"$ref": "https://example.com/s.json"}, "inputSchema")
    assert info.value.code == "invalid_schema"
    with pytest.raises(ServiceError) as info:
        schemas.compile_schema({"description": "x" * (rules.MAX_SCHEMA_BYTES + 1)}, "inputSchema")
    assert info.value.code == "schema_too_large"
