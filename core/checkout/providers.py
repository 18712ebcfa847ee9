"""Linking a wallet agent as a provider: the self wallet's signed consent, then the agent NFT minted
on AgentRegistry with the operator key.

Crash safety: the provider row is written first with token_id NULL; after the mint the token id is
recorded. A link retried after a crash in between finds the token by the registry's
tokenOfWalletId(walletId) instead of minting again (the registry refuses a second mint of one
wallet id anyway). Links are serialised in this process (`Checkout`'s link lock), which makes
check-insert-mint-record race-free.
"""

from __future__ import annotations

import logging
from typing import Any

import apsw
from eth_account import Account
from eth_account.messages import encode_defunct
from web3 import Web3

from core import errors
from core.checkout import rules
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.operator import ChainUnavailable, ContractReverted, Operator, SendUncertain, TransactionFailed, tx_hash_of
from core.store import checkout as store
from core.store.checkout import ProviderRow

log = logging.getLogger("agentledger.providers")


def _recover(message: str, signature: str) -> str | None:
    try:
        return str(Account.recover_message(encode_defunct(text=message), signature=signature))
    except Exception:  # malformed signature (bad v, s out of range, ...)
        return None


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
    signer = _recover(message, signature)
    if signer != self_wallet:  # None: a well-formed signature of nobody (no key recovers from it)
        raise ServiceError(
            401,
            "signature_mismatch",
            f"the signature recovers to {signer or 'no address'}, not to self_wallet {self_wallet}",
            param="$.signature",
        )


def _chain_unavailable(exc: BaseException) -> ServiceError:
    log.warning("chain node unavailable: %s", exc)
    return errors.chain_unavailable()


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

    def reserve(conn: apsw.Connection) -> ProviderRow | None:
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
    token_id, mint_tx = await _existing_token(operator, wallet)
    if token_id is None:
        token_id, mint_tx = await _mint(ctx, agent_uuid, wallet, self_wallet, owner, referrer_token_id)
    # What the chain recorded wins (a recovered token keeps its original wallets and referrer).
    agent = await _chain_call(operator, "AgentRegistry", "agent", token_id)
    chain_owner = await _chain_call(operator, "AgentRegistry", "ownerOf", token_id)
    chain_self, referrer = Web3.to_checksum_address(agent[0]), int(agent[1]) or None

    def record(conn: apsw.Connection) -> ProviderRow:
        store.set_provider_token(
            conn,
            agent_uuid,
            token_id=token_id,
            mint_tx=mint_tx,
            self_wallet=chain_self,
            owner_address=Web3.to_checksum_address(chain_owner),
            referrer_token_id=referrer,
        )
        p = store.get_provider(conn, agent_uuid)
        assert p is not None
        return p

    return await writer.run(record)


async def _chain_call(operator: Operator, contract: str, fn: str, *args: Any) -> Any:
    try:
        return await operator.call(contract, fn, *args)
    except ChainUnavailable as exc:
        raise _chain_unavailable(exc) from exc


async def _existing_token(operator: Operator, wallet: str) -> tuple[int | None, str | None]:
    try:
        return int(await operator.call("AgentRegistry", "tokenOfWalletId", wallet)), None
    except ContractReverted as exc:
        if exc.error_name == "UnknownWalletId":
            return None, None
        log.warning("registry lookup for %s failed: %s", wallet, exc)
        raise ServiceError(
            502, "chain_error", f"registry lookup failed ({exc.error_name})", type_="service_error"
        ) from exc
    except ChainUnavailable as exc:
        raise _chain_unavailable(exc) from exc


async def _mint(
    ctx: Checkout, agent_uuid: str, wallet: str, self_wallet: str, owner: str, referrer: int | None
) -> tuple[int, str | None]:
    operator, writer = ctx.operator, ctx.writer

    async def forget() -> None:  # nothing was minted: the pending row must not block a retry
        await writer.run(lambda conn: store.delete_pending_provider(conn, agent_uuid))

    try:
        receipt = await operator.transact("AgentRegistry", "mint", owner, self_wallet, wallet, referrer or 0)
    except ContractReverted as exc:
        if exc.error_name == "WalletIdTaken":  # minted meanwhile (by a crashed attempt's transaction)
            token, _ = await _existing_token(operator, wallet)
            if token is not None:
                return token, None
        await forget()
        raise _mint_error(exc, self_wallet, referrer) from exc
    except (ChainUnavailable, TransactionFailed) as exc:
        await forget()
        log.warning("minting the agent token of %s failed: %s", wallet, exc)  # may carry the RPC URL: log only
        raise ServiceError(
            503, "chain_unavailable", "minting failed: the chain node did not accept it", type_="service_error"
        ) from exc
    except SendUncertain as exc:  # keep the pending row: a retry finds the token if it was minted
        log.warning("minting the agent token of %s: outcome unknown: %s", wallet, exc)
        raise ServiceError(
            503, "chain_unavailable", "minting outcome unknown; retry the link shortly", type_="service_error"
        ) from exc
    (event,) = operator.events(receipt, "AgentRegistry", "AgentRegistered")
    return int(event["args"]["tokenId"]), tx_hash_of(receipt)


def _mint_error(exc: ContractReverted, self_wallet: str, referrer: int | None) -> ServiceError:
    if exc.error_name == "SelfWalletTaken":
        return ServiceError(409, "self_wallet_taken", f"{self_wallet} is already an agent's self wallet on-chain")
    if exc.error_name == "UnknownAgent":
        return ServiceError(404, "unknown_referrer", f"no agent token {referrer}", param="$.referrer_token_id")
    log.warning("registry refused the mint: %s", exc)
    return ServiceError(502, "mint_failed", f"the registry refused the mint ({exc.error_name})", type_="service_error")
