"""Fast decoding of our contracts' logs.

web3's process_log manages about 1,400 events/s here; this decoder slices static fields straight
out of the topic and data bytes and only calls eth_abi for events with dynamic fields (strings),
and caches checksummed addresses, which is what lets a backfill pass 10,000 events/s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address
from web3 import Web3

from core.chain import load_artifact

#: Contracts whose events the indexer follows (MockUSDC is a local stand-in for USDC: not ours).
INDEXED_CONTRACTS = (
    "AgentRegistry",
    "AgentPayouts",
    "PaymentGateway",
    "AgentEscrow",
    "AgentMarketplace",
    "AuditAnchor",
)


@dataclass(frozen=True, slots=True)
class Event:
    contract: str
    name: str
    args: dict[str, Any]
    block_number: int
    block_hash: str
    tx_hash: str
    log_index: int
    topics: str  # as returned by the node, comma-separated
    data: str

    @property
    def key(self) -> str:
        return f"{self.contract}.{self.name}"


_address_cache: dict[str, str] = {}


def checksum(raw_hex40: str) -> str:
    """EIP-55 checksum of a 40-hex-digit address body, cached (few distinct addresses recur)."""
    cached = _address_cache.get(raw_hex40)
    if cached is None:
        if len(_address_cache) > 100_000:
            _address_cache.clear()
        cached = _address_cache[raw_hex40] = to_checksum_address("0x" + raw_hex40)
    return cached


def _word_decoder(abi_type: str) -> Callable[[str], Any]:
    """A decoder of one 32-byte word given as 64 hex digits, for a static ABI type."""
    if abi_type == "address":
        cache = _address_cache

        def address(w: str) -> str:
            body = w[24:]
            return cache.get(body) or checksum(body)

        return address
    if abi_type == "bool":
        return lambda w: w[-1] != "0"
    if abi_type.startswith("uint"):
        return lambda w: int(w, 16)
    if abi_type.startswith("int"):
        bits = 256

        def signed(w: str) -> int:
            v = int(w, 16)
            return v - (1 << bits) if v >= 1 << (bits - 1) else v

        return signed
    if abi_type == "bytes32":
        return lambda w: "0x" + w
    raise ValueError(f"no fast decoder for {abi_type}")


def _is_static_word(abi_type: str) -> bool:
    return abi_type in ("address", "bool", "bytes32") or abi_type.startswith(("uint", "int"))


@dataclass(frozen=True)
class _EventSpec:
    contract: str
    name: str
    indexed: list[tuple[str, Callable[[str], Any], int]]  # (name, decoder, topic position)
    data_names: list[str]
    data_types: list[str]
    data_fast: list[tuple[str, Callable[[str], Any], int]] | None  # (name, decoder, offset in data); None: eth_abi

    def decode(self, topics: list[str], data: str) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for name, dec, position in self.indexed:
            args[name] = dec(topics[position][2:])
        if self.data_fast is not None:
            for name, dec, offset in self.data_fast:
                args[name] = dec(data[offset : offset + 64])
        else:
            # A string is read as bytes (the same ABI encoding) and decoded leniently: anyone can
            # emit invalid UTF-8 (e.g. a release's cid), and one such event must not stop the indexer.
            types = ["bytes" if t == "string" else t for t in self.data_types]
            values = abi_decode(types, bytes.fromhex(data[2:]))
            for name, typ, value in zip(self.data_names, self.data_types, values, strict=True):
                if typ == "string":
                    value = value.decode("utf-8", errors="replace")
                elif typ == "address":
                    value = checksum(value[2:].lower())
                elif typ.startswith("bytes"):
                    value = "0x" + value.hex()
                args[name] = value
        return args


class Decoder:
    """topic0 + emitting address -> decoded Event, for every event in our contracts' ABIs."""

    def __init__(self, addresses: dict[str, str]) -> None:
        self._by_address: dict[str, dict[str, _EventSpec]] = {}
        for contract, address in addresses.items():
            if contract not in INDEXED_CONTRACTS:
                continue
            specs: dict[str, _EventSpec] = {}
            for item in load_artifact(contract)["abi"]:
                if item["type"] != "event":
                    continue
                signature = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
                topic0 = "0x" + Web3.keccak(text=signature).hex().removeprefix("0x")
                inputs = [i for i in item["inputs"] if i["indexed"]]
                indexed = [(i["name"], _word_decoder(i["type"]), k + 1) for k, i in enumerate(inputs)]
                data = [i for i in item["inputs"] if not i["indexed"]]
                fast = (
                    [(i["name"], _word_decoder(i["type"]), 2 + 64 * k) for k, i in enumerate(data)]
                    if all(_is_static_word(i["type"]) for i in data)
                    else None
                )
                specs[topic0] = _EventSpec(
                    contract, item["name"], indexed, [i["name"] for i in data], [i["type"] for i in data], fast
                )
            self._by_address[address.lower()] = specs

    @property
    def addresses(self) -> list[str]:
        """Lower-case addresses to filter eth_getLogs by."""
        return list(self._by_address)

    def decode(self, log: dict[str, Any]) -> Event | None:
        """Decode one JSON-RPC log object; None for a log that is not ours (or anonymous)."""
        specs = self._by_address.get(log["address"].lower())
        topics = log["topics"]
        if specs is None or not topics:
            return None
        spec = specs.get(topics[0])
        if spec is None:
            return None
        return Event(
            spec.contract,
            spec.name,
            spec.decode(topics, log["data"]),
            int(log["blockNumber"], 16),
            log["blockHash"],
            log["transactionHash"],
            int(log["logIndex"], 16),
            ",".join(topics),
            log["data"],
        )

    def decode_all(self, logs: Iterable[dict[str, Any]]) -> list[Event]:
        out = []
        for log in logs:
            if log.get("removed"):
                continue
            ev = self.decode(log)
            if ev is not None:
                out.append(ev)
        return out
