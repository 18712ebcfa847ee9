"""The drop's request and response models (/api/a2a/drop)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from api.models import Amount, Strict, UsdcOut, Wallet
from core import egress
from core.wallets import EMAIL_PATTERN

_ADDRESS = r"^0x[0-9a-fA-F]{40}$"
_TX = r"^0x[0-9a-fA-F]{64}$"
_UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
Address = Annotated[str, Field(pattern=_ADDRESS)]
TxHash = Annotated[str, Field(pattern=_TX)]
ListingId = Annotated[str, Field(pattern=_UUID)]
Signature = Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{130}$")]
Email = Annotated[str, Field(min_length=3, max_length=254, json_schema_extra={"pattern": f"^{EMAIL_PATTERN}$"})]
Timestamp = Annotated[int, Field(ge=0, lt=2**63)]
Uint256 = Annotated[int, Field(ge=0, lt=2**256)]


# ---- request models -------------------------------------------------------------------------------


class MintRequest(Strict):
    agentId: Wallet
    ownerAddress: Address
    selfWallet: Address
    timestamp: Timestamp
    signature: Signature


class StatementRequest(Strict):
    agentId: Wallet
    sellerAddress: Address


class ListRequest(Strict):
    agentId: Wallet
    txHash: TxHash
    askingPriceUsdc: Amount
    acceptOffers: bool
    sellerEmail: Email | None = None


class OfferRequest(Strict):
    listingId: ListingId
    offerPriceUsdc: Amount
    buyerAddress: Address
    nonce: Uint256
    deadline: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Signature
    buyerEmail: Email | None = None


class AcceptRequest(Strict):
    listingId: ListingId
    buyNow: bool
    txHash: TxHash
    buyerEmail: Email | None = None


class CancelRequest(Strict):
    listingId: ListingId
    txHash: TxHash


class ClaimRequest(Strict):
    agentId: Wallet
    ownerAddress: Address
    timestamp: Timestamp
    signature: Signature


class WatchRequest(Strict):
    """Exactly one of email and webhookUrl (400 invalid_field otherwise)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra={
            "oneOf": [
                {"required": ["email"], "properties": {"email": {"type": "string"}}},
                {"required": ["webhookUrl"], "properties": {"webhookUrl": {"type": "string"}}},
            ]
        },
    )
    agentId: Wallet
    email: Email | None = None
    webhookUrl: (
        Annotated[str, Field(min_length=1, max_length=2048, json_schema_extra={"pattern": egress.URL_PATTERN})] | None
    ) = None


class AssetFlagRequest(Strict):
    agentId: Wallet
    cid: Annotated[str, Field(pattern=r"^[a-z2-7]{10,100}$")]
    transferredWithNft: bool


_STATUS = r"^(active|settling|sold|expired|cancelled)$"
#: When the deprecated `state` (of a listing, and the browse filter) goes: `status` is the name.
STATE_REMOVED_IN = "2.0.0"


class BrowseQuery(Strict):
    listingId: ListingId | None = None
    agentId: Wallet | None = None
    status: Annotated[str, Field(pattern=_STATUS, description="default active")] | None = None
    state: (
        Annotated[
            str,
            Field(
                pattern=_STATUS,
                description=f"deprecated name of status (removed in API {STATE_REMOVED_IN})",
                json_schema_extra={"deprecated": True},
            ),
        ]
        | None
    ) = None
    page: Annotated[str, Field(pattern=r"^[1-9][0-9]{0,5}$")] | None = None
    perPage: Annotated[str, Field(pattern=r"^[1-9][0-9]{0,2}$")] | None = None


class AgentQuery(Strict):
    agentId: Wallet


class TokenQuery(Strict):
    token: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{16,64}$")]


# ---- response models (for the schema) --------------------------------------------------------------


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Listing(_Open):
    """A listing as every drop answer shows it (core.marketplace.views.listing_json); one listing by
    listingId or agentId also has drop_offers, drop_sales and offerTypedData."""

    id: str
    chainListingId: int
    agentId: str
    agentUuid: str
    tokenId: int
    seller: str
    askingPriceUsdc: UsdcOut
    floorPriceUsdc: UsdcOut
    earningsAtListingUsdc: UsdcOut
    acceptOffers: bool
    status: Annotated[str, Field(description="active, settling, sold, expired, cancelled; void: undone by a reorg")]
    state: Annotated[
        str, Field(deprecated=True, description=f"status under its old name (removed in API {STATE_REMOVED_IN})")
    ]
    agentPaused: bool
    expiresAt: str
    listTx: str
    final: bool
    endTx: str | None
    createdAt: str
    updatedAt: str


class ListingResponse(_Open):
    listing: Listing


class ListingPage(_Open):
    listings: list[Listing]
    total: int
    page: int
    pages: int


class StatementResponse(_Open):
    agentId: str
    statement: dict[str, Any]
    signature: str
    reportedEarningsUsdc: Any
    onchainEarningsUsdc: Any
    minimumFloorUsdc: Any


class SaleResponse(_Open):
    saleId: str
    noticeWindowEndsAt: str
    salePrice: Any
    sellerProceeds: Any
    serviceFee: Any


class OfferResponse(_Open):
    offer: dict[str, Any]


class MintResponse(_Open):
    agentId: str
    tokenId: int
    mintTx: str | None
    minted: bool


class ClaimResponse(_Open):
    agent: dict[str, Any]
    api_key: str
    scope: str


class WatchResponse(_Open):
    watch: dict[str, Any]


class AssetsResponse(_Open):
    agentId: str
    assets: list[dict[str, Any]]


class Empty(_Open):
    pass


class Page(RootModel[str]):
    """A page for people (text/html)."""


class OneClickForm(BaseModel):
    """The RFC 8058 one-click body a mail client posts (application/x-www-form-urlencoded); the
    page's own form posts no field."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    List_Unsubscribe: Annotated[str, Field(alias="List-Unsubscribe", pattern="^One-Click$")] = "One-Click"
