"""What an owner sees: the agents a key may act for, their balances, earnings over time and by source,
the ledger (filtered, exported), memory and brain, an agent's listing in the drop with its offers,
checkout orders with their history and audit chain, decision-log entries, and hires (made and
received) with the services the agents publish in the registry. Each view composes
the features' own views and store reads (core.wallets, core.checkout.views, core.store.*); nothing
here writes.

Amounts are integers of micro-USDC; the adapter formats them. An account-scoped key sees every
agent of its account; an agent-scoped key sees its one agent.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from core import wallets
from core.checkout import views as checkout_views
from core.errors import ServiceError
from core.hire import rules as hire_rules
from core.hire import services as hire_services
from core.keys import Caller
from core.marketplace import rules as market_rules
from core.money import usdc_text
from core.store import Conn, database_of
from core.store import dashboard as store
from core.store import hire as hire_store
from core.store import marketplace as market_store
from core.store import wallets as wallet_store
from core.store.wallets import AgentRow, BalanceRow

#: At most this many agents are shown (an account with more shows its oldest).
MAX_AGENTS = 200
#: Days of the earnings-over-time chart.
CHART_DAYS = 30
LEDGER_KINDS = ("earn", "spend", "compound", "referral", "transfer")


@dataclass(frozen=True)
class AgentSummary:
    agent: AgentRow
    balance: BalanceRow
    settled: int  # gross on-chain payouts to it (never in the off-chain balance)
    memory_entries: int

    @property
    def total_earned(self) -> int:
        return self.balance.total_earned + self.settled


def visible_agents(conn: Conn, caller: Caller) -> list[AgentRow]:
    """The agents `caller` may act for (core.keys.Caller.may_act_for), oldest first."""
    if caller.agent_id is not None:
        agent = wallet_store.agent_by_uuid(conn, caller.agent_id)
        return [agent] if agent is not None and caller.may_act_for(agent.account_id, agent.uuid) else []
    return [AgentRow(*r) for r in store.agents_of_account(conn, caller.account_id, MAX_AGENTS)]


def summarise(conn: Conn, agent: AgentRow) -> AgentSummary:
    return AgentSummary(
        agent,
        wallet_store.get_balance(conn, agent.uuid),
        wallet_store.settled_earnings(conn, agent.uuid),
        wallet_store.count_memories(conn, agent.uuid),
    )


def agents(conn: Conn, caller: Caller) -> list[AgentSummary]:
    return [summarise(conn, a) for a in visible_agents(conn, caller)]


def agent(conn: Conn, caller: Caller, wallet: str) -> AgentRow:
    """One agent the caller may act for; 404 `agent_not_found` otherwise (existence is not leaked)."""
    found = wallet_store.agent_by_wallet(conn, wallet)
    if found is None or not caller.may_act_for(found.account_id, found.uuid):
        raise ServiceError(404, "agent_not_found", f"no agent {wallet} for this key", param="wallet")
    return found


# ---- earnings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceTotal:
    source: str
    amount: int
    count: int
    settled: bool  # an on-chain payout (which contract paid), not a reported earning


@dataclass(frozen=True)
class Earnings:
    days: list[str]  # UTC days, oldest first, CHART_DAYS of them
    reported: list[int]  # per day
    settled: list[int]  # per day (payouts the service saw released on that day)
    by_source: list[SourceTotal]
    reported_total: int
    settled_total: int
    undated_settled: int  # settled payouts with no release time (not in the daily series)


def _contract_names(contracts: dict[str, str]) -> dict[str, str]:
    return {address.lower(): name for name, address in contracts.items()}


@dataclass
class _Reported:
    """An agent's reported earnings folded up to ledger row `last_id`: by source (gross, count) and by
    UTC day. The ledger is append-only, so folding in the rows above `last_id` keeps this exact and a
    live update reads only what is new; but only rows older than SETTLE_AFTER are folded (see there)."""

    last_id: int = 0
    by_source: dict[str, list[int]] = field(default_factory=dict)
    by_day: dict[str, int] = field(default_factory=dict)

    def add(self, r: store.EarningRow) -> None:
        entry = self.by_source.setdefault(r.source, [0, 0])
        entry[0] += r.gross
        entry[1] += 1
        day = datetime.fromtimestamp(r.created_at, UTC).date().isoformat()
        self.by_day[day] = self.by_day.get(day, 0) + r.gross

    def copy(self) -> _Reported:
        return _Reported(self.last_id, {k: list(v) for k, v in self.by_source.items()}, dict(self.by_day))


#: Folded earnings per (database, agent), least recently used first; bounded. Renders run in the
#: reads' worker threads on PostgreSQL (core.store.reads): one fold at a time, or two would count
#: the same rows twice.
_FOLDED: OrderedDict[tuple[str, str], _Reported] = OrderedDict()
_FOLDED_LOCK = threading.Lock()
_FOLDED_MAX = 4096
_FOLD_PAGE = 10_000
#: Seconds after which a ledger row is folded for good. With several processes on PostgreSQL a row's
#: id is taken at its INSERT and a smaller id can commit after a larger one was read; folding past
#: the larger would skip the smaller for ever. A write transaction lasts milliseconds, so rows this
#: old have all committed: younger rows are added to each answer afresh instead.
SETTLE_AFTER = 300.0


def _reported(conn: Conn, agent_uuid: str, now: float) -> _Reported:
    key = (database_of(conn).location, agent_uuid)
    with _FOLDED_LOCK:
        folded = _FOLDED.pop(key, None) or _Reported()
        _FOLDED[key] = folded
        if len(_FOLDED) > _FOLDED_MAX:
            _FOLDED.popitem(last=False)
        recent: list[store.EarningRow] = []
        after = folded.last_id
        while True:
            rows = store.earnings_after(conn, agent_uuid, after, _FOLD_PAGE)
            for r in rows:
                if recent or r.created_at > now - SETTLE_AFTER:
                    recent.append(r)  # and every row after it: the fold stays a prefix of the ids
                else:
                    folded.add(r)
                    folded.last_id = r.id
            if len(rows) < _FOLD_PAGE:
                break
            after = rows[-1].id
        if not recent:
            return folded.copy()
        answer = folded.copy()
        for r in recent:
            answer.add(r)
        return answer


def earnings(
    conn: Conn, agents_: list[AgentRow], now: float, contracts: dict[str, str], days: int = CHART_DAYS
) -> Earnings:
    """Reported earnings (the ledger: earn rows and referral credits) and settled payouts (on-chain,
    indexed) per UTC day for the last `days` days, and all-time totals by source: a reported
    earning's source as its reporter named it; a settled payout's source is the contract that paid
    it ("settled: PaymentGateway")."""
    uuids = [a.uuid for a in agents_]
    today = datetime.fromtimestamp(now, UTC).date()
    first = today - timedelta(days=days - 1)
    labels = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    since = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
    reported = dict.fromkeys(labels, 0)
    sourced: dict[str, list[int]] = {}
    for uuid in uuids:
        folded = _reported(conn, uuid, now)
        for day in labels:
            reported[day] += folded.by_day.get(day, 0)
        for source, (amount, n) in folded.by_source.items():
            entry = sourced.setdefault(source, [0, 0])
            entry[0] += amount
            entry[1] += n
    settled = dict.fromkeys(labels, 0)
    for day, amount in store.settled_by_day(conn, uuids, since):
        if day in settled:
            settled[day] += amount
    names = _contract_names(contracts)
    by_payer = store.settled_by_payer(conn, uuids)
    settled_total = sum(v for _, v, _ in by_payer)
    undated = settled_total - store.settled_dated_total(conn, uuids)
    sources = [SourceTotal(src or "(none)", amount, n, False) for src, (amount, n) in sourced.items()]
    sources += [SourceTotal("settled: " + names.get(a.lower(), a), v, n, True) for a, v, n in by_payer]
    sources.sort(key=lambda s: (-s.amount, s.source))
    reported_total = sum(s.amount for s in sources if not s.settled)
    return Earnings(
        labels,
        [reported[d] for d in labels],
        [settled[d] for d in labels],
        sources,
        reported_total,
        settled_total,
        undated,
    )


# ---- the ledger ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerFilter:
    """What the ledger shows: one agent (its wallet) or all, one kind, one exact source, UTC days
    from..to (inclusive), and rows before an id (the next page)."""

    wallet: str | None = None
    kind: str | None = None
    source: str | None = None
    since: date | None = None
    until: date | None = None
    before: int | None = None

    def query(self) -> dict[str, str]:
        """The filter as query parameters (for links: the CSV export, the next page)."""
        out = {
            "agent": self.wallet,
            "kind": self.kind,
            "source": self.source,
            "from": None if self.since is None else self.since.isoformat(),
            "to": None if self.until is None else self.until.isoformat(),
        }
        return {k: v for k, v in out.items() if v}


@dataclass(frozen=True)
class LedgerLine:
    row: store.LedgerRow
    wallet: str
    name: str


@dataclass(frozen=True)
class LedgerPage:
    lines: list[LedgerLine]
    next_before: int | None  # the `before` of the next (older) page, None at the end


def _day_start(d: date) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()


def _ledger_rows(
    conn: Conn, agents_: list[AgentRow], f: LedgerFilter, limit: int
) -> tuple[list[store.LedgerRow], dict[str, AgentRow]]:
    by_uuid = {a.uuid: a for a in agents_}
    uuids = list(by_uuid)
    if f.wallet is not None:
        uuids = [a.uuid for a in agents_ if a.wallet == f.wallet]
    if f.kind is not None and f.kind not in LEDGER_KINDS:
        raise ServiceError(400, "invalid_field", f"kind must be one of {', '.join(LEDGER_KINDS)}", param="kind")
    rows = store.ledger_rows(
        conn,
        uuids,
        kind=f.kind,
        source=f.source,
        since=None if f.since is None else _day_start(f.since),
        until=None if f.until is None else _day_start(f.until) + 86400,
        before_id=f.before,
        limit=limit,
    )
    return rows, by_uuid


def ledger(conn: Conn, agents_: list[AgentRow], f: LedgerFilter, limit: int = 50) -> LedgerPage:
    rows, by_uuid = _ledger_rows(conn, agents_, f, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    lines = [LedgerLine(r, by_uuid[r.agent_uuid].wallet, by_uuid[r.agent_uuid].name) for r in rows]
    return LedgerPage(lines, rows[-1].id if more and rows else None)


CSV_HEADER = [
    "id",
    "time_utc",
    "wallet",
    "agent",
    "kind",
    "source",
    "amount_usdc",
    "gross_usdc",
    "toll_usdc",
    "referral_usdc",
    "owner_delta_usdc",
    "self_delta_usdc",
    "reinvested_delta_usdc",
    "balance_after_usdc",
]


def _opt(units: int | None) -> str:
    return "" if units is None else usdc_text(units)


def _csv_text(value: str) -> str:
    """A cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def ledger_csv_page(
    conn: Conn, agents_: list[AgentRow], f: LedgerFilter, before: int | None, page: int = 5000
) -> tuple[list[list[str]], int | None]:
    """One page of the filtered ledger, newest first, as CSV rows after CSV_HEADER (amounts in USDC):
    up to `page` rows older than row id `before` (None: from the newest), and the `before` of the next
    page (None: this was the last). One query per page (keyset on the id), so no statement stays open
    while the caller writes a page out; each page may be read on another connection."""
    rows, by_uuid = _ledger_rows(
        conn, agents_, LedgerFilter(f.wallet, f.kind, f.source, f.since, f.until, before), page
    )
    return [_csv_row(r, by_uuid[r.agent_uuid]) for r in rows], rows[-1].id if len(rows) == page else None


def _csv_row(r: store.LedgerRow, a: AgentRow) -> list[str]:
    return [
        str(r.id),
        datetime.fromtimestamp(r.created_at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        a.wallet,
        _csv_text(a.name),
        r.kind,
        _csv_text(r.source or ""),
        usdc_text(r.amount),
        _opt(r.gross),
        _opt(r.service_cut),
        _opt(r.referral_cut),
        usdc_text(r.owner_delta),
        usdc_text(r.self_delta),
        usdc_text(r.reinvested_delta),
        usdc_text(r.balance_after),
    ]


# ---- on-chain standing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """An agent linked as a provider, as the registry's events were indexed: its NFT, owner, self
    wallet (zero while reset after a change of hands), lifetime earnings, hire price and SLA, whether
    it is paused for sale (listed), and its hires still locked in AgentEscrow."""

    wallet: str
    name: str
    token_id: int | None  # None: linked, the mint not recorded yet
    owner: str | None
    self_wallet: str | None
    lifetime_earnings: int
    hire_price: int
    hire_sla: int
    paused: bool
    open_hires: int


def standing(conn: Conn, agents_: list[AgentRow]) -> list[Standing]:
    by_uuid = {a.uuid: a for a in agents_}
    out = []
    for r in store.onchain_agents(conn, list(by_uuid)):
        a = by_uuid[r.agent_uuid]
        out.append(
            Standing(
                a.wallet,
                a.name,
                r.token_id,
                r.owner,
                r.self_wallet,
                r.lifetime_earnings,
                r.hire_price,
                r.hire_sla,
                r.paused,
                r.open_hires,
            )
        )
    return out


# ---- the drop: an agent's listing with its offers --------------------------------------------------


#: At most this many offers of a listing are shown (the oldest first, as the offer book keeps them).
MAX_OFFERS = 50


@dataclass(frozen=True)
class ListingView:
    """The agent's latest listing in the drop (core.marketplace): its terms and state, whether it
    pauses the agent (no spend, no hire while active or settling), its offers (never their
    signatures: the API hands those to the seller only) and the sale it led to, if any."""

    listing: market_store.ListingRow
    paused: bool
    offers: list[market_store.OfferRow]
    sale: market_store.SaleRow | None


def listing(conn: Conn, agent_: AgentRow) -> ListingView | None:
    row = market_store.latest_listing(conn, agent_.uuid)
    if row is None:
        return None
    return ListingView(
        row,
        row.state in (market_rules.ACTIVE, market_rules.SETTLING),
        market_store.offers_of(conn, row.id)[:MAX_OFFERS],
        market_store.live_sale(conn, row.id),
    )


# ---- memory and brain ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPage:
    entries: list[wallet_store.MemoryRow]
    next_cursor: str | None


def memory(conn: Conn, agent_: AgentRow, query: str | None, cursor: str | None, limit: int = 50) -> MemoryPage:
    rows = wallet_store.list_memories(conn, agent_.uuid, query or None, cursor, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    return MemoryPage(rows, rows[-1].key if more and rows else None)


@dataclass(frozen=True)
class BrainView:
    niches: dict[str, wallet_store.NicheStats]
    win_rates: dict[str, float]
    weights: list[tuple[str, float]]  # the top ones, highest first
    last_updated: float | None


def brain(conn: Conn, agent_: AgentRow, top: int = 5) -> BrainView:
    b = wallets.load_brain(conn, agent_)
    w = wallets.weights(b, wallet_store.shared_brain(conn))
    ranked = sorted(w.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return BrainView(b.niches, {n: wallets.win_rate(s) for n, s in b.niches.items()}, ranked, b.last_updated)


# ---- orders and decisions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderView:
    role: str  # provider (one of the agents sells) or buyer (the account funded it)
    order: dict[str, Any]  # core.checkout.views.order_view, as any valid key sees it


def orders(conn: Conn, caller: Caller, agents_: list[AgentRow], limit: int = 20) -> list[OrderView]:
    if caller.agent_id is not None:
        ids = store.order_ids_funded_by(conn, caller.key_hash, caller.agent_id, limit)
    else:
        ids = store.order_ids_for(conn, caller.account_id, [a.uuid for a in agents_], limit)
    out = []
    for order_id, role in ids:
        view = checkout_views.order_view(conn, order_id, "authenticated")
        if view is not None:
            out.append(OrderView(role, view))
    return out


@dataclass(frozen=True)
class DecisionView:
    audit_id: int
    wallet: str
    name: str
    seq: int
    tier: str
    model: str
    content_hash: str
    chain_hash: str
    created_at: float


def decisions(conn: Conn, agents_: list[AgentRow], limit: int = 20) -> list[DecisionView]:
    """The latest decision-log entries of the agents (stream agent:<uuid>), newest first."""
    by_stream = {f"agent:{a.uuid}": a for a in agents_}
    out = []
    for d in store.decisions_of(conn, list(by_stream), limit):
        a = by_stream[d.stream]
        payload = json.loads(d.payload)
        out.append(
            DecisionView(
                d.audit_id,
                a.wallet,
                a.name,
                d.seq,
                str(payload.get("event_type", "")),
                f"{payload.get('model_id', '')} {payload.get('model_version', '')}".strip(),
                str(payload.get("content_hash", "")),
                d.chain_hash,
                d.created_at,
            )
        )
    return out


# ---- hires and the registry (core.hire) -------------------------------------------------------------

#: At most this many hires are shown (the latest, both sides together).
MAX_HIRES = 20


@dataclass(frozen=True)
class HireView:
    """One hire from the side of one of the owner's agents (core.store.hire.HireLine): the other side
    (an agl_ wallet, or an escrow hire's on-chain caller), and when it must be done by: an escrow
    hire's on-chain expiry (refundable by anyone after it), a standard hire's SLA while it runs."""

    line: hire_store.HireLine
    wallet: str
    name: str
    counterparty: str | None
    deadline: float | None
    in_flight: bool


def hires(conn: Conn, agents_: list[AgentRow], limit: int = MAX_HIRES) -> list[HireView]:
    """The agents' latest hires, made (caller) and received (provider), newest first."""
    by_uuid = {a.uuid: a for a in agents_}
    out = []
    for h in hire_store.hires_of(conn, list(by_uuid), limit):
        a = by_uuid[h.agent_uuid]
        other = h.provider_wallet if h.role == "caller" else h.caller_wallet or h.caller_address
        in_flight = h.status in hire_store.IN_FLIGHT
        deadline: float | None = None
        if h.kind == hire_rules.ESCROW and h.expires_at is not None:
            deadline = float(h.expires_at)
        elif in_flight and h.sla_seconds is not None:
            deadline = h.created_at + h.sla_seconds
        out.append(HireView(h, a.wallet, a.name, other, deadline, in_flight))
    return out


@dataclass(frozen=True)
class ServiceStanding:
    """A service an agent publishes, as the registry ranks it (core.hire.registry): price, SLA,
    reputation, health, whether an escrow hire can be made now (and why not), and whether the agent is
    paused for a sale (then the registry lists none of its services). Never its secrets."""

    wallet: str
    name: str
    service: hire_store.ServiceRow
    paused: bool
    escrow_available: bool
    escrow_reason: str | None


def registry_standing(conn: Conn, agents_: list[AgentRow]) -> list[ServiceStanding]:
    out = []
    for a in agents_:
        for s in hire_store.services_of(conn, a.uuid):
            paused = hire_services.provider_paused(conn, s)
            terms = hire_services.escrow_terms(s, hire_store.chain_agent(conn, s.token_id), paused=paused)
            out.append(ServiceStanding(a.wallet, a.name, s, paused, bool(terms["available"]), terms["reason"]))
    return out
