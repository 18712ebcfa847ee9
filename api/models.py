"""Request models of the wallet API (pydantic, strict: unknown fields are refused).

Amounts arrive as JSON numbers parsed to Decimal (never float) and leave validation as integers
of micro-USDC. `parse_body` turns any validation failure into a 400 in the shared error shape
whose `param` names the field.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from api.errors import ApiError
from core.money import AmountError, parse_usdc

WALLET_PATTERN = r"^agl_[0-9a-f]{12}$"
#: Longest `source` of an earning.
SOURCE_MAX_LEN = 200


def _amount(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PydanticCustomError("invalid_amount", "amount must be a JSON number of USDC, e.g. 250 or 12.5")
    try:
        return parse_usdc(value)
    except AmountError as exc:
        raise PydanticCustomError("invalid_amount", str(exc)) from exc


def _amount_or_zero(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PydanticCustomError("invalid_amount", "amount must be a JSON number of USDC, e.g. 250 or 12.5")
    try:
        return parse_usdc(value, allow_zero=True)
    except AmountError as exc:
        raise PydanticCustomError("invalid_amount", str(exc)) from exc


#: A positive USDC amount with at most 6 decimals, as micro-USDC units.
#: Decimal USDC in JSON (at most 6 decimals), micro-USDC int once validated.
Amount = Annotated[
    int,
    BeforeValidator(_amount),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "description": "USDC, at most 6 decimals"}),
]
#: The same, zero allowed.
AmountOrZero = Annotated[int, BeforeValidator(_amount_or_zero)]
Wallet = Annotated[str, Field(pattern=WALLET_PATTERN)]
#: A niche: one of the specialty slugs or any 1-40 of [a-z0-9_].
Niche = Annotated[str, Field(pattern=r"^[a-z0-9_]{1,40}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RegisterRequest(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    specialty: Annotated[str, Field(min_length=1, max_length=64)]
    referralCode: Annotated[str, Field(min_length=8, max_length=8)] | None = None


class EarnRequest(_Strict):
    agentId: Wallet
    amount: Amount
    source: Annotated[str, Field(max_length=SOURCE_MAX_LEN)] | None = None


class SpendRequest(_Strict):
    agentId: Wallet
    amount: Amount
    destination: Annotated[str, Field(min_length=1, max_length=200)]


class EarnBatchRequest(_Strict):
    """Several earnings credited atomically (all or none), each exactly as POST /earn would."""

    payments: Annotated[list[EarnRequest], Field(min_length=1, max_length=100)]


class CompoundRequest(_Strict):
    agentId: Wallet
    reinvestPercent: Annotated[int, Field(ge=1, le=100)] = 20


class MemoryWriteRequest(_Strict):
    """Upsert one memory key. Limits (checked by core.wallets.put_memory): key 1-256 printable
    ASCII, not starting with brain: or run: (400 invalid_key / reserved_key); value any JSON of at
    most 16 KiB as compact JSON (413 value_too_large); 10,000 keys per agent (409 memory_full)."""

    agentId: Wallet
    key: str
    value: Any


class MemoryQuery(_Strict):
    """`query` matches keys by substring, case-sensitively; results ordered by key; `cursor` is
    the last key of the previous page (the response's nextCursor)."""

    agentId: Wallet
    query: Annotated[str, Field(max_length=256)] | None = None
    limit: Annotated[int, Field(ge=1, le=200, strict=False)] = 50
    cursor: Annotated[str, Field(min_length=1, max_length=256)] | None = None


class BrainUpdateRequest(_Strict):
    agentId: Wallet
    action: Literal["listed", "sold"]
    niche: Niche
    price: AmountOrZero
    revenue: AmountOrZero | None = None


class RunRequest(_Strict):
    agentId: Wallet
    success: bool
    niche: Niche | None = None


class KeyRequest(_Strict):
    email: Annotated[str, Field(min_length=3, max_length=254)]


M = TypeVar("M", bound=BaseModel)

_CODES = {"extra_forbidden": "unknown_field", "missing": "missing_field"}


def validation_error(exc: ValidationError) -> ApiError:
    first = exc.errors(include_url=False)[0]
    param = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".") or None
    code = _CODES.get(first["type"], "invalid_amount" if first["type"] == "invalid_amount" else "invalid_field")
    message = f"{param}: {first['msg']}" if param else str(first["msg"])
    return ApiError(400, code, message, param=param)


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


# json.loads(body, parse_float=Decimal, ...) builds a new decoder per call: one, reused, decodes the same.
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_no_constant)


def decode_json(body: bytes) -> dict[str, Any]:
    """A JSON object, numbers with a fraction as Decimal; 400 `invalid_json` otherwise (also when
    nested deeper than MAX_JSON_DEPTH)."""
    if _too_deep(body):
        raise ApiError(400, "invalid_json", f"the request body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        # What json.loads does with bytes: detect UTF-8/16/32 (a BOM included), then decode.
        data = _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ApiError(400, "invalid_json", "the request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "the request body must be a JSON object")
    return data


def validate(model: type[M], data: Any) -> M:
    """`data` (decoded JSON) as a `model`; a 400 naming the first invalid field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc


def parse_body(model: type[M], body: bytes) -> M:
    return validate(model, decode_json(body))


_WALLET_RE = re.compile(WALLET_PATTERN[1:-1])
_EARN_FIELDS = frozenset(EarnRequest.model_fields)


def parse_earn(body: bytes) -> tuple[str, int, str | None]:
    """(agentId, amount in micro-USDC, source) of an EarnRequest body. The hot path of POST /earn:
    a well-formed body is checked here directly (the same rules as EarnRequest, which the tests
    hold equal); anything else goes through EarnRequest, so errors keep the model's shape."""
    data = decode_json(body)
    wallet = data.get("agentId")
    amount = data.get("amount")
    source = data.get("source")
    if (
        type(wallet) is str
        and _WALLET_RE.fullmatch(wallet)
        and type(amount) in (int, Decimal)
        and (source is None or (type(source) is str and len(source) <= SOURCE_MAX_LEN))
        and _EARN_FIELDS.issuperset(data)
    ):
        try:
            return wallet, parse_usdc(amount), source
        except AmountError:
            pass  # the model words the error
    req = validate(EarnRequest, data)
    return req.agentId, req.amount, req.source


def parse_query(model: type[M], query: dict[str, str]) -> M:
    try:
        return model.model_validate(query)
    except ValidationError as exc:
        raise validation_error(exc) from exc


class AgentQuery(_Strict):
    agentId: Wallet
