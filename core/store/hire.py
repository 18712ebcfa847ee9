"""SQL of agent-to-agent hire: published services (with their reputation figures), hire jobs and
the reputation's samples. The rules are core.hire's; callers own the transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import apsw

from core.store import sums

#: A service is unhealthy (never chosen automatically) after this many failed runs or probes in a row.
UNHEALTHY_AFTER = 3


def _rows(conn: apsw.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


# ---- services ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceRow:
    provider_uuid: str
    service_type: str
    wallet: str
    token_id: int
    price: int
    description: str
    input_schema: str
    output_schema: str
    sla_seconds: int
    runner: str
    endpoint: str
    signing_secret: str
    webhook_url: str | None
    webhook_secret: str | None
    active: bool
    consecutive_failures: int
    last_checked_at: float | None
    last_error: str | None
    jobs: int
    successes: int
    score: float
    success_rate: float | None
    avg_ms: int | None
    p95_ms: int | None
    last_active_at: float | None
    score_at: float | None
    w_jobs: float
    w_successes: float
    ok_ms_total: int
    created_at: float
    updated_at: float

    @property
    def healthy(self) -> bool:
        return self.consecutive_failures < UNHEALTHY_AFTER


_SERVICE_COLS = ", ".join(f.name for f in fields(ServiceRow))
_S_SERVICE_COLS = ", ".join(f"s.{f.name}" for f in fields(ServiceRow))


def _service(row: tuple[Any, ...]) -> ServiceRow:
    values = list(row)
    values[14] = bool(values[14])  # active
    return ServiceRow(*values)


def get_service(conn: apsw.Connection, provider_uuid: str, service_type: str) -> ServiceRow | None:
    rows = _rows(
        conn,
        f"SELECT {_SERVICE_COLS} FROM hire_services WHERE provider_uuid = ? AND service_type = ?",  # noqa: S608
        (provider_uuid, service_type),
    )
    return _service(rows[0]) if rows else None


def service_by_wallet(conn: apsw.Connection, wallet: str, service_type: str) -> ServiceRow | None:
    rows = _rows(
        conn,
        f"SELECT {_SERVICE_COLS} FROM hire_services WHERE wallet = ? AND service_type = ?",  # noqa: S608
        (wallet, service_type),
    )
    return _service(rows[0]) if rows else None


def services_of(conn: apsw.Connection, provider_uuid: str) -> list[ServiceRow]:
    rows = _rows(
        conn,
        f"SELECT {_SERVICE_COLS} FROM hire_services WHERE provider_uuid = ? ORDER BY service_type",  # noqa: S608
        (provider_uuid,),
    )
    return [_service(r) for r in rows]


def put_service(conn: apsw.Connection, s: ServiceRow) -> None:
    """Insert or replace what the provider publishes; health and reputation figures are kept."""
    conn.execute(
        "INSERT INTO hire_services (provider_uuid, service_type, wallet, token_id, price, description, input_schema,"
        " output_schema, sla_seconds, runner, endpoint, signing_secret, webhook_url, webhook_secret, active,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)"
        " ON CONFLICT (provider_uuid, service_type) DO UPDATE SET token_id = excluded.token_id,"
        " price = excluded.price, description = excluded.description, input_schema = excluded.input_schema,"
        " output_schema = excluded.output_schema, sla_seconds = excluded.sla_seconds, runner = excluded.runner,"
        " endpoint = excluded.endpoint, signing_secret = excluded.signing_secret, webhook_url = excluded.webhook_url,"
        " webhook_secret = excluded.webhook_secret, active = 1, updated_at = excluded.updated_at",
        (
            s.provider_uuid,
            s.service_type,
            s.wallet,
            s.token_id,
            s.price,
            s.description,
            s.input_schema,
            s.output_schema,
            s.sla_seconds,
            s.runner,
            s.endpoint,
            s.signing_secret,
            s.webhook_url,
            s.webhook_secret,
            s.created_at,
            s.updated_at,
        ),
    )


def deactivate_service(conn: apsw.Connection, provider_uuid: str, service_type: str, now: float) -> bool:
    conn.execute(
        "UPDATE hire_services SET active = 0, updated_at = ? WHERE provider_uuid = ? AND service_type = ?"
        " AND active = 1",
        (now, provider_uuid, service_type),
    )
    return bool(conn.changes())


def record_health(
    conn: apsw.Connection, provider_uuid: str, service_type: str, ok: bool, error: str | None, now: float
) -> None:
    """One run's or probe's verdict: a success clears the failure count, a failure adds one."""
    if ok:
        conn.execute(
            "UPDATE hire_services SET consecutive_failures = 0, last_checked_at = ?, last_error = NULL"
            " WHERE provider_uuid = ? AND service_type = ?",
            (now, provider_uuid, service_type),
        )
    else:
        conn.execute(
            "UPDATE hire_services SET consecutive_failures = consecutive_failures + 1, last_checked_at = ?,"
            " last_error = ? WHERE provider_uuid = ? AND service_type = ?",
            (now, (error or "")[:500], provider_uuid, service_type),
        )


def services_due_for_probe(conn: apsw.Connection, checked_before: float, limit: int) -> list[ServiceRow]:
    """Active services not checked (by a run or a probe) since `checked_before`, oldest first."""
    rows = _rows(
        conn,
        f"SELECT {_SERVICE_COLS} FROM hire_services WHERE active = 1"  # noqa: S608
        " AND (last_checked_at IS NULL OR last_checked_at < ?) ORDER BY coalesce(last_checked_at, 0) LIMIT ?",
        (checked_before, limit),
    )
    return [_service(r) for r in rows]


def set_reputation(
    conn: apsw.Connection,
    provider_uuid: str,
    service_type: str,
    *,
    jobs: int,
    successes: int,
    score: float,
    success_rate: float | None,
    avg_ms: int | None,
    p95_ms: int | None,
    last_active_at: float | None,
    w_jobs: float,
    w_successes: float,
    ok_ms_total: int,
    now: float,
) -> None:
    conn.execute(
        "UPDATE hire_services SET jobs = ?, successes = ?, score = ?, success_rate = ?, avg_ms = ?, p95_ms = ?,"
        " last_active_at = ?, w_jobs = ?, w_successes = ?, ok_ms_total = ?, score_at = ?"
        " WHERE provider_uuid = ? AND service_type = ?",
        (
            jobs,
            successes,
            score,
            success_rate,
            avg_ms,
            p95_ms,
            last_active_at,
            w_jobs,
            w_successes,
            ok_ms_total,
            now,
            provider_uuid,
            service_type,
        ),
    )


def service_keys(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(provider uuid, service type) of every service with samples (whose score decays with time)."""
    return [
        (str(a), str(b)) for a, b in _rows(conn, "SELECT provider_uuid, service_type FROM hire_services WHERE jobs > 0")
    ]


# ---- the chain's view of a provider (indexed) ----------------------------------------------------


@dataclass(frozen=True)
class ChainAgent:
    """A provider's agent NFT as indexed from AgentRegistry and AgentEscrow."""

    token_id: int
    owner: str
    self_wallet: str
    referrer_token_id: int | None
    paused: bool
    hire_price: int  # AgentEscrow.priceOf (0: not for hire)
    hire_sla: int  # AgentEscrow.slaOf (seconds)


def chain_agent(conn: apsw.Connection, token_id: int) -> ChainAgent | None:
    rows = _rows(
        conn,
        "SELECT token_id, owner, self_wallet, referrer_token_id, paused, hire_price, hire_sla FROM agents"
        " WHERE token_id = ?",
        (token_id,),
    )
    if not rows:
        return None
    t, owner, self_wallet, referrer, paused, price, sla = rows[0]
    # hire_price is TEXT (0x-hex) past int64 (a user-chosen uint256): no real price is that large
    price_units = int(price, 16) if isinstance(price, str) else int(price)
    return ChainAgent(int(t), str(owner), str(self_wallet), referrer, bool(paused), price_units, int(sla))


# ---- the registry -------------------------------------------------------------------------------

#: Up to this many agents for hire, an escrow-only registry query starts from them.
ESCROW_DRIVE_LIMIT = 2000
#: A registry row: the service, its provider's paused flag and its indexed on-chain price and SLA.
RegistryRow = tuple[ServiceRow, bool, int | None, int | None]


def registry_page(
    conn: apsw.Connection,
    *,
    service_type: str | None,
    wallet: str | None,
    max_price: int | None,
    min_score: float | None,
    escrow_only: bool,
    healthy_only: bool,
    after: tuple[float, str, str] | None,
    limit: int,
) -> list[RegistryRow]:
    """Active services of unpaused providers (neither paused on-chain nor listed in the drop), best
    score first; ties by wallet, then service type. `after` is the (score, wallet, service type) of the
    last row of the previous page."""
    where = [
        "s.active = 1",
        "coalesce(a.paused, 0) = 0",
        # not listed for sale in the drop (core.store.marketplace.sale_paused's rule; drop_listings_agent)
        "NOT EXISTS (SELECT 1 FROM drop_listings d WHERE d.agent_uuid = s.provider_uuid"
        " AND d.state IN ('active', 'settling'))",
    ]
    params: list[Any] = []
    if service_type is not None:
        where.append("s.service_type = ?")
        params.append(service_type)
    if wallet is not None:
        where.append("s.wallet = ?")
        params.append(wallet)
    if max_price is not None:
        where.append("s.price <= ?")
        params.append(max_price)
    if min_score is not None:
        where.append("s.score >= ?")
        params.append(min_score)
    if escrow_only:  # driven from the (few) agents for hire: agents_for_hire, hire_services_token
        where.append("a.hire_price > 0 AND a.hire_price = s.price AND a.hire_sla > 0")
    if healthy_only:
        where.append("s.consecutive_failures < ?")
        params.append(UNHEALTHY_AFTER)
    if after is not None:
        where.append("(s.score < ? OR (s.score = ? AND (s.wallet > ? OR (s.wallet = ? AND s.service_type > ?))))")
        score, w, t = after
        params.extend([score, score, w, w, t])
    join = "LEFT JOIN agents a ON a.token_id = s.token_id"
    if escrow_only:
        # Few agents for hire: start from them (agents_for_hire) and sort what matches. Many: walk the
        # services by score and stop at the page's end (CROSS JOIN keeps SQLite to that order; its
        # condition goes in WHERE: PostgreSQL takes no ON after a CROSS JOIN).
        for_hire = int(_rows(conn, "SELECT count(*) FROM agents WHERE hire_price > 0")[0][0])
        if for_hire <= ESCROW_DRIVE_LIMIT:
            join = "JOIN agents a ON a.token_id = s.token_id"
        else:
            join = "CROSS JOIN agents a"
            where.append("a.token_id = s.token_id")
    sql = (
        f"SELECT {_S_SERVICE_COLS}, coalesce(a.paused, 0), a.hire_price, a.hire_sla"  # noqa: S608
        f" FROM hire_services s {join}"
        f" WHERE {' AND '.join(where)} ORDER BY s.score DESC, s.wallet, s.service_type LIMIT ?"
    )
    params.append(limit)
    out: list[RegistryRow] = []
    for row in _rows(conn, sql, tuple(params)):
        n = len(fields(ServiceRow))
        price = row[n + 1]
        price_units = None if price is None else (int(price, 16) if isinstance(price, str) else int(price))
        out.append((_service(row[:n]), bool(row[n]), price_units, None if row[n + 2] is None else int(row[n + 2])))
    return out


# ---- jobs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRow:
    id: str
    kind: str
    status: str
    provider_uuid: str
    provider_token_id: int
    service_type: str
    caller_uuid: str | None
    caller_address: str | None
    self_dealing: bool
    amount: int
    held_owner: int | None
    held_self: int | None
    input_sha256: str
    idem_scope: str | None
    idem_key: str | None
    idem_attempt: str | None
    outcome: str | None
    output: str | None
    output_sha256: str | None
    output_cid: str | None
    error_code: str | None
    error_message: str | None
    response_ms: int | None
    created_tx: str | None
    expires_at: int | None
    settle_tx: str | None
    settle_attempts: int
    settle_error: str | None
    next_settle_at: float | None
    final: bool
    caller_webhook_url: str | None
    caller_webhook_secret: str | None
    created_at: float
    updated_at: float
    owner: str | None = None  # core.instance id of the process that started running the job


_JOB_COLS = ", ".join(f.name for f in fields(JobRow))


def _job(row: tuple[Any, ...]) -> JobRow:
    values = list(row)
    values[8] = bool(values[8])  # self_dealing
    values[29] = bool(values[29])  # final
    return JobRow(*values)


def insert_job(conn: apsw.Connection, j: JobRow) -> bool:
    """Insert a job; False when one with its id exists (a second run of one escrow job)."""
    conn.execute(
        f"INSERT INTO hire_jobs ({_JOB_COLS}) VALUES ({', '.join('?' * len(fields(JobRow)))})"  # noqa: S608
        " ON CONFLICT DO NOTHING",
        tuple(getattr(j, f.name) for f in fields(JobRow)),
    )
    return bool(conn.changes())


def get_job(conn: apsw.Connection, job_id: str) -> JobRow | None:
    """The job (two writers that both settle it take turns under the write lock, and the second sees the
    first's move: core.store.serialization)."""
    sql = f"SELECT {_JOB_COLS} FROM hire_jobs WHERE id = ?"  # noqa: S608
    rows = _rows(conn, sql, (job_id,))
    return _job(rows[0]) if rows else None


_JOB_FIELDS = frozenset(f.name for f in fields(JobRow))


def update_job(conn: apsw.Connection, job_id: str, from_status: tuple[str, ...], **columns: Any) -> bool:
    """Set `columns` of the job if its status is one of `from_status` (the compare-and-set every move
    goes through); False when it is not (someone else moved it)."""
    unknown = set(columns) - _JOB_FIELDS
    if unknown:
        raise ValueError(f"not hire_jobs columns: {sorted(unknown)}")
    sets = ", ".join(f"{name} = ?" for name in columns)
    marks = ", ".join("?" * len(from_status))
    conn.execute(
        f"UPDATE hire_jobs SET {sets} WHERE id = ? AND status IN ({marks})",  # noqa: S608 (checked names)
        (*columns.values(), job_id, *from_status),
    )
    return bool(conn.changes())


def jobs_in_status(
    conn: apsw.Connection, kind: str, statuses: tuple[str, ...], due_before: float | None = None, limit: int = 1000
) -> list[JobRow]:
    marks = ", ".join("?" * len(statuses))
    sql = f"SELECT {_JOB_COLS} FROM hire_jobs WHERE kind = ? AND status IN ({marks})"  # noqa: S608
    params: list[Any] = [kind, *statuses]
    if due_before is not None:
        sql += " AND coalesce(next_settle_at, 0) <= ?"
        params.append(due_before)
    sql += " ORDER BY created_at LIMIT ?"
    params.append(limit)
    return [_job(r) for r in _rows(conn, sql, tuple(params))]


def escrow_closed_tx(conn: apsw.Connection, job_id: str) -> str | None:
    """The closing (release or refund) transaction of an AgentEscrow job as indexed, when known."""
    rows = _rows(conn, "SELECT closed_tx FROM escrow_jobs WHERE job_id = ?", (job_id,))
    return str(rows[0][0]) if rows and rows[0][0] else None


# ---- reputation samples -------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleRow:
    job_id: str
    provider_uuid: str
    service_type: str
    success: bool
    response_ms: int
    audit_id: int
    settled_at: float


def insert_sample(conn: apsw.Connection, s: SampleRow) -> bool:
    """Record one settled job's sample, once (False when the job already has one)."""
    conn.execute(
        "INSERT INTO hire_samples (job_id, provider_uuid, service_type, success, response_ms, audit_id,"
        " settled_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING",
        (s.job_id, s.provider_uuid, s.service_type, int(s.success), s.response_ms, s.audit_id, s.settled_at),
    )
    return bool(conn.changes())


@dataclass(frozen=True)
class SampleStats:
    """A service's samples since a time, aggregated in SQL (recency weights included)."""

    jobs: int
    successes: int
    weighted: float  # sum of 0.5 ^ (age / half-life)
    weighted_successes: float
    avg_ms: float | None  # over successes
    last_at: float | None
    ok_ms_total: int


#: A sample's age at :now, never negative (a scalar max(0, x) is SQLite's; GREATEST is PostgreSQL's).
_AGE = "(CASE WHEN settled_at < :now THEN :now - settled_at ELSE 0 END)"


def sample_stats(
    conn: apsw.Connection, provider_uuid: str, service_type: str, *, since: float, now: float, half_life: float
) -> SampleStats:
    jobs, successes, weighted, weighted_ok, avg_ms, last_at, ok_total = _rows(
        conn,
        f"SELECT count(*), coalesce(sum(success), 0), coalesce(sum(pow(0.5, {_AGE} / :half_life)), 0),"  # noqa: S608 (constants)
        f" coalesce(sum(success * pow(0.5, {_AGE} / :half_life)), 0),"
        " avg(CASE WHEN success = 1 THEN response_ms END), max(settled_at),"
        " coalesce(sum(CASE WHEN success = 1 THEN response_ms END), 0)"
        " FROM hire_samples WHERE provider_uuid = :provider AND service_type = :service_type AND settled_at >= :since",
        {"now": now, "half_life": half_life, "provider": provider_uuid, "service_type": service_type, "since": since},
    )[0]
    return SampleStats(
        int(jobs),
        int(successes),
        float(weighted),
        float(weighted_ok),
        None if avg_ms is None else float(avg_ms),
        None if last_at is None else float(last_at),
        int(ok_total),
    )


#: p95ResponseMs is taken over a service's most recent successes, at most this many.
P95_WINDOW = 1000


def recent_success_p95(conn: apsw.Connection, provider_uuid: str, service_type: str, since: float) -> int | None:
    """The nearest-rank 95th percentile of the response times of the service's last P95_WINDOW
    successes since `since` (one bounded index range, sorted in SQL)."""
    recent = (
        "SELECT response_ms FROM hire_samples WHERE provider_uuid = :provider AND service_type = :service_type"
        " AND settled_at >= :since AND success = 1 ORDER BY settled_at DESC LIMIT :window"
    )
    args = {"provider": provider_uuid, "service_type": service_type, "since": since, "window": P95_WINDOW}
    n = int(_rows(conn, f"SELECT count(*) FROM ({recent}) AS recent", args)[0][0])  # noqa: S608
    if n == 0:
        return None
    rank = -(-95 * n // 100)  # ceil(0.95 n)
    rows = _rows(
        conn,
        f"SELECT response_ms FROM ({recent}) AS recent ORDER BY response_ms LIMIT 1 OFFSET :skip",  # noqa: S608
        {**args, "skip": rank - 1},
    )
    return int(rows[0][0])


def samples(
    conn: apsw.Connection,
    provider_uuid: str,
    service_type: str,
    *,
    since: float | None = None,
    before: tuple[float, str] | None = None,
    limit: int = 100_000,
) -> list[SampleRow]:
    """A service's samples, newest first; `before` = (settled_at, job id) of the previous page's last."""
    sql = (
        "SELECT job_id, provider_uuid, service_type, success, response_ms, audit_id, settled_at FROM hire_samples"
        " WHERE provider_uuid = ? AND service_type = ?"
    )
    params: list[Any] = [provider_uuid, service_type]
    if since is not None:
        sql += " AND settled_at >= ?"
        params.append(since)
    if before is not None:
        sql += " AND (settled_at < ? OR (settled_at = ? AND job_id < ?))"
        params.extend([before[0], before[0], before[1]])
    sql += " ORDER BY settled_at DESC, job_id DESC LIMIT ?"
    params.append(limit)
    return [
        SampleRow(str(j), str(p), str(t), bool(s), int(ms), int(a), float(at))
        for j, p, t, s, ms, a, at in _rows(conn, sql, tuple(params))
    ]


# ---- what an owner and the operator see (core.dashboard) -----------------------------------------


@dataclass(frozen=True)
class HireLine:
    """One hire as an owner's dashboard shows it, from one side: `agent_uuid` is the owner's agent,
    `role` its side (caller or provider). Never the input, the output or any secret."""

    job_id: str
    role: str  # caller | provider
    agent_uuid: str
    kind: str
    status: str
    service_type: str
    provider_wallet: str | None
    caller_wallet: str | None  # a standard hire's calling agent (agl_ wallet)
    caller_address: str | None  # an escrow hire's on-chain caller
    amount: int
    outcome: str | None
    error_code: str | None
    response_ms: int | None
    sla_seconds: int | None  # the service's SLA (None: the service is gone)
    created_tx: str | None
    expires_at: int | None
    settle_tx: str | None
    final: bool
    created_at: float
    updated_at: float


_LINE_COLS = (
    "j.id, ?, ?, j.kind, j.status, j.service_type, pw.wallet, cw.wallet, j.caller_address, j.amount, j.outcome,"
    " j.error_code, j.response_ms, s.sla_seconds, j.created_tx, j.expires_at, j.settle_tx, j.final, j.created_at,"
    " j.updated_at"
)
_LINE_FROM = (
    "FROM hire_jobs j LEFT JOIN wallet_agents pw ON pw.uuid = j.provider_uuid"
    " LEFT JOIN wallet_agents cw ON cw.uuid = j.caller_uuid"
    " LEFT JOIN hire_services s ON s.provider_uuid = j.provider_uuid AND s.service_type = j.service_type"
)


def _line(row: tuple[Any, ...]) -> HireLine:
    values = list(row)
    values[17] = bool(values[17])  # final
    return HireLine(*values)


def hires_of(conn: apsw.Connection, agent_uuids: list[str], limit: int) -> list[HireLine]:
    """The agents' latest hires, as caller and as provider, newest first: each agent's side one walk
    of its (caller_uuid | provider_uuid, created_at) index backwards, then merged (a hire between two
    of the agents shows once from each side)."""
    per_side: list[list[HireLine]] = []
    for uuid in agent_uuids:
        for role, column in (("caller", "caller_uuid"), ("provider", "provider_uuid")):
            rows = _rows(
                conn,
                f"SELECT {_LINE_COLS} {_LINE_FROM} WHERE j.{column} = ?"  # fixed column names
                " ORDER BY j.created_at DESC, j.id DESC LIMIT ?",
                (role, uuid, uuid, limit),
            )
            per_side.append([_line(r) for r in rows])
    lines = [line for side in per_side for line in side]
    lines.sort(key=lambda h: (h.created_at, h.job_id, h.role), reverse=True)
    return lines[:limit]


#: Hires still moving: a standard hire holding its reservation, an escrow hire running or settling.
IN_FLIGHT = ("reserved", "running", "releasing", "refunding")


def hire_counts(conn: apsw.Connection) -> dict[tuple[str, str], tuple[int, int]]:
    """(kind, status) -> (hires, amount), over every hire (the operator's network figures)."""
    rows = sums.rows(
        conn, "SELECT kind, status, COUNT(*), COALESCE(exact_sum(amount), 0) FROM hire_jobs GROUP BY kind, status"
    )
    return {(str(k), str(s)): (int(n), int(a)) for k, s, n, a in rows}


# ---- A2A tasks ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class A2aTaskRow:
    """The task an A2A message made: its id is its hire job's (the job holds state, output and error)."""

    id: str
    account_id: str
    message_id: str
    request_sha256: str
    context_id: str
    message: str  # the user's message, A2A JSON
    created_at: float


_A2A_COLS = ", ".join(f.name for f in fields(A2aTaskRow))


def insert_a2a_task(conn: apsw.Connection, t: A2aTaskRow) -> None:
    """Record the task (in its job's reservation: a job made by a message always has its task)."""
    conn.execute(
        f"INSERT INTO a2a_tasks ({_A2A_COLS}) VALUES ({', '.join('?' * len(fields(A2aTaskRow)))})",  # noqa: S608
        tuple(getattr(t, f.name) for f in fields(A2aTaskRow)),
    )


def a2a_task(conn: apsw.Connection, task_id: str) -> A2aTaskRow | None:
    rows = _rows(conn, f"SELECT {_A2A_COLS} FROM a2a_tasks WHERE id = ?", (task_id,))  # noqa: S608
    return A2aTaskRow(*rows[0]) if rows else None


def a2a_task_of_message(conn: apsw.Connection, account_id: str, message_id: str) -> A2aTaskRow | None:
    sql = f"SELECT {_A2A_COLS} FROM a2a_tasks WHERE account_id = ? AND message_id = ?"  # noqa: S608
    rows = _rows(conn, sql, (account_id, message_id))
    return A2aTaskRow(*rows[0]) if rows else None


def a2a_tasks_page(
    conn: apsw.Connection,
    *,
    account_id: str,
    caller_uuid: str | None,
    context_id: str | None,
    statuses: tuple[str, ...] | None,
    updated_after: float | None,
    before: tuple[float, str] | None,
    limit: int,
) -> tuple[list[tuple[A2aTaskRow, JobRow]], int]:
    """An account's A2A tasks with their jobs, last updated first (ties: the greater id first), after the
    cursor `before` (updated_at, id); and how many match without the cursor. `caller_uuid`: only the tasks
    of that hiring agent (an agent-scoped key's)."""
    where: list[str] = ["t.account_id = ?"]
    params: list[Any] = [account_id]
    if caller_uuid is not None:
        where.append("j.caller_uuid = ?")
        params.append(caller_uuid)
    if context_id is not None:
        where.append("t.context_id = ?")
        params.append(context_id)
    if statuses is not None:
        where.append(f"j.status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if updated_after is not None:
        where.append("j.updated_at > ?")
        params.append(updated_after)
    matching = " AND ".join(where)
    joined = "FROM a2a_tasks t JOIN hire_jobs j ON j.id = t.id WHERE "
    (total,) = _rows(conn, f"SELECT COUNT(*) {joined}{matching}", params)[0]
    page_params = list(params)
    if before is not None:
        matching += " AND (j.updated_at < ? OR (j.updated_at = ? AND j.id < ?))"
        page_params.extend([before[0], before[0], before[1]])
    task_cols = ", ".join(f"t.{f.name}" for f in fields(A2aTaskRow))
    job_cols = ", ".join(f"j.{f.name}" for f in fields(JobRow))
    sql = f"SELECT {task_cols}, {job_cols} {joined}{matching} ORDER BY j.updated_at DESC, j.id DESC LIMIT ?"
    rows = _rows(conn, sql, [*page_params, limit])
    width = len(fields(A2aTaskRow))
    return [(A2aTaskRow(*row[:width]), _job(row[width:])) for row in rows], int(total)
