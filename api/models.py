"""Request models of the wallet API (pydantic, strict: unknown fields are refused).

Amounts arrive as JSON numbers parsed to Decimal (never float) and leave validation as integers
of micro-USDC. `parse_body` turns any validation failure into a 400 in the shared error shape
whose `param` names the field.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from api.errors import ApiError
from core.money import AmountError, parse_usdc

WALLET_PATTERN = r"^agl_[0-9a-f]{12}$"


def _amount(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PydanticCustomError("invalid_amount", "amount must be a JSON number of USDC, e.g. 250 or 12.5")
    try:
        return parse_usdc(value)
    except AmountError as exc:
        raise PydanticCustomError("invalid_amount", str(exc)) from exc


#: A positive USDC amount with at most 6 decimals, as micro-USDC units.
Amount = Annotated[int, BeforeValidator(_amount)]
Wallet = Annotated[str, Field(pattern=WALLET_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RegisterRequest(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    specialty: Annotated[str, Field(min_length=1, max_length=64)]
    referralCode: Annotated[str, Field(min_length=8, max_length=8)] | None = None


class EarnRequest(_Strict):
    agentId: Wallet
    amount: Amount
    source: Annotated[str, Field(max_length=200)] | None = None


class SpendRequest(_Strict):
    agentId: Wallet
    amount: Amount
    destination: Annotated[str, Field(min_length=1, max_length=200)]


M = TypeVar("M", bound=BaseModel)

_CODES = {"extra_forbidden": "unknown_field", "missing": "missing_field"}


def _validation_error(exc: ValidationError) -> ApiError:
    first = exc.errors(include_url=False)[0]
    param = ".".join(str(p) for p in first["loc"]) or None
    code = _CODES.get(first["type"], "invalid_amount" if first["type"] == "invalid_amount" else "invalid_field")
    message = f"{param}: {first['msg']}" if param else str(first["msg"])
    return ApiError(400, code, message, param=param)


def decode_json(body: bytes) -> dict[str, Any]:
    """A JSON object, numbers with a fraction as Decimal; 400 `invalid_json` otherwise."""
    try:
        data = json.loads(body, parse_float=Decimal, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "invalid_json", "the request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "the request body must be a JSON object")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def parse_body(model: type[M], body: bytes) -> M:
    try:
        return model.model_validate(decode_json(body))
    except ValidationError as exc:
        raise _validation_error(exc) from exc


def parse_query(model: type[M], query: dict[str, str]) -> M:
    try:
        return model.model_validate(query)
    except ValidationError as exc:
        raise _validation_error(exc) from exc


class AgentQuery(_Strict):
    agentId: Wallet
