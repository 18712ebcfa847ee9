"""A provider agent to hire, for the README's quickstart, against a running service (`make run`):

    .venv/bin/python -m scripts.demo_provider [--api URL] [--service-type keywords] [--price 1]

It serves a small HTTPS-style runner on loopback (each job `{"jobId", "serviceType", "input":
{"topic"}}` is answered `{"keywords": [...]}` once the service's `X-Service-Signature` checks out),
registers an agent in an account of its own, links it as a provider (a fresh self-wallet key signs
the link; the service mints its agent NFT) and publishes the service. It prints one JSON line
(`providerWallet`, `serviceType`, `price`, `url`) and serves until Ctrl-C or SIGTERM.

Local chains only: its self wallet and owner are throwaway keys made at each start.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from eth_account import Account
from eth_account.messages import encode_defunct

from core.checkout import rules
from core.config import Settings

#: What the runner takes and answers, published with the service (callers' input is checked against it).
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"topic": {"type": "string", "minLength": 1, "maxLength": 200}},
    "required": ["topic"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
    "required": ["keywords"],
}


def runner(secret: threading.Event, secrets: dict[str, str]) -> type[BaseHTTPRequestHandler]:
    """The runner's handler: a job whose signature does not check out is refused with 401."""

    class Runner(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            secret.wait(10)  # the secret is known once the service is published
            # the service's signature: "sha256=" + hex HMAC-SHA256 of the body, keyed with the secret's UTF-8
            expected = "sha256=" + hmac.new(secrets["signing"].encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(self.headers.get("X-Service-Signature", ""), expected):
                self.send_response(401)
                self.end_headers()
                return
            topic = json.loads(body)["input"]["topic"]
            answer = json.dumps({"keywords": [topic, f"best {topic}", f"{topic} near me"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_HEAD(self) -> None:  # the service's health probe
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Runner


def _check(resp: httpx.Response, *statuses: int) -> Any:
    if resp.status_code not in statuses:
        raise SystemExit(f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text}")
    return resp.json()


def main(argv: list[str] | None = None) -> int:
    settings = Settings.load()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--api", default=f"http://{settings.api_host}:{settings.api_port}", help="the API")
    parser.add_argument("--service-type", default="keywords")
    parser.add_argument("--price", default="1", help="USDC per job")
    args = parser.parse_args(argv)

    known, secrets = threading.Event(), {"signing": ""}
    server = ThreadingHTTPServer(("127.0.0.1", 0), runner(known, secrets))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/run"

    api = httpx.Client(base_url=args.api, timeout=30.0)
    reg = _check(api.post("/api/agents/register", json={"name": "demo-keywords", "specialty": "content_seo"}), 201)
    wallet, headers = reg["agent"]["wallet"], {"Authorization": f"Bearer {reg['api_key']}"}
    self_wallet, owner = Account.create(), Account.create()
    chain_id = _check(api.get("/healthz"), 200)["chainId"]
    ts = int(time.time())
    message = rules.provider_link_message(
        chain_id=chain_id, agent_wallet=wallet, self_wallet=self_wallet.address, owner=owner.address, timestamp=ts
    )
    link = {
        "agent_id": wallet,
        "self_wallet": self_wallet.address,
        "owner_address": owner.address,
        "timestamp": ts,
        "signature": "0x" + bytes(self_wallet.sign_message(encode_defunct(text=message)).signature).hex(),
    }
    _check(api.post("/api/acp/providers", json=link, headers=headers), 201)
    service = {
        "agentId": wallet,
        "serviceType": args.service_type,
        "price": float(args.price),
        "description": "keywords for a topic",
        "inputSchema": INPUT_SCHEMA,
        "outputSchema": OUTPUT_SCHEMA,
        "runner": {"type": "https", "url": url},
    }
    published = api.post("/api/a2a/services", json=service, headers=headers)
    secrets["signing"] = _check(published, 200, 201)["signingSecretRaw"]  # the HMAC key (whsec_ is its base64)
    known.set()
    print(
        json.dumps({"providerWallet": wallet, "serviceType": args.service_type, "price": args.price, "url": url}),
        flush=True,
    )

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
