"""Linking a wallet agent as a provider: the self wallet's signed consent, then the agent NFT minted
on AgentRegistry with the operator key (the saga of core.agents_onchain).

Crash safety: the provider row is written first with token_id NULL; after the mint the token id is
recorded. A link retried after a crash in between finds the token by the registry's
tokenOfWalletId(walletId) instead of minting again (the registry refuses a second mint of one
wallet id anyway).

One link at a time per agent, across processes: the pending row is a durable claim (the process
and the attempt minting, store.LinkClaim). Another link request of the agent, in any process,
refuses with 409 provider_link_in_progress while that owner runs and its claim is younger than
LINK_STALE_SECONDS; after that it takes the claim over (a compare-and-set on the attempt seen) and
lets the chain decide (tokenOfWalletId). An attempt that fails gives its claim up at once.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from core import agents_onchain, egress, instance, signatures
from core.checkout import rules
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.store import Conn
from core.store import checkout as store
from core.store import orders as order_store
from core.store.checkout import ItemRow, ProviderRow

log = logging.getLogger("agentledger.providers")

#: A link claim of an owner this process cannot judge (another host) is presumed abandoned after this
#: long: far past a mint's wait for the operator lock and its receipt.
LINK_STALE_SECONDS = 600.0


def check_link_signature(
    *, chain_id: int, wallet: str, self_wallet: str, owner: str, timestamp: int, signature: str, now: float
) -> None:
    """The self wallet's consent: its EIP-191 signature of rules.provider_link_message, fresh."""
    signatures.require_in_window(timestamp, now, param="$.timestamp")
    message = rules.provider_link_message(
        chain_id=chain_id, agent_wallet=wallet, self_wallet=self_wallet, owner=owner, timestamp=timestamp
    )
    signatures.require_signer(message, signature, self_wallet, param="$.signature", named=f"self_wallet {self_wallet}")


async def link(
    ctx: Checkout,
    agent_uuid: str,
    wallet: str,
    self_wallet: str,
    owner: str,
    referrer_token_id: int | None,
    now: float,
) -> ProviderRow:
    """Claim the provider row (a new pending row, or the pending row of an abandoned attempt), mint
    the agent NFT (or find the one a crashed attempt minted), record the token as the chain has it."""
    writer, operator = ctx.writer, ctx.operator
    me, attempt = instance.current(), secrets.token_hex(16)

    def reserve(conn: Conn) -> None:
        existing = store.get_provider(conn, agent_uuid)
        if existing is not None and existing.token_id is not None:
            raise ServiceError(409, "provider_already_linked", f"agent {wallet} is already linked as a provider")
        holder = store.provider_by_self_wallet(conn, self_wallet)
        if holder is not None and holder.agent_uuid != agent_uuid:
            raise ServiceError(409, "self_wallet_taken", f"{self_wallet} is another provider's self wallet")
        if existing is None and store.insert_pending_provider(
            conn,
            agent_uuid=agent_uuid,
            self_wallet=self_wallet,
            owner_address=owner,
            referrer_token_id=referrer_token_id,
            now=now,
            link_owner=me,
            link_attempt=attempt,
        ):
            return
        # a pending link: another attempt's (running, or abandoned: then the chain decides below)
        claim = store.link_claim(conn, agent_uuid)
        if claim is None or not _abandoned(claim, now):
            raise _link_in_progress(wallet)
        if not store.take_over_link(conn, agent_uuid, claim.attempt, me, attempt, now):
            raise _link_in_progress(wallet)

    await writer.run(reserve)

    async def forget() -> None:  # nothing was minted: the pending row must not block a retry
        await writer.run(lambda conn: store.delete_pending_provider(conn, agent_uuid, attempt))

    try:
        token_id, mint_tx = await agents_onchain.existing_token(operator, wallet)
        if token_id is None:
            token_id, mint_tx = await agents_onchain.mint(
                operator, wallet, self_wallet, owner, referrer_token_id, forget, retry_hint="retry the link shortly"
            )
        # What the chain recorded wins (a recovered token keeps its original wallets and referrer).
        chain = await agents_onchain.token_state(operator, token_id)
    except BaseException:  # the row stays pending (a mint may be on its way); the next attempt may go on
        await asyncio.shield(writer.run(lambda conn: store.release_link(conn, agent_uuid, attempt)))
        raise
    chain_self, referrer, chain_owner = chain.self_wallet, chain.referrer_token_id, chain.owner

    def record(conn: Conn) -> ProviderRow:
        store.set_provider_token(
            conn,
            agent_uuid,
            token_id=token_id,
            mint_tx=mint_tx,
            self_wallet=chain_self,
            owner_address=chain_owner,
            referrer_token_id=referrer,
        )
        p = store.get_provider(conn, agent_uuid)
        assert p is not None
        return p

    return await writer.run(record)


def _abandoned(claim: store.LinkClaim, now: float) -> bool:
    """Whether a pending link's attempt no longer runs: its process is gone, it is older than
    LINK_STALE_SECONDS (an owner on another host), or it names nobody (released, or from before claims)."""
    if claim.attempt is None or claim.owner is None or claim.started is None:
        return True
    return instance.is_gone(claim.owner) or claim.started < now - LINK_STALE_SECONDS


def _link_in_progress(wallet: str) -> ServiceError:
    return ServiceError(
        409,
        "provider_link_in_progress",
        f"agent {wallet} is being linked by another request; retry shortly",
        replayable=False,
        headers={"Retry-After": "2"},
    )


# ---- the provider's webhook (news of its orders) --------------------------------------------------


def linked_provider(conn: Conn, agent_uuid: str) -> ProviderRow:
    """The agent's provider row once its NFT is minted (403 provider_not_linked otherwise)."""
    p = store.get_provider(conn, agent_uuid)
    if p is None or p.token_id is None:
        raise ServiceError(
            403, "provider_not_linked", "the agent is not a linked provider: POST /api/acp/providers first"
        )
    return p


async def check_webhook_url(url: str, allow_private: bool) -> None:
    """400 invalid_webhook_url unless `url` is an acceptable target: the SSRF rules of core.egress
    (http(s) only; no private, loopback or link-local address, also after DNS resolution; the
    dispatcher checks again at delivery). Resolves DNS: call it before the transaction."""
    try:
        await egress.check_url(url, allow_private)
    except egress.WebhookURLError as exc:
        raise ServiceError(400, "invalid_webhook_url", str(exc), param="$.url") from exc


def set_webhook(conn: Conn, agent_uuid: str, url: str) -> str:
    """Register `url` for the provider's order webhooks with a new secret (returned: shown once;
    each registration rotates it)."""
    linked_provider(conn, agent_uuid)
    secret = egress.new_secret()
    order_store.set_provider_webhook(conn, agent_uuid, url, secret)
    return secret


def clear_webhook(conn: Conn, agent_uuid: str) -> None:
    linked_provider(conn, agent_uuid)
    order_store.set_provider_webhook(conn, agent_uuid, None, None)


def add_item(
    conn: Conn, provider: ProviderRow, item_id: str | None, title: str, tier: str, price: int | None, now: float
) -> ItemRow:
    """A catalogue item of `provider` (its id made when not given; 409 item_exists), at `price` or its
    tier's default price."""
    item_id = item_id or "item_" + secrets.token_hex(8)
    if store.get_item(conn, item_id) is not None:
        raise ServiceError(409, "item_exists", f"an item {item_id} already exists", param="$.item_id")
    item = ItemRow(
        item_id, provider.agent_uuid, title, tier, rules.TIERS[tier].default_price if price is None else price, now
    )
    store.insert_item(conn, item)
    return item
