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


class DuplicateKey(ValueError):
    """An object names one key twice (json would keep the last: `"amount":1, "amount":1000000`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook that refuses a key named twice (DuplicateKey)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKey(k)
            seen.add(k)
    return out


def _number(text: str) -> int | Decimal:
    """A JSON number with a fraction or an exponent: a Decimal, or an int when its value is whole
    (`60.0`, `6e1`): JSON Schema's `integer` is a value, not a spelling, so integer fields take them.
    Past 10**30 it stays a Decimal (no giant int is ever built from a short exponent)."""
    d = Decimal(text)
    if text[-1] != "0" and "e" not in text and "E" not in text:  # 1.5: a fraction ending in a non-zero digit
        return d
    if d.adjusted() < 30 and d == d.to_integral_value():
        return int(d)
    return d


# json.loads(body, parse_float=..., ...) builds a new decoder per call: one, reused, decodes the same.
_DECODER = json.JSONDecoder(parse_float=_number, parse_constant=_no_constant, object_pairs_hook=unique_object)
#: What no string of a request may hold (keys, values, queries, path segments): C0 controls but
#: tab, line feed and carriage return; DEL and the C1 controls; lone surrogates (not Unicode text:
#: they cannot be encoded, stored or hashed). TEXT_PATTERN says the same in JSON Schema (which
#: cannot name a lone surrogate; nothing valid holds one).
_BAD_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"
#: In JSON text those characters come from escapes (\b, \f, \u00XX, \uD8XX) or raw DEL/C1 bytes: a
#: body without any of these holds none and is not walked (one with \u00e9 or an emoji pair is).
_SUSPECT = re.compile(r"[\x7f-\x9f]|\\[bf]|\\u(?:00[0-9a-fA-F]|[dD][89a-fA-F])")


def bad_text(value: str) -> bool:
    """True when `value` holds a character no request string may hold (see _BAD_CHAR)."""
    return _BAD_CHAR.search(value) is not None


def bad_string(value: Any, path: str = "") -> str | None:
    """The path (`a.b[2]`; "" for the top) of the first string, key or value, in decoded JSON `value`
    that holds a character no request string may hold; None when there is none."""
    if isinstance(value, str):
        return path if _BAD_CHAR.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            if _BAD_CHAR.search(k):  # named with the character escaped: the path is echoed in the error
                k = k.encode("unicode_escape").decode()
                return f"{path}.{k}" if path else k
            sub = f"{path}.{k}" if path else k
            found = bad_string(v, sub)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = bad_string(v, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def invalid_string(param: str | None) -> ServiceError:
    """400 `invalid_string`: `param` holds a control character or a lone surrogate."""
    return ServiceError(
        400,
        "invalid_string",
        f"{param or 'the request'}: control characters (but tab, LF and CR) and lone surrogates are not text",
        param=param,
    )


def decode_json(body: bytes) -> dict[str, Any]:
    """A JSON object, numbers with a fraction as Decimal (whole ones, 60.0, as int). One rule for
    every request body, checked before anything reads it: UTF-8 without a BOM (RFC 8259), nested
    at most MAX_JSON_DEPTH levels, no key twice in an object (400 `duplicate_key`), no control
    character (but tab, LF, CR) nor lone surrogate in any key or string (400 `invalid_string`);
    400 `invalid_json` otherwise."""
    if _too_deep(body):
        raise ServiceError(400, "invalid_json", f"the request body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        text = body.decode("utf-8")
        data = _DECODER.decode(text)
    except DuplicateKey as exc:
        raise ServiceError(
            400, "duplicate_key", f"the key {exc.key!r} appears twice in one object", param=exc.key
        ) from None
    except UnicodeDecodeError as exc:
        raise ServiceError(400, "invalid_json", "the request body is not UTF-8") from exc
    except (ValueError, RecursionError) as exc:
        if body.startswith(b"\xef\xbb\xbf"):
            raise ServiceError(400, "invalid_json", "the request body starts with a byte order mark") from exc
        raise ServiceError(400, "invalid_json", "the request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ServiceError(400, "invalid_json", "the request body must be a JSON object")
    if _SUSPECT.search(text):
        where = bad_string(data)
        if where is not None:
            raise invalid_string(where)
    return data
