"""Realtime sync: above the final block, block by block (headers and logs in one batch), parent
hashes checked against our tip and against each other, logs checked against their block's hash.

Each batch is one transaction. Events of unfinalized blocks are applied with the reorg journal on
(so a rollback undoes every write they caused) and wait in memory for their
block to become final before the followers get them (indexer.followers).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from core.store import Conn, projections, reorg, transaction
from core.store.events import Event
from indexer.decode import Decoder
from indexer.followers import FinalEvents
from indexer.historical import RangeSizer, check_order, logs_from_receipts
from indexer.rpc import RpcClient, RpcError, is_range_error, suggested_range
from indexer.status import Status


class Realtime:
    def __init__(
        self,
        conn: Conn,
        rpc: RpcClient,
        decoder: Decoder,
        *,
        chain_id: int,
        finals: FinalEvents,
        status: Status,
        sizer: RangeSizer,
        clock: Callable[[], float],
        batch: int = 200,
        fence: Callable[[Conn], None] = lambda conn: None,
    ) -> None:
        #: Run in each batch's transaction: raises (and the batch is rolled back) unless this process leads.
        self.fence = fence
        self.conn, self.rpc, self.decoder = conn, rpc, decoder
        self.chain_id = chain_id
        self.finals = finals
        self.status = status
        self.sizer = sizer
        self.clock = clock
        self.batch = batch

    async def step(self, number: int, tip_hash: str, head: int, final: int) -> bool:
        """Apply the blocks after `number` (hash `tip_hash`) up to the head, at most `batch` at a time.
        False: our tip is no longer the new blocks' parent (a reorg: the loop rolls back)."""
        end = min(head, number + min(self.batch, self.sizer.size))
        calls: list[tuple[str, list[Any]]] = [
            ("eth_getBlockByNumber", [hex(n), False]) for n in range(number + 1, end + 1)
        ]
        calls.append(
            ("eth_getLogs", [{"fromBlock": hex(number + 1), "toBlock": hex(end), "address": self.decoder.addresses}])
        )
        replies = await self.rpc.batch(calls)
        logs_reply = replies[-1]
        if isinstance(logs_reply, RpcError) and is_range_error(logs_reply):
            if end == number + 1:
                replies[-1] = await logs_from_receipts(self.rpc, self.decoder, end)
            else:
                self.sizer.refused(suggested_range(logs_reply), number + 1, end)
                return True
        for r in replies:
            if isinstance(r, RpcError):
                raise r
        headers: list[dict[str, Any]] = replies[:-1]
        logs: list[dict[str, Any]] = replies[-1]
        if any(h is None for h in headers):
            return True  # the node moved under us; try again
        if headers[0]["parentHash"] != tip_hash:
            return False
        for prev, cur in itertools.pairwise(headers):
            if cur["parentHash"] != prev["hash"]:
                return True  # a reorg while we fetched: the next step sees it
        hashes = {int(h["number"], 16): h["hash"] for h in headers}
        if any(hashes.get(int(lg["blockNumber"], 16)) != lg["blockHash"] for lg in logs):
            return True  # logs from another fork than the headers: refetch
        events = self.decoder.decode_all(logs)
        check_order(events, number + 1, end)
        await asyncio.to_thread(self._commit, events, headers, head, final)
        return True

    def _commit(self, events: list[Event], headers: list[dict[str, Any]], head: int, final: int) -> None:
        by_block: dict[int, list[Event]] = {}
        for e in events:
            by_block.setdefault(e.block_number, []).append(e)
        last = headers[-1]
        end = int(last["number"], 16)
        with transaction(self.conn):
            self.fence(self.conn)
            for h in headers:
                n = int(h["number"], 16)
                block_events = by_block.get(n)
                if block_events:
                    reorg.set_block(self.conn, None if n <= final else n)
                    projections.apply_events(self.conn, self.chain_id, block_events)
            reorg.set_block(self.conn, None)
            projections.add_blocks(
                self.conn,
                self.chain_id,
                [(int(h["number"], 16), h["hash"], h["parentHash"], int(h["timestamp"], 16)) for h in headers],
            )
            fin = min(final, end)
            projections.set_tip(self.conn, self.chain_id, end, last["hash"], head, fin, self.clock())
            reorg.prune(self.conn, self.chain_id, fin)
            reorg.set_block(self.conn, None)  # the followers' writes are final: never journaled
            self.finals.deliver(self.conn, self.chain_id, fin, events)
        self.finals.committed(events, fin)
        self.status.seen = end
        self.status.final = fin
        self.status.events_applied += len(events)
