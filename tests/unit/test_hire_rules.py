"""core.hire's pure rules: the canonical input digest (and the SDK's own JCS, which must agree with
the rfc8785 library the service uses), the escrow caller's message, the runner's request bytes, the
output parser's limits and the JSON Schema guard rails."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from decimal import Decimal

import pytest
import rfc8785
from agentledger_sdk import _escrow as sdk_escrow
from hypothesis import given, settings
from hypothesis import strategies as st

from core import wallets
from core.errors import ServiceError
from core.hire import reputation, rules, schemas
from core.hire.runners import request_body
from core.store import Database, transaction
from core.store import hire as hire_store
from core.store.hire import JobRow, SampleRow, ServiceRow

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
    s = _service()
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


def percentile(values: list[int], q: float) -> int | None:
    """The nearest-rank percentile (q in 0..1) of `values`."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def compute(samples: list[SampleRow], sla_seconds: int, now: float) -> reputation.Reputation:
    """The published formula over the sample rows themselves (what the stored figures must agree with)."""
    if not samples:
        return reputation.Reputation(0, 0, 0.0, None, None, None, None)
    n = s = 0.0
    ok_ms: list[int] = []
    successes = 0
    for sample in samples:
        w = 0.5 ** (max(0.0, now - sample.settled_at) / reputation.HALF_LIFE_SECONDS)
        n += w
        if sample.success:
            s += w
            successes += 1
            ok_ms.append(sample.response_ms)
    avg = round(sum(ok_ms) / len(ok_ms)) if ok_ms else None
    return reputation.Reputation(
        jobs=len(samples),
        successes=successes,
        score=reputation.score_of(len(samples), n, s, avg, sla_seconds),
        success_rate=round(successes / len(samples), 4),
        avg_ms=avg,
        p95_ms=percentile(ok_ms, 0.95),
        last_active_at=max(x.settled_at for x in samples),
    )


def test_reputation_formula() -> None:
    now = 1_800_000_000.0

    def s(i: int, ok: bool, ms: int = 100, age: float = 0) -> SampleRow:
        return SampleRow(f"j{i}", "p", "t", ok, ms, i + 1, now - age)

    assert compute([], 10, now).score == 0
    assert compute([s(0, True), s(1, True)], 10, now).score == 0  # below the minimum sample
    ten = compute([s(i, True) for i in range(10)], 10, now)
    assert ten.score == pytest.approx(100 * reputation.wilson_lower_bound(10, 10) * (1 - 0.2 * 0.01), abs=0.01)
    mixed = compute([s(i, i % 2 == 0) for i in range(10)], 10, now)
    assert mixed.success_rate == 0.5 and mixed.score < ten.score
    slow = compute([s(i, True, ms=10_000) for i in range(10)], 10, now)
    assert slow.score == pytest.approx(ten.score / (1 - 0.2 * 0.01) * 0.8, abs=0.01)
    # old failures weigh less than recent ones (recency decay)
    recent_fail = [s(i, i < 5, age=0 if i >= 5 else 200 * 86400) for i in range(10)]
    old_fail = [s(i, i >= 5, age=0 if i >= 5 else 200 * 86400) for i in range(10)]
    assert compute(old_fail, 10, now).score > compute(recent_fail, 10, now).score
    assert percentile([5, 1, 3, 2, 4], 0.95) == 5


def test_incremental_reputation_equals_the_exact_recomputation(database: Database) -> None:
    """Each sample updates the stored figures in O(1) (decayed weighted sums); the hourly refresh
    recomputes them from every sample; compute() is the formula over the rows: all three agree."""
    db = database.connect()
    now = 1_800_000_000.0
    with transaction(db):
        agent = wallets.register(
            db, account_id=None, new_key_hash="a" * 64, name="p", specialty="data_research", referral_code=None, now=now
        )
        hire_store.put_service(db, replace(_service(), provider_uuid=agent.uuid, wallet=agent.wallet))
        rng = random.Random(5)
        at = now
        for i in range(40):
            at += rng.randrange(1, 20 * 86400)
            job = replace(_job(), id=f"hire_{i:024x}", provider_uuid=agent.uuid)
            db.execute("INSERT INTO audit_log (id, stream, seq, kind, payload, prev_hash, chain_hash, leaf_hash,"
                       " created_at) VALUES (?, 's', ?, 'k', '{}', 'g', 'h', ?, 0)", (i + 1, i + 1, b"\0"))  # fmt: skip
            reputation.add_sample(
                db, job=job, success=rng.random() < 0.8, response_ms=rng.randrange(10, 4000), audit_id=i + 1, now=at
            )
        incremental = hire_store.get_service(db, agent.uuid, "keyword_research")
        rows = hire_store.samples(db, agent.uuid, "keyword_research", since=at - reputation.WINDOW_SECONDS)
        exact = compute(rows, 5, at)
        refreshed = reputation.refresh(db, agent.uuid, "keyword_research", at)
    assert incremental is not None and refreshed is not None
    assert incremental.score == pytest.approx(exact.score, abs=0.011) == refreshed.score
    assert (incremental.jobs, incremental.successes, incremental.avg_ms) == (exact.jobs, exact.successes, exact.avg_ms)
    assert incremental.p95_ms == exact.p95_ms == refreshed.p95_ms


def _service() -> ServiceRow:
    return ServiceRow(
        provider_uuid="p", service_type="keyword_research", wallet="agl_000000000001", token_id=1, price=1,
        description="d", input_schema="{}", output_schema="{}", sla_seconds=5, runner="https", endpoint="u",
        signing_secret="k", webhook_url=None, webhook_secret=None, active=True, consecutive_failures=0,
        last_checked_at=None, last_error=None, jobs=0, successes=0, score=0.0, success_rate=None, avg_ms=None,
        p95_ms=None, last_active_at=None, score_at=None, w_jobs=0.0, w_successes=0.0, ok_ms_total=0, created_at=0.0,
        updated_at=0.0,
    )  # fmt: skip


def _job() -> JobRow:
    return JobRow(
        id="", kind="standard", status="charged", provider_uuid="", provider_token_id=1,
        service_type="keyword_research", caller_uuid=None, caller_address=None, self_dealing=False, amount=1,
        held_owner=None, held_self=None, input_sha256="", idem_scope=None, idem_key=None, idem_attempt=None,
        outcome="success", output=None, output_sha256=None, output_cid=None, error_code=None, error_message=None,
        response_ms=None, created_tx=None, expires_at=None, settle_tx=None, settle_attempts=0, settle_error=None,
        next_settle_at=None, final=False, caller_webhook_url=None, caller_webhook_secret=None, created_at=0.0,
        updated_at=0.0,
    )  # fmt: skip


def test_the_escrow_registry_is_the_same_through_either_join(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """registry_page(escrow_only) starts from the agents for hire while they are few (JOIN) and walks the
    services by score when they are many (CROSS JOIN, its condition in WHERE): the same page either way."""
    db = database.connect()
    with transaction(db):
        for i in range(4):
            agent = wallets.register(
                db, account_id=None, new_key_hash=f"{i}" * 64, name="p", specialty="data_research",
                referral_code=None, now=1.0,
            )  # fmt: skip
            token = i + 1
            hire_store.put_service(
                db,
                replace(_service(), provider_uuid=agent.uuid, wallet=agent.wallet, token_id=token, price=10),
            )
            db.execute(
                "INSERT INTO agents (chain_id, token_id, wallet_id, owner, self_wallet, hire_price, hire_sla,"
                " registered_block, updated_block) VALUES (1, ?, ?, '0xo', '0xs', ?, 60, 1, 1)",
                (token, f"0x{token:040x}", 0 if i == 3 else 10),  # one price: only the token join pairs them
            )

    def page() -> list[tuple[str, int | None]]:
        rows = hire_store.registry_page(
            db, service_type=None, wallet=None, max_price=None, min_score=None, escrow_only=True,
            healthy_only=False, after=None, limit=10,
        )  # fmt: skip
        return [(service.wallet, price) for service, _paused, price, _sla in rows]

    few = page()
    monkeypatch.setattr(hire_store, "ESCROW_DRIVE_LIMIT", 0)
    many = page()
    assert len(few) == 3 and len({wallet for wallet, _ in few}) == 3  # the fourth agent is not for hire
    assert many == few
