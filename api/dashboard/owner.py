"""The owner's pages: /dashboard (agents and balances, earnings charts, the ledger with filters and
CSV export, on-chain standing, registry standing, hires, orders, decision-log entries) and
/dashboard/agents/{wallet} (one agent's balances, its listing in the drop with offers, registry
standing, hires, memory and brain). Each panel is a function
of an OwnerView (core.dashboard.owner does the reading); the live endpoint re-renders the same panels.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from aiohttp import web
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from api.dashboard.page import (
    Nav,
    badge,
    esc,
    html_errors,
    html_response,
    json_script,
    layout,
    money,
    panel,
    redirect,
    secure,
    short,
    stats,
    table,
    when,
)
from api.dashboard.session import viewer_of
from api.http import services_of
from api.models import WALLET_PATTERN, parse_query
from core.dashboard import owner
from core.dashboard.access import Viewer
from core.dashboard.owner import LedgerFilter
from core.store import Conn
from core.store.wallets import AgentRow
from core.transparency import explorer_tx_url


def _blank_is_none(value: Any) -> Any:
    return None if value == "" else value


Blank = BeforeValidator(_blank_is_none)


class LedgerQuery(BaseModel):
    """The ledger's filters as a GET form sends them (an empty field means no filter)."""

    model_config = ConfigDict(extra="ignore")
    agent: Annotated[str | None, Blank, Field(pattern=WALLET_PATTERN)] = None
    kind: Annotated[Literal["earn", "spend", "compound", "referral", "transfer"] | None, Blank] = None
    source: Annotated[str | None, Blank, Field(max_length=200)] = None
    from_: Annotated[date | None, Blank, Field(alias="from")] = None
    to: Annotated[date | None, Blank] = None
    before: Annotated[int | None, Blank, Field(ge=1, le=2**62)] = None

    def filter(self) -> LedgerFilter:
        return LedgerFilter(self.agent, self.kind, self.source, self.from_, self.to, self.before)


class MemoryQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    query: Annotated[str | None, Blank, Field(max_length=256)] = None
    cursor: Annotated[str | None, Blank, Field(max_length=256)] = None


@dataclass
class OwnerView:
    """What every owner panel renders from (read once per page or live update). Built and rendered
    inside one read function (`services.reads.run`): `conn` is that function's connection, never kept
    past it."""

    request: web.Request
    conn: Conn
    viewer: Viewer
    agents: list[AgentRow]
    now: float
    ledger: LedgerFilter = field(default_factory=LedgerFilter)
    agent: AgentRow | None = None  # the agent page's agent
    memory: MemoryQuery = field(default_factory=MemoryQuery)


@dataclass(frozen=True)
class Panel:
    """One box of a page: `render` gives its live part (re-rendered by /dashboard/live); `fixed`, if
    any, its part that stays while a person uses it (a filter form)."""

    id: str
    title: str
    render: Callable[[OwnerView], str]
    fixed: Callable[[OwnerView], str] | None = None
    wide: bool = False


def _agent_link(wallet: str, name: str) -> str:
    return f'<a href="/dashboard/agents/{esc(wallet)}">{esc(name)}</a> <code class="muted">{esc(wallet)}</code>'


# ---- the overview's panels -----------------------------------------------------------------------


def agents_panel(v: OwnerView) -> str:
    rows = []
    total_balance = total_earned = 0
    for s in owner.agents(v.conn, v.viewer.caller):
        b = s.balance
        total_balance += b.balance
        total_earned += s.total_earned
        rows.append(
            [
                _agent_link(s.agent.wallet, s.agent.name),
                money(b.balance),
                money(b.owner_balance),
                money(b.self_balance),
                money(b.reinvested),
                money(b.total_earned),
                money(s.settled),
                money(s.total_earned),
                str(s.memory_entries),
            ]
        )
    figures = stats(
        [("Agents", str(len(rows))), ("Balance (USDC)", money(total_balance)), ("Earned (USDC)", money(total_earned))]
    )
    headers = ["Agent", "Balance", "Owner part", "Self part", "Reinvested", "Reported", "Settled", "Earned", "Memory"]
    return figures + table("Agents and balances (USDC)", headers, rows, numeric=range(1, 9))


def earnings_panel(v: OwnerView) -> str:
    deployed = services_of(v.request.app).deployment.contracts
    e = owner.earnings(v.conn, v.agents, v.now, deployed)
    data = {
        "days": e.days,
        "reported": [int(x) / 1e6 for x in e.reported],
        "settled": [int(x) / 1e6 for x in e.settled],
        "sources": [s.source for s in e.by_source],
        "amounts": [s.amount / 1e6 for s in e.by_source],
    }
    figures = stats([("Reported (USDC)", money(e.reported_total)), ("Settled on-chain (USDC)", money(e.settled_total))])
    charts = (
        '<div class="charts">'
        '<figure><div class="chart-box"><canvas id="chart-daily" role="img" aria-label="Earnings per day over the last '
        '30 days, reported and settled, in USDC (the same figures are in the table Per day)"></canvas></div>'
        "<figcaption>Per day, last 30 days (UTC)</figcaption></figure>"
        '<figure><div class="chart-box"><canvas id="chart-sources" role="img" aria-label="Earnings by source in USDC '
        '(the same figures are in the table Earnings by source)"></canvas></div>'
        "<figcaption>By source, all time</figcaption></figure></div>"
    )
    by_source = table(
        "Earnings by source",
        ["Source", "Kind", "Earned (USDC)", "Payments"],
        (
            [esc(s.source), "settled on-chain" if s.settled else "reported", money(s.amount), str(s.count)]
            for s in e.by_source
        ),
        numeric=(2, 3),
    )
    days = table(
        "Per day (UTC)",
        ["Day", "Reported (USDC)", "Settled (USDC)"],
        ([d, money(r), money(s)] for d, r, s in zip(e.days, e.reported, e.settled, strict=True) if r or s),
        numeric=(1, 2),
    )
    note = ""
    if e.undated_settled:
        note = (
            f'<p class="muted">{money(e.undated_settled)} USDC settled without a release the service recorded is '
            "counted by source but not per day.</p>"
        )
    return (
        figures
        + charts
        + json_script("earnings-data", data)
        + by_source
        + f'<details data-key="per-day"><summary>Per day</summary>{days}</details>'
        + note
    )


KINDS = ("earn", "spend", "compound", "referral", "transfer")


def ledger_form(v: OwnerView) -> str:
    f = v.ledger
    options = ['<option value="">All agents</option>']
    for a in v.agents:
        selected = " selected" if a.wallet == f.wallet else ""
        options.append(f'<option value="{esc(a.wallet)}"{selected}>{esc(a.name)} ({esc(a.wallet)})</option>')
    kinds = ['<option value="">All kinds</option>']
    for k in KINDS:
        selected = " selected" if k == f.kind else ""
        kinds.append(f'<option value="{k}"{selected}>{k}</option>')
    since = "" if f.since is None else f.since.isoformat()
    until = "" if f.until is None else f.until.isoformat()
    query = urlencode(f.query())
    csv_href = "/dashboard/ledger.csv" + (f"?{query}" if query else "")
    return (
        '<form method="get" action="/dashboard#ledger" class="filters">'
        f'<div><label for="f-agent">Agent</label><select id="f-agent" name="agent">{"".join(options)}</select></div>'
        f'<div><label for="f-kind">Kind</label><select id="f-kind" name="kind">{"".join(kinds)}</select></div>'
        f'<div><label for="f-source">Source</label><input id="f-source" name="source" maxlength="200"'
        f' value="{esc(f.source or "")}"></div>'
        f'<div><label for="f-from">From (UTC)</label><input id="f-from" name="from" type="date" value="{since}"></div>'
        f'<div><label for="f-to">To (UTC)</label><input id="f-to" name="to" type="date" value="{until}"></div>'
        '<div class="actions"><button type="submit">Filter</button>'
        f' <a class="button secondary" href="{esc(csv_href)}" download>Export CSV</a></div></form>'
    )


def ledger_panel(v: OwnerView) -> str:
    page = owner.ledger(v.conn, v.agents, v.ledger)
    rows = [
        [
            esc(when(line.row.created_at)),
            _agent_link(line.wallet, line.name),
            esc(line.row.kind),
            esc(line.row.source or ""),
            money(line.row.gross if line.row.kind == "earn" else line.row.amount),
            money(line.row.amount),
            money(line.row.service_cut),
            money(line.row.balance_after),
            str(line.row.id),
        ]
        for line in page.lines
    ]
    headers = ["Time", "Agent", "Kind", "Source", "Gross", "Balance change", "Toll", "Balance after", "#"]
    out = table("Ledger (USDC)", headers, rows, numeric=(4, 5, 6, 7, 8))
    if page.next_before is not None:
        q = urlencode({**v.ledger.query(), "before": page.next_before})
        out += f'<p><a href="/dashboard?{esc(q)}#ledger">Older entries</a></p>'
    return out


def standing_panel(v: OwnerView) -> str:
    """On-chain standing of the agents linked as providers: their agent NFT as indexed from the
    registry (owner, self wallet, lifetime earnings, hire price and SLA, sale pause)."""
    rows = []
    for s in owner.standing(v.conn, v.agents):
        rows.append(
            [
                _agent_link(s.wallet, s.name),
                "" if s.token_id is None else str(s.token_id),
                f"<code>{esc(short(s.owner))}</code>" if s.owner else "",
                f"<code>{esc(short(s.self_wallet))}</code>" if s.self_wallet else "",
                money(s.lifetime_earnings),
                money(s.hire_price) if s.hire_price else "not for hire",
                "" if not s.hire_sla else f"{s.hire_sla // 3600} h",
                "listed" if s.paused else "",
                str(s.open_hires),
            ]
        )
    headers = ["Agent", "Token", "Owner", "Self wallet", "Lifetime (USDC)", "Hire price", "SLA", "Sale", "Open hires"]
    return table("Agent NFTs (AgentRegistry, as indexed)", headers, rows, numeric=(1, 4, 8))


def orders_panel(v: OwnerView) -> str:
    rows = []
    for o in owner.orders(v.conn, v.viewer.caller, v.agents):
        order = o.order
        moves = "".join(
            f"<li>{esc(h['from_state'] or 'new')} → {badge(h['to_state'])} by {esc(h['actor'])}, "
            f"{esc(h['at'])}"
            + (f", tx <code>{esc(short(h['tx_hash']))}</code>" if h.get("tx_hash") else "")
            + f' · <a href="/verify/{int(h["audit_id"])}">audit #{int(h["audit_id"])}</a></li>'
            for h in order["history"]
        )
        entries = order["audit_chain"]["entries"]
        chain = entries[-1]["chain_hash"] if entries else ""
        total = (order.get("totals") or {}).get("total")
        history = (
            f'<details data-key="{esc(order["id"])}"><summary>{len(order["history"])} moves</summary>'
            f'<ol class="moves">{moves}</ol>'
            f'<p class="muted">chain head <code>{esc(short(chain))}</code></p></details>'
        )
        rows.append(
            [
                f'<code title="{esc(order["id"])}">{esc(short(order["id"], 12, 4))}</code>',
                esc(o.role),
                badge(order["status"]),
                money(total if isinstance(total, int) else None),
                esc(order["updated_at"]),
                history,
            ]
        )
    return table(
        "Checkout orders", ["Order", "Role", "Status", "Amount (USDC)", "Updated", "History"], rows, numeric=(3,)
    )


def decisions_panel(v: OwnerView) -> str:
    rows = [
        [
            esc(when(d.created_at)),
            _agent_link(d.wallet, d.name),
            badge(d.tier),
            esc(d.model),
            str(d.seq),
            f"<code>{esc(short(d.chain_hash))}</code>",
            f'<a href="/verify/{d.audit_id}">verify #{d.audit_id}</a>',
        ]
        for d in owner.decisions(v.conn, v.agents)
    ]
    return table("Decision log (latest)", ["Time", "Agent", "Tier", "Model", "Seq", "Chain hash", "Verify"], rows)


def _tx(v: OwnerView, label: str, tx_hash: str | None) -> str:
    """A transaction hash, shortened, linked to the chain's block explorer when it has one."""
    if not tx_hash:
        return ""
    code = f'<code title="{esc(tx_hash)}">{esc(short(tx_hash))}</code>'
    url = explorer_tx_url(services_of(v.request.app).deployment.chain_id, tx_hash)
    inner = f'<a href="{esc(url)}" rel="noopener noreferrer">{code}</a>' if url else code
    return f"<span>{esc(label)} {inner}</span>"


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds} s"


def hires_panel(v: OwnerView) -> str:
    """The agents' latest hires, made (caller) and received (provider), newest first
    (core.dashboard.owner.hires): for an escrow hire its on-chain job and release or refund."""
    rows = []
    for h in owner.hires(v.conn, v.agents):
        line = h.line
        outcome = " · ".join(x for x in (line.outcome, line.error_code) if x)
        chain = ""
        if line.kind == "escrow":
            settle = "release" if line.status in ("released", "releasing") else "refund"
            parts = [
                f'job <code title="{esc(line.job_id)}">{esc(short(line.job_id))}</code>',
                _tx(v, "lock", line.created_tx),
                _tx(v, settle, line.settle_tx),
                "final" if line.final else "",
            ]
            chain = "<br>".join(p for p in parts if p)
        mark = f'data-hire="{esc(line.job_id)}" data-role="{esc(line.role)}"'
        rows.append(
            [
                f"<span {mark}>{esc(when(line.created_at))}</span>",
                _agent_link(h.wallet, h.name),
                esc(line.role),
                esc(line.kind),
                f"<code>{esc(line.service_type)}</code>",
                f"<code>{esc(h.counterparty)}</code>" if h.counterparty else "",
                money(line.amount),
                badge(line.status) + (f' <span class="muted">{esc(outcome)}</span>' if outcome else ""),
                "" if line.response_ms is None else f"{line.response_ms} ms",
                esc(when(h.deadline)),
                chain,
            ]
        )
    headers = [
        "Time", "Agent", "Role", "Kind", "Service", "Counterparty", "Amount (USDC)", "State", "Response",
        "SLA deadline", "On-chain",
    ]  # fmt: skip
    return table(f"Hires (latest {owner.MAX_HIRES})", headers, rows, numeric=(6, 8))


def registry_panel(v: OwnerView) -> str:
    """The services the agents publish, as the registry ranks them (core.dashboard.owner.registry_standing).
    A description is the provider's own text: escaped like every value."""
    rows = []
    for st in owner.registry_standing(v.conn, v.agents):
        s = st.service
        escrow = "available" if st.escrow_available else f'no <span class="muted">{esc(st.escrow_reason or "")}</span>'
        rows.append(
            [
                _agent_link(st.wallet, st.name),
                f"<code>{esc(s.service_type)}</code>",
                f'<span class="description">{esc(s.description)}</span>',
                money(s.price),
                _duration(s.sla_seconds),
                f"{s.score:.3f}",
                "" if s.success_rate is None else f"{s.success_rate:.0%}",
                "" if s.avg_ms is None else f"{s.avg_ms} ms",
                str(s.jobs),
                "healthy" if s.healthy else f"unhealthy ({s.consecutive_failures} failures)",
                escrow,
                "paused (listed for sale)" if st.paused else "",
                "published" if s.active else "withdrawn",
            ]
        )
    headers = [
        "Agent", "Service", "Description", "Price (USDC)", "SLA", "Score", "Success", "Avg response", "Jobs",
        "Health", "Escrow", "Paused", "State",
    ]  # fmt: skip
    return table("Services in the registry", headers, rows, numeric=(3, 5, 6, 7, 8))


#: The overview, in order. A feature that lands adds its panel here (see the module docstring).
OVERVIEW_PANELS: list[Panel] = [
    Panel("agents", "Agents and balances", agents_panel, wide=True),
    Panel("earnings", "Earnings", earnings_panel, wide=True),
    Panel("ledger", "Ledger", ledger_panel, fixed=ledger_form, wide=True),
    Panel("standing", "On-chain standing", standing_panel, wide=True),
    Panel("registry", "Registry standing", registry_panel, wide=True),
    Panel("hires", "Hires", hires_panel, wide=True),
    Panel("orders", "Orders", orders_panel, wide=True),
    Panel("decisions", "Decision log", decisions_panel, wide=True),
]


# ---- one agent's page ----------------------------------------------------------------------------


def agent_summary_panel(v: OwnerView) -> str:
    assert v.agent is not None
    s = owner.summarise(v.conn, v.agent)
    b = s.balance
    return (
        stats(
            [
                ("Wallet", f"<code>{esc(v.agent.wallet)}</code>"),
                ("Specialty", esc(v.agent.specialty)),
                ("Balance (USDC)", money(b.balance)),
                ("Owner part", money(b.owner_balance)),
                ("Self part", money(b.self_balance)),
                ("Reinvested", money(b.reinvested)),
                ("Reported earned", money(b.total_earned)),
                ("Settled earned", money(s.settled)),
                ("Memory entries", str(s.memory_entries)),
            ]
        )
        + f'<p><a href="/dashboard?agent={esc(v.agent.wallet)}#ledger">This agent\'s ledger</a></p>'
    )


def memory_form(v: OwnerView) -> str:
    assert v.agent is not None
    return (
        f'<form method="get" action="/dashboard/agents/{esc(v.agent.wallet)}#memory" class="filters">'
        '<div><label for="m-query">Key contains</label>'
        f'<input id="m-query" name="query" maxlength="256" value="{esc(v.memory.query or "")}"></div>'
        '<div class="actions"><button type="submit">Search</button></div></form>'
    )


def memory_panel(v: OwnerView) -> str:
    assert v.agent is not None
    page = owner.memory(v.conn, v.agent, v.memory.query, v.memory.cursor)
    rows = [
        [f"<code>{esc(m.key)}</code>", f'<pre class="value">{esc(m.value)}</pre>', esc(when(m.updated_at))]
        for m in page.entries
    ]
    out = table("Memory", ["Key", "Value (JSON)", "Updated"], rows)
    if page.next_cursor is not None:
        q = urlencode({k: val for k, val in (("query", v.memory.query), ("cursor", page.next_cursor)) if val})
        out += f'<p><a href="/dashboard/agents/{esc(v.agent.wallet)}?{esc(q)}#memory">More</a></p>'
    return out


def brain_panel(v: OwnerView) -> str:
    assert v.agent is not None
    b = owner.brain(v.conn, v.agent)
    rows = [
        [esc(n), str(s.listed), str(s.sold), money(s.revenue), f"{b.win_rates[n]:.0%}"]
        for n, s in sorted(b.niches.items())
    ]
    weights = "".join(f"<li>{esc(n)}: {w:.3f}</li>" for n, w in b.weights)
    updated = f'<p class="muted">updated {esc(when(b.last_updated))}</p>' if b.last_updated else ""
    return (
        table("Niches", ["Niche", "Listed", "Sold", "Revenue (USDC)", "Win rate"], rows, numeric=(1, 2, 3, 4))
        + f'<h3>Where to list next</h3><ol class="weights">{weights}</ol>'
        + updated
    )


def listing_panel(v: OwnerView) -> str:
    """The agent's latest listing in the drop and its offers (core.dashboard.owner.listing)."""
    assert v.agent is not None
    found = owner.listing(v.conn, v.agent)
    if found is None:
        return '<p class="muted">Not listed in the drop.</p>'
    row = found.listing
    figures = stats(
        [
            ("Status", badge(row.state)),
            ("Agent", "paused for the sale (earns; no spend, no hire)" if found.paused else "not paused"),
            ("Asking (USDC)", money(row.asking_price)),
            ("Floor (USDC)", money(row.floor_price)),
            ("Offers", "accepted below the asking price" if row.accept_offers else "not taken"),
            ("Expires", esc(when(float(row.expires_at)))),
        ]
    )
    offers = [
        [
            f"<code>{esc(short(o.buyer_address))}</code>",
            money(o.price),
            badge(o.state),
            esc(when(float(o.deadline))),
            esc(when(o.created_at)),
        ]
        for o in found.offers
    ]
    out = figures + table("Offers", ["Buyer", "Price (USDC)", "State", "Deadline", "Made"], offers, numeric=(1,))
    if found.sale is not None:
        sale = found.sale
        out += (
            f"<p>Sale {badge(sale.state)} to <code>{esc(short(sale.buyer_address))}</code> for "
            f"{money(sale.price)} USDC (proceeds {money(sale.seller_proceeds)}); due-diligence bundle "
            f'<a href="/verify/{int(sale.bundle_audit_id)}">audit #{int(sale.bundle_audit_id)}</a>.</p>'
        )
    return out


AGENT_PANELS: list[Panel] = [
    Panel("agent", "Balances", agent_summary_panel, wide=True),
    Panel("listing", "Listing in the drop", listing_panel, wide=True),
    Panel("registry", "Registry standing", registry_panel, wide=True),
    Panel("hires", "Hires", hires_panel, wide=True),
    Panel("memory", "Memory", memory_panel, fixed=memory_form, wide=True),
    Panel("brain", "Brain", brain_panel, wide=True),
]


# ---- pages ---------------------------------------------------------------------------------------


def render(panels: list[Panel], v: OwnerView) -> str:
    return "".join(
        panel(p.id, p.title, p.render(v), wide=p.wide, fixed=None if p.fixed is None else p.fixed(v)) for p in panels
    )


def live_panels(panels: list[Panel], v: OwnerView) -> dict[str, str]:
    return {p.id: p.render(v) for p in panels}


def overview_view(db: Conn, request: web.Request, viewer: Viewer, now: float) -> OwnerView:
    """The overview's view, on `db` (inside a read function)."""
    q = parse_query(LedgerQuery, dict(request.query))
    return OwnerView(request, db, viewer, owner.visible_agents(db, viewer.caller), now, ledger=q.filter())


def agent_view(db: Conn, request: web.Request, viewer: Viewer, wallet: str, now: float) -> OwnerView:
    """One agent's view, on `db` (inside a read function)."""
    found = owner.agent(db, viewer.caller, wallet)
    memory = parse_query(MemoryQuery, dict(request.query))
    return OwnerView(request, db, viewer, [found], now, agent=found, memory=memory)


def _live_url(view: str, query: dict[str, str]) -> str:
    return "/dashboard/live?" + urlencode({"view": view, **query})


@html_errors
async def overview(request: web.Request) -> web.StreamResponse:
    now = services_of(request.app).clock()

    def read(db: Conn) -> str | None:
        viewer = viewer_of(db, request, now)
        if viewer is None:
            return None
        v = overview_view(db, request, viewer, now)
        title = "Your agents" if viewer.caller.agent_id is None else "Your agent"
        return layout(
            request,
            title,
            render(OVERVIEW_PANELS, v),
            nav=Nav(viewer.csrf, viewer.operator, "overview"),
            live=_live_url("overview", dict(request.query)),
            charts=True,
        )

    page = await services_of(request.app).reads.run(read)
    if page is None:
        return redirect("/dashboard/sign-in")
    return html_response(page)


@html_errors
async def agent_page(request: web.Request) -> web.StreamResponse:
    now = services_of(request.app).clock()
    wallet = request.match_info["wallet"]

    def read(db: Conn) -> str | None:
        viewer = viewer_of(db, request, now)
        if viewer is None:
            return None
        v = agent_view(db, request, viewer, wallet, now)
        assert v.agent is not None
        live = _live_url("agent", {"wallet": wallet, **dict(request.query)})
        return layout(request, v.agent.name, render(AGENT_PANELS, v), nav=Nav(viewer.csrf, viewer.operator), live=live)

    page = await services_of(request.app).reads.run(read)
    if page is None:
        return redirect("/dashboard/sign-in")
    return html_response(page)


@html_errors
async def ledger_csv(request: web.Request) -> web.StreamResponse:
    """GET /dashboard/ledger.csv?<the ledger's filters>: every matching row, newest first (streamed)."""
    now = services_of(request.app).clock()

    def first(db: Conn) -> tuple[list[AgentRow], LedgerFilter, tuple[list[list[str]], int | None]] | None:
        viewer = viewer_of(db, request, now)
        if viewer is None:
            return None
        v = overview_view(db, request, viewer, now)
        return v.agents, v.ledger, owner.ledger_csv_page(db, v.agents, v.ledger, None)

    found = await services_of(request.app).reads.run(
        first
    )  # the first page with the viewer: an error is a page, not a cut stream
    if found is None:
        return redirect("/dashboard/sign-in")
    agents, ledger, (rows, before) = found
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%d-%H%M%S")
    resp = web.StreamResponse(
        headers={
            "Content-Type": "text/csv; charset=utf-8",
            "Content-Disposition": f'attachment; filename="agentledger-ledger-{stamp}.csv"',
        }
    )
    secure(resp)
    await resp.prepare(request)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(owner.CSV_HEADER)
    while rows:
        writer.writerows(rows)
        await resp.write(buf.getvalue().encode("utf-8"))
        buf.seek(0)
        buf.truncate()
        if before is None:
            break
        # each page its own read: it is written out before the next one is read
        rows, before = await services_of(request.app).reads.run(
            functools.partial(owner.ledger_csv_page, agents_=agents, f=ledger, before=before)
        )
    await resp.write(buf.getvalue().encode("utf-8"))
    await resp.write_eof()
    return resp


async def owner_live(request: web.Request) -> dict[str, str] | None:
    """The panels of /dashboard (view=overview) or of one agent's page (view=agent&wallet=), in one
    read with the viewer's own; None when the request has no viewer (its session ended)."""
    now = services_of(request.app).clock()

    def read(db: Conn) -> dict[str, str] | None:
        viewer = viewer_of(db, request, now)
        if viewer is None:
            return None
        if request.query.get("view") == "agent":
            v = agent_view(db, request, viewer, request.query.get("wallet", ""), now)
            return live_panels(AGENT_PANELS, v)
        return live_panels(OVERVIEW_PANELS, overview_view(db, request, viewer, now))

    return await services_of(request.app).reads.run(read)
