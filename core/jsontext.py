"""JSON text in and out: request bodies read with Decimal numbers and a depth limit; responses and
views written with Decimals and micro-USDC amounts as exact numbers.

json.dumps would need floats for Decimals; every response goes through `encode`, so it is on the
hot path of every request: exact-type dispatch and cached key encodings.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from core.errors import ServiceError
from core.money import usdc_text


class RawJson(str):
    """Text that is already JSON (a stored memory value, an amount), spliced into the output as is."""


@functools.lru_cache(maxsize=4096)
def _key(k: str) -> str:
    return json.dumps(k)


_SCALARS: dict[type, Callable[[Any], str]] = {
    Decimal: str,
    int: str,
    bool: lambda v: "true" if v else "false",
    type(None): lambda v: "null",
    RawJson: str,
    str: json.dumps,
}


def encode(value: Any) -> str:
    """JSON text in which Decimals are numbers and RawJson is spliced in verbatim."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        return scalar(value)
    if isinstance(value, dict):
        return "{" + ",".join(_key(str(k)) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(encode(v) for v in value) + "]"
    if isinstance(value, Decimal):  # a Decimal subclass
        return str(value)
    return json.dumps(value)


def usdc(units: int) -> RawJson:
    """An amount of micro-USDC as a JSON number of USDC, exactly (no Decimal object made)."""
    return RawJson(usdc_text(units))


# ---- reading request bodies ---------------------------------------------------------------------

#: Deepest nesting of arrays and objects a request body may have. Checked before parsing: the
#: C JSON scanner recurses on the C stack, and a dependency (py_ecc, via web3) raises Python's
#: recursion limit to 100,000 at import, so a body of 100,000 `[` would crash the process.
MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def _too_deep(body: bytes) -> bool:
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    depth = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub(b"", body)):
        depth += 1 if m.group() in (b"[", b"{") else -1
        if depth > MAX_JSON_DEPTH:
            return True
    return False


def too_deep(body: bytes) -> bool:
    """Whether `body` nests arrays and objects deeper than MAX_JSON_DEPTH (check before json.loads
    of untrusted bytes: the C scanner recurses on the C stack)."""
    return _too_deep(body)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


# json.loads(body, parse_float=Decimal, ...) builds a new decoder per call: one, reused, decodes the same.
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_no_constant)


def decode_json(body: bytes) -> dict[str, Any]:
    """A JSON object, numbers with a fraction as Decimal; 400 `invalid_json` otherwise (also when
    nested deeper than MAX_JSON_DEPTH)."""
    if _too_deep(body):
        raise ServiceError(400, "invalid_json", f"the request body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        # What json.loads does with bytes: detect UTF-8/16/32 (a BOM included), then decode.
        data = _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ServiceError(400, "invalid_json", "the request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ServiceError(400, "invalid_json", "the request body must be a JSON object")
    return data
