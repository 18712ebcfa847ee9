"""The operator's view, /dashboard/operator (an operator key): network totals, the indexer, background
jobs, the outbox with its dead letters (reset), anchors with explorer links, contracts with their USDC
balances against what the index says they owe, and API keys (issue, revoke).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from aiohttp import web

from api.auth import clear_auth_caches
from api.dashboard.page import (
    Nav,
    badge,
    esc,
    hidden_csrf,
    html_errors,
    html_response,
    layout,
    money,
    panel,
    redirect,
    short,
    stats,
    table,
    when,
)
from api.dashboard.session import posted, viewer_of
from api.http import services_of
from core import figures as service_figures
from core.dashboard import access, operator
from core.dashboard.access import Viewer
from core.deployments import Deployment
from core.errors import ServiceError
from core.figures import IndexerStatus
from core.jobs import JobRunner
from core.networks import network_for
from core.store import Conn

#: The in-process indexer's status (indexer.status.Status) when this process runs the indexer; the
#: runtime sets it. Without it the view reads the indexer's checkpoint only.
INDEXER_STATUS: web.AppKey[IndexerStatus] = web.AppKey("indexer_status", object)  # type: ignore[arg-type]

T = TypeVar("T")


@dataclass
class IndexerNow:
    """The in-process indexer's status as it was when the view was built (a copy: the panels render in
    a read function, perhaps in another thread, while the indexer moves on)."""

    head: int
    halted: str
    last_error: str
    node_ok: bool


@dataclass
class OperatorView:
    """What every operator panel renders from. Built and rendered inside one read function
    (operator_view): `conn` is that function's connection, never kept past it."""

    request: web.Request
    conn: Conn
    viewer: Viewer
    now: float
    deployment: Deployment
    balances: tuple[int, dict[str, int]] | None  # (head, USDC per contract address); None: node down
    indexer_status: IndexerNow | None  # None: the indexer runs in another process
    jobs: dict[str, dict[str, Any]] | None  # this process's background jobs (JobRunner.status); None: none
    issued: tuple[str, str, str | None] | None = None  # a key just issued: shown once
    done: str = ""


@dataclass(frozen=True)
class Panel:
    id: str
    title: str
    render: Callable[[OperatorView], str]
    fixed: Callable[[OperatorView], str] | None = None
    wide: bool = False


def network_panel(v: OperatorView) -> str:
    n = operator.network(v.conn)
    figures = stats(
        [
            ("Agents", str(n.agents)),
            ("Accounts", str(n.accounts)),
            ("Active keys", str(n.active_keys)),
            ("Operator keys", str(n.operator_keys)),
            ("Revoked keys", str(n.revoked_keys)),
            ("Earned (USDC)", money(n.earned)),
            ("Tolls (USDC)", money(n.tolls)),
            ("Hires", str(n.hire_total)),
            ("Hires in flight", str(n.hires_in_flight)),
        ]
    )
    rows = [[badge(s), str(c), money(a)] for s, (c, a) in sorted(n.orders.items())]
    hires = [[esc(k), badge(s), str(c), money(a)] for (k, s), (c, a) in sorted(n.hires.items())]
    return (
        figures
        + table("Orders by status", ["Status", "Orders", "Amount (USDC)"], rows, numeric=(1, 2))
        + table("Hires by kind and status", ["Kind", "Status", "Hires", "Amount (USDC)"], hires, numeric=(2, 3))
    )


def indexer_panel(v: OperatorView) -> str:
    status = v.indexer_status
    ix = service_figures.indexer(v.conn, v.deployment.chain_id, status)
    node_head = v.balances[0] if v.balances is not None else None
    lag = ix.lag
    if node_head is not None and ix.seen is not None:
        lag = max(0, node_head - ix.seen)
    figures = stats(
        [
            ("State", badge(ix.state)),
            ("Applied block", "" if ix.seen is None else str(ix.seen)),
            ("Final block", "" if ix.final is None else str(ix.final)),
            ("Node head", "unavailable" if node_head is None else str(node_head)),
            ("Lag (blocks)", "" if lag is None else str(lag)),
            ("Checkpoint written", esc(when(ix.updated_at))),
        ]
    )
    notes = ""
    if ix.halted:
        notes += f'<p class="error" role="alert">Halted: {esc(ix.halted)}</p>'
    if ix.last_error:
        notes += f'<p class="muted">Last error: {esc(ix.last_error)}</p>'
    if status is None:
        notes += '<p class="muted">The indexer runs in another process: figures from its checkpoint.</p>'
    return figures + notes


def jobs_panel(v: OperatorView) -> str:
    if v.jobs is None:
        return '<p class="empty">No background jobs in this process.</p>'
    rows = []
    for name, s in sorted(v.jobs.items()):
        detail = ", ".join(f"{k} {s[k]}" for k in ("attempts", "delivered", "inFlight") if k in s)
        rows.append(
            [
                esc(name),
                badge(str(s.get("state", ""))),
                esc(s.get("schedule", "service")),
                esc(s.get("lastRun") or ""),
                esc(s.get("nextRun") or ""),
                esc(s.get("lastError") or ""),
                esc(str(s.get("runs", ""))),
                esc(str(s.get("failures", ""))),
                esc(detail),
            ]
        )
    headers = ["Job", "State", "Schedule", "Last run", "Next run", "Last error", "Runs", "Failures", "Detail"]
    return table("Background jobs of this process", headers, rows)


def outbox_panel(v: OperatorView) -> str:
    o = service_figures.outbox(v.conn, v.now)
    c = o.counts
    oldest = "" if c.oldest_pending_at is None else f"{max(0, int(v.now - c.oldest_pending_at))} s"
    figures = stats(
        [
            ("Pending", str(c.pending)),
            ("Held by the breaker", str(c.held)),
            ("Held hosts", str(sum(1 for h in o.hosts if h.held))),
            ("Dead letters", str(c.dead_letters)),
            ("Oldest pending", oldest),
        ]
    )
    hosts = table(
        "Pending by host",
        ["Host", "Pending", "Held", "Oldest queued", "Next attempt"],
        (
            [
                f"<code>{esc(h.host)}</code>",
                str(h.pending),
                str(h.held),
                esc(when(h.oldest_created_at)),
                esc(when(h.next_attempt_at)),
            ]
            for h in o.hosts
        ),
        numeric=(1, 2),
    )
    csrf = v.viewer.csrf
    dead_rows = []
    for d in o.dead:
        reset = (
            '<form method="post" action="/dashboard/operator/dead-letters/reset" class="inline">'
            f'{hidden_csrf(csrf)}<input type="hidden" name="event_id" value="{esc(d.event_id)}">'
            f'<button type="submit" aria-label="Reset dead letter {esc(d.event_id)}">Reset</button></form>'
        )
        dead_rows.append(
            [
                f"<code>{esc(d.event_id)}</code>",
                esc(d.event),
                f"<code>{esc(d.source)}</code>",
                f"{esc(d.channel)} <code>{esc(d.host or '')}</code>",
                str(d.attempts),
                esc("" if d.last_status is None else d.last_status),
                esc(d.last_error or ""),
                esc(when(d.created_at)),
                reset,
            ]
        )
    dead = table(
        "Dead letters",
        ["Event id", "Event", "Source", "Target", "Attempts", "Last status", "Last error", "Queued", ""],
        dead_rows,
        numeric=(4,),
    )
    if dead_rows:
        dead += (
            '<form method="post" action="/dashboard/operator/dead-letters/reset"'
            ' data-confirm="Reset every dead letter? Each will be sent again.">'
            f'{hidden_csrf(csrf)}<input type="hidden" name="all" value="1">'
            '<button type="submit" class="secondary">Reset every dead letter</button></form>'
        )
    return figures + hosts + dead


def anchors_panel(v: OperatorView) -> str:
    a = service_figures.anchors(v.conn, v.deployment.chain_id)
    figures = stats(
        [
            ("Audit log entries", str(a.log_size)),
            ("Anchored", str(a.anchored_size)),
            ("Not yet anchored", str(max(0, a.log_size - a.anchored_size))),
            ("Checkpoints", str(a.count)),
        ]
    )
    rows = []
    for av in a.recent:
        tx = f"<code>{esc(short(av.anchor.tx_hash))}</code>"
        if av.explorer_url:
            tx = f'<a href="{esc(av.explorer_url)}" rel="noopener noreferrer">{tx}</a>'
        rows.append(
            [
                str(av.anchor.idx),
                str(av.anchor.tree_size),
                f"<code>{esc(short(av.anchor.root))}</code>",
                str(av.anchor.block_number),
                tx,
            ]
        )
    network = network_for(v.deployment.chain_id)
    note = (
        f'<p class="muted">Transactions link to {esc(network.explorer)}.</p>'
        if network.explorer
        else '<p class="muted">A local chain has no block explorer.</p>'
    )
    return (
        figures
        + table("Anchors (newest first)", ["#", "Tree size", "Root", "Block", "Transaction"], rows, numeric=(0, 1, 3))
        + note
    )


def contracts_panel(v: OperatorView) -> str:
    views = operator.contracts(v.conn, v.deployment.chain_id, v.deployment.contracts)
    onchain = v.balances[1] if v.balances is not None else {}
    rows = []
    for c in views:
        balance = onchain.get(c.address)
        check = ""
        if c.owes is not None and balance is not None:
            check = "covered" if balance >= c.owes else "SHORT"
        rows.append(
            [
                esc(c.name),
                f"<code>{esc(c.address)}</code>",
                "unavailable" if balance is None else money(balance),
                "" if c.owes is None else money(c.owes),
                esc(c.owes_what),
                badge(check) if check else "",
            ]
        )
    out = table(
        "Contracts: USDC held (on-chain) and owed (indexed)",
        ["Contract", "Address", "USDC held", "Owed", "For", "Check"],
        rows,
        numeric=(2, 3),
    )
    if v.balances is None:
        out = '<p class="error" role="alert">The chain node does not answer: balances unavailable.</p>' + out
    return out


def keys_form(v: OperatorView) -> str:
    issued = ""
    if v.issued is not None:
        key, account, agent = v.issued
        scope = f"agent {agent} of account {account}" if agent else f"account {account}"
        issued = (
            '<div class="notice" role="alert"><p>New key for '
            f'{esc(scope)}, shown only this once:</p><p><code class="secret">{esc(key)}</code></p></div>'
        )
    return (
        issued + '<form method="post" action="/dashboard/operator/keys" class="filters">'
        f"{hidden_csrf(v.viewer.csrf)}"
        '<div><label for="k-scope">Scope</label><select id="k-scope" name="scope">'
        '<option value="new">a new account</option><option value="account">an existing account</option>'
        '<option value="agent">one agent</option></select></div>'
        '<div><label for="k-id">Account or agent id (UUID)</label>'
        '<input id="k-id" name="id" maxlength="36" spellcheck="false" autocomplete="off"></div>'
        '<div class="actions"><button type="submit">Issue a key</button></div></form>'
        '<p class="hint">Keys issued here have every scope and no cap. Narrower keys, and operator keys '
        "(the service-wide view; not the scope <code>admin</code>, which manages one account), are issued "
        "on the operator's machine: <code>python -m scripts.issue_key --scopes read,log</code>, "
        "<code>--operator</code>.</p>"
    )


def keys_panel(v: OperatorView) -> str:
    csrf = v.viewer.csrf
    rows = []
    for k in operator.keys(v.conn):
        kid = operator.key_id(k.key_hash)
        if k.revoked_at is not None:
            action = f"revoked {esc(when(k.revoked_at))}"
        elif k.key_hash == v.viewer.caller.key_hash:
            action = "this session's key"
        else:
            action = (
                '<form method="post" action="/dashboard/operator/keys/revoke" class="inline"'
                f' data-confirm="Revoke key {esc(kid)}? It stops working at once.">'
                f'{hidden_csrf(csrf)}<input type="hidden" name="key" value="{esc(kid)}">'
                f'<button type="submit" class="danger" aria-label="Revoke key {esc(kid)}">Revoke</button></form>'
            )
        rows.append(
            [
                f"<code>{esc(kid)}</code>",
                f"<code>{esc(short(k.account_id, 8, 4))}</code>",
                "" if k.agent_id is None else f"<code>{esc(short(k.agent_id, 8, 4))}</code>",
                esc(k.email or ""),
                esc(k.scopes or "all"),
                "" if k.daily_cap is None else money(k.daily_cap),
                "operator" if k.operator else "",
                esc(when(k.created_at)),
                action,
            ]
        )
    return table(
        "API keys (by the first 12 hex digits of their SHA-256; the keys are never stored)",
        ["Key id", "Account", "Agent", "Email", "Scopes", "Daily cap (USDC)", "Operator", "Created", ""],
        rows,
    )


#: The operator's view, in order. A feature that lands adds its panel here.
OPERATOR_PANELS: list[Panel] = [
    Panel("network", "Network", network_panel, wide=True),
    Panel("indexer", "Indexer", indexer_panel, wide=True),
    Panel("jobs", "Jobs", jobs_panel, wide=True),
    Panel("outbox", "Outbox", outbox_panel, wide=True),
    Panel("anchors", "Anchors", anchors_panel, wide=True),
    Panel("contracts", "Contracts", contracts_panel, wide=True),
    Panel("keys", "Keys", keys_panel, fixed=keys_form, wide=True),
]


# ---- handlers ------------------------------------------------------------------------------------


async def _operator_viewer(request: web.Request) -> Viewer | None:
    """The signed-in viewer (None: not signed in), 403 unless its key is an operator's."""
    now = services_of(request.app).clock()

    def read(db: Conn) -> Viewer | None:
        viewer = viewer_of(db, request, now)
        if viewer is not None:
            access.require_operator(db, viewer.caller)
        return viewer

    return await services_of(request.app).reads.run(read)


async def _require_operator(request: web.Request, viewer: Viewer) -> None:
    await services_of(request.app).reads.run(lambda db: access.require_operator(db, viewer.caller))


async def operator_view(request: web.Request, viewer: Viewer, render: Callable[[OperatorView], T], **extra: Any) -> T:
    """`render(view)`: the view built and rendered in one read function. What is not in the database
    (the node's balances, the indexer's and the jobs' status) is taken first, on the loop."""
    dep = services_of(request.app).deployment
    balances = await operator.usdc_balances(services_of(request.app).rpc_url, dep.usdc, sorted(dep.contracts.values()))
    status = request.app.get(INDEXER_STATUS)
    indexer_now = None if status is None else IndexerNow(status.head, status.halted, status.last_error, status.node_ok)
    runner = services_of(request.app).find(JobRunner)
    jobs = None if runner is None else runner.status()
    now = services_of(request.app).clock()
    return await services_of(request.app).reads.run(
        lambda db: render(OperatorView(request, db, viewer, now, dep, balances, indexer_now, jobs, **extra))
    )


_DONE = {
    "reset": "Dead letters reset: they are due now.",
    "revoked": "Key revoked: it authenticates nothing any more, and its sessions ended.",
}


def _page(v: OperatorView) -> str:
    body = "".join(
        panel(p.id, p.title, p.render(v), wide=p.wide, fixed=None if p.fixed is None else p.fixed(v))
        for p in OPERATOR_PANELS
    )
    message = _DONE.get(v.done)
    if message:
        body = f'<p class="notice" role="status">{esc(message)}</p>' + body
    return layout(
        v.request,
        "Operator",
        body,
        nav=Nav(v.viewer.csrf, True, "operator"),
        live="/dashboard/live?view=operator",
        interval_ms=3000,
    )


def _live(v: OperatorView) -> dict[str, str]:
    return {p.id: p.render(v) for p in OPERATOR_PANELS}


@html_errors
async def operator_page(request: web.Request) -> web.StreamResponse:
    viewer = await _operator_viewer(request)
    if viewer is None:
        return redirect("/dashboard/sign-in")
    return html_response(await operator_view(request, viewer, _page, done=request.query.get("done", "")))


async def operator_live(request: web.Request) -> dict[str, str] | None:
    """The operator's panels; None when the request has no viewer (its session ended); 403 for a key
    that is not an operator's."""
    viewer = await _operator_viewer(request)
    if viewer is None:
        return None
    return await operator_view(request, viewer, _live)


@html_errors
async def reset_dead_letters(request: web.Request) -> web.StreamResponse:
    viewer, form = await posted(request)
    await _require_operator(request, viewer)
    event_id = None if form.get("all") == "1" else form.get("event_id", "")
    services = services_of(request.app)
    now = services.clock()
    n = await services.writer.run(lambda conn: operator.reset_dead_letters(conn, event_id, now))
    services.wake()
    return redirect("/dashboard/operator?" + urlencode({"done": "reset", "n": n}) + "#outbox")


@html_errors
async def issue_key(request: web.Request) -> web.StreamResponse:
    viewer, form = await posted(request)
    await _require_operator(request, viewer)
    scope, ident = form.get("scope", ""), form.get("id", "").strip().lower()
    if scope not in ("new", "account", "agent"):
        raise ServiceError(400, "invalid_field", "scope must be new, account or agent", param="scope")
    if scope != "new" and not ident:
        raise ServiceError(400, "invalid_field", "give the account's or the agent's id", param="id")
    now = services_of(request.app).clock()

    def work(conn: Conn) -> tuple[str, str, str | None]:
        return operator.issue_key(
            conn,
            now,
            account_id=ident if scope == "account" else None,
            agent_uuid=ident if scope == "agent" else None,
        )

    issued = await services_of(request.app).writer.run(work)
    return html_response(await operator_view(request, viewer, _page, issued=issued), status=201)


@html_errors
async def revoke_key(request: web.Request) -> web.StreamResponse:
    viewer, form = await posted(request)
    await _require_operator(request, viewer)
    ref, now = form.get("key", ""), services_of(request.app).clock()
    await services_of(request.app).writer.run(lambda conn: operator.revoke_key(conn, ref, now, viewer.caller))
    clear_auth_caches()  # committed: no cached lookup may still admit the key
    return redirect("/dashboard/operator?done=revoked#keys")
