"""Fast decoding of our contracts' logs.

web3's process_log manages about 1,400 events/s here. This decoder compiles one straight-line
function per event from the ABI that slices static fields out of the topic and data hex (eth_abi
only for events with dynamic fields, i.e. strings), caches checksummed addresses, and builds each
Event as a named tuple. `parse_logs` reads an eth_getLogs reply's bytes straight into RawLog
structs (msgspec, in C: no dict per log, only the fields decoding needs); `Decoder.decode_logs`
decodes those.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from eth_hash.auto import keccak

from core.paths import load_artifact
from core.store.events import Event

#: Contracts whose events the indexer follows (MockUSDC is a local stand-in for USDC: not ours).
INDEXED_CONTRACTS = (
    "AgentRegistry",
    "AgentPayouts",
    "PaymentGateway",
    "AgentEscrow",
    "AgentMarketplace",
    "AuditAnchor",
)


_address_cache: dict[str, str] = {}


def checksum(raw_hex40: str) -> str:
    """EIP-55 checksum of a 40-hex-digit address body, cached (few distinct addresses recur)."""
    cached = _address_cache.get(raw_hex40)
    if cached is None:
        if len(_address_cache) > 100_000:
            _address_cache.clear()
        cached = _address_cache[raw_hex40] = _eip55(raw_hex40.lower())
    return cached


def _eip55(lower_hex40: str) -> str:
    """EIP-55 by its definition (eth_utils' to_checksum_address, without loading eth_utils and pydantic
    at start-up): a letter is upper case where the keccak of the lower-case body has a nibble >= 8."""
    digest = keccak(lower_hex40.encode()).hex()
    return "0x" + "".join(c.upper() if int(h, 16) >= 8 else c for c, h in zip(lower_hex40, digest, strict=False))


def _word_expr(abi_type: str, word: str) -> str:
    """Python source decoding one 32-byte word, given `word`: the source of a 64-hex-digit string
    (int() takes the "0x" of a whole topic too, so topics need no slicing for numbers)."""
    if abi_type == "address":  # the cache inline: a call per address costs a fifth of a PriceSet
        return f"(_cached({word}[-40:]) or _checksum({word}[-40:]))"
    if abi_type == "bool":
        return f"({word}[-1] != '0')"
    if abi_type.startswith("uint"):
        return f"int({word}, 16)"
    if abi_type.startswith("int"):
        return f"_signed(int({word}, 16))"
    if abi_type == "bytes32":
        return f"('0x' + {word}[-64:])"
    raise ValueError(f"no fast decoder for {abi_type}")


def _signed(v: int) -> int:
    return v - (1 << 256) if v >= 1 << 255 else v


def _is_static_word(abi_type: str) -> bool:
    return abi_type in ("address", "bool", "bytes32") or abi_type.startswith(("uint", "int"))


#: (topics, data, blockHash, block number, transactionHash, log index, topics joined by commas) -> Event:
#: one per event of our ABIs, the hex fields as the node spelt them, the two numbers as ints.
Maker = Callable[[list[str], str, str, int, str, int, str], Event]

#: Log indexes as nodes spell them ("0x1f"), read without int(): a log index recurs in every block.
_LOG_INDEXES = {hex(i): i for i in range(4096)}


def _compile(
    contract: str,
    name: str,
    indexed: list[tuple[str, str]],
    data: list[tuple[str, str]],
    slow: Callable[[str], dict[str, Any]] | None,
) -> Maker:
    """One straight-line function per event that builds its whole Event: generated from the ABI
    (names only as string literals) because a loop over field descriptors costs twice as much."""
    items = [f"{arg!r}: {_word_expr(typ, f't[{k + 1}]')}" for k, (arg, typ) in enumerate(indexed)]
    if slow is None:
        items += [f"{arg!r}: {_word_expr(typ, f'd[{2 + 64 * k}:{66 + 64 * k}]')}" for k, (arg, typ) in enumerate(data)]
        args = "{" + ", ".join(items) + "}"
    else:
        args = "{" + ", ".join(items) + (", " if items else "") + "**_slow(d)}"
    namespace: dict[str, Any] = {
        "_cached": _address_cache.get,
        "_checksum": checksum,
        "_signed": _signed,
        "_slow": slow,
        "_new": tuple.__new__,
        "_Event": Event,
    }
    source = (
        "def make(t, d, bh, bn, th, li, joined):\n"
        f"    return _new(_Event, (bn, bh, th, li, {contract!r}, {name!r}, joined, d, {args}))\n"
    )
    exec(source, namespace)  # noqa: S102 (source built from our ABI above)
    fn: Maker = namespace["make"]
    return fn


def _abi_decoder(names: list[str], abi_types: list[str]) -> Callable[[str], dict[str, Any]]:
    """Data with dynamic fields, through eth_abi. A string is read as bytes (the same ABI encoding)
    and decoded leniently: anyone can emit invalid UTF-8 (e.g. a release's cid), and one such event
    must not stop the indexer."""
    types = ["bytes" if t == "string" else t for t in abi_types]

    def decode(data: str) -> dict[str, Any]:
        from eth_abi.abi import decode as abi_decode  # only events with dynamic fields: not at start-up

        args: dict[str, Any] = {}
        values = abi_decode(types, bytes.fromhex(data[2:]))
        for name, typ, value in zip(names, abi_types, values, strict=True):
            if typ == "string":
                value = value.decode("utf-8", errors="replace")
            elif typ == "address":
                value = checksum(value[2:].lower())
            elif typ.startswith("bytes"):
                value = "0x" + value.hex()
            args[name] = value
        return args

    return decode


@functools.cache
def contract_makers(contract: str) -> dict[str, Maker]:
    """topic0 -> the Maker of each event in `contract`'s ABI (compiled once per process)."""
    makers: dict[str, Maker] = {}
    for item in load_artifact(contract)["abi"]:
        if item["type"] != "event":
            continue
        signature = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
        topic0 = "0x" + keccak(signature.encode()).hex()
        indexed = [(i["name"], i["type"]) for i in item["inputs"] if i["indexed"]]
        data = [(i["name"], i["type"]) for i in item["inputs"] if not i["indexed"]]
        slow = (
            None
            if all(_is_static_word(t) for _, t in data)
            else _abi_decoder([n for n, _ in data], [t for _, t in data])
        )
        makers[topic0] = _compile(contract, item["name"], indexed, data, slow)
    return makers


def decode_stored(rows: Iterable[tuple[Any, ...]]) -> list[Event]:
    """Decode `events` rows (block_number, block_hash, tx_hash, log_index, contract, event, topics,
    data: what the indexer stored, verbatim from the node) into the Events it decoded from the node's
    logs, without the node: the row names its contract, so no address is needed."""
    out: list[Event] = []
    append = out.append
    makers: dict[str, dict[str, Maker]] = {}
    for block, block_hash, tx_hash, log_index, contract, _name, joined, data in rows:
        topics = joined.split(",")
        of_contract = makers.get(contract)
        if of_contract is None:
            of_contract = makers[contract] = contract_makers(contract)
        append(of_contract[topics[0]](topics, data, block_hash, block, tx_hash, log_index, joined))
    return out


class Decoder:
    """topic0 + emitting address -> decoded Event, for every event in our contracts' ABIs."""

    def __init__(self, addresses: dict[str, str]) -> None:
        self._by_address: dict[str, dict[str, Maker]] = {
            address.lower(): contract_makers(contract)
            for contract, address in addresses.items()
            if contract in INDEXED_CONTRACTS
        }
        self._lookup = dict(self._by_address)  # also under the checksummed spelling: no lower() per log
        for address, specs in self._by_address.items():
            self._lookup[checksum(address[2:])] = specs

    @property
    def addresses(self) -> list[str]:
        """Lower-case addresses to filter eth_getLogs by."""
        return list(self._by_address)

    def decode(self, log: dict[str, Any]) -> Event | None:
        """Decode one JSON-RPC log object; None for a log that is not ours (or anonymous)."""
        address = log["address"]
        specs = self._lookup.get(address) or self._by_address.get(address.lower())
        topics = log["topics"]
        if specs is None or not topics:
            return None
        make = specs.get(topics[0])
        if make is None:
            return None
        return make(
            topics,
            log["data"],
            log["blockHash"],
            int(log["blockNumber"], 16),
            log["transactionHash"],
            int(log["logIndex"], 16),
            ",".join(topics),
        )

    def decode_logs(self, logs: Iterable[RawLog]) -> list[Event]:
        """Decode the logs of `parse_logs` (the same as `decode_all` on the same logs as dicts)."""
        lookup, by_address, log_indexes = self._lookup, self._by_address, _LOG_INDEXES
        out: list[Event] = []
        append = out.append
        block_hex, block = "", 0  # the last block number read: logs come block by block
        for log in logs:
            address, topics = log.address, log.topics
            specs = lookup.get(address) or by_address.get(address.lower())
            if specs is None or not topics or log.removed:
                continue
            make = specs.get(topics[0])
            if make is not None:
                if log.blockNumber != block_hex:
                    block_hex = log.blockNumber
                    block = int(block_hex, 16)
                index = log_indexes.get(log.logIndex)
                if index is None:
                    index = int(log.logIndex, 16)
                append(make(topics, log.data, log.blockHash, block, log.transactionHash, index, ",".join(topics)))
        return out

    def decode_all(self, logs: Iterable[dict[str, Any]]) -> list[Event]:
        decode = self.decode
        return [ev for log in logs if not log.get("removed") and (ev := decode(log)) is not None]


# ---- eth_getLogs replies straight to structs --------------------------------------------------------


class RawLog(msgspec.Struct, gc=False):
    """The fields of a JSON-RPC log object that decoding needs, as the node spelt them (others are
    skipped unread). Not tracked by the cyclic GC: it holds only strings and a list of strings."""

    address: str
    topics: list[str]
    data: str
    blockHash: str  # the JSON-RPC field names: msgspec reads them as they are
    blockNumber: str
    transactionHash: str
    logIndex: str
    removed: bool = False


class _LogsReply(msgspec.Struct, gc=False):
    result: list[RawLog] | None = None
    error: Any = None


_logs_reply = msgspec.json.Decoder(_LogsReply)


def parse_logs(body: bytes) -> list[RawLog] | None:
    """The logs of an eth_getLogs reply, parsed from its bytes in one pass in C (msgspec) straight
    into RawLog structs: parsing the reply is much of a backfill's CPU besides SQLite. None for
    anything else (an error reply, a batch-shaped reply, a log with a missing or null field, a body
    that is not JSON): the caller then parses it with `indexer.rpc.parse_reply`, which reports why."""
    try:
        reply = _logs_reply.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if reply.error is not None:
        return None
    return reply.result


def raw_block_number(log: RawLog) -> int:
    return int(log.blockNumber, 16)


def in_chain_order(events: list[Event]) -> bool:
    """Strictly increasing (block, log index): what any honest eth_getLogs reply gives. A repeated or
    misplaced log would apply an event twice (credits counted twice) or out of order."""
    return all((a.block_number, a.log_index) < (b.block_number, b.log_index) for a, b in itertools.pairwise(events))
