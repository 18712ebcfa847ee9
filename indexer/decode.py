"""Fast decoding of our contracts' logs.

web3's process_log manages about 1,400 events/s here. This decoder compiles one straight-line
function per event from the ABI that slices static fields out of the topic and data hex (eth_abi
only for events with dynamic fields, i.e. strings), caches checksummed addresses, and builds each
Event as a named tuple. `log_rows` reads an eth_getLogs reply straight into the fields decoding
needs, without a dict per log; `Decoder.decode_rows` decodes those rows.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, cast

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address
from web3 import Web3

from core.chain import load_artifact
from core.store.projections import Event

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
        cached = _address_cache[raw_hex40] = to_checksum_address("0x" + raw_hex40)
    return cached


def _word_expr(abi_type: str, word: str) -> str:
    """Python source decoding one 32-byte word, given `word`: the source of a 64-hex-digit string
    (int() takes the "0x" of a whole topic too, so topics need no slicing for numbers)."""
    if abi_type == "address":
        return f"_address({word}[-40:])"
    if abi_type == "bool":
        return f"({word}[-1] != '0')"
    if abi_type.startswith("uint"):
        return f"int({word}, 16)"
    if abi_type.startswith("int"):
        return f"_signed(int({word}, 16))"
    if abi_type == "bytes32":
        return f"('0x' + {word}[-64:])"
    raise ValueError(f"no fast decoder for {abi_type}")


def _address(body: str) -> str:
    return _address_cache.get(body) or checksum(body)


def _signed(v: int) -> int:
    return v - (1 << 256) if v >= 1 << 255 else v


def _is_static_word(abi_type: str) -> bool:
    return abi_type in ("address", "bool", "bytes32") or abi_type.startswith(("uint", "int"))


#: (topics, data, blockHash, blockNumber, transactionHash, logIndex, topics joined by commas) -> Event:
#: one per event of our ABIs, the hex fields as the node spelt them.
Maker = Callable[[list[str], str, str, str, str, str, str], Event]


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
        "_address": _address,
        "_signed": _signed,
        "_slow": slow,
        "_new": tuple.__new__,
        "_Event": Event,
    }
    source = (
        "def make(t, d, bh, bn, th, li, joined):\n"
        f"    return _new(_Event, (int(bn, 16), bh, th, int(li, 16), {contract!r}, {name!r}, joined, d, {args}))\n"
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


class Decoder:
    """topic0 + emitting address -> decoded Event, for every event in our contracts' ABIs."""

    def __init__(self, addresses: dict[str, str]) -> None:
        self._by_address: dict[str, dict[str, Maker]] = {}
        for contract, address in addresses.items():
            if contract not in INDEXED_CONTRACTS:
                continue
            specs: dict[str, Maker] = {}
            for item in load_artifact(contract)["abi"]:
                if item["type"] != "event":
                    continue
                signature = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
                topic0 = "0x" + Web3.keccak(text=signature).hex().removeprefix("0x")
                indexed = [(i["name"], i["type"]) for i in item["inputs"] if i["indexed"]]
                data = [(i["name"], i["type"]) for i in item["inputs"] if not i["indexed"]]
                slow = (
                    None
                    if all(_is_static_word(t) for _, t in data)
                    else _abi_decoder([n for n, _ in data], [t for _, t in data])
                )
                specs[topic0] = _compile(contract, item["name"], indexed, data, slow)
            self._by_address[address.lower()] = specs
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
            log["blockNumber"],
            log["transactionHash"],
            log["logIndex"],
            ",".join(topics),
        )

    def decode_rows(self, rows: Iterable[LogRow]) -> list[Event]:
        """Decode the rows of `log_rows` (the same as `decode_all` on the parsed logs)."""
        lookup, by_address = self._lookup, self._by_address
        out: list[Event] = []
        append = out.append
        for address, quoted_topics, data, block_hash, block_number, tx_hash, log_index in rows:
            specs = lookup.get(address) or by_address.get(address.lower())
            if specs is None or not quoted_topics:
                continue
            joined = quoted_topics.replace('"', "")
            topics = joined.split(",")
            make = specs.get(topics[0])
            if make is not None:
                append(make(topics, data, block_hash, block_number, tx_hash, log_index, joined))
        return out

    def decode_all(self, logs: Iterable[dict[str, Any]]) -> list[Event]:
        decode = self.decode
        return [ev for log in logs if not log.get("removed") and (ev := decode(log)) is not None]


# ---- eth_getLogs replies straight to rows ---------------------------------------------------------

#: (address, topics as in the reply: quoted and comma-separated, data, blockHash, blockNumber,
#: transactionHash, logIndex): what decoding needs from a log, as the node spelt it.
LogRow = tuple[str, str, str, str, str, str, str]

_HEX = "0x[0-9a-fA-F]*"
_WORD = "0x[0-9a-fA-F]{64}"
_FIELDS = {  # JSON value patterns; the seven fields of a LogRow are captured under their names
    "address": '"(?P<address>0x[0-9a-fA-F]{40})"',
    "topics": f'\\[(?P<topics>(?:"{_WORD}"(?:,"{_WORD}")*)?)\\]',
    "data": f'"(?P<data>{_HEX})"',
    "blockHash": f'"(?P<blockHash>{_WORD})"',
    "blockNumber": f'"(?P<blockNumber>{_HEX})"',
    "transactionHash": f'"(?P<transactionHash>{_WORD})"',
    "logIndex": f'"(?P<logIndex>{_HEX})"',
    "transactionIndex": f'"{_HEX}"',
    "blockTimestamp": f'"{_HEX}"',
    "removed": "false",
}
_ROW_FIELDS = ("address", "topics", "data", "blockHash", "blockNumber", "transactionHash", "logIndex")


class _Shape(NamedTuple):
    """How to read the logs of one key order: `log` matches one log object and captures its row
    fields; `order[i]` is the group (1-based) of LogRow field i."""

    log: re.Pattern[str]
    order: tuple[int, ...]


_shapes: dict[tuple[str, ...], _Shape | None] = {}


def _shape(keys: tuple[str, ...]) -> _Shape | None:
    """The pattern for compact log objects with exactly these keys in this order (nodes differ in
    order, and each keeps its own), or None if a key is unknown or a row field is missing."""
    if keys not in _shapes:
        shape = None
        if set(_ROW_FIELDS) <= set(keys) <= set(_FIELDS) and len(set(keys)) == len(keys):
            found = [k for k in keys if k in _ROW_FIELDS]
            shape = _Shape(
                re.compile("\\{" + ",".join(f'"{k}":{_FIELDS[k]}' for k in keys) + "\\}"),
                tuple(1 + found.index(k) for k in _ROW_FIELDS),
            )
        _shapes[keys] = shape
    return _shapes[keys]


def log_rows(body: bytes) -> list[LogRow] | None:
    """The logs of an eth_getLogs reply as rows, read by one regex pass that runs in C instead of
    building a dict per log: parsing the reply is much of a backfill's CPU besides SQLite. Only for
    the compact shape nodes send (no whitespace, hex values, no removed logs, one key order); the
    result array must be exactly the logs matched, and the reply around it must parse as a JSON-RPC
    result, else None and the caller parses the JSON."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return None
    marker = '"result":['
    start = text.find(marker)
    if start < 0:
        return None
    first = last = start + len(marker)
    rows: list[LogRow] = []
    if text.startswith("{", first):
        try:
            sample, _ = json.JSONDecoder().raw_decode(text, first)
        except json.JSONDecodeError:
            return None
        shape = _shape(tuple(sample)) if isinstance(sample, dict) else None
        last = text.rfind("]")  # the array's end, or past it (then what lies between is not a comma)
        if shape is None or last < first:
            return None
        # One pass in C: split around every log gives [before, 7 fields, between, 7 fields, ..., after].
        # The array is exactly the logs found when nothing precedes or follows them and only a single
        # comma separates each from the next (a removed, pending, cut-off or differently ordered log,
        # or anything else, would be left in one of those).
        parts = shape.log.split(text[first:last])
        width = len(_ROW_FIELDS) + 1
        n = len(parts) // width
        if parts[0] or parts[-1] or parts[width:-1:width].count(",") != n - 1:
            return None
        rows = cast(list[LogRow], list(zip(*(parts[i::width] for i in shape.order), strict=True)))
    if not text.startswith("]", last):
        return None
    # The reply around the array, with a one-off token in the array's place: a JSON-RPC result whose
    # own "result" (not a nested one, not a duplicate key's) is the array read (an error reply has none).
    token = secrets.token_hex(8)
    try:
        envelope = json.loads(f'{text[:first]}"{token}"{text[last:]}')
    except json.JSONDecodeError:
        return None
    if isinstance(envelope, list) and len(envelope) == 1:
        envelope = envelope[0]
    if not isinstance(envelope, dict) or envelope.get("result") != [token] or envelope.get("error") is not None:
        return None
    return rows


def in_chain_order(events: list[Event]) -> bool:
    """Strictly increasing (block, log index): what any honest eth_getLogs reply gives. A repeated or
    misplaced log would apply an event twice (credits counted twice) or out of order."""
    return all((a.block_number, a.log_index) < (b.block_number, b.log_index) for a, b in itertools.pairwise(events))
