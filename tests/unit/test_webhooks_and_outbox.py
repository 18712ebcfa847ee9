"""Webhook signatures (against an HMAC written here from RFC 2104, and published vectors), Standard
Webhooks verification and replay window, target-URL rules one by one, and the outbox SQL with its
retry schedule on a real SQLite file."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import pytest
from agentledger_sdk import webhooks

from core import egress, outbox
from core.egress import WebhookURLError
from core.store import connect, transaction
from core.store import outbox as store

# ---- an independent verifier: HMAC-SHA256 from RFC 2104 over hashlib, no hmac module --------------


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    block = 64
    if len(key) > block:
        key = hashlib.sha256(key).digest()
    key = key.ljust(block, b"\0")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return hashlib.sha256(bytes(b ^ 0x5C for b in key) + inner).digest()


def my_service_check(body: bytes, secret: str, header: str) -> bool:
    return header == "sha256=" + hmac_sha256(secret.encode(), body).hex()


def my_standard_check(body: bytes, key: bytes, headers: dict[str, str]) -> bool:
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac_sha256(key, signed)).decode()
    return expected in headers["webhook-signature"].split(" ")


def test_independent_hmac_matches_rfc4231_and_the_standard_webhooks_vector() -> None:
    # RFC 4231 test case 2, then a long key (case 6) that is hashed first
    assert hmac_sha256(b"Jefe", b"what do ya want for nothing?").hex() == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    assert hmac_sha256(b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First").hex() == (
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    )
    # the Standard Webhooks reference libraries' test vector
    key = base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    headers = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    assert my_standard_check(b'{"test": 2432232314}', key, headers)
    assert not my_standard_check(b'{"test": 2432232315}', key, headers)


def test_service_signature_is_hmac_sha256_hex_of_the_exact_body() -> None:
    assert egress.sign_service(b"what do ya want for nothing?", "Jefe") == (
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
    secret = egress.new_secret()
    body = outbox.encode_body({"event": "job.state_changed", "job_id": "ord_1", "status": "acknowledged", "n": "é"})
    header = egress.sign_service(body, secret)
    assert my_service_check(body, secret, header)
    assert webhooks.verify_service(body, secret, header)
    assert not webhooks.verify_service(body + b" ", secret, header)  # one byte more
    assert not webhooks.verify_service(body, secret + "0", header)
    assert not webhooks.verify_service(body, secret, header.replace("sha256=", "sha512="))
    assert not webhooks.verify_service(body, secret, header[:-1])
    assert not webhooks.verify_service(body, secret, header[:-1] + "é")  # non-ASCII does not raise


def test_verification_uses_the_timing_safe_compare(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    body, secret = b'{"a":1}', "s3cret"
    assert webhooks.verify_service(body, secret, egress.sign_service(body, secret))
    assert len(calls) == 1
    headers = egress.standard_headers("evt_1", 1_800_000_000, body, secret)
    assert webhooks.verify_standard(body, secret, headers, now=1_800_000_000)
    assert len(calls) == 2


def test_standard_headers_verify_independently_and_with_the_whsec_form() -> None:
    secret = egress.new_secret()
    body = b'{"event":"decision_logged","job_id":7}'
    event_id = outbox.new_event_id()
    headers = egress.standard_headers(event_id, 1_800_000_123, body, secret)
    assert set(headers) == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-id"] == event_id and headers["webhook-timestamp"] == "1800000123"
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}=", headers["webhook-signature"])
    assert my_standard_check(body, secret.encode(), headers)
    # a Standard Webhooks library given the whsec_ form decodes it to the same key
    whsec = egress.standard_secret(secret)
    assert whsec.startswith("whsec_") and base64.b64decode(whsec[6:]) == secret.encode()
    assert my_standard_check(body, base64.b64decode(whsec[6:]), headers)
    assert not my_standard_check(body + b"x", secret.encode(), headers)


def test_verify_standard_refuses_stale_future_tampered_and_incomplete() -> None:
    secret, body, ts = "k", b'{"x":1}', 1_800_000_000
    h = egress.standard_headers("evt_a", ts, body, secret)
    assert webhooks.verify_standard(body, secret, h, now=ts + 300)
    assert webhooks.verify_standard(body, secret, {k.upper(): v for k, v in h.items()}, now=ts)  # names any case
    assert not webhooks.verify_standard(body, secret, h, now=ts + 301)  # stale: a replay
    assert not webhooks.verify_standard(body, secret, h, now=ts - 301)  # from the future
    assert webhooks.verify_standard(body, secret, h, now=ts + 900, tolerance=1000)
    assert not webhooks.verify_standard(body + b"\n", secret, h, now=ts)
    assert not webhooks.verify_standard(body, "other", h, now=ts)
    assert not webhooks.verify_standard(body, secret, {**h, "webhook-id": "evt_b"}, now=ts)  # id is signed
    assert not webhooks.verify_standard(body, secret, {**h, "webhook-timestamp": str(ts + 1)}, now=ts)  # so is time
    assert not webhooks.verify_standard(body, secret, {**h, "webhook-timestamp": "-5"}, now=ts)
    for missing in h:
        assert not webhooks.verify_standard(body, secret, {k: v for k, v in h.items() if k != missing}, now=ts)
    # several signatures (key rotation): one match is enough
    several = {**h, "webhook-signature": "v1,AAAA " + h["webhook-signature"]}
    assert webhooks.verify_standard(body, secret, several, now=ts)
    assert not webhooks.verify_standard(body, secret, {**h, "webhook-signature": "v1,AAAA v1,BBBB"}, now=ts)


def test_ids_secrets_and_retry_schedule() -> None:
    ids = {outbox.new_event_id() for _ in range(100)}
    assert len(ids) == 100 and all(re.fullmatch(r"evt_[0-9a-f]{32}", i) for i in ids)
    assert re.fullmatch(r"[0-9a-f]{64}", egress.new_secret())
    assert outbox.RETRY_DELAYS == (0, 60, 300, 900, 3600, 14400)
    assert [outbox.next_delay(n) for n in range(7)] == [0, 60, 300, 900, 3600, 14400, None]


def test_allow_private_for() -> None:
    assert egress.allow_private_for("auto", 31337) is True  # anvil
    # an unknown chain is not evidence of a dev machine (a private L2, a fork): private targets refused
    assert egress.allow_private_for("auto", 999_999) is False
    assert egress.allow_private_for("auto", 1) is False
    assert egress.allow_private_for("auto", 8453) is False  # Base
    assert egress.allow_private_for("AUTO", 84532) is False  # Base Sepolia
    assert egress.allow_private_for("true", 8453) is True
    assert egress.allow_private_for("false", 31337) is False
    with pytest.raises(ValueError, match="auto, true or false"):
        egress.allow_private_for("maybe", 31337)


# ---- target URLs ------------------------------------------------------------------------------


REFUSED = [
    ("ftp://example.com/hook", "http or https"),
    ("file:///etc/passwd", "http or https"),
    ("javascript:alert(1)", "http or https"),
    ("https://user:pass@example.com/hook", "credentials"),
    ("https://user@example.com/hook", "credentials"),
    ("https:///nohost", "no host"),
    ("http://example.com:99999/", "not a valid URL"),
    ("http://localhost:8080/hook", "non-public"),  # a name resolving to 127.0.0.1 / ::1
    ("http://127.0.0.1/hook", "non-public"),
    ("http://127.1/hook", "non-public"),  # shorthand: only the resolver sees it is loopback
    ("http://[::1]:9000/hook", "non-public"),
    ("http://169.254.169.254/latest/meta-data/", "non-public"),  # cloud metadata, link-local
    ("http://10.1.2.3/hook", "non-public"),
    ("http://172.16.0.1/hook", "non-public"),
    ("http://192.168.1.1/hook", "non-public"),
    ("http://100.64.0.1/hook", "non-public"),  # carrier-grade NAT
    ("http://0.0.0.0/hook", "non-public"),
    ("http://224.0.0.1/hook", "non-public"),  # multicast
    ("http://240.0.0.1/hook", "non-public"),  # reserved
    ("http://[::ffff:127.0.0.1]/hook", "non-public"),  # IPv4-mapped loopback
    ("http://[::ffff:10.0.0.1]/hook", "non-public"),
    ("http://[2002:7f00:1::]/hook", "non-public"),  # 6to4 of 127.0.0.1
    ("http://[64:ff9b::a9fe:a9fe]/hook", "non-public"),  # NAT64 of 169.254.169.254
    ("http://[fe80::1]/hook", "non-public"),
    ("http://[fc00::1]/hook", "non-public"),  # unique local
    ("http://[ff02::1]/hook", "non-public"),
    ("http://[::]/hook", "non-public"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_check_url_refuses(url: str, why: str) -> None:
    with pytest.raises(WebhookURLError, match=why) as err:
        asyncio.run(egress.check_url(url, allow_private=False))
    assert isinstance(err.value, ValueError)


def test_refusals_never_say_what_a_name_resolves_to(caplog: pytest.LogCaptureFixture) -> None:
    """localhost resolves to 127.0.0.1 and/or ::1: the caller learns only "non-public"; the log has it."""
    url = "http://localhost:8080/hook"
    with caplog.at_level("WARNING", logger="agentledger.egress"), pytest.raises(WebhookURLError) as err:
        asyncio.run(egress.check_url(url, allow_private=False))
    assert "non-public" in str(err.value)
    assert "127.0.0.1" not in str(err.value) and "::1" not in str(err.value)
    assert "127.0.0.1" in caplog.text or "::1" in caplog.text
    with pytest.raises(WebhookURLError) as err:
        asyncio.run(egress.check_url("http://10.1.2.3/hook", allow_private=False))
    assert "10.1.2.3" not in str(err.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://93.184.215.14/hook",
        "http://8.8.8.8:8080/x?y=1",
        "https://[2606:4700:4700::1111]/",
        "http://[::ffff:8.8.8.8]/",
    ],
)
def test_check_url_accepts_public_addresses(url: str) -> None:
    asyncio.run(egress.check_url(url, allow_private=False))


def test_allow_private_admits_loopback_but_never_other_schemes_or_credentials() -> None:
    for url in ("http://localhost:8080/hook", "http://127.0.0.1/h", "http://[::1]/h", "http://10.0.0.1/"):
        asyncio.run(egress.check_url(url, allow_private=True))
    for url in ("ftp://127.0.0.1/", "http://a:b@127.0.0.1/"):
        with pytest.raises(WebhookURLError):
            asyncio.run(egress.check_url(url, allow_private=True))


def test_unresolvable_host_is_refused() -> None:
    with pytest.raises(WebhookURLError, match="does not resolve"):
        asyncio.run(egress.check_url("https://no-such-host.invalid/hook", allow_private=False))


@pytest.mark.parametrize(
    ("address", "forbidden"),
    [
        ("8.8.8.8", False),
        ("1.1.1.1", False),
        ("2606:4700:4700::1111", False),
        ("::ffff:8.8.8.8", False),
        ("64:ff9b::808:808", False),  # NAT64 of a public address
        ("127.0.0.53", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:169.254.169.254", True),
        ("fec0::1", True),  # deprecated site-local
        ("2001:db8::1", True),  # documentation
    ],
)
def test_forbidden_address(address: str, forbidden: bool) -> None:
    assert egress.forbidden_address(ipaddress.ip_address(address)) is forbidden


def test_pinned_resolver_refuses_private_answers_and_returns_checked_addresses() -> None:
    async def scenario() -> None:
        with pytest.raises(WebhookURLError, match="non-public"):
            await egress.PinnedResolver(allow_private=False).resolve("localhost", 80)
        allowed = await egress.PinnedResolver(allow_private=True).resolve("localhost", 8080)
        assert allowed and {r["host"] for r in allowed} <= {"127.0.0.1", "::1"}
        assert all(r["port"] == 8080 and r["hostname"] == "localhost" for r in allowed)

    asyncio.run(scenario())


# ---- the outbox SQL ---------------------------------------------------------------------------


T0 = 1_800_000_000.0


def _enqueue(conn: Any, now: float = T0, source: str = "order:ord_1", **payload: Any) -> str:
    with transaction(conn):
        return outbox.enqueue_webhook(
            conn,
            event="job.state_changed",
            source=source,
            url="https://example.com/hook",
            secret="sekrit",
            payload={"event": "job.state_changed", "job_id": "ord_1", **payload},
            now=now,
        )


def test_enqueue_stores_compact_body_due_at_once_and_rolls_back_with_its_transaction(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    event_id = _enqueue(conn, status="created", metadata={"from_state": None, "to_state": "created"})
    (d,) = store.due(conn, T0, 10)
    assert d.event_id == event_id and d.attempts == 0 and d.secret == "sekrit" and d.created_at == T0
    assert d.body == b'{"event":"job.state_changed","job_id":"ord_1","status":"created",' + (
        b'"metadata":{"from_state":null,"to_state":"created"}}'
    )
    assert json.loads(d.body)["status"] == "created"
    assert store.due(conn, T0 - 1, 10) == []
    # the outbox row exists only if the surrounding change commits
    with pytest.raises(RuntimeError), transaction(conn):
        outbox.enqueue_webhook(conn, event="e", source="order:x", url="https://e.com/", secret="s", payload={}, now=T0)
        raise RuntimeError("the state change failed")
    assert len(store.due(conn, T0, 10)) == 1
    with pytest.raises(ValueError):
        outbox.encode_body({"x": float("nan")})


def test_record_attempts_records_many_outcomes_in_one_call_as_record_attempt_does_each(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    ok_id, retry_id, last_id, done_id = (_enqueue(conn, source=f"order:o{i}") for i in range(4))
    rows = {d.event_id: d.id for d in store.due(conn, T0, 10)}
    with transaction(conn):
        conn.execute("UPDATE outbox SET attempts = 5 WHERE id = ?", (rows[last_id],))  # its last attempt next
        store.record_attempt(conn, rows[done_id], ok=True, status=200, error=None, now=T0, delays=outbox.RETRY_DELAYS)
        recorded = store.record_attempts(
            conn,
            [
                (rows[ok_id], True, 204, None, T0 + 1),
                (rows[retry_id], False, 503, "HTTP 503", T0 + 2),
                (rows[last_id], False, None, "y" * 900, T0 + 3),
                (rows[done_id], True, 200, None, T0 + 4),  # not pending any more: left out, unchanged
            ],
            delays=outbox.RETRY_DELAYS,
        )
    assert recorded == {rows[ok_id]: "delivered", rows[retry_id]: "pending", rows[last_id]: "dead_letter"}
    st = {e: store.get_status(conn, e) for e in (ok_id, retry_id, last_id, done_id)}
    assert all(v is not None for v in st.values())
    ok, retry, last, done = (st[e] for e in (ok_id, retry_id, last_id, done_id))
    assert ok is not None and (ok.status, ok.attempts, ok.last_status, ok.delivered_at) == ("delivered", 1, 204, T0 + 1)
    assert retry is not None and (retry.status, retry.attempts, retry.next_attempt_at, retry.last_error) == (
        "pending",
        1,
        T0 + 2 + 60,
        "HTTP 503",
    )
    assert last is not None and (last.status, last.attempts, last.last_error) == ("dead_letter", 6, "y" * 500)
    assert done is not None and (done.status, done.attempts, done.delivered_at) == ("delivered", 1, T0)
    secrets = conn.execute("SELECT event_id, secret FROM outbox ORDER BY id").fetchall()
    assert [s for _, s in secrets] == ["", "sekrit", "sekrit", ""]  # cleared once delivered


def test_record_attempt_follows_the_schedule_to_dead_letter_and_reset(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    event_id = _enqueue(conn)
    (d,) = store.due(conn, T0, 10)
    now = T0
    for n, delay in enumerate((60, 300, 900, 3600, 14400), start=1):
        with transaction(conn):
            assert (
                store.record_attempt(
                    conn, d.id, ok=False, status=500, error="HTTP 500", now=now, delays=outbox.RETRY_DELAYS
                )
                == "pending"
            )
        assert store.due(conn, now + delay - 0.001, 10) == []
        (again,) = store.due(conn, now + delay, 10)
        assert again.attempts == n and again.event_id == event_id
        now += delay
    with transaction(conn):
        assert (
            store.record_attempt(
                conn, d.id, ok=False, status=None, error="x" * 900, now=now, delays=outbox.RETRY_DELAYS
            )
            == "dead_letter"
        )
        assert (
            store.record_attempt(conn, d.id, ok=True, status=200, error=None, now=now, delays=outbox.RETRY_DELAYS)
            is None
        )  # not pending
    assert store.due(conn, now + 10**9, 10) == []
    (dead,) = store.dead_letters(conn)
    assert (dead.event_id, dead.status, dead.attempts, dead.last_status) == (event_id, "dead_letter", 6, None)
    assert dead.last_error == "x" * store.MAX_ERROR
    assert not hasattr(dead, "secret") and not hasattr(dead, "body")
    with transaction(conn):
        assert store.reset_dead_letter(conn, "evt_unknown", now) == 0
        assert store.reset_dead_letter(conn, event_id, now + 5) == 1
    (back,) = store.due(conn, now + 5, 10)
    assert back.attempts == 0 and back.event_id == event_id and back.secret == "sekrit"
    with transaction(conn):
        assert (
            store.record_attempt(conn, d.id, ok=True, status=204, error=None, now=now + 6, delays=outbox.RETRY_DELAYS)
            == "delivered"
        )
    assert store.dead_letters(conn) == []
    st = store.get_status(conn, event_id)
    assert st is not None and (st.status, st.attempts, st.last_status, st.delivered_at) == (
        "delivered",
        1,
        204,
        now + 6,
    )
    assert conn.execute("SELECT secret FROM outbox").fetchall() == [("",)]  # cleared once delivered


def test_reset_all_and_deliveries_for_a_source(tmp_path: Path) -> None:
    conn = connect(tmp_path / "w.db")
    a = _enqueue(conn, source="order:A")
    b = _enqueue(conn, source="order:A", now=T0 + 1)
    c = _enqueue(conn, source="order:B")
    with transaction(conn):
        conn.execute("UPDATE outbox SET status = 'dead_letter', attempts = 6")
        assert store.reset_dead_letter(conn, None, T0 + 9) == 3
    assert conn.execute("SELECT MIN(next_attempt_at) FROM outbox WHERE status = 'pending'").fetchall() == [(T0 + 9,)]
    assert [d.event_id for d in store.deliveries_for(conn, "order:A")] == [a, b]
    assert [d.event_id for d in store.deliveries_for(conn, "order:B")] == [c]
    assert store.deliveries_for(conn, "order:C") == []
    assert all(d.status == "pending" and d.attempts == 0 for d in store.deliveries_for(conn, "order:A"))


@pytest.mark.parametrize(
    ("next_at", "held_since", "until", "max_hold"),
    [
        (T0, None, T0 + 30, 600),  # first hold: up to `until`
        (T0, None, T0 + 900, 600),  # first hold longer than max_hold: capped at now + max_hold
        (T0 + 50, T0 - 590, T0 + 30, 600),  # a hold near its end: capped at held_since + max_hold
        (T0 + 20, T0 - 100, T0 + 30, 600),  # held already, due before `until`: moved to `until`
        (T0 + 5, T0 - 596, T0 + 30, 600),  # the cap lies before `until` but after its due time
    ],
)
def test_a_hold_moves_a_row_to_the_later_of_its_time_and_the_capped_until(
    tmp_path: Path, next_at: float, held_since: float | None, until: float, max_hold: float
) -> None:
    """hold_host's next_attempt_at is max(next_attempt_at, min(until, hold start + max_hold)), written
    with CASE (portable) where it used SQLite's two-argument max/min."""
    conn = connect(tmp_path / "w.db")
    event_id = _enqueue(conn)
    with transaction(conn):
        conn.execute(
            "UPDATE outbox SET next_attempt_at = ?, held_since = ? WHERE event_id = ?", (next_at, held_since, event_id)
        )
        store.hold_host(
            conn,
            store.host_of("https://example.com/hook"),
            until=until,
            now=T0,
            max_hold=max_hold,
            error="held",
            in_flight=[],
        )
    start = held_since if held_since is not None else T0
    expected = max(next_at, min(until, start + max_hold)) if next_at < until else next_at
    (row,) = conn.execute("SELECT next_attempt_at, held_since FROM outbox WHERE event_id = ?", (event_id,))
    assert row == (expected, start)
