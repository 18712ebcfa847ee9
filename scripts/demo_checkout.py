"""Walk the buyer-funded escrow checkout against a running service (`make run` in another terminal):

    python -m scripts.demo_checkout [--api URL] [--rpc URL]   (defaults: the AGENTLEDGER_* settings make run uses)

Set-up (printed, not counted): a provider agent links its self wallet (EIP-191 signature; the
service mints its agent NFT) and publishes a standard-tier item (250 USDC); a buyer agent is
registered and its chain account gets test USDC from MockUSDC.

The five buyer steps:
1. POST /api/acp/checkout_sessions (Idempotency-Key) -> session `incomplete`, totals;
2. the buyer approves the PaymentGateway for the total on the USDC contract (its own wallet);
3. the buyer signs its consent to the funding (EIP-712 typed data: job id, buyer, provider token,
   amount, work deadline; the session gives it as the payment handler's typed_data) and POSTs
   /api/acp/checkout_sessions/{id}/complete -> `completed`, order `created`, funding tx (the
   gateway checks the same signature on-chain);
4. GET /api/acp/orders/{order_id} with the buyer's key -> the funder's view;
5. the provider acknowledges, starts, uploads a deliverable and completes (signed by its self
   wallet); the service submits the gateway release; the buyer waits for `released` and checks
   the release transaction, the deliverable's bytes (refetched from /ipfs/{cid}) and the audit chain.

It prints the API keys it creates and the dashboard's address: sign in there with either key to see the
order (its last line is one JSON object with them, the session, the order and the deliverable's CID).

Local chains only: the demo's accounts are deterministic development keys funded with anvil_setBalance.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3

from core import deployments
from core.audit import canonical, order_chain_hash
from core.chain import connect, contract_at, send
from core.checkout import rules
from core.checkout.orders import completion_message, deliverable_message, provider_message
from core.config import Settings
from core.networks import network_for
from scripts.devchain import USDC, dev_account


def _say(step: str, text: str) -> None:
    print(f"[{step}] {text}", flush=True)


def _check(resp: httpx.Response, status: int) -> Any:
    if resp.status_code != status:
        raise SystemExit(f"{resp.request.method} {resp.request.url} -> {resp.status_code}: {resp.text}")
    return resp.json()


def _sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


def _signed(acct: LocalAccount, text_for: Any) -> dict[str, Any]:
    ts = int(time.time())
    return {"timestamp": ts, "signature": _sign(acct, text_for(ts))}


def build_parser() -> argparse.ArgumentParser:
    """The demo's flags; --api and --rpc default to where `make run` serves (AGENTLEDGER_* settings)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    settings = Settings.load()  # the same AGENTLEDGER_* configuration `make run` serves with
    parser.add_argument(
        "--api",
        default=f"http://{settings.api_host}:{settings.api_port}",
        help="the API (default: AGENTLEDGER_API_HOST and AGENTLEDGER_API_PORT, as make run)",
    )
    parser.add_argument(
        "--rpc",
        default=settings.rpc_url or f"http://127.0.0.1:{settings.anvil_port}",
        help="the chain node (default: AGENTLEDGER_RPC_URL, else make run's anvil on AGENTLEDGER_ANVIL_PORT)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for `released`")
    parser.add_argument("--deployments", type=Path, default=deployments.DEFAULT_DIR, help="deployments directory")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    w3 = connect(args.rpc)
    chain_id = w3.eth.chain_id
    if network_for(chain_id).explorer is not None:
        raise SystemExit(f"chain {chain_id} is not a local development chain: the demo only runs locally")
    dep = deployments.load(chain_id, args.deployments)
    usdc = contract_at(w3, "MockUSDC", dep.usdc)
    run_tag = secrets.token_hex(2)
    self_wallet, owner, buyer = (dev_account(9000 + i + 10 * int(run_tag, 16)) for i in range(3))
    for acct in (self_wallet, owner, buyer):
        w3.provider.make_request("anvil_setBalance", [acct.address, hex(10**18)])  # type: ignore[arg-type]
    api = httpx.Client(base_url=args.api, timeout=30.0)

    # ---- set-up: a provider with an item, a buyer with USDC --------------------------------------
    reg = _check(api.post("/api/agents/register", json={"name": "demo-provider", "specialty": "content_seo"}), 201)
    pkey, pwallet = reg["api_key"], reg["agent"]["wallet"]
    _say("setup", f"provider agent {pwallet}, API key {pkey}")
    ph = {"Authorization": f"Bearer {pkey}"}
    ts = int(time.time())
    link_msg = rules.provider_link_message(
        chain_id=chain_id, agent_wallet=pwallet, self_wallet=self_wallet.address, owner=owner.address, timestamp=ts
    )
    link = {
        "agent_id": pwallet,
        "self_wallet": self_wallet.address,
        "owner_address": owner.address,
        "timestamp": ts,
        "signature": _sign(self_wallet, link_msg),
    }
    provider = _check(api.post("/api/acp/providers", json=link, headers=ph), 201)
    _say("setup", f"provider {pwallet} linked: agent NFT #{provider['token_id']} (mint tx {provider['mint_tx']})")
    item = _check(
        api.post(
            "/api/acp/items", json={"title": "Market report", "tier": "standard", "agent_id": pwallet}, headers=ph
        ),
        201,
    )
    _say(
        "setup",
        f"item {item['id']}: {item['title']}, {item['tier']} ({item['delivery_hours']} h), {item['price']} USDC",
    )
    breg = _check(api.post("/api/agents/register", json={"name": "demo-buyer", "specialty": "content_seo"}), 201)
    bh = {"Authorization": f"Bearer {breg['api_key']}", "API-Version": rules.SUPPORTED_API_VERSIONS[0]}
    _say("setup", f"buyer agent {breg['agent']['wallet']}, API key {breg['api_key']}")
    send(w3, buyer, usdc.functions.mint(buyer.address, 1000 * USDC))
    _say("setup", f"buyer {buyer.address} holds {usdc.functions.balanceOf(buyer.address).call() / USDC} USDC")

    # ---- 1. create the session ------------------------------------------------------------------
    session = _check(
        api.post(
            "/api/acp/checkout_sessions",
            json={"line_items": [{"item": {"id": item["id"]}, "quantity": 1}], "buyer": {"email": "buyer@example.com"}},
            headers={**bh, "Idempotency-Key": f"demo-{run_tag}-create", "Request-Id": f"demo-{run_tag}"},
        ),
        201,
    )
    total = {t["type"]: t["amount"] for t in session["totals"]}["total"]
    config = session["capabilities"]["payment"]["handlers"][0]["config"]
    _say("1", f"session {session['id']}: {session['status']}, total {total} units ({total / USDC} USDC)")

    # ---- 2. approve the gateway -----------------------------------------------------------------
    receipt = send(w3, buyer, usdc.functions.approve(Web3.to_checksum_address(config["spender"]), total))
    _say("2", f"approved {total} units to the gateway {config['spender']}: tx {receipt['transactionHash'].to_0x_hex()}")

    # ---- 3. complete ----------------------------------------------------------------------------
    # The buyer consents to exactly this funding: it signs (EIP-712) the typed data the session's
    # payment handler gives (chain and gateway in the domain; job id, provider token, amount and work
    # deadline in the message), with itself as the buyer. The gateway checks the same signature.
    typed = config["typed_data"]
    typed["message"]["buyer"] = buyer.address
    _say("3", f"signing: pull {typed['message']['amount']} units, reclaimable after {typed['message']['deadline']}")
    consent = buyer.sign_typed_data(full_message=typed).signature.to_0x_hex()
    credential = {"type": "address", "token": buyer.address, "signature": consent}
    done = _check(
        api.post(
            f"/api/acp/checkout_sessions/{session['id']}/complete",
            json={
                "buyer": {"email": "buyer@example.com"},
                "payment_data": {
                    "handler_id": rules.PAYMENT_HANDLER_ID,
                    "instrument": {"type": "wallet", "credential": credential},
                },
            },
            headers={**bh, "Idempotency-Key": f"demo-{run_tag}-complete"},
        ),
        200,
    )
    order = done["order"]
    _say("3", f"session {done['status']}; order {order['id']} {order['status']}, job {order['service_job_id']}")
    _say("3", f"funding tx {order['settlement_tx_hash']}")

    # ---- 4. the funder's view of the order ------------------------------------------------------
    view = _check(api.get(f"/api/acp/orders/{order['id']}", headers=bh), 200)
    _say("4", f"order {view['status']}, buyer {view['buyer_details']['email']}, {len(view['history'])} history entry")

    # ---- 5. the provider works; the chain releases; the buyer verifies --------------------------
    oid, job_id = order["id"], order["service_job_id"]
    for action in ("acknowledge", "start"):
        body = _signed(self_wallet, lambda t, a=action: provider_message(a, oid, t))
        moved = _check(api.post(f"/api/acp/orders/{oid}/{action}", json=body), 200)
        _say("5", f"provider {action}: order {moved['status']}")
    content = {"title": "Market report", "findings": ["demand is up", "prices are flat"]}
    sha = hashlib.sha256(canonical(content)).hexdigest()
    upload = _signed(self_wallet, lambda t: deliverable_message(oid, sha, t))  # in headers: checked before the body
    up = _check(
        api.post(
            f"/api/acp/orders/{oid}/deliverables",
            json={"content": content},
            headers={
                "X-Provider-Timestamp": str(upload["timestamp"]),
                "X-Provider-Signature": upload["signature"],
                "X-Content-SHA256": sha,
            },
        ),
        201,
    )
    cid = up["cid"]
    _say("5", f"deliverable stored: {cid} ({up['size']} bytes)")
    fin = _check(
        api.post(
            f"/api/acp/orders/{oid}/complete",
            json={"cid": cid, **_signed(self_wallet, lambda t: completion_message(job_id, cid, t))},
        ),
        200,
    )
    _say("5", f"provider completed; release tx {fin['txHash']}")
    deadline = time.monotonic() + args.timeout
    while True:
        view = _check(api.get(f"/api/acp/orders/{oid}", headers=bh), 200)
        if view["status"] == "released" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if view["status"] != "released":
        raise SystemExit(f"order still {view['status']} after {args.timeout} s (is the indexer running?)")
    release = w3.eth.get_transaction_receipt(view["release"]["tx_hash"])
    fetched = api.get(f"/ipfs/{cid}")
    same = fetched.status_code == 200 and hashlib.sha256(fetched.content).hexdigest() == sha
    prev, chain_ok = "genesis", True
    for entry in view["audit_chain"]["entries"]:
        chain_ok &= (
            entry["prev_hash"] == prev and order_chain_hash(prev, canonical(entry["payload"])) == entry["chain_hash"]
        )
        prev = entry["chain_hash"]
    _say("5", f"order released in block {release['blockNumber']} (status {release['status']})")
    _say("5", f"deliverable refetched from /ipfs/{cid}: bytes match: {same}")
    _say("5", f"audit chain of {len(view['audit_chain']['entries'])} entries recomputed: {chain_ok}")
    dashboard = args.api.rstrip("/") + "/dashboard"
    _say("done", f"see the order in the dashboard: open {dashboard} and sign in with the buyer's or the provider's key")
    print(
        json.dumps(
            {
                "session": session["id"],
                "order": oid,
                "cid": cid,
                "dashboard": dashboard,
                "provider": {"wallet": pwallet, "apiKey": pkey},
                "buyer": {"wallet": breg["agent"]["wallet"], "apiKey": breg["api_key"]},
            },
            indent=2,
        )
    )
    return 0 if same and chain_ok and release["status"] == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
