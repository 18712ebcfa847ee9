"""The full buyer sequence of escrow checkout on anvil: p50 and p99 seconds per sequence and per step.

    python -m benchmarks.checkout_flow [--runs 20] [--warmup 1]

Starts its own anvil, deploys every contract as `make run` does (anvil's development key holds
every role), and serves the real service in its own process exactly as `make run` does
(`python -m scripts.run` with AGENTLEDGER_RPC_URL set: the API, the indexer with the order
follower, the webhook dispatcher; a fresh SQLite file). A provider links its self wallet and
publishes a standard item (250 USDC); then, --runs times, a buyer walks the sequence over HTTP:

    create    POST /api/acp/checkout_sessions (with a webhook_url on a loopback receiver)
    approve   the buyer's own USDC approve of the gateway (a transaction, mined)
    complete  POST .../complete: the service funds the gateway job on-chain
    ack       provider acknowledge (EIP-191 signed)
    start     provider start
    upload    provider uploads a 4 KiB deliverable (multipart), gets its CID
    attest    provider complete: the service sends the gateway release, mined
    released  until GET /api/acp/orders/{id} shows `released` (the indexer saw the final JobReleased)

and, not part of the sequence, `webhook`: from the attest response to the `released` webhook
arriving at the receiver. Baseline, measured in the same run before the service starts: the three
transactions the sequence needs (approve, fund, release) sent straight to anvil with web3, no
service; the ratio sequence / baseline is what the service adds around the chain.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.logs import DISCARD

from benchmarks._kit import percentile
from core import deployments
from core.anvil import Anvil, free_port
from core.chain import ROOT, connect, contract_at, send
from core.checkout import rules
from core.checkout.orders import completion_message, deliverable_message, provider_message
from core.networks import ANVIL_DEV_KEY
from scripts.compile import compile_contracts
from scripts.deploy import Roles, deploy_system
from scripts.devchain import USDC, dev_account

STEPS = ("create", "approve", "complete", "ack", "start", "upload", "attest", "released")


def _sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


def _signed(acct: LocalAccount, message: Callable[[int], str]) -> dict[str, Any]:
    ts = int(time.time())
    return {"timestamp": ts, "signature": _sign(acct, message(ts))}


def _ok(resp: httpx.Response, status: int) -> Any:
    if resp.status_code != status:
        raise RuntimeError(f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text}")
    return resp.json()


# ---- the webhook receiver: records when each order's `released` event arrives -------------------


class _Hooks:
    def __init__(self) -> None:
        self.released: dict[str, float] = {}
        self.lock = threading.Lock()
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                at = time.perf_counter()
                event = json.loads(body)
                if event.get("status") == "released":
                    with hooks.lock:
                        hooks.released.setdefault(event["job_id"], at)
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait(self, order_id: str, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if order_id in self.released:
                    return self.released[order_id]
            time.sleep(0.002)
        raise TimeoutError(f"no `released` webhook for {order_id}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---- baseline: the sequence's three transactions, no service ------------------------------------


def baseline(w3: Web3, dep: deployments.Deployment, operator: LocalAccount, runs: int) -> list[float]:
    usdc = contract_at(w3, "MockUSDC", dep.usdc)
    gateway = contract_at(w3, "PaymentGateway", dep.address("PaymentGateway"))
    registry = contract_at(w3, "AgentRegistry", dep.address("AgentRegistry"))
    self_wallet, owner, buyer = dev_account(5100), dev_account(5101), dev_account(5102)
    w3.provider.make_request("anvil_setBalance", [buyer.address, hex(10**20)])  # type: ignore[arg-type]
    minted = send(w3, operator, registry.functions.mint(owner.address, self_wallet.address, "agl_0000000b5e11", 0))
    (registered,) = registry.events.AgentRegistered().process_receipt(minted, errors=DISCARD)
    token = registered["args"]["tokenId"]
    send(w3, buyer, usdc.functions.mint(buyer.address, runs * 250 * USDC))
    times = []
    for _ in range(runs):
        job = secrets.token_bytes(32)
        cid = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
        started = time.perf_counter()
        send(w3, buyer, usdc.functions.approve(gateway.address, 250 * USDC))
        deadline = w3.eth.get_block("latest")["timestamp"] + 48 * 3600
        typed = rules.funding_typed_data(
            chain_id=dep.chain_id,
            gateway=gateway.address,
            job_id="0x" + job.hex(),
            buyer=buyer.address,
            provider_token_id=token,
            amount=250 * USDC,
            deadline=deadline,
        )
        consent = bytes(buyer.sign_typed_data(full_message=typed).signature)
        send(w3, operator, gateway.functions.fund(job, buyer.address, token, 250 * USDC, deadline, consent))
        ts = int(time.time())
        attestation = _sign(self_wallet, completion_message("0x" + job.hex(), cid, ts))
        send(w3, operator, gateway.functions.release(job, cid, ts, bytes.fromhex(attestation[2:])))
        times.append(time.perf_counter() - started)
    return times


# ---- the service, as `make run` serves it ---------------------------------------------------------


def start_service(tmp: Path, rpc_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AGENTLEDGER_RPC_URL": rpc_url,
        "AGENTLEDGER_DEPLOYMENTS_DIR": str(tmp / "deployments"),
        "AGENTLEDGER_DATA_DIR": str(tmp / "var"),
        "AGENTLEDGER_API_PORT": str(port),
        "AGENTLEDGER_WEBHOOK_ALLOW_PRIVATE": "true",
    }
    for var in ("AGENTLEDGER_CONFIG", "AGENTLEDGER_DB_PATH", "AGENTLEDGER_OPERATOR_KEY", "AGENTLEDGER_RUN_INDEXER"):
        env.pop(var, None)
    log = (tmp / "service.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "scripts.run"], env=env, cwd=ROOT, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the service exited: {(tmp / 'service.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise TimeoutError("the service did not start")


def stop_service(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---- one buyer sequence -------------------------------------------------------------------------


class Shop:
    def __init__(self, api: httpx.Client, w3: Web3, dep: deployments.Deployment, hooks: _Hooks) -> None:
        self.api, self.w3, self.hooks = api, w3, hooks
        self.usdc = contract_at(w3, "MockUSDC", dep.usdc)
        self.gateway = dep.address("PaymentGateway")
        self.self_wallet, owner, self.buyer = dev_account(5200), dev_account(5201), dev_account(5202)
        w3.provider.make_request("anvil_setBalance", [self.buyer.address, hex(10**20)])  # type: ignore[arg-type]
        reg = _ok(api.post("/api/agents/register", json={"name": "bench-provider", "specialty": "content_seo"}), 201)
        pkey, wallet = reg["api_key"], reg["agent"]["wallet"]
        ts = int(time.time())
        message = rules.provider_link_message(
            chain_id=dep.chain_id,
            agent_wallet=wallet,
            self_wallet=self.self_wallet.address,
            owner=owner.address,
            timestamp=ts,
        )
        link = {
            "agent_id": wallet,
            "self_wallet": self.self_wallet.address,
            "owner_address": owner.address,
            "timestamp": ts,
            "signature": _sign(self.self_wallet, message),
        }
        ph = {"Authorization": f"Bearer {pkey}"}
        _ok(api.post("/api/acp/providers", json=link, headers=ph), 201)
        item = {"title": "Market report", "tier": "standard", "agent_id": wallet}
        self.item = _ok(api.post("/api/acp/items", json=item, headers=ph), 201)["id"]
        breg = _ok(api.post("/api/agents/register", json={"name": "bench-buyer", "specialty": "content_seo"}), 201)
        self.bh = {"Authorization": f"Bearer {breg['api_key']}"}
        send(w3, self.buyer, self.usdc.functions.mint(self.buyer.address, 10**6 * USDC))

    def sequence(self, n: int) -> tuple[dict[str, float], float]:
        """One buyer sequence: seconds per step, and attest -> `released` webhook."""
        api, me, t = self.api, self.self_wallet, {}
        clock = time.perf_counter()

        def lap(step: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            t[step], clock = now - clock, now

        body = {
            "line_items": [{"item": {"id": self.item}, "quantity": 1}],
            "buyer": {"email": "bench@example.com"},
            "webhook_url": self.hooks.url,
        }
        session = _ok(
            api.post("/api/acp/checkout_sessions", json=body, headers={**self.bh, "Idempotency-Key": f"c{n}"}), 201
        )
        lap("create")
        total = {x["type"]: x["amount"] for x in session["totals"]}["total"]
        send(self.w3, self.buyer, self.usdc.functions.approve(self.gateway, total))
        lap("approve")
        typed = session["capabilities"]["payment"]["handlers"][0]["config"]["typed_data"]
        typed["message"]["buyer"] = self.buyer.address  # the buyer's EIP-712 consent to this funding
        signature = self.buyer.sign_typed_data(full_message=typed).signature.to_0x_hex()
        credential = {"type": "address", "token": self.buyer.address, "signature": signature}
        payment = {"handler_id": rules.PAYMENT_HANDLER_ID, "instrument": {"type": "wallet", "credential": credential}}
        done = _ok(
            api.post(
                f"/api/acp/checkout_sessions/{session['id']}/complete",
                json={"buyer": {"email": "bench@example.com"}, "payment_data": payment},
                headers={**self.bh, "Idempotency-Key": f"p{n}"},
            ),
            200,
        )
        lap("complete")
        oid, job_id = done["order"]["id"], done["order"]["service_job_id"]
        for action in ("acknowledge", "start"):
            signed = _signed(me, lambda ts, a=action: provider_message(a, oid, ts))  # type: ignore[misc]
            _ok(api.post(f"/api/acp/orders/{oid}/{action}", json=signed), 200)
            lap("ack" if action == "acknowledge" else "start")
        data = f"order {oid}\n".encode() + secrets.token_bytes(4096)
        sha = hashlib.sha256(data).hexdigest()
        upload = _signed(me, lambda ts: deliverable_message(oid, sha, ts))
        headers = {
            "X-Provider-Timestamp": str(upload["timestamp"]),
            "X-Provider-Signature": upload["signature"],
            "X-Content-SHA256": sha,
        }
        up = _ok(api.post(f"/api/acp/orders/{oid}/deliverables", files={"file": data}, headers=headers), 201)
        lap("upload")
        cid = up["cid"]
        attest = {"cid": cid, **_signed(me, lambda ts: completion_message(job_id, cid, ts))}
        _ok(api.post(f"/api/acp/orders/{oid}/complete", json=attest), 200)
        lap("attest")
        attested = clock
        while _ok(api.get(f"/api/acp/orders/{oid}", headers=self.bh), 200)["status"] != "released":
            if time.perf_counter() - attested > 60:
                raise TimeoutError(f"order {oid} not released after 60 s")
            time.sleep(0.01)
        lap("released")
        return t, self.hooks.wait(oid) - attested


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured sequences first")
    args = parser.parse_args()
    compile_contracts()
    with Anvil() as node, tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        w3 = connect(node.rpc_url)
        deployer: LocalAccount = Account.from_key(ANVIL_DEV_KEY)
        a = deployer.address
        dep = deploy_system(w3, deployer, Roles(admin=a, operator=a, arbiter=a, anchorer=a, treasury=a))
        deployments.save(dep, tmp / "deployments")
        floor = baseline(w3, dep, deployer, args.runs)
        hooks = _Hooks()
        port = free_port()
        proc = start_service(tmp, node.rpc_url, port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as api:
                shop = Shop(api, w3, dep, hooks)
                for n in range(args.warmup):
                    shop.sequence(-1 - n)
                runs: list[dict[str, float]] = []
                webhook: list[float] = []
                for n in range(args.runs):
                    steps, hook = shop.sequence(n)
                    runs.append(steps)
                    webhook.append(hook)
        finally:
            stop_service(proc)
            hooks.close()
    totals = [sum(r.values()) for r in runs]
    print(f"checkout buyer sequence on anvil ({args.runs} runs after {args.warmup} warm-up; seconds)")
    print(f"  {'step':<34} {'p50':>8} {'p99':>8}")
    for step in STEPS:
        values = [r[step] for r in runs]
        print(f"  {step:<34} {percentile(values, 0.5):8.3f} {percentile(values, 0.99):8.3f}")
    print(f"  {'sequence (create -> released)':<34} {percentile(totals, 0.5):8.3f} {percentile(totals, 0.99):8.3f}")
    print(f"  {'attest -> `released` webhook':<34} {percentile(webhook, 0.5):8.3f} {percentile(webhook, 0.99):8.3f}")
    print(f"  {'baseline: approve+fund+release':<34} {percentile(floor, 0.5):8.3f} {percentile(floor, 0.99):8.3f}")
    print(f"sequence / baseline (medians): {statistics.median(totals) / statistics.median(floor):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
