"""Record the README's flows against a fresh service, to show that a change altered no response.

    python -m scripts.record_flows --out FILE [--tree PATH]   # record (--tree: serve another checkout)
    python -m scripts.record_flows --compare A B              # unified diff; exit 1 when they differ

The service is started as `make run` starts it (`python -m scripts.run` of the tree, with the tree's own
.venv): a fresh anvil on a free port, the contracts deployed, a fresh SQLite database in a temporary data
directory. The flows are then driven over HTTP on loopback in a fixed order with fixed inputs (wallets,
decisions and the audit log, checkout with a real signed funding up to the release, hire, the drop, MCP,
the schema, agent cards, health, the dashboard's pages, refusals); chain actions a user makes (approve,
createJob, list, buy) are signed and sent by this script to the same anvil.

Each exchange is one JSON line {step, method, path, status, headers (the selected ones), body (the exact
text)}. What legitimately differs between two runs is replaced by a placeholder numbered by first
appearance, so equal values stay equal (RULES says what and why); nothing else is touched. Two runs of
one tree must give identical files.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3

from core.anvil import free_port
from core.audit import canonical
from core.chain import ROOT, connect, contract_at, send
from core.checkout import rules as checkout_rules
from core.checkout.orders import completion_message, deliverable_message, provider_message
from core.hire import rules as hire_rules
from core.marketplace import rules as drop_rules
from scripts.devchain import USDC, dev_account

# ---- normalization --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One kind of value that differs from run to run: found by `pattern` in any text (the group `v`,
    else the whole match) and/or as the value of any JSON key in `keys`."""

    kind: str
    reason: str
    pattern: str | None = None
    keys: frozenset[str] = frozenset()
    #: False: every value becomes the same placeholder (a duration names nothing, so no equality to keep).
    numbered: bool = True


def _keys(names: str) -> frozenset[str]:
    return frozenset(names.split())


#: What is legitimately different per run, each with why. Everything else must be equal byte for byte.
RULES: tuple[Rule, ...] = (
    Rule(
        "key",
        "API keys are 128 random bits (core.keys); the operator's view names each by its hash's prefix",
        r"aglk_[0-9a-f]{32}|<code>(?P<v>[0-9a-f]{12})</code>",
    ),
    Rule("wallet", "agent wallet ids are 48 random bits (core.wallets)", r"agl_[0-9a-f]{12}(?![0-9a-f])"),
    Rule(
        "uuid",
        "accounts, agents, listings and sales are uuid4 (shortened on the operator's view)",
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|[0-9a-f]{8}…[0-9a-f]{4}(?![0-9a-f])",
    ),
    Rule(
        "id",
        "sessions, orders, items, hire jobs, quotes, outbox events and watches have random ids",
        r"(?:cs|ord|item|hire|q|evt|wat)_[0-9a-f]{16,32}(?![0-9a-f])",
    ),
    Rule("code", "referral codes are random (core.wallets)", keys=_keys("referral_code referralCode")),
    Rule(
        "secret",
        "webhook and provider signing secrets are random, shown once",
        r"whsec_[A-Za-z0-9+/=]+",
        _keys("webhook_secret signingSecret signingSecretRaw webhookSecret secret"),
    ),
    Rule(
        "token",
        "dashboard sessions, sign-in forms and unsubscribe links carry random tokens",
        r"(?:agls_[A-Za-z0-9_\-]{43}|(?:agl_session|agl_signin)=(?P<v>[A-Za-z0-9_\-]+)"
        r"|name=\"csrf\" value=\"(?P<v2>[^\"]+)\")",
        _keys("csrf"),
    ),
    Rule(
        "time",
        "wall-clock instants of the run with a fraction of a second (ISO 8601): created/updated times",
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+(?:Z|[+-]\d{2}:?\d{2})?",
    ),
    Rule(
        "second",
        "wall-clock instants of the run to the second (ISO 8601, the dashboard's): two of them are equal or not"
        " as the run's timing falls, so they keep no equality",
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:Z| UTC|[+-]\d{2}:?\d{2})?",
        numbered=False,
    ),
    Rule(
        "instance",
        "the process holding the leases: host, pid, process start and a random token (core.instance)",
        r"[A-Za-z0-9._-]+:\d+:\d+:[0-9a-f]{12}(?![0-9a-f])",
    ),
    Rule("etag", "the dashboard's live panels' ETag: a digest of panels that show the run's times", r'"[0-9a-f]{32}"'),
    Rule("day", "the UTC day of the run (run counters are keyed by it): the days the run spans, as known values"),
    Rule(
        "unix",
        "Unix times of the run (block times, deadlines derived from them, signatures' timestamps); in seconds,"
        " so like `second` they keep no equality",
        r"(?<![0-9.])1[0-9]{9}\.[0-9]+(?![0-9])",  # with a fraction: a float Unix time (the brain's lastUpdated)
        keys=_keys(
            "timestamp deadline created_at updated_at expires_at expiresAt createdAt updatedAt "
            "noticeWindowEndsAt lastActiveAt attested_at notice_ends_at"
        ),
        numbered=False,
    ),
    Rule(
        "hash",
        "hashes over the run's random ids and times: transactions, job ids, chain hashes, Merkle roots, signatures"
        " (and their shortened forms on the dashboard)",
        r"[0-9a-f]{10}(?:…|\\u2026)[0-9a-f]{6}",
        keys=_keys(
            "txHash tx_hash settlement_tx_hash mint_tx releaseTx refundTx listTx endTx service_job_id "
            "jobId escrowJobId job_id chain_hash prev_hash chainHash prevHash leafHash leaf_hash root "
            "signature payload_hash mintTx proof first_root second_root log_root attestation commitTx "
            "commit_tx sha256 nonce"
        ),
    ),
    Rule(
        "duration",
        "durations measured in the run (a provider's response time and the reputation figures over it)",
        keys=_keys("responseMs response_ms avgResponseMs p95ResponseMs"),
        numbered=False,
    ),
    Rule("port", "loopback ports are picked free per run (the API, anvil, the provider)"),
)

#: The shortest value a key rule replaces wherever it appears in the record (a referral code has 8
#: characters, a Unix time 10 digits; an offer's nonce "1" is not one to replace everywhere).
GLOBAL_MIN = 8

#: A decision's content hash and its evidence's: fixed inputs of the flows.
CONTENT_HASH, EVIDENCE_HASH = "9f" * 32, "ab" * 32
#: Fixed inputs that a key rule would otherwise take for run-dependent values.
KEEP = frozenset({CONTENT_HASH, EVIDENCE_HASH})


#: The placeholder of a value of `kind` numbered `n`.
def _placeholder(kind: str, n: int) -> str:
    return f"<{kind}#{n}>"


class Normalizer:
    """Replaces each distinct run-dependent value by a placeholder numbered by first appearance."""

    def __init__(self, known: dict[str, str]) -> None:
        self.values: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._patterns = [(rule.kind, re.compile(rule.pattern)) for rule in RULES if rule.pattern]
        self._by_key = {key: rule.kind for rule in RULES for key in rule.keys}
        self._unnumbered = {rule.kind for rule in RULES if not rule.numbered}
        self._compiled: tuple[int, re.Pattern[str]] | None = None
        for value, kind in known.items():
            self._name(value, kind)

    def _name(self, value: str, kind: str) -> str:
        if value in KEEP:
            return value
        if value in self.values:  # named already (a pattern's find comes first: an ISO time under createdAt)
            return self.values[value]
        if kind in self._unnumbered:
            if len(value) >= GLOBAL_MIN:  # a short number (a duration) is not replaced elsewhere: it could be anything
                self.values[value] = f"<{kind}>"
            return f"<{kind}>"
        if value not in self.values:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.values[value] = _placeholder(kind, self.counts[kind])
        return self.values[value]

    def name_at_key(self, key: str, value: str) -> str:
        return self._name(value, self._by_key[key])

    def learn_text(self, text: str) -> None:
        for kind, pattern in self._patterns:
            for m in pattern.finditer(text):
                groups = [g for g in m.groups() if g is not None] if m.re.groups else []
                self._name(groups[0] if groups else m.group(0), kind)

    def learn_json(self, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                kind = self._by_key.get(k)
                for item in v if isinstance(v, list) else [v]:
                    # replaced wherever it appears: only values long enough to name nothing else (a short
                    # one, as a duration, is replaced where it stands: _number_keys)
                    if (
                        kind is not None
                        and isinstance(item, (str, int))
                        and not isinstance(item, bool)
                        and len(str(item)) >= GLOBAL_MIN
                    ):
                        self._name(str(item), kind)
                self.learn_json(v)
        elif isinstance(value, list):
            for v in value:
                self.learn_json(v)

    def apply(self, text: str) -> str:
        if not self.values:
            return text
        if self._compiled is None or self._compiled[0] != len(self.values):
            # one pass over the text, longest values first where two overlap, never inside a longer word
            alternation = "|".join(re.escape(v) for v in sorted(self.values, key=len, reverse=True))
            self._compiled = (len(self.values), re.compile(f"(?<![0-9A-Za-z])(?:{alternation})(?![0-9A-Za-z])"))
        return self._compiled[1].sub(lambda m: self.values[m.group(0)], text)


# ---- the record -------------------------------------------------------------------------------------

#: The response headers recorded (compared case-insensitively; Date, Server and lengths are not).
HEADERS = (
    "content-type",
    "idempotent-replayed",
    "retry-after",
    "allow",
    "www-authenticate",
    "location",
    "access-control-allow-origin",
    "cache-control",
    "etag",
    "content-security-policy",
    "set-cookie",
    "idempotency-key",
    "request-id",
    "x-ratelimit-limit",
    "mcp-protocol-version",
)


@dataclass
class Exchange:
    step: str
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Recorder:
    """The exchanges of one run, in order."""

    api: httpx.Client
    exchanges: list[Exchange] = field(default_factory=list)

    def call(
        self,
        step: str,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | str | None = None,
        key: str | None = None,
        idem: str | None = None,
        headers: dict[str, str] | None = None,
        expect: int | None = None,
        record: bool = True,
        **kw: Any,
    ) -> httpx.Response:
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = f"Bearer {key}"
        if idem is not None:
            h["Idempotency-Key"] = idem
        if json_body is not None:
            content = json.dumps(json_body)
            h.setdefault("Content-Type", "application/json")
        resp = self.api.request(method, path, content=content, headers=h, **kw)
        if record:
            self.add(step, method, str(resp.request.url.raw_path, "ascii"), resp.status_code, resp.headers, resp.text)
        if expect is not None and resp.status_code != expect:
            raise RuntimeError(f"{step}: {method} {path} -> {resp.status_code} (expected {expect}): {resp.text[:500]}")
        return resp

    def add(self, step: str, method: str, path: str, status: int, headers: Any, body: str) -> None:
        picked = {}
        for name in HEADERS:
            values = headers.get_list(name) if hasattr(headers, "get_list") else [headers.get(name)]
            values = [v for v in values if v is not None]
            if values:
                picked[name] = " | ".join(values)
        self.exchanges.append(Exchange(step, method, path, status, picked, body))

    def until(
        self, step: str, path: str, ready: Callable[[Any], bool], *, key: str | None = None, timeout: float = 90.0
    ) -> Any:
        """GET `path` until `ready(its JSON)`; only the last answer is recorded (how many polls it took
        depends on the machine, not on the service)."""
        deadline = time.monotonic() + timeout
        while True:
            resp = self.call(step, "GET", path, key=key, record=False)
            body = resp.json() if resp.headers.get("content-type", "").startswith("application/json") else None
            if resp.status_code == 200 and ready(body):
                self.call(step, "GET", path, key=key)
                return body
            if time.monotonic() > deadline:
                raise RuntimeError(f"{step}: {path} never got ready: {resp.status_code} {resp.text[:500]}")
            time.sleep(0.1)

    def lines(self, known: dict[str, str]) -> list[str]:
        """The normalized record, one JSON line per exchange."""
        norm = Normalizer(known)
        for ex in self.exchanges:
            for text in (ex.path, ex.body, *ex.headers.values()):
                norm.learn_text(text)
            parsed = _json_or_none(ex.body)
            if parsed is not None:
                norm.learn_json(parsed)
        out = []
        for ex in self.exchanges:
            row = {
                "step": ex.step,
                "method": ex.method,
                "path": norm.apply(ex.path),
                "status": ex.status,
                "headers": {k: norm.apply(v) for k, v in ex.headers.items()},
                "body": norm.apply(_number_keys(ex.body, norm)),
            }
            out.append(json.dumps(row, ensure_ascii=False))
        return out


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


_NUMBER_KEYS = frozenset(key for rule in RULES if rule.kind in ("unix", "duration") for key in rule.keys)
#: A number under one of those keys in the raw text, also inside JSON carried as a string (escaped quotes).
_NUMBER_AT_KEY = re.compile(r'(?P<q>\\*")(?P<k>' + "|".join(map(re.escape, _NUMBER_KEYS)) + r")(?P=q)\s*:\s*(?P<n>\d+)")


def _number_keys(text: str, norm: Normalizer) -> str:
    """Numbers under the time and duration keys, replaced where they stand (a global replace of a
    number could hit an amount); the placeholder is quoted as the surrounding JSON quotes."""

    def sub(m: re.Match[str]) -> str:
        placeholder = norm.name_at_key(m.group("k"), m.group("n"))
        return m.group(0)[: m.start("n") - m.start()] + m.group("q") + placeholder + m.group("q")

    return _NUMBER_AT_KEY.sub(sub, text)


# ---- the service, as `make run` starts it --------------------------------------------------------------


@dataclass
class Service:
    base: str
    rpc_url: str
    api_port: int
    anvil_port: int
    data_dir: Path
    tree: Path
    env: dict[str, str]


@contextmanager
def make_run(tree: Path, tmp: Path) -> Iterator[Service]:
    """`python -m scripts.run` of `tree` (its .venv and code) on free ports, over a fresh data directory."""
    api_port, anvil_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_") and k != "PYTHONPATH"}
    # The daily anchor (00:00 UTC, make run's default) must not fire during a run: it would add a block
    # and a checkpoint. A run takes well under 3 minutes.
    now = datetime.now(UTC)
    midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    if midnight - now < timedelta(minutes=3):
        print(f"waiting until past 00:00 UTC ({(midnight - now).seconds + 60} s): the daily anchor runs then")
        time.sleep((midnight - now).total_seconds() + 60)
    env.update(
        AGENTLEDGER_DATA_DIR=str(tmp / "var"),
        AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp / "deployments"),
        AGENTLEDGER_API_PORT=str(api_port),
        AGENTLEDGER_ANVIL_PORT=str(anvil_port),
        # One confirmation (make run's local default is 0): with 0, the indexer may see a release the API
        # itself sent final before the API records its receipt, and the order's history then differs by
        # who moved it (chain or provider) with the machine's speed. World.synced mines the next block.
        AGENTLEDGER_CONFIRMATIONS="1",
    )
    log = (tmp / "service.log").open("w")
    proc = subprocess.Popen(
        [str(tree / ".venv/bin/python"), "-m", "scripts.run"], cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{api_port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited ({proc.returncode}); see {tmp / 'service.log'}")
            try:
                health = httpx.get(base + "/healthz", timeout=2)
                if health.status_code == 200 and health.json()["indexer"]["state"] == "synced":
                    break
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service did not get ready; see {tmp / 'service.log'}")
            time.sleep(0.2)
        yield Service(base, f"http://127.0.0.1:{anvil_port}", api_port, anvil_port, tmp / "var", tree, env)
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: it stops its anvil too
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---- a provider's runner for hire (loopback, answers at once) ------------------------------------------

HIRE_IN = {"type": "object", "required": ["topic"], "properties": {"topic": {"type": "string", "minLength": 1}}}
HIRE_OUT = {
    "type": "object",
    "required": ["keywords"],
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
}


class _Runner(BaseHTTPRequestHandler):
    def do_HEAD(self) -> None:  # the health probe
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/hook":  # a webhook (the provider's news): taken
            self.send_response(204)
            self.end_headers()
            return
        topic = body["input"]["topic"]
        out = json.dumps({"keywords": [f"{topic} tips", f"best {topic}"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def runner_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Runner)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


# ---- the flows ---------------------------------------------------------------------------------------


def _sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


def _hex(tx: Any) -> str:
    return "0x" + bytes(tx).hex()


@dataclass
class World:
    rec: Recorder
    svc: Service
    w3: Web3
    chain_id: int
    contracts: dict[str, str]
    runner_port: int
    ids: dict[str, Any] = field(default_factory=dict)

    def contract(self, name: str) -> Any:
        return contract_at(self.w3, name, self.contracts[name])

    def account(self, n: int) -> LocalAccount:
        """A deterministic account with ETH (not one of anvil's: the service's operator is anvil's first)."""
        acct = dev_account(7000 + n)
        self.w3.provider.make_request("anvil_setBalance", [acct.address, hex(10**20)])  # type: ignore[arg-type]
        return acct

    def tx(self, acct: LocalAccount, fn: Any) -> str:
        tx = _hex(send(self.w3, acct, fn)["transactionHash"])
        self.synced()
        return tx

    def synced(self) -> None:
        """Make the chain's head final and wait until the service's indexer has applied it (not recorded).

        The service runs with one confirmation (make_run), so an event becomes final only at the next
        block, which only this mines: what the API records from its own receipts always comes before
        what its indexer sees final, and a read after this shows both, however fast the machine."""
        self.w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
        head = self.w3.eth.block_number
        deadline = time.monotonic() + 60
        while True:
            indexer = self.rec.api.get("/healthz").json()["indexer"]
            if indexer["seen"] >= head and indexer["final"] >= head - 1:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the indexer did not reach block {head}: {indexer}")
            time.sleep(0.05)

    def register(self, step: str, name: str, key: str | None = None, **extra: Any) -> dict[str, Any]:
        body = {"name": name, "specialty": "data_research", **extra}
        got: dict[str, Any] = self.rec.call(
            step, "POST", "/api/agents/register", json_body=body, key=key, expect=201
        ).json()
        return got

    def link(self, step: str, key: str, wallet: str, self_acct: LocalAccount, owner: LocalAccount) -> dict[str, Any]:
        ts = int(time.time())
        msg = checkout_rules.provider_link_message(
            chain_id=self.chain_id,
            agent_wallet=wallet,
            self_wallet=self_acct.address,
            owner=owner.address,
            timestamp=ts,
        )
        body = {
            "agent_id": wallet,
            "self_wallet": self_acct.address,
            "owner_address": owner.address,
            "timestamp": ts,
            "signature": _sign(self_acct, msg),
        }
        got: dict[str, Any] = self.rec.call(
            step, "POST", "/api/acp/providers", json_body=body, key=key, expect=201
        ).json()
        self.synced()  # the service minted the agent NFT
        return got


def flow_wallets(w: World) -> None:
    rec = w.rec
    a = w.register("wallets.register", "scout")
    key, wallet, uuid = a["api_key"], a["agent"]["wallet"], a["agent"]["id"]
    b = w.register("wallets.register-referred", "helper", referralCode=a["agent"]["referral_code"])
    bkey, bwallet = b["api_key"], b["agent"]["wallet"]
    w.register("wallets.register-with-key", "second", key=key)
    rec.call("keys.create", "POST", "/api/keys", json_body={"email": "owner@example.com"}, expect=201)
    rec.call("keys.create-again", "POST", "/api/keys", json_body={"email": "owner@example.com"})
    earn = {"agentId": wallet, "amount": 250, "source": "report"}
    rec.call("wallets.earn", "POST", "/api/agents/earn", json_body=earn, key=key, idem="run-42", expect=200)
    rec.call("wallets.earn-replay", "POST", "/api/agents/earn", json_body=earn, key=key, idem="run-42")
    rec.call(
        "wallets.earn-conflict", "POST", "/api/agents/earn", json_body={**earn, "amount": 251}, key=key, idem="run-42"
    )
    rec.call(
        "wallets.earn-referred",
        "POST",
        "/api/agents/earn",
        json_body={"agentId": bwallet, "amount": 12.5, "source": "gumroad"},
        key=bkey,
        expect=200,
    )
    batch = {
        "payments": [
            {"agentId": wallet, "amount": 10, "source": "shop"},
            {"agentId": wallet, "amount": 2.5, "source": "shop"},
        ]
    }
    rec.call("wallets.earn-batch", "POST", "/api/agents/earn/batch", json_body=batch, key=key, expect=200)
    spend = {"agentId": wallet, "amount": 1000, "destination": "x"}
    rec.call("wallets.spend-refused", "POST", "/api/agents/spend", json_body=spend, key=key)
    rec.call("wallets.spend", "POST", "/api/agents/spend", json_body={**spend, "amount": 3.25}, key=key, expect=200)
    mem = {"agentId": wallet, "key": "notes/first", "value": {"a": 1, "b": [1.5, "x"], "c": None}}
    rec.call("wallets.memory-write", "POST", "/api/agents/memory", json_body=mem, key=key, expect=200)
    rec.call(
        "wallets.memory-write-2",
        "POST",
        "/api/agents/memory",
        json_body={**mem, "key": "notes/second", "value": 7},
        key=key,
    )
    rec.call("wallets.memory-list", "GET", f"/api/agents/memory?agentId={wallet}&query=notes&limit=1", key=key)
    rec.call("wallets.memory-reserved", "POST", "/api/agents/memory", json_body={**mem, "key": "brain:x"}, key=key)
    for n, (action, price, name) in enumerate([("listed", 19, "guide"), ("sold", 19, "guide"), ("sold", 5, "tips")]):
        body = {"agentId": wallet, "action": action, "niche": "youtube", "price": price, "name": name}
        rec.call(f"wallets.brain-update-{n}", "POST", "/api/agents/brain", json_body=body, key=key)
    rec.call("wallets.brain", "GET", f"/api/agents/brain?agentId={wallet}", key=key)
    rec.call(
        "wallets.runs",
        "POST",
        "/api/agents/runs",
        json_body={"agentId": wallet, "success": True, "niche": "youtube"},
        key=key,
    )
    rec.call("wallets.runs-fail", "POST", "/api/agents/runs", json_body={"agentId": wallet, "success": False}, key=key)
    rec.call("wallets.network", "GET", "/api/agents/network")
    rec.call(
        "wallets.compound",
        "POST",
        "/api/agents/compound",
        json_body={"agentId": wallet, "reinvestPercent": 20},
        key=key,
    )
    rec.call("wallets.balance", "GET", f"/api/agents/balance?agentId={wallet}", key=key)
    rec.call("wallets.balance-referrer", "GET", f"/api/agents/balance?agentId={bwallet}", key=bkey)
    rec.call("wallets.identity", "GET", f"/api/agents/identity?agentId={wallet}", key=key)
    w.ids.update(key=key, wallet=wallet, uuid=uuid, other_key=bkey, other_wallet=bwallet)


def flow_decisions(w: World) -> None:
    rec, key, uuid = w.rec, w.ids["key"], w.ids["uuid"]
    body = {
        "event_type": "routine",
        "content_hash": CONTENT_HASH,
        "model_id": "gpt-x",
        "model_version": "2026-01",
        "evidence_manifest": [{"type": "json", "sha256": EVIDENCE_HASH}],
        "correlation_ref": "run-7",
    }
    first = rec.call(
        "decisions.log", "POST", f"/api/agents/{uuid}/log", json_body=body, key=key, idem="d-1", expect=201
    )
    rec.call("decisions.log-replay", "POST", f"/api/agents/{uuid}/log", json_body=body, key=key, idem="d-1")
    crit = {**body, "event_type": "critical", "evidence_manifest": []}
    rec.call("decisions.critical-without-evidence", "POST", f"/api/agents/{uuid}/log", json_body=crit, key=key)
    rec.call(
        "decisions.log-2", "POST", f"/api/agents/{uuid}/log", json_body={**body, "event_type": "high_stakes"}, key=key
    )
    audit_id = first.json()["audit_id"]
    rec.call("decisions.verify-json", "GET", f"/verify/{audit_id}", headers={"Accept": "application/json"})
    rec.call("decisions.verify-html", "GET", f"/verify/{audit_id}", headers={"Accept": "text/html"})
    rec.call("decisions.methodology", "GET", "/methodology", headers={"Accept": "application/json"})
    rec.call("decisions.methodology-html", "GET", "/methodology", headers={"Accept": "text/html"})
    rec.call("decisions.discovery", "GET", "/.well-known/decisional-logging.json")
    rec.call("decisions.discovery-legacy", "GET", "/well-known/decisional-logging.json")
    rec.call("audit.checkpoints", "GET", "/api/audit/checkpoints")
    rec.call("audit.proof", "GET", f"/api/audit/proof/{audit_id}?tree_size=2")
    rec.call("audit.consistency", "GET", "/api/audit/consistency?first=1&second=2")
    rec.call("audit.proof-past-log", "GET", f"/api/audit/proof/{audit_id}?tree_size=999")
    w.ids["audit_id"] = audit_id


def flow_checkout(w: World) -> None:
    rec = w.rec
    p = w.register("checkout.provider-register", "seller")
    pkey, pwallet = p["api_key"], p["agent"]["wallet"]
    self_acct, owner, buyer = w.account(1), w.account(2), w.account(3)
    w.link("checkout.provider-link", pkey, pwallet, self_acct, owner)
    rec.call(
        "checkout.provider-link-again",
        "POST",
        "/api/acp/providers",
        json_body={
            "agent_id": pwallet,
            "self_wallet": self_acct.address,
            "owner_address": owner.address,
            "timestamp": int(time.time()),
            "signature": "0x" + "11" * 65,
        },
        key=pkey,
    )
    rec.call("checkout.provider", "GET", f"/api/acp/providers/{pwallet}")
    rec.call(
        "checkout.provider-webhook",
        "POST",
        f"/api/acp/providers/{pwallet}/webhook",
        json_body={"url": f"http://127.0.0.1:{w.runner_port}/hook"},
        key=pkey,
    )
    item = rec.call(
        "checkout.item-create",
        "POST",
        "/api/acp/items",
        json_body={"title": "Market report", "tier": "standard", "agent_id": pwallet},
        key=pkey,
        expect=201,
    ).json()
    rec.call("checkout.items", "GET", "/api/acp/items")
    rec.call("checkout.item", "GET", f"/api/acp/items/{item['id']}")
    bkey = w.register("checkout.buyer-register", "buyer")["api_key"]
    h = {"API-Version": checkout_rules.SUPPORTED_API_VERSIONS[0], "Request-Id": "req-1"}
    lines = {"line_items": [{"item": {"id": item["id"]}, "quantity": 1}], "buyer": {"email": "buyer@example.com"}}
    session = rec.call(
        "checkout.session-create",
        "POST",
        "/api/acp/checkout_sessions",
        json_body=lines,
        key=bkey,
        idem="cs-1",
        headers=h,
        expect=201,
    ).json()
    rec.call(
        "checkout.session-replay",
        "POST",
        "/api/acp/checkout_sessions",
        json_body=lines,
        key=bkey,
        idem="cs-1",
        headers=h,
    )
    sid = session["id"]
    rec.call("checkout.session-get", "GET", f"/api/acp/checkout_sessions/{sid}", key=bkey, headers=h)
    rec.call(
        "checkout.session-update",
        "POST",
        f"/api/acp/checkout_sessions/{sid}",
        json_body={"buyer": {"email": "buyer@example.com", "first_name": "Ada"}},
        key=bkey,
        headers=h,
    )
    other = rec.call(
        "checkout.session-create-2", "POST", "/api/acp/checkout_sessions", json_body=lines, key=bkey, expect=201
    ).json()
    rec.call("checkout.session-cancel", "POST", f"/api/acp/checkout_sessions/{other['id']}/cancel", key=bkey)
    rec.call("checkout.session-cancel-again", "POST", f"/api/acp/checkout_sessions/{other['id']}/cancel", key=bkey)
    session = rec.call("checkout.session-get-2", "GET", f"/api/acp/checkout_sessions/{sid}", key=bkey, headers=h).json()
    config = session["capabilities"]["payment"]["handlers"][0]["config"]
    total = {t["type"]: t["amount"] for t in session["totals"]}["total"]
    usdc = w.contract("MockUSDC")
    w.tx(buyer, usdc.functions.mint(buyer.address, 1000 * USDC))
    w.tx(buyer, usdc.functions.approve(Web3.to_checksum_address(config["spender"]), total))
    typed = config["typed_data"]
    typed["message"]["buyer"] = buyer.address
    consent = buyer.sign_typed_data(full_message=typed).signature.to_0x_hex()
    pay = {
        "handler_id": checkout_rules.PAYMENT_HANDLER_ID,
        "instrument": {
            "type": "wallet",
            "credential": {"type": "address", "token": buyer.address, "signature": consent},
        },
    }
    rec.call(
        "checkout.complete-unsigned",
        "POST",
        f"/api/acp/checkout_sessions/{sid}/complete",
        json_body={
            "payment_data": {
                "handler_id": checkout_rules.PAYMENT_HANDLER_ID,
                "instrument": {"credential": {"token": buyer.address}},
            }
        },
        key=bkey,
    )
    done = rec.call(
        "checkout.complete",
        "POST",
        f"/api/acp/checkout_sessions/{sid}/complete",
        json_body={"buyer": {"email": "buyer@example.com"}, "payment_data": pay},
        key=bkey,
        idem="cs-1-complete",
        headers=h,
        expect=200,
    ).json()
    oid, job_id = done["order"]["id"], done["order"]["service_job_id"]
    w.synced()  # the funding the service sent
    rec.call("checkout.order-public", "GET", f"/api/acp/orders/{oid}")
    rec.call("checkout.order-buyer", "GET", f"/api/acp/orders/{oid}", key=bkey)
    for action in ("acknowledge", "start"):
        ts = int(time.time())
        body = {"timestamp": ts, "signature": _sign(self_acct, provider_message(action, oid, ts))}
        rec.call(f"checkout.order-{action}", "POST", f"/api/acp/orders/{oid}/{action}", json_body=body, expect=200)
        if action == "start":
            rec.call("checkout.order-start-replayed", "POST", f"/api/acp/orders/{oid}/{action}", json_body=body)
    ts = int(time.time())
    bad = {"timestamp": ts, "signature": _sign(owner, provider_message("fail", oid, ts))}
    rec.call("checkout.order-fail-wrong-signer", "POST", f"/api/acp/orders/{oid}/fail", json_body=bad)
    content = {"title": "Market report", "findings": ["demand is up", "prices are flat"]}
    sha = hashlib.sha256(canonical(content)).hexdigest()
    ts = int(time.time())
    signed = {
        "X-Provider-Timestamp": str(ts),
        "X-Provider-Signature": _sign(self_acct, deliverable_message(oid, sha, ts)),
        "X-Content-SHA256": sha,
    }
    up = rec.call(
        "checkout.deliverable",
        "POST",
        f"/api/acp/orders/{oid}/deliverables",
        json_body={"content": content},
        headers=signed,
        expect=201,
    ).json()
    cid = up["cid"]
    rec.call("checkout.ipfs", "GET", f"/ipfs/{cid}")
    rec.call("checkout.ipfs-304", "GET", f"/ipfs/{cid}", headers={"If-None-Match": f'"{cid}"'})
    ts = int(time.time())
    fin = {"cid": cid, "timestamp": ts, "signature": _sign(self_acct, completion_message(job_id, cid, ts))}
    rec.call("checkout.order-complete", "POST", f"/api/acp/orders/{oid}/complete", json_body=fin, expect=200)
    w.synced()  # the release the service sent
    rec.until("checkout.order-released", f"/api/acp/orders/{oid}", lambda o: o["status"] == "released", key=bkey)
    rec.until(
        "checkout.provider-orders",
        f"/api/acp/providers/{pwallet}/orders",
        lambda page: page["data"] and page["data"][0]["status"] == "released",
        key=pkey,
    )
    rec.call("checkout.provider-webhook-delete", "DELETE", f"/api/acp/providers/{pwallet}/webhook", key=pkey)
    w.ids.update(provider_key=pkey, provider_wallet=pwallet, order_id=oid, cid=cid, session_id=sid)


def flow_hire(w: World) -> None:
    rec = w.rec
    p = w.register("hire.provider-register", "keywords")
    pkey, pwallet = p["api_key"], p["agent"]["wallet"]
    self_acct, owner = w.account(11), w.account(12)
    token = int(w.link("hire.provider-link", pkey, pwallet, self_acct, owner)["token_id"])
    publish = {
        "agentId": pwallet,
        "serviceType": "keyword_research",
        "price": 2,
        "description": "keywords for a topic",
        "inputSchema": HIRE_IN,
        "outputSchema": HIRE_OUT,
        "slaSeconds": 5,
        "runner": {"type": "https", "url": f"http://127.0.0.1:{w.runner_port}/run"},
    }
    rec.call("hire.publish", "POST", "/api/a2a/services", json_body=publish, key=pkey, expect=200)
    rec.call("hire.services", "GET", f"/api/a2a/services?agentId={pwallet}", key=pkey)
    rec.call("hire.services-unnamed", "GET", "/api/a2a/services", key=pkey)
    c = w.register("hire.caller-register", "caller")
    ckey, cwallet = c["api_key"], c["agent"]["wallet"]
    rec.call(
        "hire.caller-fund",
        "POST",
        "/api/agents/earn",
        json_body={"agentId": cwallet, "amount": 100, "source": "seed"},
        key=ckey,
    )
    hire = {"callerWallet": cwallet, "serviceType": "keyword_research", "input": {"topic": "cold brew"}, "maxPrice": 3}
    job = rec.call("hire.hire", "POST", "/api/a2a/hire", json_body=hire, key=ckey, idem="h-1", expect=200).json()
    rec.call("hire.hire-replay", "POST", "/api/a2a/hire", json_body=hire, key=ckey, idem="h-1")
    rec.call("hire.hire-bad-input", "POST", "/api/a2a/hire", json_body={**hire, "input": {"topic": ""}}, key=ckey)
    rec.call("hire.hire-self", "POST", "/api/a2a/hire", json_body={**hire, "callerWallet": pwallet}, key=pkey)
    rec.call("hire.audit", "GET", f"/api/a2a/hire/{job['jobId']}/audit")
    # escrow hire: the provider's on-chain price equals its service's, then the caller locks USDC
    escrow = w.contract("AgentEscrow")
    w.tx(self_acct, escrow.functions.setPrice(token, 2 * USDC, 3600))
    rec.until(
        "hire.registry",
        "/api/a2a/registry?serviceType=keyword_research",
        lambda page: page["providers"] and page["providers"][0]["escrow"]["available"],
    )
    caller = w.account(13)
    usdc = w.contract("MockUSDC")
    w.tx(caller, usdc.functions.mint(caller.address, 10 * USDC))
    w.tx(caller, usdc.functions.approve(escrow.address, 2 * USDC))
    job_id = Web3.keccak(text="record-flows:escrow-hire:1")
    tx = w.tx(caller, escrow.functions.createJob(job_id, pwallet, 2 * USDC, 3600))
    inp = {"topic": "espresso"}
    _, digest = hire_rules.input_digest(inp)
    ts = int(time.time())
    msg = hire_rules.escrow_message(
        chain_id=w.chain_id, escrow=escrow.address, job_id=_hex(job_id), input_sha256=digest, timestamp=ts
    )
    body = {
        "escrowJobId": _hex(job_id),
        "txHash": tx,
        "serviceType": "keyword_research",
        "input": inp,
        "providerWallet": pwallet,
        "timestamp": ts,
        "signature": _sign(caller, msg),
    }
    rec.call("hire.escrow", "POST", "/api/a2a/escrow", json_body=body, expect=200)
    w.synced()  # the release the service sent
    rec.call("hire.escrow-replayed-signature", "POST", "/api/a2a/escrow", json_body=body)
    rec.until("hire.escrow-status", f"/api/a2a/escrow?jobId={_hex(job_id)}", lambda s: s["status"] == "released")
    rec.until(
        "hire.escrow-audit",
        f"/api/a2a/hire/{_hex(job_id)}/audit",
        lambda a: a["entries"][-1]["payload"].get("final") is True,  # the follower's record of the final release
    )
    rec.call("hire.reputation", "GET", f"/api/a2a/reputation?wallet={pwallet}&serviceType=keyword_research")
    rec.call("hire.withdraw-unknown", "DELETE", f"/api/a2a/services/translation?agentId={pwallet}", key=pkey)


def flow_drop(w: World) -> None:
    rec = w.rec
    s = w.register("drop.seller-register", "for-sale")
    skey, swallet = s["api_key"], s["agent"]["wallet"]
    rec.call(
        "drop.seller-earn",
        "POST",
        "/api/agents/earn",
        json_body={"agentId": swallet, "amount": 40, "source": "seed"},
        key=skey,
    )
    seller, self_acct, buyer = w.account(21), w.account(22), w.account(23)
    ts = int(time.time())
    msg = drop_rules.mint_message(
        chain_id=w.chain_id, wallet=swallet, self_wallet=self_acct.address, owner=seller.address, timestamp=ts
    )
    mint = {
        "agentId": swallet,
        "ownerAddress": seller.address,
        "selfWallet": self_acct.address,
        "timestamp": ts,
        "signature": _sign(self_acct, msg),
    }
    token = int(
        rec.call("drop.mint", "POST", "/api/a2a/drop/mint", json_body=mint, key=skey, expect=201).json()["tokenId"]
    )
    w.synced()
    st = rec.call(
        "drop.statement",
        "POST",
        "/api/a2a/drop/statement",
        json_body={"agentId": swallet, "sellerAddress": seller.address},
        key=skey,
        expect=200,
    ).json()
    statement = st["statement"]
    fields = (
        statement["tokenId"],
        statement["seller"],
        int(statement["reportedEarnings"]),
        int(statement["nonce"]),
        statement["deadline"],
    )
    registry, market = w.contract("AgentRegistry"), w.contract("AgentMarketplace")
    w.tx(seller, registry.functions.approve(market.address, token))
    asking, floor = 100 * USDC, 20 * USDC
    tx = w.tx(seller, market.functions.list(token, asking, floor, 0, fields, st["signature"]))
    listed = rec.call(
        "drop.list",
        "POST",
        "/api/a2a/drop/list",
        json_body={"agentId": swallet, "txHash": tx, "askingPriceUsdc": 100, "acceptOffers": True},
        key=skey,
    ).json()
    listing = listed["listing"]
    rec.until(
        "drop.listing",
        f"/api/a2a/drop?listingId={listing['id']}",
        lambda lst: lst["listing"]["final"] if "listing" in lst else lst.get("final", False),
    )
    rec.call("drop.browse", "GET", "/api/a2a/drop")
    rec.call("drop.browse-agent", "GET", f"/api/a2a/drop?agentId={swallet}")
    rec.call(
        "drop.spend-paused",
        "POST",
        "/api/agents/spend",
        json_body={"agentId": swallet, "amount": 1, "destination": "x"},
        key=skey,
    )
    usdc = w.contract("MockUSDC")
    w.tx(buyer, usdc.functions.mint(buyer.address, 200 * USDC))
    w.tx(buyer, usdc.functions.approve(market.address, 200 * USDC))
    deadline = int(w.w3.eth.get_block("latest")["timestamp"]) + 86_400
    typed = drop_rules.offer_typed_data(
        chain_id=w.chain_id,
        marketplace=market.address,
        listing_id=listing["chainListingId"],
        buyer=buyer.address,
        price=50 * USDC,
        nonce=1,
        deadline=deadline,
    )
    offer = {
        "listingId": listing["id"],
        "offerPriceUsdc": 50,
        "buyerAddress": buyer.address,
        "nonce": 1,
        "deadline": deadline,
        "signature": buyer.sign_typed_data(full_message=typed).signature.to_0x_hex(),
    }
    rec.call("drop.offer", "POST", "/api/a2a/drop/offer", json_body=offer, key=w.ids["key"])
    rec.call(
        "drop.offer-below-floor",
        "POST",
        "/api/a2a/drop/offer",
        json_body={**offer, "offerPriceUsdc": 1},
        key=w.ids["key"],
    )
    tx = w.tx(buyer, market.functions.buy(listing["chainListingId"]))
    rec.call(
        "drop.accept",
        "POST",
        "/api/a2a/drop/accept",
        json_body={"listingId": listing["id"], "buyNow": True, "txHash": tx},
        key=w.ids["key"],
    )
    rec.until(
        "drop.listing-settling",
        f"/api/a2a/drop?listingId={listing['id']}",
        lambda lst: _listing(lst)["status"] == "settling" and _listing(lst)["final"],
    )
    rec.call(
        "drop.memory-frozen",
        "POST",
        "/api/agents/memory",
        json_body={"agentId": swallet, "key": "k", "value": 1},
        key=skey,
    )
    rec.call(
        "drop.cancel-in-window",
        "POST",
        "/api/a2a/drop/cancel",
        json_body={"listingId": listing["id"], "txHash": tx},
        key=skey,
    )
    rec.call("drop.assets", "GET", f"/api/a2a/drop/assets?agentId={swallet}")


def _listing(page: Any) -> dict[str, Any]:
    listing: dict[str, Any] = page.get("listing", page)
    return listing


def flow_public(w: World) -> None:
    rec = w.rec
    rec.call("public.schema", "GET", "/api/schema")
    rec.call("public.agent-card", "GET", "/.well-known/agent-card.json")
    rec.call("public.agent-card-legacy", "GET", "/.well-known/agent.json")
    rec.call("public.protected-resource", "GET", "/.well-known/oauth-protected-resource")
    rec.call("public.protected-resource-mcp", "GET", "/.well-known/oauth-protected-resource/api/mcp")
    rec.call("public.network", "GET", "/api/agents/network")


def flow_mcp(w: World) -> None:
    """tools/list and tool calls through the official `mcp` client (2026-07-28 and the 2025-11-25 handshake)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def session(mode: str, key: str | None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else None
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(w.svc.base + "/api/mcp", http_client=http), mode=mode) as client,
        ):
            tools = await client.list_tools()
            who = "key" if key else "public"
            w.rec.add(f"mcp.{mode}.{who}.tools-list", "MCP", "tools/list", 200, {}, _dump(tools))
            for name, args in [
                ("get_network", {}),
                ("get_balance", {"agentId": w.ids["wallet"]}),
                ("quote_spend", {"agentId": w.ids["wallet"], "amount": 1, "destination": "mcp"}),
                ("get_order", {"order_id": w.ids["order_id"]}),
                ("verify_entry", {"audit_id": w.ids["audit_id"]}),
            ]:
                result = await client.call_tool(name, args)
                w.rec.add(f"mcp.{mode}.{who}.{name}", "MCP", f"tools/call {name}", 200, {}, _dump(result))
                quote = (result.structured_content or {}).get("quote_id")
                if name == "quote_spend" and quote is not None:  # the execute: moves what was quoted, once
                    for attempt in ("spend", "spend-again"):
                        done = await client.call_tool("spend", {"quote_id": quote})
                        w.rec.add(f"mcp.{mode}.{who}.{attempt}", "MCP", "tools/call spend", 200, {}, _dump(done))

    async def main() -> None:
        for mode in ("2026-07-28", "legacy"):
            await session(mode, w.ids["key"])
        await session("2026-07-28", None)

    asyncio.run(main())


def _dump(model: Any) -> str:
    return json.dumps(model.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)


def _signed_in(w: World, step: str, key: str) -> Recorder:
    """A browser of its own (its cookies) signed in to the dashboard with `key`, recording into the run."""
    page = Recorder(httpx.Client(base_url=w.svc.base, timeout=30.0), w.rec.exchanges)
    form = page.call(f"{step}-form", "GET", "/dashboard/sign-in").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None, "no csrf field on the sign-in page"
    body = _form({"csrf": csrf.group(1), "key": key})
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    page.call(step, "POST", "/dashboard/sign-in", content=body, headers=headers)
    return page


def flow_dashboard(w: World) -> None:
    page = _signed_in(w, "dashboard.sign-in", w.ids["key"])
    with closing(page.api):
        page.call("dashboard.overview", "GET", "/dashboard")
        page.call("dashboard.agent", "GET", f"/dashboard/agents/{w.ids['wallet']}")
        page.call("dashboard.ledger-csv", "GET", "/dashboard/ledger.csv")
        page.call("dashboard.live", "GET", "/dashboard/live?view=overview")
        page.call("dashboard.operator-refused", "GET", "/dashboard/operator")
        page.call("dashboard.missing", "GET", "/dashboard/nowhere")
    w.rec.call("dashboard.signed-out", "GET", "/dashboard")
    operator = _signed_in(w, "dashboard.operator-sign-in", _issue_key(w, "--operator"))
    with closing(operator.api):
        operator.call("dashboard.operator", "GET", "/dashboard/operator")


def _form(data: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return urlencode(data)


def flow_refusals(w: World) -> None:
    rec, key, wallet = w.rec, w.ids["key"], w.ids["wallet"]
    earn = "/api/agents/earn"
    rec.call(
        "refuse.bad-json", "POST", earn, content='{"agentId": ', key=key, headers={"Content-Type": "application/json"}
    )
    rec.call(
        "refuse.duplicate-key",
        "POST",
        earn,
        content=f'{{"agentId":"{wallet}","amount":1,"amount":1000000,"source":"x"}}',
        key=key,
        headers={"Content-Type": "application/json"},
    )
    rec.call("refuse.not-json", "POST", earn, content="amount=1", key=key, headers={"Content-Type": "text/plain"})
    rec.call("refuse.missing-key", "POST", earn, json_body={"agentId": wallet, "amount": 1, "source": "x"})
    rec.call(
        "refuse.unknown-key",
        "POST",
        earn,
        json_body={"agentId": wallet, "amount": 1, "source": "x"},
        key="aglk_" + "0" * 32,
    )
    rec.call("refuse.malformed-key", "GET", f"/api/agents/balance?agentId={wallet}", key="nope")
    rec.call(
        "refuse.too-many-decimals",
        "POST",
        earn,
        json_body={"agentId": wallet, "amount": "1.0000001", "source": "x"},
        key=key,
    )
    rec.call("refuse.negative", "POST", earn, json_body={"agentId": wallet, "amount": -1, "source": "x"}, key=key)
    rec.call(
        "refuse.unknown-field",
        "POST",
        earn,
        json_body={"agentId": wallet, "amount": 1, "source": "x", "extra": 1},
        key=key,
    )
    rec.call(
        "refuse.control-char", "POST", earn, json_body={"agentId": wallet, "amount": 1, "source": "a\u0001b"}, key=key
    )
    rec.call("refuse.other-account", "GET", f"/api/agents/balance?agentId={w.ids['other_wallet']}", key=key)
    rec.call("refuse.unknown-wallet", "GET", "/api/agents/balance?agentId=agl_000000000000", key=key)
    rec.call("refuse.no-route", "GET", "/api/nowhere")
    rec.call("refuse.wrong-method", "DELETE", "/api/agents/earn", key=key)
    rec.call("refuse.unknown-order", "GET", "/api/acp/orders/ord_000000000000000000000000")
    rec.call("refuse.unknown-audit", "GET", "/verify/999999", headers={"Accept": "application/json"})
    rec.call("refuse.unknown-item", "GET", "/api/acp/items/item_0000000000000000")
    rec.call("refuse.unknown-provider", "GET", "/api/acp/providers/agl_000000000000")
    rec.call(
        "refuse.api-version",
        "GET",
        f"/api/acp/checkout_sessions/{w.ids['session_id']}",
        key=key,
        headers={"API-Version": "1999-01-01"},
    )
    rec.call("refuse.session-not-yours", "GET", f"/api/acp/checkout_sessions/{w.ids['session_id']}", key=key)
    rec.call("refuse.ipfs-unknown", "GET", "/ipfs/bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
    rec.call("refuse.drop-browse-bad-status", "GET", "/api/a2a/drop?status=bogus")
    rec.call(
        "refuse.mcp-no-auth-bad-key",
        "POST",
        "/api/mcp",
        json_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        key="aglk_" + "1" * 32,
    )
    # a key limited to reading: a write is refused for its scope
    scoped = _issue_key(w, "--agent", w.ids["uuid"], "--scopes", "read")
    rec.call("refuse.scope", "POST", earn, json_body={"agentId": wallet, "amount": 1, "source": "x"}, key=scoped)
    rec.call("refuse.scope-read-ok", "GET", f"/api/agents/balance?agentId={wallet}", key=scoped)


def _issue_key(w: World, *args: str) -> str:
    """`python -m scripts.issue_key` of the tree under test, on its database (the operator's way)."""
    out = subprocess.run(
        [str(w.svc.tree / ".venv/bin/python"), "-m", "scripts.issue_key", *args],
        cwd=w.svc.tree,
        env=w.svc.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"aglk_[0-9a-f]{32}", out)
    if found is None:
        raise RuntimeError(f"issue_key printed no key: {out}")
    return found.group(0)


def flow_health(w: World) -> None:
    w.rec.until(
        "health.healthz",
        "/healthz",
        lambda h: h["status"] == "ok" and h["indexer"]["state"] == "synced",
    )


FLOWS: tuple[Callable[[World], None], ...] = (
    flow_wallets,
    flow_decisions,
    flow_checkout,
    flow_hire,
    flow_drop,
    flow_public,
    flow_mcp,
    flow_dashboard,
    flow_refusals,
    flow_health,
)


def record(tree: Path) -> list[str]:
    """Start `tree`'s service fresh, drive every flow, return the normalized record's lines."""
    with (
        tempfile.TemporaryDirectory(prefix="record-flows-") as tmp,
        make_run(tree, Path(tmp)) as svc,
        runner_server() as runner_port,
        httpx.Client(base_url=svc.base, timeout=60.0) as api,
    ):
        health = api.get("/healthz").json()
        w3 = connect(svc.rpc_url)
        world = World(Recorder(api), svc, w3, int(health["chainId"]), dict(health["contracts"]), runner_port)
        first_day = datetime.now(UTC).date().isoformat()
        for flow in FLOWS:
            flow(world)
        known = {str(svc.api_port): "port", str(svc.anvil_port): "port", str(runner_port): "port"}
        known.update(dict.fromkeys({first_day, datetime.now(UTC).date().isoformat()}, "day"))
        return world.rec.lines(known)


# ---- comparing two records --------------------------------------------------------------------------


def _render(line: str) -> list[str]:
    """One exchange as lines a diff can point into: the request and status, each header, the body
    pretty-printed when it is JSON (numbers kept as written), else its lines."""
    row = json.loads(line)
    out = [f"=== {row['step']}: {row['method']} {row['path']} -> {row['status']}"]
    out += [f"  {k}: {v}" for k, v in row["headers"].items()]
    try:
        body = json.loads(row["body"], parse_float=Decimal, parse_int=Decimal)
        # numbers as written (1.50 stays 1.50): each goes through as a marked string, unquoted after
        text = json.dumps(body, indent=1, ensure_ascii=False, default=lambda n: f"\0{n}\0")
        text = text.replace('"\\u0000', "").replace('\\u0000"', "")
    except ValueError:
        text = row["body"]
    out += ["  " + part for part in text.splitlines()]
    return out


def compare(a: Path, b: Path) -> int:
    """Print a unified diff of two records (one per differing exchange when both ran the same steps);
    1 when they differ."""
    left, right = a.read_text().splitlines(), b.read_text().splitlines()
    if left == right:
        print(f"identical: {len(left)} exchanges")
        return 0
    same_steps = [json.loads(x)["step"] for x in left] == [json.loads(y)["step"] for y in right]
    pairs = [(left, right, str(a), str(b))]
    if same_steps:
        pairs = [
            ([x], [y], f"{a}: {json.loads(x)['step']}", f"{b}") for x, y in zip(left, right, strict=True) if x != y
        ]
    for x, y, name_a, name_b in pairs:
        diff = list(difflib.unified_diff(_lines(x), _lines(y), name_a, name_b, lineterm="", n=2))
        # equal when pretty-printed: the bytes differ (whitespace, the form of a number): show the lines
        print("\n".join(diff or difflib.unified_diff(x, y, name_a, name_b, lineterm="", n=0)))
    print(f"{len(pairs)} exchange(s) differ" if same_steps else "the records ran different steps")
    return 1


def _lines(record: list[str]) -> list[str]:
    return [part for line in record for part in _render(line)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="write the record here")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve (its .venv and code)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="diff two records; 1 if they differ")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("--out FILE or --compare A B")
    lines = record(args.tree.resolve())
    args.out.write_text("".join(line + "\n" for line in lines))
    print(f"{len(lines)} exchanges recorded from {args.tree.resolve()} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
