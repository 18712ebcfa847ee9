"""Checkout sessions (ACP 2026-04-17): create, update, cancel and expiry, inside the writer's
transaction. Sessions belong to the API key that created them (another key: 401). One session
buys from ONE provider (the gateway job pays one provider token). An unpaid session expires
`Checkout.session_ttl` seconds after creation: applied when it is next read or written, and by
the sweep (core.checkout.sweep). Completing a session is core.checkout.funding's.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from core import egress
from core.checkout import rules
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.keys import Caller
from core.store import Conn
from core.store import checkout as store
from core.store import marketplace as market_store
from core.store.checkout import ProviderRow, SessionRow

_STATUS_CONFLICT = {
    "completed": ("session_completed", "the checkout session is already completed"),
    "cancelled": ("session_cancelled", "the checkout session was cancelled"),
    "expired": ("session_expired", "the checkout session expired"),
    "complete_in_progress": ("session_in_progress", "the checkout session is being completed"),
}


@dataclass(frozen=True)
class LineRef:
    """A line item as the buyer asks for it: a catalogue item and a quantity."""

    item_id: str
    quantity: int


def find_owned(conn: Conn, caller: Caller, session_id: str) -> SessionRow:
    """The caller's session: 404 when there is none, 401 when another API key created it."""
    s = store.get_session(conn, session_id)
    if s is None:
        raise ServiceError(404, "session_not_found", f"no checkout session {session_id}", param="checkout_session_id")
    if not secrets.compare_digest(s.key_hash, caller.key_hash):
        raise ServiceError(
            401, "session_key_mismatch", "this checkout session belongs to another API key", param="Authorization"
        )
    return s


def owned_session(conn: Conn, caller: Caller, session_id: str, now: float) -> SessionRow:
    """The caller's session inside a write, expired first if its time is up."""
    s = find_owned(conn, caller, session_id)
    if rules.is_expired(s.status, s.expires_at, now) and store.expire_session(conn, session_id, now):
        return find_owned(conn, caller, session_id)
    return s


def require_incomplete(s: SessionRow) -> None:
    if s.status != "incomplete":
        code, message = _STATUS_CONFLICT[s.status]
        # "being completed" is a passing state: a retry with the same Idempotency-Key must run again
        raise ServiceError(409, code, message, replayable=s.status != "complete_in_progress")


def priced(conn: Conn, line_items: list[LineRef]) -> tuple[list[rules.PricedLine], ProviderRow]:
    """Price the cart from the catalogue; every item must exist and share one linked provider."""
    items = store.items_by_ids(conn, [li.item_id for li in line_items])
    lines: list[rules.PricedLine] = []
    providers: set[str] = set()
    for i, li in enumerate(line_items):
        item = items.get(li.item_id)
        if item is None:
            raise ServiceError(
                404, "item_not_found", f"no catalogue item {li.item_id}", param=f"$.line_items[{i}].item.id"
            )
        providers.add(item.provider_uuid)
        lines.append(rules.PricedLine(item.item_id, item.title, item.tier, li.quantity, item.price))
    if len(providers) > 1:
        raise ServiceError(
            422,
            "multiple_providers",
            "all line items of a session must come from one provider (one escrow job pays one provider)",
            param="$.line_items",
        )
    provider = store.get_provider(conn, providers.pop())
    if provider is None or provider.token_id is None:
        raise ServiceError(422, "provider_not_linked", "the items' provider is not linked", param="$.line_items")
    if market_store.sale_paused(conn, provider.agent_uuid, provider.wallet) is not None:
        # a listed agent cannot be hired (the gateway refuses to fund it too: AgentPaused)
        raise ServiceError(409, "provider_paused", "the provider's agent is listed for sale: it takes no orders")
    try:
        rules.session_total(lines)
    except rules.TotalTooLarge as exc:
        raise ServiceError(422, "amount_too_large", str(exc), param="$.line_items") from exc
    return lines, provider


def merged_buyer(given: dict[str, Any] | None, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The session's buyer fields with `given` (the fields a request set) applied over them."""
    out = dict(base or {})
    if given:
        if "email" in given and not rules.valid_email(given["email"]):
            raise ServiceError(400, "invalid_email", "buyer.email is not a valid e-mail address", param="$.buyer.email")
        out.update(given)
    return out


def create(
    conn: Conn,
    ctx: Checkout,
    caller: Caller,
    *,
    line_items: list[LineRef],
    buyer: dict[str, Any] | None,
    webhook_url: str | None,
    now: float,
) -> tuple[SessionRow, str | None]:
    """A new incomplete session priced from the catalogue, and the webhook secret made for it
    (shown once) when a webhook_url was given."""
    lines, provider = priced(conn, line_items)
    secret = egress.new_secret() if webhook_url else None
    s = SessionRow(
        id="cs_" + secrets.token_hex(12),
        key_hash=caller.key_hash,
        status="incomplete",
        line_items=rules.line_items_json(lines),
        buyer=merged_buyer(buyer),
        provider_uuid=provider.agent_uuid,
        total=rules.session_total(lines),
        webhook_url=webhook_url,
        webhook_secret=secret,
        job_id=None,
        buyer_address=None,
        funding_tx=None,
        order_id=None,
        expires_at=rules.session_expires_at(now, ctx.session_ttl),
        created_at=now,
        updated_at=now,
    )
    store.insert_session(conn, s)
    return s, secret


def update(
    conn: Conn,
    caller: Caller,
    session_id: str,
    *,
    line_items: list[LineRef] | None,
    buyer: dict[str, Any] | None,
    now: float,
) -> SessionRow:
    """Replace the cart and/or merge buyer fields of an incomplete session."""
    s = owned_session(conn, caller, session_id, now)
    require_incomplete(s)
    if line_items is None and buyer is None:
        raise ServiceError(400, "empty_update", "give line_items and/or buyer", param="$")
    items, provider_uuid, total = s.line_items, s.provider_uuid, s.total
    if line_items is not None:
        lines, provider = priced(conn, line_items)
        items, provider_uuid, total = rules.line_items_json(lines), provider.agent_uuid, rules.session_total(lines)
    store.update_session_contents(
        conn,
        session_id,
        line_items=items,
        buyer=merged_buyer(buyer, s.buyer),
        provider_uuid=provider_uuid,
        total=total,
        now=now,
    )
    updated = store.get_session(conn, session_id)
    assert updated is not None
    return updated


def cancel(conn: Conn, caller: Caller, session_id: str, now: float) -> SessionRow:
    """incomplete -> cancelled; 405 once completed, cancelled or expired; 409 while being completed."""
    s = owned_session(conn, caller, session_id, now)
    if s.status in ("completed", "cancelled", "expired"):
        raise ServiceError(405, "session_not_cancelable", f"a {s.status} checkout session cannot be cancelled")
    require_incomplete(s)  # complete_in_progress: 409
    store.transition(conn, session_id, "incomplete", "cancelled", now)
    updated = store.get_session(conn, session_id)
    assert updated is not None
    return updated


async def persist_expiry(ctx: Checkout, session_id: str, now: float) -> None:
    """Commit the expiry of a session whose time is up, before a request that may then refuse (its
    refusal rolls its own savepoint back, the expiry stays)."""
    s = await ctx.reads.run(lambda conn: store.get_session(conn, session_id))
    if s is not None and rules.is_expired(s.status, s.expires_at, now):
        await ctx.writer.run(lambda conn: store.expire_session(conn, session_id, now))
