"""A provider's job endpoint for the hire scenarios: a loopback HTTP server that checks each job
request's signatures with agentledger_sdk.webhooks (Standard Webhooks and X-Service-Signature, with
the whsec_ signing secret the service showed once) and answers keywords for the input's topic."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentledger_sdk import AgentLedger
from agentledger_sdk.webhooks import verify_service, verify_standard

INPUT_SCHEMA = {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
    "required": ["keywords"],
}


@dataclass
class Endpoint:
    url: str = ""
    secret: str = ""
    verified: int = 0
    refused: int = 0
    jobs: list[str] = field(default_factory=list)


@contextmanager
def endpoint() -> Iterator[Endpoint]:
    ep = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:  # the service's health probe
            self.send_response(200)
            self.end_headers()

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = dict(self.headers.items())
            signed = verify_standard(raw, ep.secret, headers) and verify_service(
                raw, ep.secret, headers.get("X-Service-Signature", "")
            )
            if not signed:
                ep.refused += 1
                self.send_response(401)
                self.end_headers()
                return
            ep.verified += 1
            job = json.loads(raw)
            ep.jobs.append(job["jobId"])
            out = json.dumps({"keywords": [f"{job['input']['topic']} tips", f"best {job['input']['topic']}"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ep.url = f"http://127.0.0.1:{server.server_address[1]}/run"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield ep
    finally:
        server.shutdown()
        server.server_close()


def publish(al: AgentLedger, wallet: str, ep: Endpoint, price: str) -> dict[str, Any]:
    published = al.publish_service(
        wallet,
        "keyword_research",
        price,
        description="keywords for a topic",
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        url=ep.url,
        sla_seconds=30,
    )
    ep.secret = str(published["signingSecret"])
    return dict(published.raw)
