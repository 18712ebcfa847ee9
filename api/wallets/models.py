"""The wallet API's request models (strict: unknown fields are refused) and response models (they
describe what the handlers answer, for /api/schema and the MCP tools' schemas)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from api.models import (
    WALLET_PATTERN,
    Amount,
    AmountOrZero,
    FreeJson,
    Niche,
    Strict,
    UsdcOut,
    Wallet,
    decode_json,
    validate,
)
from api.operation import TOOLSETS_PATTERN
from core.keys import KEY_PATTERN
from core.money import AmountError, parse_usdc
from core.wallets import EMAIL_PATTERN, SPECIALTIES

#: Longest `source` of an earning.
SOURCE_MAX_LEN = 200
#: A memory key (core.wallets.check_key); the service's brain: and run: keys are refused apart.
MEMORY_KEY_PATTERN = r"^[\x20-\x7e]{1,256}$"

# ---- requests -------------------------------------------------------------------------------------


class RegisterRequest(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    specialty: Annotated[str, Field(min_length=1, max_length=64, json_schema_extra={"enum": list(SPECIALTIES)})]
    referralCode: Annotated[str, Field(min_length=8, max_length=8)] | None = None


class EarnRequest(Strict):
    agentId: Wallet
    amount: Amount
    source: Annotated[str, Field(min_length=1, max_length=SOURCE_MAX_LEN, description="where the earning came from")]


class SpendRequest(Strict):
    agentId: Wallet
    amount: Amount
    destination: Annotated[str, Field(min_length=1, max_length=200)]


class EarnBatchRequest(Strict):
    """Several earnings credited atomically (all or none), each exactly as POST /earn would."""

    payments: Annotated[list[EarnRequest], Field(min_length=1, max_length=100)]


class CompoundRequest(Strict):
    agentId: Wallet
    reinvestPercent: Annotated[int, Field(ge=1, le=100)] = 20


class MemoryWriteRequest(Strict):
    """Upsert one memory key. Limits (checked by core.wallets.put_memory): key 1-256 printable
    ASCII, not starting with brain: or run: (400 invalid_key / reserved_key); value any JSON of at
    most 16 KiB as compact JSON (413 value_too_large) whose numbers lie within +-(2^53 - 1) (400
    invalid_number: a larger one, 2^256 or 1E+999999999, reads back rounded or infinite elsewhere);
    10,000 keys per agent (409 memory_full)."""

    agentId: Wallet
    key: Annotated[str, Field(json_schema_extra={"pattern": MEMORY_KEY_PATTERN})]
    value: FreeJson


class MemoryQuery(Strict):
    """`query` matches keys by substring, case-sensitively; results ordered by key; `cursor` is
    the last key of the previous page (the response's nextCursor)."""

    agentId: Wallet
    query: Annotated[str, Field(max_length=256)] | None = None
    limit: Annotated[int, Field(ge=1, le=200, strict=False)] = 50
    cursor: Annotated[str, Field(min_length=1, max_length=256)] | None = None


class BrainUpdateRequest(Strict):
    """revenue only with a sale (400 invalid_field otherwise; default: the price)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={
            "if": {"properties": {"action": {"const": "listed"}}, "required": ["action"]},
            "then": {"properties": {"revenue": {"type": "null"}}},
        },
    )
    agentId: Wallet
    action: Literal["listed", "sold"]
    niche: Niche
    price: AmountOrZero
    revenue: AmountOrZero | None = None
    name: Annotated[str, Field(min_length=1, max_length=100, description="the product, for topProducts")] | None = None


class RunRequest(Strict):
    agentId: Wallet
    success: bool
    niche: Niche | None = None


class KeyRequest(Strict):
    email: Annotated[str, Field(min_length=3, max_length=254, json_schema_extra={"pattern": f"^{EMAIL_PATTERN}$"})]
    mcpToolsets: Annotated[
        str | None,
        Field(
            max_length=200,
            pattern=TOOLSETS_PATTERN,
            description="MCP toolsets the key's sessions get by default, comma-separated",
        ),
    ] = None


class AgentQuery(Strict):
    agentId: Wallet


_WALLET_RE = re.compile(WALLET_PATTERN[1:-1])
_EARN_FIELDS = frozenset(EarnRequest.model_fields)


def parse_earn(body: bytes, decoded: dict[str, Any] | None = None) -> tuple[str, int, str]:
    """(agentId, amount in micro-USDC, source) of an EarnRequest body (`decoded`: the body as
    decode_json already read it). The hot path of POST /earn: a well-formed body is checked here
    directly (the same rules as EarnRequest, which the tests hold equal); anything else goes
    through EarnRequest, so errors keep the model's shape."""
    data = decode_json(body) if decoded is None else decoded
    wallet = data.get("agentId")
    amount = data.get("amount")
    source = data.get("source")
    if (
        type(wallet) is str
        and _WALLET_RE.fullmatch(wallet)
        and type(amount) in (int, Decimal)
        and type(source) is str
        and 0 < len(source) <= SOURCE_MAX_LEN
        and _EARN_FIELDS.issuperset(data)
    ):
        try:
            return wallet, parse_usdc(amount), source
        except AmountError:
            pass  # the model words the error
    req = validate(EarnRequest, data)
    return req.agentId, req.amount, req.source


# ---- responses (built by the handlers; these only describe them) -----------------------------------

USDC = UsdcOut  # the short name these models use
WalletId = Annotated[str, Field(pattern=WALLET_PATTERN, description="the agent's wallet id")]


def _no_default(schema: dict[str, Any]) -> None:
    """For an optional field that is absent rather than null: no `default: null` in its schema."""
    schema.pop("default", None)


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Agent(_Response):
    id: Annotated[str, Field(description="the agent's UUID", json_schema_extra={"format": "uuid"})]
    wallet: WalletId
    name: str
    specialty: str
    balance: USDC
    referral_code: Annotated[str, Field(min_length=8, max_length=8)]


class RegisterResponse(_Response):
    success: Literal[True]
    agent: Agent
    api_key: Annotated[
        str | SkipJsonSchema[None],
        Field(
            pattern=KEY_PATTERN,
            description="only when registering without a key: the new account's key, shown once",
            json_schema_extra=_no_default,
        ),
    ] = None


class EarnResponse(_Response):
    success: Literal[True]
    balance: USDC
    toll: Annotated[USDC, Field(description="the service's cut (same as serviceCut)")]
    net: Annotated[USDC, Field(description="what the agent was credited: ownerCut + agentCut")]
    ownerCut: USDC
    agentCut: USDC
    serviceCut: USDC
    referralCut: Annotated[USDC, Field(description="credited to the referrer's owner; 0 without a referrer")]
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: Annotated[int, Field(description="the ledger row of this earning")]
    message: str


class SpendResponse(_Response):
    success: Literal[True]
    spent: USDC
    destination: str
    balance: USDC
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: int


class BalanceResponse(_Response):
    balance: USDC
    ownerBalance: USDC
    agentSelfBalance: USDC
    reinvested: Annotated[USDC, Field(description="moved aside by POST /api/agents/compound")]
    totalEarned: Annotated[USDC, Field(description="reportedEarned + settledEarned")]
    reportedEarned: Annotated[USDC, Field(description="earnings reported with /earn, referral credits included")]
    settledEarned: Annotated[
        USDC, Field(description="escrow payouts settled on-chain to the agent as a provider (paid out, not in balance)")
    ]
    totalTransactions: Annotated[int, Field(ge=0)]
    memoryEntries: Annotated[int, Field(ge=0)]


class IdentityResponse(_Response):
    uuid: Annotated[str, Field(json_schema_extra={"format": "uuid"})]
    wallet: WalletId


class EarnBatchResponse(_Response):
    success: Literal[True]
    count: Annotated[int, Field(ge=1, le=100)]
    results: list[EarnResponse]


class CompoundResponse(_Response):
    success: Literal[True]
    balance: USDC
    reinvested: USDC
    moved: Annotated[USDC, Field(description="moved from the spendable balance into reinvested by this call")]
    ownerBalance: USDC
    agentSelfBalance: USDC
    transactionId: Annotated[int | None, Field(description="the ledger row; null when nothing moved")]


class Memory(_Response):
    key: str
    value: Annotated[Any, Field(description="any JSON value, as stored")]
    createdAt: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    updatedAt: Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class MemoryWriteResponse(_Response):
    success: Literal[True]
    memory: Memory


class MemoryListResponse(_Response):
    memories: list[Memory]
    nextCursor: Annotated[str | None, Field(description="pass as cursor for the next page; null on the last")]


class NicheStats(_Response):
    listed: Annotated[int, Field(ge=0)]
    sold: Annotated[int, Field(ge=0)]
    revenue: USDC
    winRate: Annotated[float, Field(ge=0, le=1)]


class PriceStats(_Response):
    listed: Annotated[int, Field(ge=0)]
    sold: Annotated[int, Field(ge=0)]
    revenue: USDC


class TopProduct(_Response):
    name: str
    niche: str
    price: Annotated[USDC, Field(description="its latest listed or sold price")]
    sold: Annotated[int, Field(ge=1)]


class Brain(_Response):
    niches: dict[str, NicheStats]
    prices: Annotated[
        dict[str, PriceStats],
        Field(description='listings, sales and revenue at each price; the key is the price in USDC, e.g. "19.99"'),
    ]
    topProducts: Annotated[list[TopProduct], Field(max_length=5, description="named products, most sold first")]
    totalListed: Annotated[int, Field(ge=0)]
    totalSold: Annotated[int, Field(ge=0)]
    totalRevenue: USDC
    winRate: Annotated[float, Field(ge=0, le=1)]
    strategyNote: str
    lastUpdated: Annotated[str | None, Field(json_schema_extra={"format": "date-time"})]


class BrainResponse(_Response):
    brain: Brain
    weights: Annotated[dict[str, float], Field(description="smoothed win rates per niche, summing to 1")]


class BrainUpdateResponse(BrainResponse):
    success: Literal[True]


class RunCounts(_Response):
    success: Annotated[int, Field(ge=0)]
    failure: Annotated[int, Field(ge=0)]


class RunResponse(_Response):
    success: Literal[True]
    key: Annotated[str, Field(description="run:YYYY-MM-DD:<niche or general>")]
    runs: RunCounts


class NetworkResponse(_Response):
    totalAgents: Annotated[int, Field(ge=0)]
    totalEarned: USDC
    totalTolls: USDC


class KeyResponse(_Response):
    success: Literal[True]
    api_key: Annotated[str, Field(pattern=KEY_PATTERN, description="shown once; only its hash is stored")]
    accountId: Annotated[str, Field(json_schema_extra={"format": "uuid"})]
    email: str
