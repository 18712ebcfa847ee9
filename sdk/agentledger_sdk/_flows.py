"""Calls written once for both clients: each is a generator that yields the steps it needs (a request
to the service, a JSON-RPC request to the caller's chain node, a pause) and receives their answers;
AgentLedger drives it with blocking I/O, AsyncAgentLedger with awaits. A step that fails is thrown
back into the generator, so a flow may handle it (retry a signed call with a fresh signature).

Signing happens here, locally (eth-account, the ``escrow`` extra): EIP-191 messages for provider
actions, EIP-712 typed data for the checkout's funding consent and drop offers, and the caller's own
transactions (legacy gas price, EIP-155); no key ever leaves the process.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from agentledger_sdk import _errors as errors
from agentledger_sdk import _escrow as chain
from agentledger_sdk._models import (
    CheckoutSession,
    DecisionLogged,
    Deployment,
    EntryVerification,
    Result,
    dumps,
    to_decimal,
    to_units,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One request to the service, and how its answer is read."""

    method: str
    path: str
    parse: Callable[[Mapping[str, Any], bool], Result]
    body: bytes | None = None
    params: Mapping[str, str] | None = None
    idempotency_key: str | None = None
    #: True for POSTs the server does not deduplicate: retried only when certainly not sent.
    unsafe: bool = False
    #: False when a 5xx is a final answer (a hire whose provider failed: the key replays it anyway).
    retry_5xx: bool = True
    headers: Mapping[str, str] | None = None
    #: Sent as is (multipart), with this Content-Type, instead of JSON.
    content_type: str | None = None

    @property
    def repeatable(self) -> bool:
        return not self.unsafe and (self.method in ("GET", "DELETE") or self.idempotency_key is not None)


@dataclass(frozen=True)
class Rpc:
    """One JSON-RPC request to the caller's chain node; the answer is its ``result``."""

    url: str
    method: str
    params: list[Any]


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Call | Rpc | Sleep
Flow = Generator[Step, Any, T]

#: Seconds between receipt polls of the caller's own transactions.
RECEIPT_POLL = 0.2
#: Seconds a transaction's receipt is waited for.
RECEIPT_TIMEOUT = 120.0


def new_key(given: str | None) -> str:
    return given if given is not None else str(uuid.uuid4())


def request(call: Call) -> Flow[Any]:
    result = yield call
    return result


# ---- the chain (the caller's own account) -----------------------------------------------------------


def call_uint(url: str, to: str, data: str) -> Flow[int]:
    return chain.decode_uint((yield Rpc(url, "eth_call", [{"to": to, "data": data}, "latest"])))


def transact(url: str, account: Any, to: str, data: str, chain_id: int, timeout: float = RECEIPT_TIMEOUT) -> Flow[str]:
    """Sign a transaction locally, send it, wait for its receipt: its hash (a revert raises)."""
    sender = account.address
    nonce = int((yield Rpc(url, "eth_getTransactionCount", [sender, "pending"])), 16)
    gas = int((yield Rpc(url, "eth_estimateGas", [{"from": sender, "to": to, "data": data}])), 16)
    price = int((yield Rpc(url, "eth_gasPrice", [])), 16)
    raw = chain.signed_tx(
        account, to=to, data=data, nonce=nonce, gas=chain.with_margin(gas), gas_price=price, chain_id=chain_id
    )
    tx_hash = str((yield Rpc(url, "eth_sendRawTransaction", [raw])))
    deadline = time.monotonic() + timeout
    while True:
        receipt = yield Rpc(url, "eth_getTransactionReceipt", [tx_hash])
        if receipt is not None:
            if int(receipt["status"], 16) != 1:
                raise errors.AgentLedgerError(
                    f"transaction {tx_hash} reverted", type="chain_error", code="transaction_failed"
                )
            return tx_hash
        if time.monotonic() > deadline:
            raise errors.TimeoutError(f"no receipt for {tx_hash}", type="chain_error", code="timeout")
        yield Sleep(RECEIPT_POLL)


def approve_at_least(
    url: str, account: Any, token: str, spender: str, amount: int, chain_id: int, timeout: float = RECEIPT_TIMEOUT
) -> Flow[str | None]:
    """ERC-20 approve of ``amount`` to ``spender`` unless the allowance already covers it: the tx hash or None."""
    allowance = yield from call_uint(
        url, token, chain.calldata("allowance(address,address)", ["address", "address"], [account.address, spender])
    )
    if allowance >= amount:
        return None
    data = chain.calldata("approve(address,uint256)", ["address", "uint256"], [spender, amount])
    return (yield from transact(url, account, token, data, chain_id, timeout))


def deployment() -> Flow[Deployment]:
    result: Deployment = yield Call("GET", "/healthz", Deployment.parse)
    return result


def sign_typed(account: Any, typed_data: Mapping[str, Any]) -> str:
    """EIP-712 (eth_signTypedData_v4) signature of ``typed_data`` {domain, types, primaryType, message}."""
    return "0x" + bytes(chain.account_of(account).sign_typed_data(full_message=dict(typed_data)).signature).hex()


def sign_text(account: Any, text: str) -> str:
    return chain.sign_message(chain.account_of(account), text)


def _unix() -> int:
    return int(time.time())


# ---- decisions and their verification ---------------------------------------------------------------


def log_decision(
    agent_uuid: str,
    event_type: str,
    content_hash: str,
    model_id: str,
    model_version: str,
    evidence: Iterable[Any] | None,
    correlation_ref: str | None,
    webhook_url: str | None,
    webhook_secret: str | None,
    idem: str | None,
) -> Flow[DecisionLogged]:
    body: dict[str, Any] = {
        "event_type": event_type,
        "content_hash": content_hash,
        "model_id": model_id,
        "model_version": model_version,
    }
    if evidence is not None:
        items = [e if isinstance(e, Mapping) else {"type": e[0], "sha256": e[1]} for e in evidence]
        body["evidence_manifest"] = [dict(e) for e in items]
    for name, value in (
        ("correlation_ref", correlation_ref),
        ("webhook_url", webhook_url),
        ("webhook_secret", webhook_secret),
    ):
        if value is not None:
            body[name] = value
    path = f"/api/agents/{quote(agent_uuid, safe='')}/log"
    result: DecisionLogged = yield Call("POST", path, DecisionLogged.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def verify_entry(audit_id: int, expected: DecisionLogged | None, rpc_url: str | None) -> Flow[EntryVerification]:
    """GET /verify/{id} as JSON, every hash recomputed here (EntryVerification.parse); against
    ``expected`` (what log_decision answered) its chain and content hashes; with ``rpc_url`` and an
    anchored checkpoint, the root read from AuditAnchor.rootAt on the chain itself."""
    v: EntryVerification = yield Call(
        "GET", f"/verify/{int(audit_id)}", EntryVerification.parse, params={"format": "json"}
    )
    problems = list(v.problems)
    if expected is not None:
        if v.chain_hash != expected.chain_hash:
            problems.append(f"chain_hash {v.chain_hash} is not the {expected.chain_hash} logged")
        if v.payload.get("content_hash") != expected.content_hash:
            problems.append("the entry's content_hash is not the one logged")
    root_onchain = None
    anchor = v.raw.get("anchor")
    if rpc_url is not None and v.anchored and isinstance(anchor, Mapping) and anchor.get("contract"):
        data = chain.calldata("rootAt(uint256)", ["uint256"], [v.tree_size])
        word = yield Rpc(rpc_url, "eth_call", [{"to": anchor["contract"], "data": data}, "latest"])
        root_onchain = str(word).lower() == v.root.lower()
        if not root_onchain:
            problems.append(f"AuditAnchor.rootAt({v.tree_size}) on-chain is {word}, not {v.root}")
    return EntryVerification(
        v.raw,
        audit_id=v.audit_id,
        stream=v.stream,
        seq=v.seq,
        chain_hash=v.chain_hash,
        prev_hash=v.prev_hash,
        payload=v.payload,
        tree_size=v.tree_size,
        root=v.root,
        anchored=v.anchored,
        root_onchain=root_onchain,
        problems=tuple(problems),
    )


# ---- escrow checkout: the buyer ---------------------------------------------------------------------

CHECKOUT = "/api/acp/checkout_sessions"


def _line_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for it in items:
        if isinstance(it, str):
            out.append({"item": {"id": it}, "quantity": 1})
        elif isinstance(it, Mapping):
            out.append(dict(it))
        else:  # (item_id, quantity)
            out.append({"item": {"id": it[0]}, "quantity": int(it[1])})
    return out


def create_checkout_session(
    items: Iterable[Any], buyer: Mapping[str, Any] | None, webhook_url: str | None, idem: str | None
) -> Flow[CheckoutSession]:
    body: dict[str, Any] = {"line_items": _line_items(items)}
    if buyer is not None:
        body["buyer"] = dict(buyer)
    if webhook_url is not None:
        body["webhook_url"] = webhook_url
    result: CheckoutSession = yield Call(
        "POST", CHECKOUT, CheckoutSession.parse, dumps(body), idempotency_key=new_key(idem)
    )
    return result


def get_checkout_session(session_id: str) -> Flow[CheckoutSession]:
    result: CheckoutSession = yield Call("GET", f"{CHECKOUT}/{quote(session_id, safe='')}", CheckoutSession.parse)
    return result


def update_checkout_session(
    session_id: str, items: Iterable[Any] | None, buyer: Mapping[str, Any] | None, idem: str | None
) -> Flow[CheckoutSession]:
    body: dict[str, Any] = {}
    if items is not None:
        body["line_items"] = _line_items(items)
    if buyer is not None:
        body["buyer"] = dict(buyer)
    path = f"{CHECKOUT}/{quote(session_id, safe='')}"
    result: CheckoutSession = yield Call(
        "POST", path, CheckoutSession.parse, dumps(body), idempotency_key=new_key(idem)
    )
    return result


def cancel_checkout_session(session_id: str, idem: str | None) -> Flow[CheckoutSession]:
    path = f"{CHECKOUT}/{quote(session_id, safe='')}/cancel"
    result: CheckoutSession = yield Call("POST", path, CheckoutSession.parse, b"{}", idempotency_key=new_key(idem))
    return result


def _session(session: CheckoutSession | str) -> Flow[CheckoutSession]:
    if isinstance(session, CheckoutSession):
        return session
    return (yield from get_checkout_session(session))


def approve_checkout(session: CheckoutSession | str, account: Any, rpc_url: str) -> Flow[str | None]:
    """Step 2: the payer approves the gateway (``payment["spender"]``) for the session's total on USDC."""
    s = yield from _session(session)
    pay = s.payment
    acct = chain.account_of(account)
    return (
        yield from approve_at_least(
            rpc_url, acct, str(pay["token"]), str(pay["spender"]), int(pay["amount"]), int(pay["chain_id"])
        )
    )


FUNDING_DOMAIN = "agentledger PaymentGateway"


def _checked_funding(session: CheckoutSession) -> Mapping[str, Any]:
    """The session's Funding typed data, once it says what the session says: the gateway's domain on
    the session's chain, the job id of this session, the total as the amount. A consent is what the
    gateway pulls the payer's USDC with, so nothing else is signed."""
    typed = session.payment.get("typed_data")
    if not isinstance(typed, Mapping) or typed.get("primaryType") != "Funding":
        raise ValueError("the session carries no Funding typed data")
    domain, message = typed.get("domain") or {}, typed.get("message") or {}
    job_id = "0x" + chain.keccak_text(f"agentledger:checkout:{session.id}").hex()
    wrong = [
        what
        for what, ok in (
            ("the domain is not the PaymentGateway's", domain.get("name") == FUNDING_DOMAIN),
            (
                "the chain is not the session's",
                int(domain.get("chainId", -1)) == int(session.payment.get("chain_id", -2)),
            ),
            (
                "the verifying contract is not the spender",
                str(domain.get("verifyingContract", "")).lower() == str(session.payment.get("spender", "-")).lower(),
            ),
            ("the amount is not the session's total", int(message.get("amount", -1)) == session.total_units),
            ("the job is not this session's", str(message.get("jobId", "")).lower() == job_id),
        )
        if not ok
    ]
    if wrong:
        raise ValueError(f"refusing to sign the funding consent of session {session.id}: {'; '.join(wrong)}")
    return typed


def funding_consent(session: CheckoutSession, account: Any) -> str:
    """The payer's EIP-712 signature of the session's Funding consent (the session's typed data, checked
    against the session, with message.buyer set to the payer's address)."""
    typed = _checked_funding(session)
    message = {**typed["message"], "buyer": chain.account_of(account).address}
    return sign_typed(account, {**typed, "message": message})


def complete_checkout_session(
    session: CheckoutSession | str, account: Any, buyer: Mapping[str, Any] | None, idem: str | None
) -> Flow[CheckoutSession]:
    """Step 3: sign the funding consent here and complete; the service funds the gateway job."""
    s = yield from _session(session)
    acct = chain.account_of(account)
    body: dict[str, Any] = {
        "payment_data": {
            "handler_id": "service-usdc-commerce-v1",
            "instrument": {
                "type": "wallet",
                "credential": {"type": "address", "token": acct.address, "signature": funding_consent(s, acct)},
            },
        }
    }
    if buyer is not None:
        body["buyer"] = dict(buyer)
    path = f"{CHECKOUT}/{quote(s.id, safe='')}/complete"
    result: CheckoutSession = yield Call(
        "POST", path, CheckoutSession.parse, dumps(body), idempotency_key=new_key(idem)
    )
    return result


def get_order(order_id: str) -> Flow[Result]:
    result: Result = yield Call("GET", f"/api/acp/orders/{quote(order_id, safe='')}", Result.parse)
    return result


# ---- escrow checkout: the provider --------------------------------------------------------------------


def link_provider(
    wallet: str, self_account: Any, owner_address: str, referrer_token_id: int | None, idem: str | None
) -> Flow[Result]:
    """Link the agent as a provider: its self wallet signs the link message (EIP-191); the service mints
    its agent NFT."""
    dep = yield from deployment()
    acct = chain.account_of(self_account)
    owner = chain.checksum(owner_address)
    ts = _unix()
    text = (
        f"agentledger provider link\nchain: {dep.chain_id}\nagent: {wallet}\nself_wallet: {acct.address}\n"
        f"owner: {owner}\ntimestamp: {ts}"
    )
    body: dict[str, Any] = {
        "agent_id": wallet,
        "self_wallet": acct.address,
        "owner_address": owner,
        "timestamp": ts,
        "signature": sign_text(acct, text),
    }
    if referrer_token_id is not None:
        body["referrer_token_id"] = referrer_token_id
    result: Result = yield Call("POST", "/api/acp/providers", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def create_item(wallet: str, title: str, tier: str, price: Any, item_id: str | None, idem: str | None) -> Flow[Result]:
    body: dict[str, Any] = {"agent_id": wallet, "title": title, "tier": tier}
    if price is not None:
        body["price"] = to_decimal(price, "price")
    if item_id is not None:
        body["item_id"] = item_id
    result: Result = yield Call("POST", "/api/acp/items", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def order_action(order_id: str, action: str, account: Any, reason: str | None) -> Flow[Result]:
    """acknowledge, start, fail (with an optional public reason) or recover, signed (EIP-191) by the
    provider's self wallet over '{action}:{order_id}:{timestamp}[:{reason}]'. A signature is accepted
    once, so the call is retried only when it surely never arrived."""
    ts = _unix()
    text = f"{action}:{order_id}:{ts}" + (f":{reason}" if reason is not None else "")
    body: dict[str, Any] = {"timestamp": ts, "signature": sign_text(account, text)}
    if reason is not None:
        body["reason"] = reason
    path = f"/api/acp/orders/{quote(order_id, safe='')}/{action}"
    result: Result = yield Call("POST", path, Result.parse, dumps(body), unsafe=True)
    return result


def upload_deliverable(
    order_id: str, account: Any, content: Any, data: bytes | None, filename: str, media_type: str
) -> Flow[Result]:
    """Upload the deliverable: JSON ``content`` (hashed as its RFC 8785 form) or raw ``data`` bytes (one
    multipart ``file`` part); the SHA-256, the timestamp and the signature over
    'deliver:{order_id}:{sha256}:{timestamp}' go in the headers, checked before the body is read."""
    if (data is None) == (content is None):
        raise TypeError("pass either content (JSON) or data (bytes)")
    ts = _unix()
    if data is not None:
        sha = hashlib.sha256(data).hexdigest()
        boundary = "agentledger-" + uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                f"Content-Type: {media_type}\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        content_type: str | None = f"multipart/form-data; boundary={boundary}"
    else:
        sha = hashlib.sha256(chain.jcs(content).encode("utf-8")).hexdigest()
        body = dumps({"content": content})
        content_type = None
    headers = {
        "X-Provider-Timestamp": str(ts),
        "X-Content-SHA256": sha,
        "X-Provider-Signature": sign_text(account, f"deliver:{order_id}:{sha}:{ts}"),
    }
    path = f"/api/acp/orders/{quote(order_id, safe='')}/deliverables"
    result: Result = yield Call(
        "POST", path, Result.parse, body, unsafe=True, headers=headers, content_type=content_type
    )
    return result


def complete_order(order_id: str, account: Any, cid: str, job_id: str | None) -> Flow[Result]:
    """Attest completion (the gateway's 'complete:{jobId}:{cid}:{timestamp}', EIP-191): the service
    submits the release; the order becomes released when it is final on-chain."""
    if job_id is None:
        order = yield from get_order(order_id)
        job_id = str(order["service_job_id"])
    ts = _unix()
    body = {"cid": cid, "timestamp": ts, "signature": sign_text(account, f"complete:{job_id}:{cid}:{ts}")}
    path = f"/api/acp/orders/{quote(order_id, safe='')}/complete"
    result: Result = yield Call("POST", path, Result.parse, dumps(body), unsafe=True)
    return result


# ---- the drop (ownership marketplace) -----------------------------------------------------------------

DROP = "/api/a2a/drop"


def drop_listing(listing_id: str | None = None, agent_id: str | None = None) -> Flow[Mapping[str, Any]]:
    params = {"listingId": listing_id} if listing_id is not None else {"agentId": str(agent_id)}
    page: Result = yield Call("GET", DROP, Result.parse, params=params)
    listing = page.raw.get("listing")
    if not isinstance(listing, Mapping):
        raise errors.NotFound(f"no listing for {params}", status=404, code="listing_not_found")
    return listing


def drop_mint_agent(agent_id: str, self_account: Any, owner_address: str, idem: str | None) -> Flow[Result]:
    """Mint the agent's NFT for ``owner_address``: the self wallet signs the mint message (EIP-191)."""
    dep = yield from deployment()
    acct = chain.account_of(self_account)
    owner = chain.checksum(owner_address)
    ts = _unix()
    text = (
        f"agentledger agent mint\nchain: {dep.chain_id}\nagent: {agent_id}\nself_wallet: {acct.address}\n"
        f"owner: {owner}\ntimestamp: {ts}"
    )
    body = {
        "agentId": agent_id,
        "ownerAddress": owner,
        "selfWallet": acct.address,
        "timestamp": ts,
        "signature": sign_text(acct, text),
    }
    result: Result = yield Call("POST", f"{DROP}/mint", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def drop_list_agent(
    agent_id: str,
    account: Any,
    rpc_url: str,
    asking_price: Any,
    floor_price: Any,
    accept_offers: bool,
    duration: int,
    seller_email: str | None,
    idem: str | None,
) -> Flow[Result]:
    """List the agent NFT ``account`` owns: the operator's earnings statement, approve the marketplace
    for the token, AgentMarketplace.list (signed here), then the listing recorded by the service."""
    dep = yield from deployment()
    market, registry = dep.contract("AgentMarketplace"), dep.contract("AgentRegistry")
    acct = chain.account_of(account)
    asking, floor = to_units(asking_price, "asking_price"), to_units(floor_price, "floor_price")
    got: Result = yield Call(
        "POST", f"{DROP}/statement", Result.parse, dumps({"agentId": agent_id, "sellerAddress": acct.address})
    )
    st = got["statement"]
    token = int(st["tokenId"])
    approve = chain.calldata("approve(address,uint256)", ["address", "uint256"], [market, token])
    yield from transact(rpc_url, acct, registry, approve, dep.chain_id)
    statement = (
        token,
        chain.checksum(st["seller"]),
        int(st["reportedEarnings"]),
        int(st["nonce"]),
        int(st["deadline"]),
    )
    data = chain.calldata(
        "list(uint256,uint256,uint256,uint64,(uint256,address,uint256,uint256,uint256),bytes)",
        ["uint256", "uint256", "uint256", "uint64", "(uint256,address,uint256,uint256,uint256)", "bytes"],
        [token, asking, floor, duration, statement, bytes.fromhex(str(got["signature"])[2:])],
    )
    tx = yield from transact(rpc_url, acct, market, data, dep.chain_id)
    body: dict[str, Any] = {
        "agentId": agent_id,
        "txHash": tx,
        "askingPriceUsdc": to_decimal(asking_price, "asking_price"),
        "acceptOffers": accept_offers,
    }
    if seller_email is not None:
        body["sellerEmail"] = seller_email
    result: Result = yield Call("POST", f"{DROP}/list", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def drop_offer_typed_data(
    listing: Mapping[str, Any], buyer: str, price_units: int, nonce: int, deadline: int
) -> dict[str, Any]:
    """The EIP-712 Offer of ``listing`` (its ``offerTypedData``: domain, types, primaryType) filled in."""
    template = listing.get("offerTypedData")
    if not isinstance(template, Mapping):
        raise ValueError("the listing carries no offerTypedData (read it with drop_listings(listing_id=...))")
    message = {
        "listingId": int(listing["chainListingId"]),
        "buyer": buyer,
        "price": price_units,
        "nonce": nonce,
        "deadline": deadline,
    }
    return {**template, "message": message}


def drop_make_offer(
    listing_id: str,
    account: Any,
    price: Any,
    rpc_url: str | None,
    nonce: int | None,
    deadline: int | None,
    buyer_email: str | None,
    idem: str | None,
) -> Flow[Result]:
    """An EIP-712 Offer signed here and put in the book; with ``rpc_url`` the buyer first approves the
    marketplace for the price on USDC (an offer is fillable only while its buyer allows it)."""
    listing = yield from drop_listing(listing_id)
    acct = chain.account_of(account)
    units = to_units(price, "price")
    typed = drop_offer_typed_data(
        listing,
        acct.address,
        units,
        nonce if nonce is not None else int(uuid.uuid4().int % 2**64),
        deadline if deadline is not None else _unix() + 86_400,
    )
    if rpc_url is not None:
        dep = yield from deployment()
        yield from approve_at_least(
            rpc_url, acct, dep.usdc, str(typed["domain"]["verifyingContract"]), units, dep.chain_id
        )
    body: dict[str, Any] = {
        "listingId": listing_id,
        "offerPriceUsdc": to_decimal(price, "price"),
        "buyerAddress": acct.address,
        "nonce": typed["message"]["nonce"],
        "deadline": typed["message"]["deadline"],
        "signature": sign_typed(acct, typed),
    }
    if buyer_email is not None:
        body["buyerEmail"] = buyer_email
    result: Result = yield Call("POST", f"{DROP}/offer", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def drop_accept_offer(listing_id: str, offer_id: str, account: Any, rpc_url: str, idem: str | None) -> Flow[Result]:
    """The seller accepts an offer: AgentMarketplace.acceptOffer with the buyer's signed Offer (the
    seller's view of the listing shows signatures), signed here, then the commit recorded."""
    listing = yield from drop_listing(listing_id)
    offer = next((o for o in listing.get("drop_offers") or () if o.get("id") == offer_id), None)
    if offer is None or not offer.get("signature"):
        raise errors.NotFound(
            f"no offer {offer_id} with its signature on listing {listing_id} (only its seller's key sees them)",
            status=404,
            code="offer_not_found",
        )
    dep = yield from deployment()
    chain_listing = int(listing["chainListingId"])
    terms = (
        chain_listing,
        chain.checksum(offer["buyerAddress"]),
        to_units(offer["offerPriceUsdc"], "offerPriceUsdc"),
        int(offer["nonce"]),
        int(offer["deadline"]),
    )
    data = chain.calldata(
        "acceptOffer(uint256,(uint256,address,uint256,uint256,uint256),bytes)",
        ["uint256", "(uint256,address,uint256,uint256,uint256)", "bytes"],
        [chain_listing, terms, bytes.fromhex(str(offer["signature"])[2:])],
    )
    tx = yield from transact(rpc_url, chain.account_of(account), dep.contract("AgentMarketplace"), data, dep.chain_id)
    body = {"listingId": listing_id, "buyNow": False, "txHash": tx}
    result: Result = yield Call("POST", f"{DROP}/accept", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def drop_claim_agent(agent_id: str, account: Any) -> Flow[Result]:
    """The new owner of a bought agent's NFT claims it (EIP-191 over the claim message): the answer's
    api_key, for the agent, is shown once (so the call is retried only when it surely never arrived)."""
    dep = yield from deployment()
    listing = yield from drop_listing(agent_id=agent_id)
    acct = chain.account_of(account)
    ts = _unix()
    text = (
        f"agentledger agent claim\nchain: {dep.chain_id}\nagent: {agent_id}\ntoken: {int(listing['tokenId'])}\n"
        f"owner: {acct.address}\ntimestamp: {ts}"
    )
    body = {"agentId": agent_id, "ownerAddress": acct.address, "timestamp": ts, "signature": sign_text(acct, text)}
    result: Result = yield Call("POST", f"{DROP}/claim", Result.parse, dumps(body), unsafe=True)
    return result


# ---- hire: the provider's services, reputation, the on-chain escrow price -----------------------------

A2A = "/api/a2a"


def publish_service(
    wallet: str,
    service_type: str,
    price: Any,
    description: str,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any],
    url: str,
    runner: str,
    sla_seconds: int | None,
    webhook_url: str | None,
    webhook_secret: str | None,
    rotate_secret: bool,
    idem: str | None,
) -> Flow[Result]:
    """Publish (or replace) a service for hire; ``signingSecret`` (whsec_ form: agentledger_sdk.webhooks
    verifies the job requests with it) is shown once, when created or rotated."""
    body: dict[str, Any] = {
        "agentId": wallet,
        "serviceType": service_type,
        "price": to_decimal(price, "price"),
        "description": description,
        "inputSchema": dict(input_schema),
        "outputSchema": dict(output_schema),
        "runner": {"type": runner, "url": url},
    }
    for name, value in (("slaSeconds", sla_seconds), ("webhookUrl", webhook_url), ("webhookSecret", webhook_secret)):
        if value is not None:
            body[name] = value
    if rotate_secret:
        body["rotateSecret"] = True
    result: Result = yield Call("POST", f"{A2A}/services", Result.parse, dumps(body), idempotency_key=new_key(idem))
    return result


def services(wallet: str | None) -> Flow[Result]:
    params = {"agentId": wallet} if wallet is not None else None
    result: Result = yield Call("GET", f"{A2A}/services", Result.parse, params=params)
    return result


def withdraw_service(service_type: str, wallet: str | None) -> Flow[Result]:
    params = {"agentId": wallet} if wallet is not None else None
    path = f"{A2A}/services/{quote(service_type, safe='')}"
    result: Result = yield Call("DELETE", path, Result.parse, params=params)
    return result


def reputation(wallet: str, service_type: str, limit: int | None, cursor: str | None) -> Flow[Result]:
    params = {"wallet": wallet, "serviceType": service_type}
    if limit is not None:
        params["limit"] = str(int(limit))
    if cursor is not None:
        params["cursor"] = cursor
    result: Result = yield Call("GET", f"{A2A}/reputation", Result.parse, params=params)
    return result


def set_escrow_price(wallet: str, price: Any, sla_seconds: int, account: Any, rpc_url: str) -> Flow[str]:
    """AgentEscrow.setPrice of the provider's agent token, sent by its self wallet or owner (``account``):
    what an escrow hire locks. The transaction hash."""
    dep = yield from deployment()
    provider: Result = yield Call("GET", f"/api/acp/providers/{quote(wallet, safe='')}", Result.parse)
    data = chain.calldata(
        "setPrice(uint256,uint256,uint64)",
        ["uint256", "uint256", "uint64"],
        [int(provider["token_id"]), to_units(price, "price"), int(sla_seconds)],
    )
    acct = chain.account_of(account)
    return (yield from transact(rpc_url, acct, dep.contract("AgentEscrow"), data, dep.chain_id))
