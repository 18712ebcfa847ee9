"""Amounts (decimal.Decimal, never float), the JSON codec, and the typed results.

Every result keeps the whole response body in ``raw`` (numbers as Decimal/int), says whether the
server replayed a stored response (``replayed``: the call had already been applied under its
Idempotency-Key), exposes snake_case attributes, keeps the spec's camelCase names as aliases
(``total_earned`` and ``totalEarned``) and supports ``result["field"]`` for anything else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from agentledger_sdk.verify import entry_problems

__all__ = [
    "Agent",
    "AgentBalance",
    "AmountLike",
    "ApiKey",
    "BatchEarnResult",
    "CompoundResult",
    "EarnResult",
    "EscrowResult",
    "EscrowStatus",
    "HireResult",
    "Identity",
    "Memory",
    "MemoryPage",
    "NetworkStats",
    "Registration",
    "Registry",
    "Result",
    "RunRecord",
    "SpendResult",
    "to_decimal",
]

#: What the SDK accepts as an amount. float is deliberately absent (see to_decimal).
AmountLike = Decimal | int | str


def to_decimal(value: object, param: str = "amount") -> Decimal:
    """An amount as Decimal: Decimal, int or a decimal string ("12.5").

    float is refused with TypeError: a binary float such as 0.1 is not the decimal the caller
    meant, and silently converting it is how ledgers drift. Write ``Decimal("0.1")`` or ``"0.1"``.
    Non-finite values (NaN, Infinity) and unparsable strings raise ValueError. Range and
    precision (positive, at most 6 decimals) are the server's rules; it answers 400 otherwise.
    """
    if isinstance(value, bool):
        raise TypeError(f"{param} must be a Decimal, int or decimal string, not bool")
    if isinstance(value, float):
        raise TypeError(
            f"{param} must be a Decimal, int or decimal string, not float ({value!r}): floats are "
            f"inexact; pass Decimal({str(value)!r}) or {str(value)!r} instead"
        )
    if isinstance(value, Decimal):
        d = value
    elif isinstance(value, int):
        d = Decimal(value)
    elif isinstance(value, str):
        try:
            d = Decimal(value.strip())
        except InvalidOperation as exc:
            raise ValueError(f"{param} is not a decimal number: {value!r}") from exc
    else:
        raise TypeError(f"{param} must be a Decimal, int or decimal string, not {type(value).__name__}")
    if not d.is_finite():
        raise ValueError(f"{param} must be finite, got {value!r}")
    return d


def dumps(value: Any) -> bytes:
    """Compact JSON in which Decimals are written as plain JSON numbers (fixed point, no float)."""
    return _encode(value).encode("utf-8")


def _encode(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):  # never produced by the SDK itself; refuse rather than round
        raise TypeError("floats are not sent; use Decimal")
    if isinstance(value, Mapping):
        return "{" + ",".join(json.dumps(str(k)) + ":" + _encode(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value)


def loads(content: bytes) -> Any:
    """JSON with every number that has a fraction or exponent parsed as Decimal (ints stay int)."""
    return json.loads(content, parse_float=Decimal)


def _dec(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, Decimal)):
        return Decimal(value)
    if isinstance(value, str):
        try:
            return Decimal(value)
        except InvalidOperation:
            return None
    return None


def _req_dec(data: Mapping[str, Any], name: str) -> Decimal:
    d = _dec(data.get(name))
    return Decimal(0) if d is None else d


# ---- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result(Mapping[str, Any]):
    """A response body: ``raw`` is the parsed JSON object; mapping access reads it."""

    raw: Mapping[str, Any] = field(repr=False)
    replayed: bool = field(default=False, repr=False, kw_only=True)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Result:
        return cls(data, replayed=replayed)


@dataclass(frozen=True)
class Agent(Result):
    id: str = ""
    wallet: str = ""
    name: str = ""
    specialty: str = ""
    balance: Decimal = Decimal(0)
    referral_code: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Agent:
        return cls(
            data,
            replayed=replayed,
            id=str(data.get("id", "")),
            wallet=str(data.get("wallet", "")),
            name=str(data.get("name", "")),
            specialty=str(data.get("specialty", "")),
            balance=_req_dec(data, "balance"),
            referral_code=data.get("referral_code"),
        )


@dataclass(frozen=True)
class Registration(Result):
    """``api_key`` is set only when the call created a new account: it is shown this once."""

    success: bool = True
    agent: Agent = field(default_factory=lambda: Agent({}))
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Registration:
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            agent=Agent.parse(data.get("agent") or {}),
            api_key=data.get("api_key"),
        )


@dataclass(frozen=True)
class EarnResult(Result):
    """One earning. ``net`` = ``owner_cut`` + ``agent_cut`` is what the agent's balance gained;
    ``service_cut`` (= ``toll``) and ``referral_cut`` went elsewhere; the parts sum to the amount."""

    success: bool = True
    balance: Decimal = Decimal(0)
    toll: Decimal = Decimal(0)
    net: Decimal = Decimal(0)
    owner_cut: Decimal = Decimal(0)
    agent_cut: Decimal = Decimal(0)
    service_cut: Decimal = Decimal(0)
    referral_cut: Decimal = Decimal(0)
    owner_balance: Decimal = Decimal(0)
    agent_self_balance: Decimal = Decimal(0)
    message: str = ""
    transaction_id: Any = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> EarnResult:
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            balance=_req_dec(data, "balance"),
            toll=_req_dec(data, "toll"),
            net=_req_dec(data, "net"),
            owner_cut=_req_dec(data, "ownerCut"),
            agent_cut=_req_dec(data, "agentCut"),
            service_cut=_req_dec(data, "serviceCut"),
            referral_cut=_req_dec(data, "referralCut"),
            owner_balance=_req_dec(data, "ownerBalance"),
            agent_self_balance=_req_dec(data, "agentSelfBalance"),
            message=str(data.get("message", "")),
            transaction_id=data.get("transactionId"),
        )

    @property
    def ownerCut(self) -> Decimal:
        return self.owner_cut

    @property
    def agentCut(self) -> Decimal:
        return self.agent_cut

    @property
    def serviceCut(self) -> Decimal:
        return self.service_cut

    @property
    def referralCut(self) -> Decimal:
        return self.referral_cut

    @property
    def ownerBalance(self) -> Decimal:
        return self.owner_balance

    @property
    def agentSelfBalance(self) -> Decimal:
        return self.agent_self_balance

    @property
    def transactionId(self) -> Any:
        return self.transaction_id


@dataclass(frozen=True)
class BatchEarnResult(Result):
    """An atomic batch: every payment applied (``results`` in request order) or none."""

    success: bool = True
    count: int = 0
    results: tuple[EarnResult, ...] = ()

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> BatchEarnResult:
        results = tuple(EarnResult.parse(r, replayed) for r in data.get("results") or ())
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            count=int(data.get("count", len(results))),
            results=results,
        )


@dataclass(frozen=True)
class RunRecord(Result):
    """A recorded run: ``key`` is the memory key (``run:YYYY-MM-DD:niche``) whose counters moved."""

    success: bool = True
    key: str = ""
    successes: int = 0
    failures: int = 0

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> RunRecord:
        runs = data.get("runs") or {}
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            key=str(data.get("key", "")),
            successes=int(runs.get("success", 0)),
            failures=int(runs.get("failure", 0)),
        )


@dataclass(frozen=True)
class AgentBalance(Result):
    """GET /balance: ``balance`` (spendable), ``total_earned`` (reported + settled), counters."""

    balance: Decimal = Decimal(0)
    total_earned: Decimal = Decimal(0)
    total_transactions: int = 0
    memory_entries: int = 0
    owner_balance: Decimal | None = None
    agent_self_balance: Decimal | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> AgentBalance:
        return cls(
            data,
            replayed=replayed,
            balance=_req_dec(data, "balance"),
            total_earned=_req_dec(data, "totalEarned"),
            total_transactions=int(data.get("totalTransactions", 0)),
            memory_entries=int(data.get("memoryEntries", 0)),
            owner_balance=_dec(data.get("ownerBalance")),
            agent_self_balance=_dec(data.get("agentSelfBalance")),
        )

    @property
    def totalEarned(self) -> Decimal:
        return self.total_earned

    @property
    def totalTransactions(self) -> int:
        return self.total_transactions

    @property
    def memoryEntries(self) -> int:
        return self.memory_entries


@dataclass(frozen=True)
class SpendResult(Result):
    success: bool = True
    spent: Decimal = Decimal(0)
    destination: str = ""
    balance: Decimal = Decimal(0)
    transaction_id: Any = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> SpendResult:
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            spent=_req_dec(data, "spent"),
            destination=str(data.get("destination", "")),
            balance=_req_dec(data, "balance"),
            transaction_id=data.get("transactionId"),
        )


@dataclass(frozen=True)
class Identity(Result):
    uuid: str = ""
    wallet: str = ""

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Identity:
        return cls(data, replayed=replayed, uuid=str(data.get("uuid", "")), wallet=str(data.get("wallet", "")))


@dataclass(frozen=True)
class NetworkStats(Result):
    total_agents: int = 0
    total_earned: Decimal = Decimal(0)
    total_tolls: Decimal = Decimal(0)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> NetworkStats:
        return cls(
            data,
            replayed=replayed,
            total_agents=int(data.get("totalAgents", 0)),
            total_earned=_req_dec(data, "totalEarned"),
            total_tolls=_req_dec(data, "totalTolls"),
        )


@dataclass(frozen=True)
class Memory(Result):
    key: str = ""
    value: Any = None
    created_at: Any = None
    updated_at: Any = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Memory:
        return cls(
            data,
            replayed=replayed,
            key=str(data.get("key", "")),
            value=data.get("value"),
            created_at=data.get("createdAt"),
            updated_at=data.get("updatedAt"),
        )


@dataclass(frozen=True)
class MemoryPage(Result):
    """One page of memories; pass ``next_cursor`` back as ``cursor`` for the next (None: last)."""

    memories: tuple[Memory, ...] = ()
    next_cursor: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> MemoryPage:
        cursor = data.get("nextCursor", data.get("next_cursor", data.get("cursor")))
        return cls(
            data,
            replayed=replayed,
            memories=tuple(Memory.parse(m) for m in data.get("memories") or ()),
            next_cursor=None if cursor is None else str(cursor),
        )


@dataclass(frozen=True)
class ProviderOrderPage(Result):
    """One page of a provider's orders, newest first; pass ``next_cursor`` back as ``cursor`` (None: last)."""

    orders: tuple[Mapping[str, Any], ...] = ()
    has_more: bool = False
    next_cursor: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> ProviderOrderPage:
        cursor = data.get("next_cursor")
        return cls(
            data,
            replayed=replayed,
            orders=tuple(data.get("data") or ()),
            has_more=bool(data.get("has_more")),
            next_cursor=None if cursor is None else str(cursor),
        )


@dataclass(frozen=True)
class CompoundResult(Result):
    """``moved`` left the spendable ``balance`` for the ``reinvested`` bucket."""

    success: bool = True
    balance: Decimal = Decimal(0)
    reinvested: Decimal = Decimal(0)
    moved: Decimal = Decimal(0)
    owner_balance: Decimal | None = None
    agent_self_balance: Decimal | None = None
    transaction_id: Any = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> CompoundResult:
        return cls(
            data,
            replayed=replayed,
            success=bool(data.get("success", True)),
            balance=_req_dec(data, "balance"),
            reinvested=_req_dec(data, "reinvested"),
            moved=_req_dec(data, "moved"),
            owner_balance=_dec(data.get("ownerBalance")),
            agent_self_balance=_dec(data.get("agentSelfBalance")),
            transaction_id=data.get("transactionId"),
        )


@dataclass(frozen=True)
class ApiKey(Result):
    """A new self-serve key: ``api_key`` is shown this once."""

    api_key: str = field(default="", repr=False)
    account_id: str | None = None
    email: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> ApiKey:
        return cls(
            data,
            replayed=replayed,
            api_key=str(data.get("api_key", "")),
            account_id=data.get("accountId"),
            email=data.get("email"),
        )


def parse_memory_write(data: Mapping[str, Any], replayed: bool = False) -> Memory:
    """POST /memory answers {success, memory{key, value, createdAt, updatedAt}}."""
    return Memory.parse(data.get("memory") or {}, replayed)


# ---- agent-to-agent hire ----------------------------------------------------------------------


def _split(data: Any) -> dict[str, Decimal]:
    if not isinstance(data, Mapping):
        return {}
    return {k: _req_dec(data, k) for k in ("ownerCut", "agentCut", "serviceCut", "referralCut")}


@dataclass(frozen=True)
class HireResult(Result):
    """A standard hire that ran: ``output`` is the provider's output as JSON text (its SHA-256 is
    ``output_sha256``, committed to the audit chain before payment); ``value`` parses it."""

    job_id: str = ""
    output: str = ""
    output_sha256: str = ""
    output_cid: str = ""
    provider_wallet: str = ""
    amount_charged: Decimal = Decimal(0)
    response_ms: int = 0
    earn_split: Mapping[str, Decimal] = field(default_factory=dict)
    balance: Decimal = Decimal(0)
    audit_id: int | None = None  # the charge's audit entry; the job's whole stream: hire_audit(job_id)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> HireResult:
        return cls(
            data,
            replayed=replayed,
            job_id=str(data.get("jobId", "")),
            output=str(data.get("output", "")),
            output_sha256=str(data.get("outputSha256", "")),
            output_cid=str(data.get("outputCid", "")),
            provider_wallet=str(data.get("providerWallet", "")),
            amount_charged=_req_dec(data, "amountCharged"),
            response_ms=int(data.get("responseMs") or 0),
            earn_split=_split(data.get("earnSplit")),
            balance=_req_dec(data, "balance"),
            audit_id=_int_or_none(data.get("auditId")),
        )

    @property
    def value(self) -> Any:
        return loads(self.output.encode())

    @property
    def jobId(self) -> str:
        return self.job_id

    @property
    def amountCharged(self) -> Decimal:
        return self.amount_charged

    @property
    def responseMs(self) -> int:
        return self.response_ms


@dataclass(frozen=True)
class EscrowResult(Result):
    """An escrow hire: on success ``output`` and ``release_tx`` (None while the release is retried:
    ``settlement`` "pending"); on failure ``error`` and ``refund_tx``."""

    success: bool = False
    job_id: str = ""
    status: str = ""
    settlement: str = ""
    output: str | None = None
    output_sha256: str | None = None
    release_tx: str | None = None
    refund_tx: str | None = None
    error: str | None = None
    earn_split: Mapping[str, Decimal] = field(default_factory=dict)
    create_tx: str | None = None
    audit_id: int | None = None  # the job's latest audit entry; its whole stream: hire_audit(job_id)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> EscrowResult:
        return cls(
            data,
            replayed=replayed or bool(data.get("replayed")),
            success=bool(data.get("success")),
            job_id=str(data.get("jobId", "")),
            status=str(data.get("status", "")),
            settlement=str(data.get("settlement", "")),
            output=data.get("output"),
            output_sha256=data.get("outputSha256"),
            release_tx=data.get("releaseTx"),
            refund_tx=data.get("refundTx"),
            error=data.get("error"),
            earn_split=_split(data.get("earnSplit")),
            audit_id=_int_or_none(data.get("auditId")),
        )

    @property
    def value(self) -> Any:
        return None if self.output is None else loads(self.output.encode())

    @property
    def releaseTx(self) -> str | None:
        return self.release_tx

    @property
    def refundTx(self) -> str | None:
        return self.refund_tx


def _mappings(value: Any) -> tuple[Mapping[str, Any], ...]:
    """The objects of a JSON array (anything else: none)."""
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class HireAudit(Result):
    """A hire job's audit stream (standard or escrow): ``entries`` in order, each a mapping as the
    server sends it (auditId, seq, kind, payload, canonicalPayload, prevHash, chainHash, leafHash,
    verifyUrl, proofUrl). ``broken_link()`` rechecks the chain here, trusting nothing but SHA-256;
    each entry's place in the anchored Merkle tree is its proofUrl (or verifyUrl) to check."""

    job_id: str = ""
    kind: str = ""
    entries: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> HireAudit:
        return cls(
            data,
            replayed=replayed,
            job_id=str(data.get("jobId", "")),
            kind=str(data.get("kind", "")),
            entries=_mappings(data.get("entries")),
        )

    def broken_link(self) -> str | None:
        """None when every entry's chainHash is SHA-256(prevHash || canonicalPayload), each prevHash the
        previous chainHash ("genesis" first), seq counts 1, 2, ... and canonicalPayload is the payload;
        else what is wrong, naming the entry."""
        prev = "genesis"
        for seq, e in enumerate(self.entries, start=1):
            name = f"entry {e.get('auditId')} (seq {e.get('seq')})"
            canonical = str(e.get("canonicalPayload", ""))
            if e.get("seq") != seq:
                return f"{name}: expected seq {seq}"
            if e.get("prevHash") != prev:
                return f"{name}: prevHash is not the previous chainHash"
            if hashlib.sha256((prev + canonical).encode()).hexdigest() != e.get("chainHash"):
                return f"{name}: chainHash is not SHA-256(prevHash || canonicalPayload)"
            if loads(canonical.encode()) != e.get("payload"):
                return f"{name}: canonicalPayload is not the payload"
            prev = str(e.get("chainHash"))
        return None


@dataclass(frozen=True)
class EscrowStatus(Result):
    """AgentEscrow.jobStatus as the service reads it from the chain."""

    status: str = ""
    caller: str | None = None
    amount_usdc: Decimal = Decimal(0)
    released: bool = False
    refunded: bool = False

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> EscrowStatus:
        return cls(
            data,
            replayed=replayed,
            status=str(data.get("status", "")),
            caller=data.get("caller"),
            amount_usdc=_req_dec(data, "amountUsdc"),
            released=bool(data.get("released")),
            refunded=bool(data.get("refunded")),
        )

    @property
    def amountUsdc(self) -> Decimal:
        return self.amount_usdc


@dataclass(frozen=True)
class Registry(Result):
    """One page of the registry: ``providers`` (mappings as the server sends them, amounts as Decimal)."""

    providers: tuple[Mapping[str, Any], ...] = ()
    has_more: bool = False
    next_cursor: str | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Registry:
        return cls(
            data,
            replayed=replayed,
            providers=_mappings(data.get("providers")),
            has_more=bool(data.get("hasMore")),
            next_cursor=data.get("nextCursor"),
        )


# ---- micro-USDC units (the chain's and the checkout's integers) --------------------------------------

#: USDC has 6 decimals: 1 USDC is 1,000,000 units.
UNITS_PER_USDC = 10**6


def to_units(value: object, param: str = "amount") -> int:
    """An amount of USDC as integer micro-USDC units, exactly: "0.3" -> 300000. More than 6 decimals
    raises ValueError (nothing is rounded), and floats are refused as in to_decimal."""
    d = to_decimal(value, param).scaleb(6)
    if d != d.to_integral_value():
        raise ValueError(f"{param} has more than 6 decimals: {value!r}")
    return int(d)


def from_units(units: int) -> Decimal:
    """Integer micro-USDC units as USDC, exactly: 300000 -> Decimal("0.300000")."""
    return Decimal(int(units)).scaleb(-6)


# ---- the deployment, decisions and their verification --------------------------------------------------


@dataclass(frozen=True)
class Deployment(Result):
    """What GET /healthz says of the chain: its id, the USDC token and every contract's address."""

    chain_id: int = 0
    usdc: str = ""
    contracts: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> Deployment:
        return cls(
            data,
            replayed=replayed,
            chain_id=int(data.get("chainId") or 0),
            usdc=str(data.get("usdc", "")),
            contracts=dict(data.get("contracts") or {}),
        )

    def contract(self, name: str) -> str:
        address = self.contracts.get(name)
        if not address:
            raise LookupError(f"the service has no {name} contract deployed")
        return address


@dataclass(frozen=True)
class DecisionLogged(Result):
    """A logged decision: its entry ``audit_id``, ``chain_hash`` and where anyone verifies it.
    ``webhook_secret`` only when the service generated one (shown this once)."""

    audit_id: int = 0
    chain_hash: str = ""
    content_hash: str = ""
    tier: str = ""
    timestamp: str = ""
    verification_url: str = ""
    webhook_secret: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> DecisionLogged:
        return cls(
            data,
            replayed=replayed,
            audit_id=int(data.get("audit_id") or 0),
            chain_hash=str(data.get("chain_hash", "")),
            content_hash=str(data.get("content_hash", "")),
            tier=str(data.get("tier", "")),
            timestamp=str(data.get("timestamp", "")),
            verification_url=str(data.get("verification_url", "")),
            webhook_secret=data.get("webhook_secret"),
        )


@dataclass(frozen=True)
class EntryVerification(Result):
    """An audit entry checked here (agentledger_sdk.verify): ``ok`` when ``problems`` is empty, i.e. every
    hash recomputed and the inclusion proof led to ``root`` (of ``tree_size`` leaves; ``anchored`` when
    that checkpoint is on-chain, ``root_onchain`` True when it was also read from the chain and equal)."""

    audit_id: int = 0
    stream: str = ""
    seq: int = 0
    chain_hash: str = ""
    prev_hash: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)
    tree_size: int = 0
    root: str = ""
    anchored: bool = False
    root_onchain: bool | None = None
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> EntryVerification:
        inclusion = data.get("inclusion") or {}
        return cls(
            data,
            replayed=replayed,
            audit_id=int(data.get("audit_id") or 0),
            stream=str(data.get("stream", "")),
            seq=int(data.get("seq") or 0),
            chain_hash=str(data.get("chain_hash", "")),
            prev_hash=str(data.get("prev_hash", "")),
            payload=dict(data.get("payload") or {}),
            tree_size=int(inclusion.get("tree_size") or 0),
            root=str(inclusion.get("root", "")),
            anchored=bool(inclusion.get("anchored")),
            problems=tuple(entry_problems(data)),
        )


# ---- escrow checkout ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckoutSession(Result):
    """A checkout session. ``total`` in USDC (``total_units`` as the API gives it, micro-USDC);
    ``payment`` is the payment handler's config: ``token`` (USDC), ``spender`` (the gateway), ``amount``
    (units) and ``typed_data``, the EIP-712 Funding consent the payer signs (its message.buyer a
    placeholder). ``order`` once completed. ``webhook_secret`` only in the answer that created it."""

    id: str = ""
    status: str = ""
    total_units: int = 0
    payment: Mapping[str, Any] = field(default_factory=dict)
    order: Mapping[str, Any] | None = None
    webhook_secret: str | None = field(default=None, repr=False)

    @property
    def total(self) -> Decimal:
        return from_units(self.total_units)

    @classmethod
    def parse(cls, data: Mapping[str, Any], replayed: bool = False) -> CheckoutSession:
        totals = {t.get("type"): t.get("amount") for t in data.get("totals") or () if isinstance(t, Mapping)}
        handlers = ((data.get("capabilities") or {}).get("payment") or {}).get("handlers") or [{}]
        return cls(
            data,
            replayed=replayed,
            id=str(data.get("id", "")),
            status=str(data.get("status", "")),
            total_units=int(totals.get("total") or 0),
            payment=dict(handlers[0].get("config") or {}),
            order=data.get("order"),
            webhook_secret=data.get("webhook_secret"),
        )
