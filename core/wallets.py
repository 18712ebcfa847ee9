"""Agent wallets: registration, reported earnings (the split), spending and balances.

Every balance change is a ledger row written in the same BEGIN IMMEDIATE transaction as the
balance it produces (core.store.wallets.append_ledger). A balance has two parts: the owner part
(ownerCut, referral credits) and the agent-self part (agentCut). Spending draws on the agent-self
part first, then on the owner part. Functions here run inside the caller's transaction and raise
WalletError (nothing written) on a refused request.
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.errors import ServiceError
from core.money import split, usdc_text
from core.store import Conn, lock
from core.store import marketplace as market_store
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
#: Ceiling of an agent's lifetime credits (core.store.wallets.MAX_TOTAL_UNITS: int64); an earning that
#: would pass it is refused.
MAX_TOTAL_UNITS = store.MAX_TOTAL_UNITS


#: The HTTP status of a wallet refusal, by its code; any other code is a 400.
STATUS = {
    "unknown_referral_code": 404,
    "agent_paused": 409,
    "agent_settling": 409,
    "insufficient_balance": 422,
    "balance_limit": 422,
    "value_too_large": 413,
    "memory_full": 409,
    "email_has_key": 409,
}


class WalletError(ServiceError):
    """A refused wallet request, in the shared error shape; its status follows from its code (STATUS)."""

    def __init__(self, code: str, message: str, param: str | None = None) -> None:
        super().__init__(STATUS.get(code, 400), code, message, param=param)


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


def _fresh_wallet(conn: Conn) -> str:
    for _ in range(_MAX_TRIES):
        wallet = new_wallet_id()
        if not store.wallet_taken(conn, wallet):
            return wallet
    raise RuntimeError("could not draw a free wallet id")  # 2^48 ids: practically unreachable


def _fresh_referral_code(conn: Conn) -> str:
    for _ in range(_MAX_TRIES):
        code = new_referral_code()
        if not store.referral_code_taken(conn, code):
            return code
    raise RuntimeError("could not draw a free referral code")


def register(
    conn: Conn,
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


def earn(conn: Conn, agent: AgentRow, amount: int, source: str | None, now: float) -> EarnResult:
    """Credit a reported earning: net (ownerCut + agentCut) to the agent, the referral cut to the
    referrer's owner part, the toll (2% plus rounding dust) to the treasury (recorded on the row).
    Each total is checked by its own balance update (store.TotalLimit): a referrer at the ceiling
    refuses the earning after the agent's row was written, which the caller's transaction undoes (the
    group committer runs the item's group again without it)."""
    referrer = agent.referred_by
    s = split(amount, referrer is not None)
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
    try:
        ledger_id, bal = store.append_ledger(conn, entry, now)
    except store.TotalLimit as exc:
        raise _limit_error() from exc
    if referrer is not None and s.referral_cut > 0:
        credit = LedgerEntry(
            agent_uuid=referrer,
            kind="referral",
            owner_delta=s.referral_cut,
            self_delta=0,
            source=agent.wallet,
            earned=s.referral_cut,
        )
        try:
            store.append_ledger(conn, credit, now)
        except store.TotalLimit as exc:
            raise _limit_error() from exc
    return EarnResult(ledger_id, amount, s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut, bal)


def _limit_error() -> WalletError:
    return WalletError("balance_limit", "this earning would exceed the largest total a wallet can hold", "amount")


def check_not_paused(conn: Conn, agent: AgentRow) -> None:
    """A listed agent (paused for a sale: listed in the drop, or its NFT paused on-chain) may still
    earn (its balance stays the seller's: at settlement it moves to the seller's own wallet), but it
    spends nothing and cannot be hired until the listing ends."""
    why = market_store.sale_paused(conn, agent.uuid, agent.wallet)
    if why is not None:
        raise WalletError(
            "agent_paused",
            f"agent {agent.wallet} is {why} for sale: no spending (nor hiring) until the listing ends",
            "agentId",
        )


def check_not_settling(conn: Conn, agent: AgentRow) -> None:
    """Between a buyer's commit and the settlement the agent's memory and brain are frozen: the buyer
    committed to their digest (the due-diligence bundle)."""
    if market_store.sale_paused(conn, agent.uuid, agent.wallet) == "settling":
        raise WalletError(
            "agent_settling",
            f"agent {agent.wallet} is being sold: its memory is frozen until the sale settles",
            "agentId",
        )


def shortfall(balance: int, amount: int) -> WalletError | None:
    """The refusal of spending `amount` from `balance`, or None when it covers it (a spend's quote
    shows it before the spend raises it)."""
    if amount <= balance:
        return None
    return WalletError(
        "insufficient_balance", f"balance {usdc_text(balance)} USDC cannot cover {usdc_text(amount)} USDC", "amount"
    )


def spend(conn: Conn, agent: AgentRow, amount: int, destination: str, now: float) -> SpendResult:
    """Debit `amount` (self part first, then owner part); refuse more than the balance, and any
    spend of an agent paused for a sale."""
    check_not_paused(conn, agent)
    cur = store.get_balance(conn, agent.uuid)
    short = shortfall(cur.balance, amount)
    if short is not None:
        raise short
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


# ---- compound -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompoundResult:
    ledger_id: int | None  # None when nothing moved (no row written)
    moved: int
    balance: BalanceRow


def compound(conn: Conn, agent: AgentRow, percent: int, now: float) -> CompoundResult:
    """Move `percent` % of the spendable balance into the reinvested bucket.

    Each part (owner, agent-self) gives up floor(part * percent / 100), so the parts keep their
    proportions and 100% empties both. The move is one ledger row of kind 'compound' (amount and
    deltas negative, reinvested_delta positive). Reinvested funds are no longer spendable and stay
    in the bucket (no endpoint takes them out yet). Nothing to move: no row, moved 0."""
    if not 1 <= percent <= 100:
        raise WalletError("invalid_field", "reinvestPercent must be between 1 and 100", "reinvestPercent")
    cur = store.get_balance(conn, agent.uuid)
    from_owner = cur.owner_balance * percent // 100
    from_self = cur.self_balance * percent // 100
    moved = from_owner + from_self
    if moved == 0:
        return CompoundResult(None, 0, cur)
    entry = LedgerEntry(
        agent_uuid=agent.uuid,
        kind="compound",
        owner_delta=-from_owner,
        self_delta=-from_self,
        source=f"reinvest {percent}%",
        reinvested_delta=moved,
    )
    ledger_id, bal = store.append_ledger(conn, entry, now)
    return CompoundResult(ledger_id, moved, bal)


# ---- keys -----------------------------------------------------------------------------------

EMAIL_PATTERN = (
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)
_EMAIL_RE = re.compile(EMAIL_PATTERN)
MAX_EMAIL_LEN = 254


def normalise_email(email: str) -> str:
    """The stored form of an e-mail address (lower case); WalletError `invalid_email` when it is
    not `local@domain.tld` with a dot-atom local part and a DNS domain (at most 254 characters)."""
    if len(email) > MAX_EMAIL_LEN or not _EMAIL_RE.fullmatch(email):
        raise WalletError("invalid_email", "email must be an address like name@example.com", "email")
    return email.lower()


def create_email_key(conn: Conn, email: str, key_hash: str, now: float, mcp_toolsets: str | None = None) -> str:
    """A new account with one account-scoped key bound to `email` (one key per address, compared
    case-insensitively); returns the account id. WalletError `email_has_key` when it has one."""
    email = normalise_email(email)
    if store.email_has_key(conn, email):
        raise WalletError("email_has_key", "an API key was already issued for this email", "email")
    account_id = str(uuid.uuid4())
    store.insert_account(conn, account_id, now)
    store.insert_api_key(conn, key_hash, account_id, None, email, now, mcp_toolsets=mcp_toolsets)
    return account_id


def issue_key(
    conn: Conn,
    key_hash: str,
    now: float,
    *,
    account_id: str | None = None,
    agent_uuid: str | None = None,
    scopes: str | None = None,
    daily_cap: int | None = None,
    operator: bool = False,
    new_account: bool = False,
    mcp_toolsets: str | None = None,
) -> tuple[str, str | None]:
    """Store an operator-issued key scoped to an account (every agent of it), to one agent, or
    (new_account) to a new, empty account, limited to `scopes` (core.keys.scopes_text; None: all) and
    `daily_cap` micro-USDC a day (None: no cap); `operator` keys open the service-wide operator's view
    (core.dashboard.access; a power apart from the scope 'admin'). Returns (account id, agent uuid or
    None). Raises LookupError for an unknown id."""
    if sum((account_id is not None, agent_uuid is not None, new_account)) != 1:
        raise ValueError("give exactly one of account_id, agent_uuid, new_account")
    if new_account:
        account_id = str(uuid.uuid4())
        store.insert_account(conn, account_id, now)
    elif agent_uuid is not None:
        agent = store.agent_by_uuid(conn, agent_uuid)
        if agent is None:
            raise LookupError(f"no agent {agent_uuid}")
        account_id = agent.account_id
    elif account_id is None or not store.account_exists(conn, account_id):
        raise LookupError(f"no account {account_id}")
    assert account_id is not None
    store.insert_api_key(
        conn,
        key_hash,
        account_id,
        agent_uuid,
        None,
        now,
        scopes=scopes,
        daily_cap=daily_cap,
        operator=operator,
        mcp_toolsets=mcp_toolsets,
    )
    return account_id, agent_uuid


# ---- memory ---------------------------------------------------------------------------------

#: Memory limits: a key is 1-256 characters of printable ASCII (0x20-0x7E); a value is any JSON
#: whose compact serialisation is at most 16 KiB (UTF-8 bytes); an agent holds at most 10,000
#: keys of its own (the service's brain: and run: keys are not counted against it).
MAX_KEY_LEN = 256
MAX_VALUE_BYTES = 16 * 1024
MAX_KEYS_PER_AGENT = 10_000
RESERVED_PREFIXES = store.RESERVED_PREFIXES


def check_key(key: str, param: str = "key") -> None:
    if not 1 <= len(key) <= MAX_KEY_LEN or any(not 0x20 <= ord(c) <= 0x7E for c in key):
        raise WalletError(
            "invalid_key", f"key must be 1-{MAX_KEY_LEN} characters of printable ASCII (0x20-0x7E)", param
        )


def put_memory(conn: Conn, agent: AgentRow, key: str, value_json: str, now: float) -> store.MemoryRow:
    """Upsert one of the agent's own keys (`value_json`: compact JSON text)."""
    check_key(key)
    check_not_settling(conn, agent)
    if key.startswith(RESERVED_PREFIXES):
        raise WalletError(
            "reserved_key", f"keys starting with {' or '.join(RESERVED_PREFIXES)} are written by the service", "key"
        )
    if len(value_json.encode()) > MAX_VALUE_BYTES:
        raise WalletError("value_too_large", f"value is larger than {MAX_VALUE_BYTES} bytes as compact JSON", "value")
    if (
        store.get_memory(conn, agent.uuid, key) is None
        and store.count_memories(conn, agent.uuid, user_only=True) >= MAX_KEYS_PER_AGENT
    ):
        raise WalletError("memory_full", f"an agent holds at most {MAX_KEYS_PER_AGENT} memory keys", "key")
    return store.put_memory(conn, agent.uuid, key, value_json, now)


# ---- runs -----------------------------------------------------------------------------------


def run_key(now: float, niche: str | None) -> str:
    day = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
    return f"run:{day}:{niche or 'general'}"


def record_run(conn: Conn, agent: AgentRow, success: bool, niche: str | None, now: float) -> tuple[str, int, int]:
    """Count one run under `run:YYYY-MM-DD:<niche or general>` (UTC day of `now`), value
    {"success": n, "failure": m}. Read-modify-write under the key's lock (the row may not exist yet,
    so a row lock cannot cover it), so concurrent records (even from other processes) never lose a count."""
    if niche is not None:
        check_niche(niche)
    check_not_settling(conn, agent)
    key = run_key(now, niche)
    lock(conn, f"memory:{agent.uuid}:{key}")
    row = store.get_memory(conn, agent.uuid, key)
    counts = {"success": 0, "failure": 0} if row is None else json.loads(row.value)
    counts["success" if success else "failure"] += 1
    store.put_memory(conn, agent.uuid, key, json.dumps(counts, separators=(",", ":")), now)
    return key, int(counts["success"]), int(counts["failure"])


# ---- brain ----------------------------------------------------------------------------------

BRAIN_KEY = "brain:v1"
NICHE_RE = re.compile(r"[a-z0-9_]{1,40}")
TOP_PRODUCTS = 5


def check_niche(niche: str, param: str = "niche") -> None:
    if not NICHE_RE.fullmatch(niche):
        raise WalletError("invalid_niche", "niche must be a specialty slug or 1-40 of [a-z0-9_]", param)


@dataclass(frozen=True)
class PriceStats:
    """Listings and sales at one price (money in micro-USDC)."""

    listed: int = 0
    sold: int = 0
    revenue: int = 0


@dataclass(frozen=True)
class ProductStats:
    """One named product of a niche: its listings, its sales and its latest price (micro-USDC)."""

    listed: int = 0
    sold: int = 0
    price: int = 0


@dataclass(frozen=True)
class Brain:
    """An agent's brain. Stored as memory key brain:v1 with the value
    {"version": 1, "niches": {niche: {"listed", "sold", "revenueMicros", "soldPriceMicros"}},
    "prices": {price: {"listed", "sold", "revenueMicros"}}, "products": [{"name", "niche", "listed",
    "sold", "priceMicros"}], "lastUpdated": <epoch seconds>} (integers; money in micro-USDC; a price
    key is the USDC decimal text, as usdc_text writes it). Brains stored before prices and
    products were kept read as having none."""

    niches: dict[str, store.NicheStats]
    last_updated: float | None
    prices: dict[str, PriceStats] = field(default_factory=dict)
    products: dict[tuple[str, str], ProductStats] = field(default_factory=dict)


#: Distinct prices and products a brain keeps; past it, the one with the fewest sales (then
#: listings) goes, so a brain stays small however many names an agent invents.
MAX_BRAIN_PRICES = 100
MAX_BRAIN_PRODUCTS = 100


def load_brain(conn: Conn, agent: AgentRow) -> Brain:
    row = store.get_memory(conn, agent.uuid, BRAIN_KEY)
    if row is None:
        return Brain({}, None)
    data = json.loads(row.value)
    niches = {
        n: store.NicheStats(int(s["listed"]), int(s["sold"]), int(s["revenueMicros"]), int(s["soldPriceMicros"]))
        for n, s in data["niches"].items()
    }
    prices = {
        p: PriceStats(int(s["listed"]), int(s["sold"]), int(s["revenueMicros"]))
        for p, s in data.get("prices", {}).items()
    }
    products = {
        (str(p["name"]), str(p["niche"])): ProductStats(int(p["listed"]), int(p["sold"]), int(p["priceMicros"]))
        for p in data.get("products", [])
    }
    return Brain(niches, float(data["lastUpdated"]), prices, products)


def _brain_json(brain: Brain) -> str:
    niches = {
        n: {"listed": s.listed, "sold": s.sold, "revenueMicros": s.revenue, "soldPriceMicros": s.sold_price_total}
        for n, s in sorted(brain.niches.items())
    }
    prices = {
        p: {"listed": s.listed, "sold": s.sold, "revenueMicros": s.revenue} for p, s in sorted(brain.prices.items())
    }
    products = [
        {"name": name, "niche": niche, "listed": s.listed, "sold": s.sold, "priceMicros": s.price}
        for (name, niche), s in sorted(brain.products.items())
    ]
    return json.dumps(
        {"version": 1, "niches": niches, "prices": prices, "products": products, "lastUpdated": brain.last_updated},
        separators=(",", ":"),
    )


def _bounded(table: dict[Any, Any], keep: Any, limit: int) -> None:
    """Drop the entries with the fewest sales, then listings (never `keep`) until `limit` remain."""
    while len(table) > limit:
        victim = min((k for k in table if k != keep), key=lambda k: (table[k].sold, table[k].listed, k))
        del table[victim]


def update_brain(
    conn: Conn,
    agent: AgentRow,
    action: str,
    niche: str,
    price: int,
    revenue: int | None,
    now: float,
    name: str | None = None,
) -> Brain:
    """Record a listing or a sale in the agent's brain (memory brain:v1): its niche, its price and,
    when named, its product; and in the network-wide shared_brain table, in the caller's transaction.
    `revenue` only for a sale (default: the price)."""
    if action not in ("listed", "sold"):
        raise WalletError("invalid_action", "action must be 'listed' or 'sold'", "action")
    check_niche(niche)
    check_not_settling(conn, agent)
    if action == "listed" and revenue is not None:
        raise WalletError("invalid_field", "revenue is only given with action 'sold'", "revenue")
    sold = action == "sold"
    if not sold:
        delta = store.NicheStats(listed=1)
    else:
        delta = store.NicheStats(sold=1, revenue=price if revenue is None else revenue, sold_price_total=price)
    brain = load_brain(conn, agent)
    cur = brain.niches.get(niche, store.NicheStats())
    new = store.NicheStats(
        cur.listed + delta.listed,
        cur.sold + delta.sold,
        cur.revenue + delta.revenue,
        cur.sold_price_total + delta.sold_price_total,
    )
    key = usdc_text(price)
    at = brain.prices.get(key, PriceStats())
    at = PriceStats(at.listed + delta.listed, at.sold + delta.sold, at.revenue + delta.revenue)
    if max(new.revenue, new.sold_price_total, at.revenue) > MAX_TOTAL_UNITS:
        raise WalletError("balance_limit", "this sale would exceed the largest total the brain can hold", "revenue")
    prices: dict[str, PriceStats] = {**brain.prices, key: at}
    _bounded(prices, key, MAX_BRAIN_PRICES)
    products = dict(brain.products)
    if name is not None:
        was = products.get((name, niche), ProductStats())
        products[(name, niche)] = ProductStats(was.listed + delta.listed, was.sold + delta.sold, price)
        _bounded(products, (name, niche), MAX_BRAIN_PRODUCTS)
    brain = Brain({**brain.niches, niche: new}, now, prices, products)
    store.put_memory(conn, agent.uuid, BRAIN_KEY, _brain_json(brain), now)
    store.add_shared_brain(conn, niche, delta, now)
    return brain


def top_products(brain: Brain, limit: int = TOP_PRODUCTS) -> list[tuple[str, str, ProductStats]]:
    """(name, niche, stats) of the named products with sales, most sold first (then by name, niche)."""
    ranked = sorted(
        ((name, niche, s) for (name, niche), s in brain.products.items() if s.sold),
        key=lambda t: (-t[2].sold, t[0], t[1]),
    )
    return ranked[:limit]


def win_rate(s: store.NicheStats) -> float:
    """Sales per listing, capped at 1 (a sale reported without its listing counts as one); 0
    without listings or sales."""
    trials = max(s.listed, s.sold)
    return s.sold / trials if trials else 0.0


def weights(brain: Brain, network: dict[str, store.NicheStats]) -> dict[str, float]:
    """Where to list next: for every specialty and every niche the agent or the network has seen,
    the Laplace-smoothed win rate (sold + 1) / (trials + 2) over the agent's counts plus the
    network's (which include the agent's own, so its own history weighs double), normalised to
    sum to 1 (rounded to 6 decimals). An unseen niche scores 1/2 before normalising, never 0."""
    names = sorted(set(SPECIALTIES) | set(brain.niches) | set(network))
    scores: dict[str, float] = {}
    for n in names:
        a = brain.niches.get(n, store.NicheStats())
        w = network.get(n, store.NicheStats())
        sold = a.sold + w.sold
        trials = max(a.listed, a.sold) + max(w.listed, w.sold)
        scores[n] = (sold + 1) / (trials + 2)
    total = sum(scores.values())
    return {n: round(v / total, 6) for n, v in scores.items()}
