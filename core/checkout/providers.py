"""Linking a wallet agent as a provider: the self wallet's signed consent, then the agent NFT minted
on AgentRegistry with the operator key (the saga of core.agents_onchain).

Crash safety: the provider row is written first with token_id NULL; after the mint the token id is
recorded. A link retried after a crash in between finds the token by the registry's
tokenOfWalletId(walletId) instead of minting again (the registry refuses a second mint of one
wallet id anyway). Links are serialised in this process (`Checkout`'s link lock), which makes
check-insert-mint-record race-free.
"""

from __future__ import annotations

import logging

from core import agents_onchain, webhooks
from core.checkout import rules
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.store import Conn
from core.store import checkout as store
from core.store import orders as order_store
from core.store.checkout import ProviderRow

log = logging.getLogger("agentledger.providers")


def check_link_signature(
    *, chain_id: int, wallet: str, self_wallet: str, owner: str, timestamp: int, signature: str, now: float
) -> None:
    """The self wallet's consent: its EIP-191 signature of rules.provider_link_message, fresh."""
    if not rules.within_window(timestamp, now):
        raise ServiceError(
            401,
            "timestamp_out_of_window",
            f"timestamp must be within {rules.LINK_WINDOW_SECONDS} s of the server clock ({int(now)})",
            param="$.timestamp",
        )
    message = rules.provider_link_message(
        chain_id=chain_id, agent_wallet=wallet, self_wallet=self_wallet, owner=owner, timestamp=timestamp
    )
    signer = agents_onchain.recover_personal(message, signature)
    if signer != self_wallet:  # None: a well-formed signature of nobody (no key recovers from it)
        raise ServiceError(
            401,
            "signature_mismatch",
            f"the signature recovers to {signer or 'no address'}, not to self_wallet {self_wallet}",
            param="$.signature",
        )


async def link(
    ctx: Checkout,
    agent_uuid: str,
    wallet: str,
    self_wallet: str,
    owner: str,
    referrer_token_id: int | None,
    now: float,
) -> ProviderRow:
    """Reserve the provider row, mint the agent NFT (or find the one a crashed attempt minted),
    record the token as the chain has it. Call with ctx.link_lock held."""
    writer, operator = ctx.writer, ctx.operator

    def reserve(conn: Conn) -> ProviderRow | None:
        existing = store.get_provider(conn, agent_uuid)
        if existing is not None and existing.token_id is not None:
            raise ServiceError(409, "provider_already_linked", f"agent {wallet} is already linked as a provider")
        holder = store.provider_by_self_wallet(conn, self_wallet)
        if holder is not None and holder.agent_uuid != agent_uuid:
            raise ServiceError(409, "self_wallet_taken", f"{self_wallet} is another provider's self wallet")
        if existing is not None:  # a pending link (a crashed attempt): the chain decides below
            return existing
        store.insert_pending_provider(
            conn,
            agent_uuid=agent_uuid,
            self_wallet=self_wallet,
            owner_address=owner,
            referrer_token_id=referrer_token_id,
            now=now,
        )
        return None

    await writer.run(reserve)

    async def forget() -> None:  # nothing was minted: the pending row must not block a retry
        await writer.run(lambda conn: store.delete_pending_provider(conn, agent_uuid))

    token_id, mint_tx = await agents_onchain.existing_token(operator, wallet)
    if token_id is None:
        token_id, mint_tx = await agents_onchain.mint(
            operator, wallet, self_wallet, owner, referrer_token_id, forget, retry_hint="retry the link shortly"
        )
    # What the chain recorded wins (a recovered token keeps its original wallets and referrer).
    chain = await agents_onchain.token_state(operator, token_id)
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
    """400 invalid_webhook_url unless `url` is an acceptable target: the SSRF rules of core.webhooks
    (http(s) only; no private, loopback or link-local address, also after DNS resolution; the
    dispatcher checks again at delivery). Resolves DNS: call it before the transaction."""
    try:
        await webhooks.check_url_async(url, allow_private)
    except webhooks.WebhookURLError as exc:
        raise ServiceError(400, "invalid_webhook_url", str(exc), param="$.url") from exc


def set_webhook(conn: Conn, agent_uuid: str, url: str) -> str:
    """Register `url` for the provider's order webhooks with a new secret (returned: shown once;
    each registration rotates it)."""
    linked_provider(conn, agent_uuid)
    secret = webhooks.new_secret()
    order_store.set_provider_webhook(conn, agent_uuid, url, secret)
    return secret


def clear_webhook(conn: Conn, agent_uuid: str) -> None:
    linked_provider(conn, agent_uuid)
    order_store.set_provider_webhook(conn, agent_uuid, None, None)
