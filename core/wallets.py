"""Agent wallets: registration, reported earnings (the split), spending and balances.

Every balance change is a ledger row written in the same BEGIN IMMEDIATE transaction as the
balance it produces (core.store.wallets.append_ledger). A balance has two parts: the owner part
(ownerCut, referral credits) and the agent-self part (agentCut). Spending draws on the agent-self
part first, then on the owner part. Functions here run inside the caller's transaction and raise
WalletError (nothing written) on a refused request.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass

import apsw

from core.money import format_usdc, split
from core.store import wallets as store
from core.store.wallets import AgentRow, BalanceRow, LedgerEntry

SPECIALTIES: tuple[str, ...] = (
    "content_seo",
    "digital_products",
    "prompt_packs",
    "notion_templates",
    "instagram",
    "twitter_x",
    "youtube",
    "podcast",
    "ghostwriting",
    "linkedin",
    "ecommerce",
    "print_on_demand",
    "data_research",
    "lead_generation",
    "email",
    "newsletter",
    "crypto_trading",
    "stock_forex",
    "passive",
    "advertising_adsense",
    "dev_products",
    "sidehustle",
    "licensing",
    "arbitrage",
    "business",
    "sales",
    "freelance",
)
#: Referral codes: 8 characters of an alphabet without look-alikes (no 0/O, 1/I/L).
REFERRAL_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
REFERRAL_CODE_LEN = 8
_MAX_TRIES = 16
#: Ceiling of any running total (SQLite INTEGER is int64); an earning that would pass it is refused.
MAX_TOTAL_UNITS = 2**63 - 1


class WalletError(Exception):
    """A refused request; `code` and `param` go into the API's error shape."""

    def __init__(self, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param


@dataclass(frozen=True)
class EarnResult:
    ledger_id: int
    amount: int
    owner_cut: int
    agent_cut: int
    service_cut: int
    referral_cut: int
    balance: BalanceRow

    @property
    def net(self) -> int:
        return self.owner_cut + self.agent_cut


@dataclass(frozen=True)
class SpendResult:
    ledger_id: int
    amount: int
    balance: BalanceRow


def new_wallet_id() -> str:
    return "agl_" + secrets.token_hex(6)


def new_referral_code() -> str:
    return "".join(secrets.choice(REFERRAL_ALPHABET) for _ in range(REFERRAL_CODE_LEN))


def _fresh_wallet(conn: apsw.Connection) -> str:
    for _ in range(_MAX_TRIES):
        wallet = new_wallet_id()
        if not store.wallet_taken(conn, wallet):
            return wallet
    raise RuntimeError("could not draw a free wallet id")  # 2^48 ids: practically unreachable


def _fresh_referral_code(conn: apsw.Connection) -> str:
    for _ in range(_MAX_TRIES):
        code = new_referral_code()
        if not store.referral_code_taken(conn, code):
            return code
    raise RuntimeError("could not draw a free referral code")


def register(
    conn: apsw.Connection,
    *,
    account_id: str | None,
    new_key_hash: str | None,
    name: str,
    specialty: str,
    referral_code: str | None,
    now: float,
) -> AgentRow:
    """Create an agent under `account_id`, or (account_id None) a new account holding the new
    account-scoped key `new_key_hash` and the agent. Raises WalletError for an unknown code."""
    if specialty not in SPECIALTIES:
        raise WalletError("invalid_specialty", f"unknown specialty {specialty!r}", "specialty")
    referrer = None
    if referral_code is not None:
        referrer = store.agent_by_referral_code(conn, referral_code.upper())
        if referrer is None:
            raise WalletError("unknown_referral_code", "no agent has this referral code", "referralCode")
    if account_id is None:
        if new_key_hash is None:
            raise ValueError("a new account needs its key")
        account_id = str(uuid.uuid4())
        store.insert_account(conn, account_id, now)
        store.insert_api_key(conn, new_key_hash, account_id, None, None, now)
    agent = AgentRow(
        uuid=str(uuid.uuid4()),
        wallet=_fresh_wallet(conn),
        account_id=account_id,
        name=name,
        specialty=specialty,
        referral_code=_fresh_referral_code(conn),
        referred_by=None if referrer is None else referrer.uuid,
        created_at=now,
    )
    store.insert_agent(conn, agent)
    return agent


def earn(conn: apsw.Connection, agent: AgentRow, amount: int, source: str | None, now: float) -> EarnResult:
    """Credit a reported earning: net (ownerCut + agentCut) to the agent, the referral cut to the
    referrer's owner part, the toll (2% plus rounding dust) to the treasury (recorded on the row)."""
    s = split(amount, agent.referred_by is not None)
    _check_room(conn, agent.uuid, amount)
    if agent.referred_by is not None:
        _check_room(conn, agent.referred_by, s.referral_cut)
    entry = LedgerEntry(
        agent_uuid=agent.uuid,
        kind="earn",
        owner_delta=s.owner_cut,
        self_delta=s.agent_cut,
        source=source,
        gross=amount,
        owner_cut=s.owner_cut,
        agent_cut=s.agent_cut,
        service_cut=s.service_cut,
        referral_cut=s.referral_cut,
        earned=amount,
    )
    ledger_id, bal = store.append_ledger(conn, entry, now)
    if agent.referred_by is not None and s.referral_cut > 0:
        credit = LedgerEntry(
            agent_uuid=agent.referred_by,
            kind="referral",
            owner_delta=s.referral_cut,
            self_delta=0,
            source=agent.wallet,
            earned=s.referral_cut,
        )
        store.append_ledger(conn, credit, now)
    return EarnResult(ledger_id, amount, s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut, bal)


def _check_room(conn: apsw.Connection, agent_uuid: str, amount: int) -> None:
    if store.get_balance(conn, agent_uuid).total_earned + amount > MAX_TOTAL_UNITS:
        raise WalletError("balance_limit", "this earning would exceed the largest total a wallet can hold", "amount")


def spend(conn: apsw.Connection, agent: AgentRow, amount: int, destination: str, now: float) -> SpendResult:
    """Debit `amount` (self part first, then owner part); refuse more than the balance."""
    cur = store.get_balance(conn, agent.uuid)
    if amount > cur.balance:
        raise WalletError(
            "insufficient_balance",
            f"balance {format_usdc(cur.balance)} USDC cannot cover {format_usdc(amount)} USDC",
            "amount",
        )
    from_self = min(amount, cur.self_balance)
    entry = LedgerEntry(
        agent_uuid=agent.uuid,
        kind="spend",
        owner_delta=-(amount - from_self),
        self_delta=-from_self,
        source=destination,
    )
    ledger_id, bal = store.append_ledger(conn, entry, now)
    return SpendResult(ledger_id, amount, bal)
