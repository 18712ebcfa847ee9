"""The handover of a sold agent, at its FINAL SaleSettled, and the buyer's claim.

At settlement (in the follower's transaction, exactly once):
- the agent (its `agl_` service wallet, memory, brain, decision log, the assets flagged
  transferred_with_nft) leaves the seller's account for a holding account that has no key: every
  seller key stops acting for it at once (the auth caches of every process follow auth_epoch);
  the seller's agent-scoped keys for it are deleted;
- the balance it earned before the sale stays the seller's: owner part, self part and reinvested
  bucket move (ledger rows of kind `transfer`) to a new wallet in the seller's account, named
  "<agent name> (pre-sale balance)", which also takes the assets flagged not transferred_with_nft;
- the registry has already reset the self wallet on-chain (the contract), so the seller cannot
  sign attestations for the agent any more; the new owner sets one with its own proof.

The buyer claims the agent with an EIP-191 signature of the new NFT owner (core.marketplace.rules.
claim_message): with an account key the agent joins that account and an agent-scoped key comes
back; without one the holding account becomes the buyer's and an account-scoped key comes back.
Either way the key is shown once (only its hash is stored), and a handover is claimed once.
"""

from __future__ import annotations

import uuid

from web3 import Web3

from core import agents_onchain, signatures, wallets
from core.errors import ServiceError
from core.keys import Caller
from core.marketplace import records, rules
from core.marketplace.context import Market
from core.store import Conn
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.marketplace import HandoverRow, ListingRow, SaleRow
from core.store.wallets import AgentRow, BalanceRow, LedgerEntry

ESTATE_SUFFIX = " (pre-sale balance)"


def hand_over(conn: Conn, listing: ListingRow, sale: SaleRow, settle_tx: str, now: float) -> HandoverRow | None:
    """Move control of the sold agent away from the seller; its pre-sale balance to the seller's
    estate wallet. Returns the handover (None when the agent is gone, or it was handed over already)."""
    if store.handover_of(conn, listing.id) is not None:
        return None
    agent = wallet_store.agent_by_uuid(conn, listing.agent_uuid)
    if agent is None:
        return None
    balance = wallet_store.get_balance(conn, agent.uuid)
    holding = str(uuid.uuid4())
    wallet_store.insert_account(conn, holding, now)
    estate = _estate(conn, listing, agent, balance, now)
    store.move_agent(conn, agent.uuid, holding)
    wallet_store.bump_auth_epoch(conn)
    return _record_handover(conn, listing, sale, agent, balance, holding, estate, settle_tx, now)


def _estate(conn: Conn, listing: ListingRow, agent: AgentRow, balance: BalanceRow, now: float) -> AgentRow | None:
    """The seller's estate wallet, when the sold agent has a balance or retained assets to leave behind:
    made in the seller's account, given both (None: nothing to keep)."""
    if not (balance.balance or balance.reinvested or store.retained_count(conn, agent.uuid)):
        return None
    estate = wallets.register(
        conn,
        account_id=agent.account_id,
        new_key_hash=None,
        name=(agent.name[: 64 - len(ESTATE_SUFFIX)] + ESTATE_SUFFIX),
        specialty=agent.specialty,
        referral_code=None,
        now=now,
    )
    if balance.balance or balance.reinvested:
        _move_balance(conn, listing, agent, estate, balance, now)
    store.retain_assets(conn, agent.uuid, estate.uuid, now)
    return estate


def _move_balance(
    conn: Conn, listing: ListingRow, agent: AgentRow, estate: AgentRow, balance: BalanceRow, now: float
) -> None:
    """The sold agent's pre-sale balance (owner, self and reinvested parts) to the estate wallet."""
    why = f"sale of listing {listing.id}: pre-sale balance"
    wallet_store.append_ledger(
        conn,
        LedgerEntry(
            agent_uuid=agent.uuid,
            kind="transfer",
            owner_delta=-balance.owner_balance,
            self_delta=-balance.self_balance,
            source=f"to {estate.wallet}: {why}",
            reinvested_delta=-balance.reinvested,
        ),
        now,
    )
    wallet_store.append_ledger(
        conn,
        LedgerEntry(
            agent_uuid=estate.uuid,
            kind="transfer",
            owner_delta=balance.owner_balance,
            self_delta=balance.self_balance,
            source=f"from {agent.wallet}: {why}",
            reinvested_delta=balance.reinvested,
            transferred_in=balance.balance + balance.reinvested,
        ),
        now,
    )


def _record_handover(
    conn: Conn,
    listing: ListingRow,
    sale: SaleRow,
    agent: AgentRow,
    balance: BalanceRow,
    holding: str,
    estate: AgentRow | None,
    settle_tx: str,
    now: float,
) -> HandoverRow:
    """The handover's row and its audit entry."""
    row = HandoverRow(
        listing_id=listing.id,
        agent_uuid=agent.uuid,
        seller_account=agent.account_id,
        holding_account=holding,
        estate_agent_uuid=None if estate is None else estate.uuid,
        moved_owner=balance.owner_balance,
        moved_self=balance.self_balance,
        moved_reinvested=balance.reinvested,
        buyer_address=sale.buyer_address,
        settle_tx=settle_tx,
        claimed_by=None,
        claimed_account=None,
        claimed_at=None,
        created_at=now,
    )
    store.insert_handover(conn, row)
    records.append_audit(
        conn,
        listing.id,
        records.HANDOVER,
        {
            "sale_id": sale.id,
            "agent_id": agent.wallet,
            "buyer": sale.buyer_address,
            "settle_tx": settle_tx,
            "estate_wallet": None if estate is None else estate.wallet,
            "moved_owner_balance": str(balance.owner_balance),
            "moved_self_balance": str(balance.self_balance),
            "moved_reinvested": str(balance.reinvested),
        },
        now,
    )
    return row


async def claim(
    m: Market,
    *,
    agent: AgentRow,
    caller: Caller | None,
    owner: str,
    timestamp: int,
    signature: str,
    new_key_hash: str,
) -> tuple[AgentRow, str, bool]:
    """The buyer's claim; returns (the agent, the account it now belongs to, whether the new key is
    account-scoped). `caller`: an account key, or none (a claim touches the account as a whole: an
    agent-scoped key is refused before this, by the operation's row). Refusals: nothing to claim (404),
    claimed already (409), a stale or foreign signature (401), a signer that does not own the NFT (403)."""
    now = m.clock()

    def claimable(db: Conn) -> tuple[HandoverRow, ListingRow]:
        handover = store.latest_handover(db, agent.uuid)
        if handover is None:
            raise ServiceError(404, "nothing_to_claim", f"agent {agent.wallet} was not sold through the drop")
        if handover.claimed_at is not None:
            raise ServiceError(409, "already_claimed", f"agent {agent.wallet} was claimed already")
        signatures.require_in_window(timestamp, now)
        listing = store.get_listing(db, handover.listing_id)
        assert listing is not None
        return handover, listing

    handover, listing = await m.reads.run(claimable)
    owner = Web3.to_checksum_address(owner)
    message = rules.claim_message(
        chain_id=m.chain_id, wallet=agent.wallet, token_id=listing.token_id, owner=owner, timestamp=timestamp
    )
    signatures.require_signer(message, signature, owner)
    chain_owner = Web3.to_checksum_address(
        await agents_onchain.chain_call(m.operator, "AgentRegistry", "ownerOf", listing.token_id)
    )
    if chain_owner != owner:
        raise ServiceError(
            403, "not_nft_owner", f"{owner} does not own agent token #{listing.token_id} (its owner is {chain_owner})"
        )

    def work(conn: Conn) -> tuple[AgentRow, str, bool]:
        current = store.handover_of(conn, handover.listing_id)
        if current is None or current.claimed_at is not None:
            raise ServiceError(409, "already_claimed", f"agent {agent.wallet} was claimed already")
        account = caller.account_id if caller is not None else current.holding_account
        scoped_to_account = caller is None
        if caller is not None:
            store.move_agent(conn, agent.uuid, account)
        wallet_store.insert_api_key(conn, new_key_hash, account, None if scoped_to_account else agent.uuid, None, now)
        store.claim_handover(conn, handover.listing_id, owner, account, now)
        wallet_store.bump_auth_epoch(conn)
        records.append_audit(conn, handover.listing_id, "drop_claimed", {"agent_id": agent.wallet, "owner": owner}, now)
        moved = wallet_store.agent_by_uuid(conn, agent.uuid)
        assert moved is not None
        return moved, account, scoped_to_account

    return await m.writer.run(work)
