"""A seeded service for schemathesis: its own anvil with the system deployed, the real app
(api.app.create_app) on a free loopback port over a fresh SQLite file, and real ids to aim at.

    python -m scripts.fuzz_api                 # serve, print the ids and the schemathesis command; Ctrl-C stops
    python -m scripts.fuzz_api --run [-- ARGS] # serve and run `schemathesis run --checks all` (every phase) twice:
                                               # with the buyer's key and without a key; ARGS go to schemathesis

Seeded through the API as a user would: a provider agent linked on-chain (its agent NFT minted)
with a catalogue item, a buyer agent with an earning and a memory, an open checkout session, a
second session completed with the buyer's EIP-712 consent (its order funded on the gateway,
acknowledged, started, with a JSON deliverable: a CID), and a logged decision (an audit entry).
Their ids feed schemathesis through a config file of dictionaries (`schemathesis.toml`): each id
parameter is the real one half of the time and a generated one otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from api.app import create_app, make_runner
from core.anvil import Anvil
from core.audit import canonical
from core.chain import ROOT, connect
from core.checkout import rules
from core.checkout.orders import deliverable_message, provider_message
from core.config import Settings
from core.operator import Operator
from core.store import connect as connect_db
from scripts.compile import compile_contracts
from scripts.devchain import System, deploy_dev_system, dev_account

#: The checks and phases of the README's command.
CHECKS = "all"
PHASES = "examples,coverage,fuzzing,stateful"


@dataclass(frozen=True)
class Seeded:
    """Real ids in a seeded service, and the buyer's (account) key."""

    key: str
    wallet: str
    agent_uuid: str
    provider_wallet: str
    item_id: str
    session_id: str
    order_id: str
    audit_id: int
    cid: str

    def dictionaries(self) -> dict[str, list[str | int]]:
        """Values per id parameter (path and body), as schemathesis dictionaries."""
        return {
            "path.session_id": [self.session_id],
            "path.order_id": [self.order_id],
            "path.audit_id": [str(self.audit_id)],
            "path.cid": [self.cid],
            "path.agent_uuid": [self.agent_uuid],
            "path.agent_id": [self.provider_wallet, self.agent_uuid],
            "path.item_id": [self.item_id],
            "query.agentId": [self.wallet],
            "query.provider": [self.provider_wallet],
            "body.agentId": [self.wallet],
            "body.agent_id": [self.provider_wallet],
            "body.line_items[*].item.id": [self.item_id],
            "body.payments[*].agentId": [self.wallet],
        }


def config_toml(seeded: Seeded, probability: float = 0.5) -> str:
    """The project's schemathesis.toml plus dictionaries drawing each id parameter from the seeded
    ids with `probability`."""
    lines: list[str] = [(ROOT / "schemathesis.toml").read_text()]
    params: list[str] = []
    for i, (param, values) in enumerate(seeded.dictionaries().items()):
        lines.append(f"[dictionaries.d{i}]\nvalues = {json.dumps(values)}\n")
        params.append(f'"{param}" = {{ dictionary = "d{i}", probability = {probability} }}')
    return "\n".join(lines) + "\n[parameters]\n" + "\n".join(params) + "\n"


def _sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


def _ok(resp: httpx.Response, status: int) -> Any:
    if resp.status_code != status:
        raise RuntimeError(f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text}")
    return resp.json()


def seed(base: str, system: System) -> Seeded:
    """Seed `system`'s service at `base` through its API (see the module docstring)."""
    with httpx.Client(base_url=base, timeout=60.0) as api:
        return _seed(api, system)


def _seed(api: httpx.Client, system: System) -> Seeded:
    chain_id = system.deployment.chain_id
    self_wallet, owner, buyer = dev_account(8100), dev_account(8101), system.users[5]
    reg = _ok(api.post("/api/agents/register", json={"name": "provider", "specialty": "content_seo"}), 201)
    pkey, pwallet = reg["api_key"], reg["agent"]["wallet"]
    ph = {"Authorization": f"Bearer {pkey}"}
    ts = int(time.time())
    message = rules.provider_link_message(
        chain_id=chain_id, agent_wallet=pwallet, self_wallet=self_wallet.address, owner=owner.address, timestamp=ts
    )
    link = {
        "agent_id": pwallet,
        "self_wallet": self_wallet.address,
        "owner_address": owner.address,
        "timestamp": ts,
        "signature": _sign(self_wallet, message),
    }
    _ok(api.post("/api/acp/providers", json=link, headers=ph), 201)
    item = _ok(
        api.post("/api/acp/items", json={"title": "Report", "tier": "standard", "agent_id": pwallet}, headers=ph), 201
    )
    breg = _ok(api.post("/api/agents/register", json={"name": "buyer", "specialty": "content_seo"}), 201)
    key, wallet, agent_uuid = breg["api_key"], breg["agent"]["wallet"], breg["agent"]["id"]
    bh = {"Authorization": f"Bearer {key}"}
    _ok(api.post("/api/agents/earn", json={"agentId": wallet, "amount": 1000, "source": "seed"}, headers=bh), 200)
    _ok(api.post("/api/agents/memory", json={"agentId": wallet, "key": "k", "value": {"a": 1}}, headers=bh), 200)
    lines = {"line_items": [{"item": {"id": item["id"]}, "quantity": 1}], "buyer": {"email": "buyer@example.com"}}
    open_session = _ok(api.post("/api/acp/checkout_sessions", json=lines, headers=bh), 201)
    paid = _ok(api.post("/api/acp/checkout_sessions", json=lines, headers=bh), 201)
    total = {t["type"]: t["amount"] for t in paid["totals"]}["total"]
    system.mint_usdc(buyer.address, 10 * total)
    system.approve(buyer, system.gateway.address, total)
    typed = paid["capabilities"]["payment"]["handlers"][0]["config"]["typed_data"]
    typed["message"]["buyer"] = buyer.address
    credential = {"token": buyer.address, "signature": buyer.sign_typed_data(full_message=typed).signature.to_0x_hex()}
    done = _ok(
        api.post(
            f"/api/acp/checkout_sessions/{paid['id']}/complete",
            json={"payment_data": {"handler_id": rules.PAYMENT_HANDLER_ID, "instrument": {"credential": credential}}},
            headers=bh,
        ),
        200,
    )
    oid = done["order"]["id"]
    for action in ("acknowledge", "start"):
        ts = int(time.time())
        body = {"timestamp": ts, "signature": _sign(self_wallet, provider_message(action, oid, ts))}
        _ok(api.post(f"/api/acp/orders/{oid}/{action}", json=body), 200)
    content = {"report": "seeded"}
    ts = int(time.time())
    sha = hashlib.sha256(canonical(content)).hexdigest()
    signed = {
        "X-Provider-Timestamp": str(ts),
        "X-Provider-Signature": _sign(self_wallet, deliverable_message(oid, sha, ts)),
        "X-Content-SHA256": sha,
    }
    cid = _ok(api.post(f"/api/acp/orders/{oid}/deliverables", json={"content": content}, headers=signed), 201)["cid"]
    logged = _ok(
        api.post(
            f"/api/agents/{agent_uuid}/log",
            json={"event_type": "routine", "content_hash": "0" * 64, "model_id": "m", "model_version": "1"},
            headers=bh,
        ),
        201,
    )
    return Seeded(key, wallet, agent_uuid, pwallet, item["id"], open_session["id"], oid, logged["audit_id"], cid)


@contextmanager
def serving(app: web.Application) -> Iterator[str]:
    """Serve `app` (api.app.make_runner: parse errors in the error shape) on a free loopback port from
    a background thread; yields its base URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = make_runner(app)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def service_app(system: System, db_path: Path) -> web.Application:
    """The service as `make run` builds it (no background sweep: the fuzzing must not race it)."""
    dep = system.deployment
    rpc_url: str = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    operator = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    settings = Settings(webhook_allow_private="true")  # no DNS here: generated host names would time out
    return create_app(dep, rpc_url, connect_db(db_path), settings=settings, operator=operator, sweep_interval=None)


def schemathesis_command(base: str, config: Path, key: str | None, extra: list[str]) -> list[str]:
    """`schemathesis run` with every check over every phase, against `base`, with or without `key`."""
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    cmd = [exe, "--config-file", str(config), "run", f"{base}/api/schema", "--checks", CHECKS, "--phases", PHASES]
    if key is not None:
        cmd += ["-H", f"Authorization: Bearer {key}"]
    return cmd + extra


@contextmanager
def seeded_service(tmp: Path) -> Iterator[tuple[str, Seeded, Path]]:
    """(base URL, seeded ids, schemathesis config file) of a service on its own anvil."""
    compile_contracts()
    with Anvil() as node:
        system = deploy_dev_system(connect(node.rpc_url))
        with serving(service_app(system, tmp / "fuzz.db")) as base:
            seeded = seed(base, system)
            config = tmp / "schemathesis.toml"
            config.write_text(config_toml(seeded))
            yield base, seeded, config


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--run", action="store_true", help="run schemathesis (with the key, then without) and exit")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, seeded_service(Path(tmp)) as (base, seeded, config):
        print(f"serving {base}; seeded: {json.dumps(seeded.__dict__)}", flush=True)
        commands = [schemathesis_command(base, config, key, extra) for key in (seeded.key, None)]
        if not args.run:
            for cmd in commands:
                print(" ".join(cmd), flush=True)
            print("Ctrl-C stops", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        failed = 0
        for cmd in commands:
            print("$", " ".join(cmd), flush=True)
            failed |= subprocess.call(cmd, env={**os.environ, "NO_COLOR": "1"})
        return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
