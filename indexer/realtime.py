"""Realtime sync: above the final block, block by block (headers and logs in one batch), parent
hashes checked against our tip and against each other, logs checked against their block's hash.

Each batch is one step (indexer.step: one transaction). Events of unfinalized blocks are applied with
the reorg journal on (so a rollback undoes every write they caused) and wait in memory for their block
to become final before the followers get them (indexer.followers).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from core.store import Conn
from indexer.decode import Decoder
from indexer.fetch import RangeSizer, check_order, logs_from_receipts
from indexer.rpc import RpcClient, RpcError, is_range_error, suggested_range
from indexer.step import Step


class Realtime:
    def __init__(
        self, conn: Conn, rpc: RpcClient, decoder: Decoder, *, step: Step, sizer: RangeSizer, batch: int = 200
    ) -> None:
        self.conn, self.rpc, self.decoder = conn, rpc, decoder
        self.step, self.sizer, self.batch = step, sizer, batch

    async def run(self, number: int, tip_hash: str, head: int, final: int) -> bool:
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
        await asyncio.to_thread(self.step.write, self.conn, events, headers, head, final)
        return True
