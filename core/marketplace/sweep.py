"""The marketplace's jobs: settle committed sales once their notice window has passed (every 5 min),
return expired listings to their sellers (hourly), and reconcile what the routes recorded from a
receipt with the chain (a reorg may remove it; every 30 s).

Settlement and expiry are permissionless on-chain; the service sends them through its one Operator
(one nonce sequence with every other service transaction). Never twice across crashes: the signed
transaction's hash and nonce are committed (drop_sweep_txs, `sent`) BEFORE it is sent
(Operator.transact's before_send), and every sweep first reconciles the open rows with the chain:
mined (receipt) -> `mined` or `reverted`; still in the node's pool -> left alone (nothing new is
sent for that listing); unknown to the node -> `dropped` (it never left this process, or was
evicted: its bytes are nowhere else), after which the listing is swept again if the chain says it
is still due. A listing with an open row is never sent for. The contract is the last guard: a
settle of a settled listing reverts at the estimate, before anything is sent.

A revert (at the estimate, or mined) is logged and the listing retried with back-off: 60 s,
doubling, at most an hour (drop_sweep_backoff). Due listings come from the indexer's projection
(`listings`) and the chain's own clock (the latest block's timestamp), not the server's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from core.marketplace import notices, records, rules
from core.marketplace.context import Market
from core.operator import ChainUnavailable, ContractReverted, SendUncertain, TransactionFailed
from core.store import Conn
from core.store import marketplace as store

log = logging.getLogger("agentledger.drop")

#: Reverts meaning "someone else already did it" (nothing to retry).
_DONE = frozenset({"WrongStatus", "UnknownListing"})
#: Reverts meaning "not yet" (the projection ran ahead of the chain's clock): try at the next sweep.
_NOT_YET = frozenset({"NoticeWindowActive", "ListingNotEnded"})


async def settle_sweep(m: Market) -> int:
    """One settle sweep; returns how many settlements were mined."""
    return await _sweep(m, "settle")


async def expire_sweep(m: Market) -> int:
    """One expiry sweep; returns how many listings were expired."""
    return await _sweep(m, "expire")


async def _sweep(m: Market, action: str) -> int:
    await reconcile_sent(m, action)
    now_chain = await m.operator.block_timestamp()

    def due(db: Conn) -> list[tuple[int, tuple[int, float] | None]]:
        """The due listings without an open transaction, each with its back-off (if any)."""
        open_rows = {t.chain_listing_id for t in store.open_sweep_txs(db, action)}
        return [
            (listing_id, store.backoff_of(db, action, listing_id))
            for listing_id in store.due_on_chain(db, action, now_chain)
            if listing_id not in open_rows  # its transaction is still in the pool: never a second one
        ]

    done = 0
    for listing_id, back in await m.reads.run(due):
        if back is not None and back[1] > m.clock():
            continue
        done += await _send(m, action, listing_id)
    return done


async def _send(m: Market, action: str, listing_id: int) -> int:
    loop = asyncio.get_running_loop()

    def before_send(tx_hash: str, nonce: int) -> None:  # in the Operator's worker thread
        now = m.clock()
        record = m.writer.run(lambda c: store.record_sent(c, action, listing_id, tx_hash, nonce, now))
        asyncio.run_coroutine_threadsafe(record, loop).result(timeout=60)

    try:
        receipt = await m.operator.transact("AgentMarketplace", action, listing_id, before_send=before_send)
    except ContractReverted as exc:  # found by the estimate: nothing was sent
        if exc.error_name in _DONE:
            await m.writer.run(lambda c: store.clear_backoff(c, action, listing_id))
        elif exc.error_name not in _NOT_YET:
            await _failed(m, action, listing_id, f"{action} would revert: {exc}")
        return 0
    except TransactionFailed as exc:
        failed_hash, error = exc.tx_hash, str(exc)
        await m.writer.run(functools.partial(_finish, failed_hash, "reverted", error, m.clock()))
        await _failed(m, action, listing_id, error)
        return 0
    except SendUncertain as exc:  # the row stays `sent`: the next sweep reconciles it with the chain
        log.warning(
            "drop %s of listing %d: outcome unknown (%s); reconciled at the next sweep", action, listing_id, exc
        )
        return 0
    tx_hash = _hash(receipt)
    now = m.clock()

    def mined(c: Conn) -> None:
        store.finish_sweep_tx(c, tx_hash, "mined", None, now)
        store.clear_backoff(c, action, listing_id)

    await m.writer.run(mined)
    log.info("drop %s of listing %d mined: %s", action, listing_id, tx_hash)
    return 1


def _hash(receipt: dict[str, Any]) -> str:
    h = receipt["transactionHash"]
    return h.lower() if isinstance(h, str) else "0x" + bytes(h).hex()


def _finish(tx_hash: str, state: str, error: str | None, now: float, conn: Conn) -> None:
    store.finish_sweep_tx(conn, tx_hash, state, error, now)


async def _failed(m: Market, action: str, listing_id: int, error: str) -> None:
    now = m.clock()

    def work(c: Conn) -> float:
        prior = store.backoff_of(c, action, listing_id)
        failures = (prior[0] if prior else 0) + 1
        wait = rules.backoff(failures)
        store.set_backoff(c, action, listing_id, failures, now + wait, error)
        return wait

    wait = await m.writer.run(work)
    log.warning("drop %s of listing %d failed: %s; retried in %g s", action, listing_id, error, wait)


async def reconcile_sent(m: Market, action: str) -> None:
    """Resolve the `sent` rows of `action` with the chain (after a crash, a restart, an uncertain send)."""
    for t in await m.reads.run(lambda db: store.open_sweep_txs(db, action)):
        receipt = await m.operator.receipt_of(t.tx_hash)
        now = m.clock()
        if receipt is not None:
            ok = receipt.get("status") == 1
            state, err = ("mined", None) if ok else ("reverted", "mined and reverted")
            await m.writer.run(functools.partial(_finish, t.tx_hash, state, err, now))
            if not ok:
                await _failed(m, action, t.chain_listing_id, f"{t.tx_hash} reverted")
            continue
        if await m.operator.is_pending(t.tx_hash):
            continue
        gone = "unknown to the node: never sent, or evicted"
        await m.writer.run(functools.partial(_finish, t.tx_hash, "dropped", gone, now))
        log.warning("drop %s of listing %d: %s is unknown to the node; dropped", action, t.chain_listing_id, t.tx_hash)


# ---- reconciling recorded receipts with the chain --------------------------------------------------


async def _gone(m: Market, tx_hash: str) -> bool:
    """The chain no longer has the transaction: no receipt, and not in the node's pool either."""
    return await m.operator.receipt_of(tx_hash) is None and not await m.operator.is_pending(tx_hash)


async def reconcile(m: Market) -> int:
    """Undo what a route recorded from a transaction a reorg then removed (not yet final, now gone):
    a commit becomes a `reorged` sale (audited) and the listing takes the chain's state again; a
    listing becomes `void`. Returns how many records changed."""
    changed = 0
    for sale in await m.reads.run(store.unconfirmed_sales):
        try:
            if not await _gone(m, sale.commit_tx):
                continue
            listing = await m.reads.run(functools.partial(store.get_listing, listing_id=sale.listing_id))
            if listing is None:
                continue
            onchain = await m.operator.call("AgentMarketplace", "getListing", listing.chain_listing_id)
        except (ChainUnavailable, ContractReverted) as exc:
            log.warning("drop reconcile: chain unavailable (%s)", exc)
            return changed
        state = rules.CHAIN_STATUS.get(int(onchain[2]), rules.ACTIVE)
        changed += int(await m.writer.run(functools.partial(_revert, m, sale, state)))
    for listing in await m.reads.run(store.unconfirmed_listings):
        try:
            if not await _gone(m, listing.list_tx):
                continue
        except ChainUnavailable as exc:
            log.warning("drop reconcile: chain unavailable (%s)", exc)
            return changed

        def void(c: Conn, listing_id: str = listing.id, now: float = m.clock()) -> bool:
            fresh = store.get_listing(c, listing_id)
            if fresh is None or fresh.confirmed or fresh.state == rules.VOID:
                return False
            records.end_listing(c, m.notices, fresh, rules.VOID, None, now, "its listing transaction left the chain")
            return True

        changed += int(await m.writer.run(void))
    return changed


def _revert(m: Market, sale: store.SaleRow, chain_state: str, conn: Conn) -> bool:
    now = m.clock()
    listing = store.get_listing(conn, sale.listing_id)
    live = store.live_sale(conn, sale.listing_id)
    if listing is None or live is None or live.id != sale.id or live.confirmed:
        return False  # the follower confirmed it meanwhile, or it is already undone
    records.revert_sale(conn, listing, sale, now, "its commit transaction left the chain (reorg)")
    if chain_state == rules.ACTIVE:
        store.set_listing_state(conn, listing.id, rules.ACTIVE, now)
        store.reopen_offers(conn, listing.id, now)
        notices.state_changed(
            conn, m.notices, listing, rules.SETTLING, rules.ACTIVE, now, reason="the commit left the chain (reorg)"
        )
    else:
        store.set_listing_state(conn, listing.id, chain_state, now)
    return True
