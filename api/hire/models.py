"""The hire API's request and response models (/api/a2a)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from api.models import Amount, Strict, UsdcOut, Wallet
from core.hire import rules

_SERVICE_TYPE = r"^[a-z0-9_]{1,40}$"
_HEX32 = r"^0x[0-9a-fA-F]{64}$"
_URL = Annotated[str, Field(min_length=1, max_length=2048)]
_SECRET = Annotated[str, Field(min_length=16, max_length=256)]

# ---- request models -----------------------------------------------------------------------------


class Runner(Strict):
    type: Annotated[Literal["https", "a2a"], Field(description="https: a JSON endpoint; a2a: an A2A agent")]
    url: Annotated[_URL, Field(description="the HTTPS endpoint, or the A2A agent card's URL")]


class ServicePublishRequest(Strict):
    agentId: Annotated[Wallet | None, Field(description="the provider agent (required with an account key)")] = None
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE, description="a short token, e.g. keyword_research")]
    price: Annotated[Amount, Field(description="USDC per job (standard hire); escrow needs the on-chain price equal")]
    description: Annotated[str, Field(min_length=1, max_length=2000)]
    inputSchema: Annotated[dict[str, Any], Field(description="JSON Schema of the job's input")]
    outputSchema: Annotated[dict[str, Any], Field(description="JSON Schema the output must satisfy")]
    slaSeconds: Annotated[
        int, Field(ge=rules.MIN_SLA_SECONDS, le=rules.MAX_SLA_SECONDS, description="maximum response time")
    ] = rules.DEFAULT_SLA_SECONDS
    runner: Runner
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None
    rotateSecret: bool = False


class ServicesQuery(Strict):
    agentId: Wallet | None = None


class HireRequest(Strict):
    callerWallet: Wallet
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    input: Annotated[dict[str, Any], Field(description="the job's input (checked against the input schema)")]
    providerWallet: Annotated[Wallet | None, Field(description="else the best-scored healthy provider")] = None
    maxPrice: Annotated[Amount | None, Field(description="refuse a provider costing more (USDC)")] = None
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None


class EscrowRequest(Strict):
    escrowJobId: Annotated[str, Field(pattern=_HEX32, description="the bytes32 job id given to createJob")]
    txHash: Annotated[str, Field(pattern=_HEX32, description="the createJob transaction")]
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    input: dict[str, Any]
    providerWallet: Wallet
    timestamp: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Annotated[
        str, Field(pattern=r"^0x[0-9a-fA-F]{130}$", description="the caller's EIP-191 signature (see description)")
    ]
    webhookUrl: _URL | None = None
    webhookSecret: _SECRET | None = None


class EscrowQuery(Strict):
    jobId: Annotated[str, Field(pattern=_HEX32)]


class RegistryQuery(Strict):
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)] | None = None
    wallet: Wallet | None = None
    maxPrice: Annotated[str, Field(pattern=r"^[0-9]{1,13}(\.[0-9]{1,6})?$", description="USDC")] | None = None
    minScore: Annotated[str, Field(pattern=r"^[0-9]{1,3}(\.[0-9]{1,4})?$", description="0-100")] | None = None
    escrow: Annotated[Literal["true", "false"], Field(description="only escrow-hirable services")] | None = None
    healthy: Annotated[Literal["true", "false"], Field(description="only healthy services")] | None = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None
    cursor: Annotated[str, Field(max_length=512)] | None = None


class ReputationQuery(Strict):
    wallet: Wallet
    serviceType: Annotated[str, Field(pattern=_SERVICE_TYPE)]
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None
    cursor: Annotated[str, Field(max_length=512)] | None = None


# ---- response models (OpenAPI) ------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class EarnSplit(_Out):
    ownerCut: UsdcOut
    agentCut: UsdcOut
    serviceCut: UsdcOut
    referralCut: UsdcOut


class HireResponse(_Out):
    success: bool
    jobId: str
    output: Annotated[str, Field(description="the output as RFC 8785 JSON text (SHA-256 = outputSha256)")]
    outputSha256: str
    outputCid: str
    providerWallet: str
    serviceType: str
    amountCharged: UsdcOut
    responseMs: int
    earnSplit: EarnSplit
    balance: UsdcOut
    auditId: int


class EscrowResponse(_Out):
    success: bool
    jobId: str
    status: str
    serviceType: str
    providerWallet: str | None
    amountUsdc: UsdcOut
    inputSha256: str
    responseMs: int | None
    settlement: Annotated[str, Field(description="released, refunded or pending (retried until mined)")]
    final: bool
    output: str | None = None
    outputSha256: str | None = None
    outputCid: str | None = None
    releaseTx: str | None = None
    earnSplit: EarnSplit | None = None
    error: str | None = None
    message: str | None = None
    refundTx: str | None = None
    auditId: Annotated[int, Field(description="the job's latest audit entry (GET /api/a2a/hire/{jobId}/audit)")]


class EscrowStatusResponse(_Out):
    jobId: str
    status: Annotated[str, Field(description="locked, released, refunded or not_found")]
    caller: str | None
    amountUsdc: UsdcOut
    released: bool
    refunded: bool


class AuditStreamEntry(_Out):
    auditId: int
    seq: int
    kind: str
    createdAt: str
    payload: dict[str, Any]
    canonicalPayload: Annotated[str, Field(description="the payload's RFC 8785 JSON: exactly the bytes hashed")]
    prevHash: str
    chainHash: str
    leafHash: Annotated[str, Field(description="its Merkle leaf hash, 0x hex")]
    verifyUrl: str
    proofUrl: str


class HireAuditResponse(_Out):
    jobId: str
    kind: Annotated[str, Field(description="standard or escrow")]
    status: str
    stream: Annotated[str, Field(description="hire:<jobId>")]
    entries: Annotated[list[AuditStreamEntry], Field(description="every move of the job, in order (seq 1, 2, ...)")]
    chainRule: str
    merkleRule: str
    methodologyUrl: str


class RegistryEntry(_Out):
    wallet: str
    serviceType: str
    priceUsdc: UsdcOut
    reputationScore: float
    successRate: float | None
    avgResponseMs: int | None
    healthy: bool
    escrow: dict[str, Any]


class RegistryResponse(_Out):
    providers: list[RegistryEntry]
    hasMore: bool
    nextCursor: str | None
    formula: str


class ReputationResponse(_Out):
    wallet: str
    serviceType: str
    reputationScore: float
    samples: list[dict[str, Any]]
    hasMore: bool
    nextCursor: str | None
    formula: str


class ServiceResponse(_Out):
    wallet: str
    serviceType: str
    priceUsdc: UsdcOut
    escrow: dict[str, Any]


class ServiceListResponse(_Out):
    services: list[ServiceResponse]
