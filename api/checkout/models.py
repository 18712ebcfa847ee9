"""The checkout feature's request and response models (/api/acp): checkout sessions and orders, providers
and the catalogue, the provider's signed order moves and deliverables."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from api.models import Amount, CanonicalJson, Strict, Wallet
from core import egress
from core.checkout import orders, rules

# ---- request models -----------------------------------------------------------------------------


def _absent(schema: dict[str, Any]) -> None:
    """An optional field that may be absent but not null: no `default: null` in its schema."""
    schema.pop("default", None)


class ItemRef(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")]


class LineItemRequest(Strict):
    item: ItemRef
    quantity: Annotated[int, Field(ge=1, le=rules.MAX_QUANTITY)] = 1
    id: Annotated[str, Field(max_length=64)] | None = None  # an ACP line item id: ignored (ours are li_<n>)


#: rules.EMAIL_RE, its negated classes also free of control characters (the rule of every string).
_EMAIL_SCHEMA_PATTERN = "^" + rules.EMAIL_RE.pattern.replace(r"[^@\s]", r"[^@\s\x00-\x1f\x7f-\x9f]") + "$"


class BuyerRequest(Strict):
    email: Annotated[str, Field(max_length=254, json_schema_extra={"pattern": _EMAIL_SCHEMA_PATTERN})] | None = None
    first_name: Annotated[str, Field(max_length=100)] | None = None
    last_name: Annotated[str, Field(max_length=100)] | None = None


class SessionCreateRequest(Strict):
    line_items: Annotated[list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS)]
    buyer: BuyerRequest | None = None
    webhook_url: (
        Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": egress.URL_PATTERN})] | None
    ) = None
    currency: Annotated[str, Field(pattern=r"^usdc$")] | None = None
    capabilities: dict[str, Any] | None = None  # accepted (ACP), not used


class SessionUpdateRequest(Strict):
    """At least one of the two (400 empty_update); neither may be null."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, json_schema_extra={"minProperties": 1})
    line_items: Annotated[
        list[LineItemRequest], Field(min_length=1, max_length=rules.MAX_LINE_ITEMS, json_schema_extra=_absent)
    ] = None  # type: ignore[assignment]
    buyer: Annotated[BuyerRequest, Field(json_schema_extra=_absent)] = None  # type: ignore[assignment]


class Credential(BaseModel):
    token: Annotated[
        str,
        Field(
            pattern=r"^0x[0-9a-fA-F]{40}$",
            description="the paying 0x address (it approved the gateway for the total)",
        ),
    ]
    signature: Annotated[
        str,
        Field(
            pattern=r"^0x[0-9a-fA-F]{130}$",
            description="EIP-712 signature by `token` of the session's Funding typed data (core.checkout.rules."
            "checkout_typed_data; the session's payment handler config gives it as typed_data, message.buyer to fill)",
        ),
    ]


class Instrument(BaseModel):
    credential: Credential


class PaymentData(BaseModel):
    handler_id: Literal["service-usdc-commerce-v1"]
    instrument: Instrument


class CompleteBuyer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: Annotated[str, Field(max_length=254)] | None = None
    first_name: Annotated[str, Field(max_length=254)] | None = None
    last_name: Annotated[str, Field(max_length=254)] | None = None


class SessionCompleteRequest(BaseModel):
    """Documentation of the complete body (it is validated by hand for the spec's exact error codes:
    core.checkout.funding.parse_payment)."""

    buyer: CompleteBuyer | None = None
    payment_data: PaymentData


class SessionResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    currency: str
    line_items: list[dict[str, Any]]
    totals: list[dict[str, Any]]
    messages: list[dict[str, Any]]


class AuditChainEntry(BaseModel):
    audit_id: int
    seq: int
    prev_hash: str
    chain_hash: str
    payload: dict[str, Any]


class AuditChain(BaseModel):
    """The order's audit trail in the spec's shape: {entries: [...]}, oldest first."""

    entries: list[AuditChainEntry]


class OrderResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    service_job_id: str
    settlement_tx_hash: str
    audit_chain: AuditChain


# ---- providers and the catalogue -----------------------------------------------------------------

_ADDRESS = r"^0x[0-9a-fA-F]{40}$"


class ProviderLinkRequest(Strict):
    agent_id: Wallet
    self_wallet: Annotated[str, Field(pattern=_ADDRESS)]
    owner_address: Annotated[str, Field(pattern=_ADDRESS)]
    referrer_token_id: Annotated[int, Field(ge=1)] | None = None
    timestamp: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{130}$")]


class ItemCreateRequest(Strict):
    item_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")] | None = None
    title: Annotated[str, Field(min_length=1, max_length=200)]
    tier: Annotated[str, Field(pattern=r"^(standard|rush|deep)$")]
    price: Amount | None = None
    agent_id: Wallet | None = None


class ItemsQuery(Strict):
    provider: Wallet | None = None
    after: Annotated[str, Field(max_length=64)] | None = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None


class ProviderWebhookRequest(Strict):
    url: Annotated[str, Field(min_length=1, max_length=2048, description="http(s) URL; private targets refused")]


class ProviderOrdersQuery(Strict):
    status: (
        Annotated[str, Field(pattern=r"^(created|acknowledged|in_progress|completed|released|failed|disputed)$")] | None
    ) = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$", description="1-100, default 50")] | None = None
    cursor: Annotated[str, Field(pattern=r"^[0-9]{1,19}$", description="next_cursor of the previous page")] | None = (
        None
    )


class ProviderWebhookResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agent_id: str
    webhook_url: str | None
    webhook_secret: Annotated[
        str | None, Field(description="HMAC key of the webhooks; shown once, in the answer that set it")
    ] = None


class ProviderOrder(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    service_job_id: str
    amount: int
    deadline: int


class ProviderOrderList(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: list[ProviderOrder]
    has_more: bool
    next_cursor: str | None


class ProviderResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    agent_id: str
    agent_uuid: str
    self_wallet: str
    owner_address: str
    token_id: int | None
    referrer_token_id: int | None
    mint_tx: str | None
    linked_at: str


class ItemResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    title: str
    tier: str
    delivery_hours: int
    price: Any
    unit_amount: int
    currency: str
    provider: dict[str, Any]


class ItemListResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    data: list[ItemResponse]
    has_more: bool


# ---- the provider's side of an order ------------------------------------------------------------

SIGNATURE_PATTERN = r"^0x[0-9a-fA-F]{130}$"
#: An upload's signature travels in headers, so it is checked before the body is read.
TIMESTAMP_HEADER = "X-Provider-Timestamp"
SIGNATURE_HEADER = "X-Provider-Signature"
DIGEST_HEADER = "X-Content-SHA256"


class Signed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    timestamp: StrictInt = Field(description="unix seconds; within 300 s of the server's clock")
    signature: Annotated[StrictStr, Field(pattern=SIGNATURE_PATTERN, description="EIP-191 signature, 65 bytes hex")]


class FailRequest(Signed):
    reason: (
        Annotated[
            StrictStr,
            Field(
                min_length=1,
                max_length=orders.MAX_REASON_CHARS,
                description="public (history, audit log, webhooks); signed: 'fail:{order_id}:{timestamp}:{reason}'",
            ),
        ]
        | None
    ) = None


class CompleteRequest(Signed):
    cid: Annotated[StrictStr, Field(min_length=1, max_length=200, description="the deliverable's CID")]


class DeliverableJson(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    content: dict[str, Any] = Field(description="stored as its RFC 8785 canonical JSON bytes")
    # Over HTTP the signature travels in headers (checked before the body is read); a transport without
    # headers (an MCP tool call, whose arguments arrive whole) carries the same two values here.
    timestamp: StrictInt | None = Field(None, description=f"MCP only (over HTTP: the {TIMESTAMP_HEADER} header)")
    signature: Annotated[
        StrictStr | None,
        Field(pattern=SIGNATURE_PATTERN, description=f"MCP only (over HTTP: the {SIGNATURE_HEADER} header)"),
    ] = None


class OrderMove(BaseModel):
    id: str
    status: str
    from_state: str
    audit_id: int


class DeliverableResponse(BaseModel):
    cid: str
    size: int
    url: str


class CompleteResponse(BaseModel):
    txHash: str
    jobId: str
    status: str


class DeliverableForm(BaseModel):
    """The multipart/form-data fields of a deliverable upload (api.provider_orders reads them)."""

    model_config = ConfigDict(extra="forbid")
    file: Annotated[bytes, Field(description="the deliverable's bytes, at most 32 MiB")]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


class DeliverableContent(BaseModel):
    """A JSON deliverable as api.provider_orders takes it: content with an RFC 8785 form."""

    model_config = ConfigDict(extra="forbid")
    content: dict[str, CanonicalJson]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


#: The CIDs this service issues (core.ipfs.cid_of: CIDv1, base32, sha2-256; raw leaves or dag-pb),
#: exactly: each string of this shape decodes as one (the last characters carry no padding bits).
ISSUED_CID_PATTERN = r"^(bafkrei|bafybei)[a-h][a-z2-7]{50}[aeimquy4]$"


class CompleteAttestation(BaseModel):
    """The provider's completion (api.provider_orders reads it): the deliverable's CID, signed."""

    model_config = ConfigDict(extra="forbid")
    cid: Annotated[str, Field(pattern=ISSUED_CID_PATTERN, description="the deliverable's CID")]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]
