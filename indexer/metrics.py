"""The indexer's own counters for Prometheus: events applied, reorgs, whether the node answers,
whether the indexer halted and whether this process leads it (holds its lease). The runtime registers
them in the API's /metrics when it runs the indexer in-process; `python -m indexer --metrics-port N`
serves them on their own. (The checkpoint's head, final and lag are read from the database by the
API's /metrics, whichever process indexes.)"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from indexer.status import Status


class IndexerCollector:
    def __init__(self, status: Status) -> None:
        self.status = status

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        s = self.status
        name = "agentledger_indexer_"
        yield CounterMetricFamily(
            name + "events_applied", "Chain events this indexer committed", value=s.events_applied
        )
        yield CounterMetricFamily(name + "reorgs", "Reorgs this indexer rolled back", value=s.reorgs)
        yield GaugeMetricFamily(
            name + "last_reorg_depth", "Blocks the latest reorg rolled back", value=s.last_reorg_depth
        )
        yield GaugeMetricFamily(name + "node_up", "1 while the JSON-RPC node answers", value=int(s.node_ok))
        yield GaugeMetricFamily(
            name + "halted", "1 when it stopped for an operator (reorg below final)", value=int(bool(s.halted))
        )
        yield GaugeMetricFamily(
            name + "leader", "1 while this process follows the chain (holds the indexer's lease)", value=int(s.leader)
        )
