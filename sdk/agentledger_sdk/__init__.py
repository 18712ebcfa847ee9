"""agentledger_sdk: the Python client of the agentledger wallet API.

    from decimal import Decimal
    from agentledger_sdk import AgentLedger, NotFound

    with AgentLedger("http://127.0.0.1:8080") as al:
        reg = al.register("scout", "content_seo")      # keyless: creates an account, adopts its key
        wallet = reg.agent.wallet
        r = al.earn(wallet, Decimal("12.5"), source="gumroad")
        print(r.owner_cut, r.agent_cut, r.service_cut, al.get_agent(wallet).totalEarned)

AsyncAgentLedger has the same methods as coroutines. Amounts are decimal.Decimal (floats are
refused); errors are AgentLedgerError subclasses carrying the server's {type, code, message,
param}; value-moving calls carry an Idempotency-Key reused across retries. Decision logging and
its client-side verification (agentledger_sdk.verify), the checkout buyer's and provider's steps, the
drop's signed steps and hire services are methods too; agentledger_sdk.webhooks checks what the
service signs.
"""

from agentledger_sdk._client import DEFAULT_BASE_URL, AgentLedger, AsyncAgentLedger
from agentledger_sdk._errors import (
    AgentLedgerError,
    AuthenticationError,
    Conflict,
    ConnectionError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
    TimeoutError,
    TransportError,
)
from agentledger_sdk._models import (
    Agent,
    AgentBalance,
    AmountLike,
    ApiKey,
    BatchEarnResult,
    CheckoutSession,
    CompoundResult,
    DecisionLogged,
    Deployment,
    EarnResult,
    EntryVerification,
    EscrowResult,
    EscrowStatus,
    HireAudit,
    HireResult,
    Identity,
    Memory,
    MemoryPage,
    NetworkStats,
    ProviderOrderPage,
    Registration,
    Registry,
    Result,
    RunRecord,
    SpendResult,
    from_units,
    to_decimal,
    to_units,
)
from agentledger_sdk._version import __version__

__all__ = [
    "DEFAULT_BASE_URL",
    "Agent",
    "AgentBalance",
    "AgentLedger",
    "AgentLedgerError",
    "AmountLike",
    "ApiKey",
    "AsyncAgentLedger",
    "AuthenticationError",
    "BatchEarnResult",
    "CheckoutSession",
    "CompoundResult",
    "Conflict",
    "ConnectionError",
    "DecisionLogged",
    "Deployment",
    "EarnResult",
    "EntryVerification",
    "EscrowResult",
    "EscrowStatus",
    "HireAudit",
    "HireResult",
    "Identity",
    "InvalidRequest",
    "Memory",
    "MemoryPage",
    "NetworkStats",
    "NotFound",
    "PermissionDenied",
    "ProviderOrderPage",
    "RateLimited",
    "Registration",
    "Registry",
    "Result",
    "RunRecord",
    "ServerError",
    "SpendResult",
    "TimeoutError",
    "TransportError",
    "__version__",
    "from_units",
    "to_decimal",
    "to_units",
]
