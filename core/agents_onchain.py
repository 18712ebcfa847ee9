"""Agent NFTs on AgentRegistry, shared by every feature that needs one: find an agent's token by
its wallet id, mint one with the operator key (the registrar role), read back what the chain
recorded. The provider link (core.checkout.providers) and the marketplace's mint on demand
(core.marketplace.agents) both run this saga:

1. look the token up (`tokenOfWalletId`): a token a crashed attempt minted is found, never minted
   again (the registry also refuses a second mint of one wallet id: `WalletIdTaken`);
2. otherwise mint it; when nothing was sent (a revert found by the estimate, a node that did not
   answer) the caller's `forget` undoes its own reservation; when the outcome is unknown
   (SendUncertain) the reservation stays and a retry finds the token;
3. read the token's owner, self wallet and referrer as the chain has them (they win).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from web3 import Web3

from core import errors
from core.errors import ServiceError
from core.operator import ChainUnavailable, ContractReverted, Operator, SendUncertain, TransactionFailed, tx_hash_of

log = logging.getLogger("agentledger.providers")


class TokenState(NamedTuple):
    """An agent token as the registry has it."""

    owner: str
    self_wallet: str
    referrer_token_id: int | None


def _chain_unavailable(exc: BaseException) -> ServiceError:
    log.warning("chain node unavailable: %s", exc)
    return errors.chain_unavailable()


async def chain_call(operator: Operator, contract: str, fn: str, *args: Any) -> Any:
    """A view call; a node that does not answer is the shared 503."""
    try:
        return await operator.call(contract, fn, *args)
    except ChainUnavailable as exc:
        raise _chain_unavailable(exc) from exc


async def existing_token(operator: Operator, wallet: str) -> tuple[int | None, str | None]:
    """(token id, None) of the agent `wallet` on the registry, or (None, None) when it has none."""
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


async def mint(
    operator: Operator,
    wallet: str,
    self_wallet: str,
    owner: str,
    referrer: int | None,
    forget: Callable[[], Awaitable[None]] | None = None,
    retry_hint: str = "retry shortly",
) -> tuple[int, str | None]:
    """Mint the agent NFT of `wallet`; (token id, mint tx hash or None when a crashed attempt's
    transaction had minted it). `forget` runs when nothing was minted."""

    async def not_minted() -> None:
        if forget is not None:
            await forget()

    try:
        receipt = await operator.transact("AgentRegistry", "mint", owner, self_wallet, wallet, referrer or 0)
    except ContractReverted as exc:
        if exc.error_name == "WalletIdTaken":  # minted meanwhile (by a crashed attempt's transaction)
            token, _ = await existing_token(operator, wallet)
            if token is not None:
                return token, None
        await not_minted()
        raise _mint_error(exc, self_wallet, referrer) from exc
    except (ChainUnavailable, TransactionFailed) as exc:
        await not_minted()
        log.warning("minting the agent token of %s failed: %s", wallet, exc)  # may carry the RPC URL: log only
        raise ServiceError(
            503, "chain_unavailable", "minting failed: the chain node did not accept it", type_="service_error"
        ) from exc
    except SendUncertain as exc:  # keep any reservation: a retry finds the token if it was minted
        log.warning("minting the agent token of %s: outcome unknown: %s", wallet, exc)
        raise ServiceError(
            503, "chain_unavailable", f"minting outcome unknown; {retry_hint}", type_="service_error"
        ) from exc
    (event,) = operator.events(receipt, "AgentRegistry", "AgentRegistered")
    return int(event["args"]["tokenId"]), tx_hash_of(receipt)


async def token_state(operator: Operator, token_id: int) -> TokenState:
    """What the chain recorded for `token_id` (it wins over what a request asked for)."""
    agent = await chain_call(operator, "AgentRegistry", "agent", token_id)
    chain_owner = await chain_call(operator, "AgentRegistry", "ownerOf", token_id)
    return TokenState(Web3.to_checksum_address(chain_owner), Web3.to_checksum_address(agent[0]), int(agent[1]) or None)


def _mint_error(exc: ContractReverted, self_wallet: str, referrer: int | None) -> ServiceError:
    if exc.error_name == "SelfWalletTaken":
        return ServiceError(409, "self_wallet_taken", f"{self_wallet} is already an agent's self wallet on-chain")
    if exc.error_name == "UnknownAgent":
        return ServiceError(404, "unknown_referrer", f"no agent token {referrer}", param="$.referrer_token_id")
    log.warning("registry refused the mint: %s", exc)
    return ServiceError(502, "mint_failed", f"the registry refused the mint ({exc.error_name})", type_="service_error")
