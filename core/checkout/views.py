"""What a caller may see of checkout sessions and orders (the store reads rows; this chooses).

Orders have three views: public (anyone: status, transactions, deliverable, history, the audit
chain, provenance), authenticated (any valid key: also line items and totals) and funder (the key
that paid: also the buyer's details and the webhook delivery state).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict
from typing import Any, Literal

from core import audit
from core.checkout import rules
from core.checkout.context import Checkout
from core.isotime import iso_utc
from core.keys import Caller
from core.money import usdc_text
from core.operator import USDC
from core.store import Conn
from core.store import audit as audit_store
from core.store import checkout as store
from core.store import orders as order_store
from core.store import outbox as outbox_store
from core.store.checkout import SessionRow

Visibility = Literal["public", "authenticated", "funder"]


def visibility_of(conn: Conn, order: order_store.OrderRow, caller: Caller | None) -> Visibility:
    """What `caller` may see of `order`: public fields without a key, line items and totals with any
    key, buyer details with the key that funded it."""
    if caller is None:
        return "public"
    s = store.get_session(conn, order.session_id)
    funder = s is not None and secrets.compare_digest(s.key_hash, caller.key_hash)
    return "funder" if funder else "authenticated"


def order_view(conn: Conn, order_id: str, visibility: Visibility) -> dict[str, Any] | None:
    """The GET /orders body: public fields for anyone; line items and totals for any valid key; the
    buyer's details and the webhook delivery state for the key that funded it."""
    order = order_store.get_order(conn, order_id)
    if order is None:
        return None
    hist = order_store.history(conn, order_id)
    entries = audit_store.stream_entries(conn, audit.order_stream(order_id))
    body: dict[str, Any] = {
        "id": order.id,
        "status": order.status,
        "service_job_id": order.job_id,
        "settlement_tx_hash": order.funding_tx,
        "release": {"tx_hash": order.release_tx, "submitted_tx_hash": order.release_submitted_tx},
        "deliverable_cid": order.deliverable_cid,
        "deadline": order.deadline,
        "created_at": iso_utc(order.created_at),
        "updated_at": iso_utc(order.updated_at),
        "history": [
            {
                "from_state": h.from_state,
                "to_state": h.to_state,
                "actor": h.actor,
                "reason": h.reason,
                "tx_hash": h.tx_hash,
                "audit_id": h.audit_id,
                "at": iso_utc(h.at),
            }
            for h in hist
        ],
        "audit_chain": {  # the spec's shape: {entries: [...]}
            "entries": [
                {
                    "audit_id": e.id,
                    "seq": e.seq,
                    "prev_hash": e.prev_hash,
                    "chain_hash": e.chain_hash,
                    "payload": json.loads(e.payload),
                }
                for e in entries
            ]
        },
        "provenance": {
            "provider_token_id": order.provider_token_id,
            "attested_at": order.attested_at,
            "attestation": order.attestation,
            "chain_rule": "chain_hash = SHA-256(prev_hash || RFC 8785 canonical JSON of the action); see /methodology",
        },
    }
    contents = order_store.session_contents(conn, order.session_id)
    if visibility in ("authenticated", "funder") and contents is not None:
        body["line_items"] = contents[0]
        body["totals"] = {"total": contents[1], "currency": "usdc"}
    if visibility == "funder":
        body["buyer_details"] = {**contents[2], "address": order.buyer_address} if contents is not None else None
        body["webhook_delivery"] = [asdict(d) for d in outbox_store.deliveries_for(conn, f"order:{order.id}")]
    return body


# ---- sessions -----------------------------------------------------------------------------------


def payment_config(ctx: Checkout, s: SessionRow, provider_token_id: int | None) -> dict[str, Any]:
    op = ctx.operator
    gateway = op.contract("PaymentGateway").address
    typed = rules.checkout_typed_data(
        chain_id=ctx.chain_id,
        gateway=gateway,
        session_id=s.id,
        buyer=gateway,  # a placeholder, replaced below: the payer is named only at complete
        provider_token_id=provider_token_id or 0,
        amount=s.total,
        deadline=rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items]),
    )
    typed["message"]["buyer"] = "{payer}"
    return {
        "id": rules.PAYMENT_HANDLER_ID,
        "name": "dev.agentledger.usdc_escrow",
        "display_name": "USDC escrow (PaymentGateway)",
        "version": rules.SUPPORTED_API_VERSIONS[0],
        "requires_delegate_payment": False,
        "requires_pci_compliance": False,
        "psp": "agentledger",
        "config": {
            "chain_id": ctx.chain_id,
            "token": op.contract(USDC).address,
            "spender": gateway,
            "amount": s.total,
            "decimals": 6,
            "signature_scheme": "eip712",
            "typed_data": typed,
            "instructions": "approve `amount` of `token` to `spender` from the paying address, set typed_data.message"
            ".buyer to that address and sign typed_data (EIP-712, eth_signTypedData_v4): the gateway pulls only this "
            "amount, for this job, provider and deadline (you may reclaim after it); then complete with "
            "payment_data.instrument.credential.token = that address and .signature = the signature",
        },
    }


def session_json(ctx: Checkout, conn: Conn, s: SessionRow, *, base: str, secret: str | None = None) -> dict[str, Any]:
    """A checkout session as ACP shows it; `base` is the public base URL of order permalinks;
    `secret` the webhook secret, given only in the answer that created it."""
    provider = store.get_provider(conn, s.provider_uuid)
    body: dict[str, Any] = {
        "id": s.id,
        "status": s.status,
        "currency": rules.CURRENCY,
        "protocol": {"version": rules.SUPPORTED_API_VERSIONS[0]},
        "capabilities": {"payment": {"handlers": [payment_config(ctx, s, provider.token_id if provider else None)]}},
        "line_items": s.line_items,
        "totals": rules.totals_json(s.total),
        "fulfillment_options": [],
        "messages": _messages(ctx, s),
        "links": [],
        "provider": {
            "agent_id": provider.wallet if provider else None,
            "token_id": provider.token_id if provider else None,
        },
        "created_at": iso_utc(s.created_at),
        "updated_at": iso_utc(s.updated_at),
        "expires_at": iso_utc(s.expires_at),
    }
    if s.buyer:
        body["buyer"] = s.buyer
    if s.webhook_url:
        body["webhook_url"] = s.webhook_url
    if secret is not None:
        body["webhook_secret"] = secret
    if s.job_id is not None:
        body["service_job_id"] = s.job_id
    if s.order_id is not None:
        order = order_store.get_order(conn, s.order_id)
        if order is not None:
            body["order"] = {
                "id": order.id,
                "checkout_session_id": order.session_id,
                "permalink_url": f"{base}/api/acp/orders/{order.id}",  # AGENTLEDGER_PUBLIC_URL, not Host
                "settlement_tx_hash": order.funding_tx,
                "service_job_id": order.job_id,
                "status": order.status,
            }
    return body


def _messages(ctx: Checkout, s: SessionRow) -> list[dict[str, Any]]:
    op = ctx.operator
    if s.status == "incomplete":
        text = (
            f"Approve {usdc_text(s.total)} USDC ({s.total} units) of {op.contract(USDC).address} to the gateway "
            f"{op.contract('PaymentGateway').address} on chain {ctx.chain_id}, then complete the session."
        )
        return [{"type": "info", "content_type": "plain", "content": text}]
    if s.status == "expired":
        return [
            {
                "type": "error",
                "code": "expired",
                "content_type": "plain",
                "content": "this checkout session expired unpaid; create a new one",
            }
        ]
    return []


# ---- a provider's orders --------------------------------------------------------------------------


def provider_order_json(conn: Conn, order: order_store.OrderRow) -> dict[str, Any]:
    """One order as its provider lists it: what to work on (no buyer details beyond its address)."""
    contents = order_store.session_contents(conn, order.session_id)
    return {
        "id": order.id,
        "status": order.status,
        "service_job_id": order.job_id,
        "settlement_tx_hash": order.funding_tx,
        "amount": order.amount,
        "currency": rules.CURRENCY,
        "deadline": order.deadline,
        "buyer_address": order.buyer_address,
        "deliverable_cid": order.deliverable_cid,
        "line_items": contents[0] if contents is not None else [],
        "created_at": iso_utc(order.created_at),
        "updated_at": iso_utc(order.updated_at),
    }


def provider_orders_page(
    conn: Conn, provider_uuid: str, *, status: str | None, cursor: int | None, limit: int
) -> dict[str, Any]:
    """A page of the provider's orders, newest first; `next_cursor` continues it (None: the last page)."""
    rows = order_store.orders_of_provider(conn, provider_uuid, status=status, before=cursor, limit=limit + 1)
    page = rows[:limit]
    more = len(rows) > limit
    return {
        "data": [provider_order_json(conn, order) for _, order in page],
        "has_more": more,
        "next_cursor": str(page[-1][0]) if more else None,
    }
