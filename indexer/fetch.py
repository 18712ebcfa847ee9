"""Fetching logs, shared by both phases (indexer.historical, indexer.realtime): the eth_getLogs range
sizer, the receipts fallback for a block too large for the provider, and the check that a reply's
logs are in chain order inside the range asked for."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.store.events import Event
from indexer.decode import Decoder, in_chain_order
from indexer.rpc import RpcClient, RpcError

log = logging.getLogger("agentledger.indexer")


def _block_of(log: dict[str, Any]) -> int:
    return int(log["blockNumber"], 16)


@dataclass
class RangeSizer:
    """eth_getLogs range that grows on success and shrinks on "too many results" or timeouts."""

    size: int = 16  # small first: unknown density; it aims at target_logs after each range
    minimum: int = 1
    maximum: int = 100_000
    target_logs: int = 10_000

    def success(self, n_logs: int, tail_logs: int = 0, tail_blocks: int = 0) -> None:
        """Aim the next range at `target_logs` from this range's density, at most doubling. With a
        tail (the last `tail_blocks` blocks held `tail_logs` logs), aim by the denser of the two: a
        history that turns dense mid-range (a quiet deploy, then traffic) must not send the next
        range six times past the target, which would also leave the backfill one huge step."""
        aimed = self.size * self.target_logs // max(n_logs, 1)
        if tail_blocks > 0 and tail_logs > 0:
            aimed = min(aimed, tail_blocks * self.target_logs // tail_logs)
        self.size = max(self.minimum, min(self.size * 2, aimed, self.maximum))

    @staticmethod
    def measure(
        logs: Sequence[Any], start: int, stop: int, block_of: Callable[[Any], int] = _block_of
    ) -> tuple[int, int, int]:
        """(logs, logs in the range's last quarter, blocks in that quarter) for the logs of
        [start, stop], sorted by block as nodes return them; reads only the tail's block numbers."""
        tail_from = stop - (stop - start + 1) // 4
        k = len(logs)
        while k and block_of(logs[k - 1]) >= tail_from:
            k -= 1
        return len(logs), len(logs) - k, stop - tail_from + 1

    def observe(self, logs: Sequence[Any], start: int, stop: int, block_of: Callable[[Any], int] = _block_of) -> None:
        """`success` for the logs of [start, stop], with the last quarter as the tail."""
        self.success(*self.measure(logs, start, stop, block_of))

    def too_large(self, suggested: int | None = None) -> None:
        self.size = max(self.minimum, suggested if suggested else self.size // 2)

    def refused(self, suggested: tuple[int, int] | None, start: int, stop: int) -> None:
        """The node refused [start, stop] as too large (maybe suggesting a range): shrink below the
        span actually refused, and never grow back past it."""
        size = suggested[1] - suggested[0] + 1 if suggested and suggested[0] == start else None
        refused = stop - start + 1
        self.size = min(self.size, refused)
        self.maximum = max(self.minimum, min(self.maximum, refused - 1))
        self.too_large(size if size and size < refused else None)
        log.info("eth_getLogs range too large at %d; now %d blocks", start, self.size)


async def logs_from_receipts(rpc: RpcClient, decoder: Decoder, block: int) -> list[dict[str, Any]]:
    """Last resort for one block with more logs than the provider returns at once."""
    receipts = await rpc.call("eth_getBlockReceipts", [hex(block)])
    wanted = set(decoder.addresses)
    return [lg for r in receipts for lg in r["logs"] if lg["address"].lower() in wanted]


def check_order(events: list[Event], start: int, stop: int) -> None:
    """Refuse a reply (the step fails and is fetched again) whose logs are not strictly in chain
    order inside [start, stop]: a repeated log would count a credit twice, a log from outside the
    range would be applied under the wrong checkpoint."""
    if events and not (start <= events[0].block_number and events[-1].block_number <= stop and in_chain_order(events)):
        raise RpcError(-32603, f"eth_getLogs reply for blocks {start}-{stop} is not in chain order")
