"""Request parsing every route module shares (pydantic, strict: unknown fields are refused): the
field types (amounts, wallet ids, niches) and turning a validation failure into a 400 in the shared
error shape whose `param` names the field.

Amounts arrive as JSON numbers parsed to Decimal (never float) and leave validation as integers
of micro-USDC.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from api.errors import ApiError
from core.jsontext import decode_json

__all__ = [
    "WALLET_PATTERN",
    "Amount",
    "AmountOrZero",
    "Niche",
    "Strict",
    "Wallet",
    "decode_json",
    "parse_body",
    "parse_query",
    "validate",
    "validation_error",
]
from core.money import AmountError, parse_usdc

WALLET_PATTERN = r"^agl_[0-9a-f]{12}$"


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


class Strict(BaseModel):
    """A request model: strict types, unknown fields refused, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


M = TypeVar("M", bound=BaseModel)

_CODES = {"extra_forbidden": "unknown_field", "missing": "missing_field"}


def validation_error(exc: ValidationError) -> ApiError:
    first = exc.errors(include_url=False)[0]
    param = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".") or None
    code = _CODES.get(first["type"], "invalid_amount" if first["type"] == "invalid_amount" else "invalid_field")
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
