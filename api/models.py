"""Request parsing every route module shares (pydantic, strict: unknown fields are refused): the
field types (amounts, wallet ids, niches) and turning a validation failure into a 400 in the shared
error shape whose `param` names the field.

Amounts arrive as JSON numbers parsed to Decimal (never float) and leave validation as integers
of micro-USDC.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, TypeVar, Union, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError, core_schema
from typing_extensions import TypeAliasType

from api.errors import ApiError
from core.jsontext import TEXT_PATTERN, decode_json

__all__ = [
    "MAX_SAFE_INTEGER",
    "TEXT_PATTERN",
    "WALLET_PATTERN",
    "Amount",
    "AmountOrZero",
    "CanonicalJson",
    "FreeJson",
    "JsonValue",
    "Niche",
    "Strict",
    "UsdcOut",
    "Wallet",
    "decode_json",
    "parse_body",
    "parse_query",
    "validate",
    "validation_error",
]
from core.money import MAX_AMOUNT_WHOLE, AmountError, parse_usdc

WALLET_PATTERN = r"^agl_[0-9a-f]{12}$"

#: USDC in an answer: a JSON number (api.http.encode writes Decimals as numbers).
UsdcOut = Annotated[Decimal, WithJsonSchema({"type": "number", "description": "USDC, at most 6 decimals"})]


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
_AMOUNT_SCHEMA = {
    "type": "number",
    "multipleOf": 0.000001,
    "maximum": MAX_AMOUNT_WHOLE,
    "description": "USDC, at most 6 decimals (a JSON number, never a string)",
}
Amount = Annotated[
    int,
    BeforeValidator(_amount),
    WithJsonSchema({**_AMOUNT_SCHEMA, "exclusiveMinimum": 0}),
]
#: The same, zero allowed.
AmountOrZero = Annotated[int, BeforeValidator(_amount_or_zero), WithJsonSchema({**_AMOUNT_SCHEMA, "minimum": 0})]
Wallet = Annotated[str, Field(pattern=WALLET_PATTERN)]
#: A niche: one of the specialty slugs or any 1-40 of [a-z0-9_].
Niche = Annotated[str, Field(pattern=r"^[a-z0-9_]{1,40}$")]

#: The largest magnitude of a number in free JSON: every JSON parser reads it exactly (RFC 7493,
#: I-JSON). A larger one (2^256, 1E+999999999) would be echoed as text other parsers turn into a
#: rounded or infinite value, so it is refused (400 invalid_number).
MAX_SAFE_INTEGER = 2**53 - 1
_SafeNumber = Annotated[
    int | Decimal, WithJsonSchema({"type": "number", "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER})
]
#: The recursive type /api/schema shows for free JSON (FreeJson validates it).
JsonValue = TypeAliasType(  # type: ignore[misc]  # mypy cannot follow a recursive TypeAliasType; pydantic can
    "JsonValue",
    Union[bool, _SafeNumber, str, list["JsonValue"], dict[str, "JsonValue"], None],  # type: ignore[misc]  # noqa: UP007
)
_JSON_ALIAS_SCHEMA = TypeAdapter(cast(Any, JsonValue)).core_schema
_SafeInteger = Annotated[
    int, WithJsonSchema({"type": "integer", "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER})
]
#: JSON that has an RFC 8785 form as core.audit.canonical writes it: no fractions, integers within
#: +-(2^53 - 1) (what a JSON deliverable may hold).
CanonicalJson = TypeAliasType(  # type: ignore[misc]  # as JsonValue
    "CanonicalJson",
    Union[bool, _SafeInteger, str, list["CanonicalJson"], dict[str, "CanonicalJson"], None],  # type: ignore[misc]  # noqa: UP007
)


def _numbers_in_range(value: Any, path: str = "") -> None:
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            where = f" at {path}" if path else ""
            raise PydanticCustomError("invalid_number", f"a number{where} is beyond +-(2^53 - 1)")
    elif isinstance(value, dict):
        for k, v in value.items():
            _numbers_in_range(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _numbers_in_range(v, f"{path}[{i}]")


def _free_json(value: Any) -> Any:
    _numbers_in_range(value)
    return value


class _FreeJson:
    """Validated as any decoded JSON with a walk of its numbers (one error naming where, not a union's
    many); described by the recursive JsonValue schema."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(_free_json, core_schema.any_schema())

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        return handler(_JSON_ALIAS_SCHEMA)


#: Free JSON (a memory value): any JSON value whose numbers lie within +-MAX_SAFE_INTEGER; its
#: strings obey the rule of every request string (core.jsontext, checked on the whole body first).
FreeJson = Annotated[Any, _FreeJson]


class Strict(BaseModel):
    """A request model: strict types, unknown fields refused, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


M = TypeVar("M", bound=BaseModel)

_CODES = {
    "extra_forbidden": "unknown_field",
    "missing": "missing_field",
    "invalid_amount": "invalid_amount",
    "invalid_number": "invalid_number",
}


def validation_error(exc: ValidationError) -> ApiError:
    first = exc.errors(include_url=False)[0]
    param = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".") or None
    code = _CODES.get(first["type"], "invalid_field")
    message = f"{param}: {first['msg']}" if param else str(first["msg"])
    return ApiError(400, code, message, param=param)


def validate(model: type[M], data: Any) -> M:
    """`data` (decoded JSON) as a `model`; a 400 naming the first invalid field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc


def parse_body(model: type[M], body: bytes) -> M:
    return validate(model, decode_json(body))


def parse_query(model: type[M], query: dict[str, str]) -> M:
    try:
        return model.model_validate(query)
    except ValidationError as exc:
        raise validation_error(exc) from exc
