"""`GET /metrics` (Prometheus text format, prometheus-client) and the request observer: every request
counted by route and status with its latency, a request id on every response, and, with
AGENTLEDGER_LOG_FORMAT=json, one access line per request.

What is measured:
- requests: agentledger_http_requests_total{method,route,status} and
  agentledger_http_request_duration_seconds{method,route} (route: the route's template, e.g.
  /api/acp/orders/{order_id}, never the path itself; "unmatched" for paths no route serves);
- group commit: agentledger_group_commit_size (writes per durable commit), _wait_seconds (the
  oldest write's wait from submission to the end of its commit), _seconds (the COMMIT);
- read at each scrape from the database, whichever process wrote it: the indexer's checkpoint
  (agentledger_indexer_{head,applied,final}_block, _lag_blocks, _checkpoint_timestamp_seconds), the
  outbox (agentledger_outbox_pending, _held, _held_hosts, _dead_letters, _oldest_pending_age_seconds),
  the audit log and its anchors (agentledger_audit_log_entries, agentledger_anchors,
  agentledger_anchored_entries, agentledger_anchor_last_block);
- this process's jobs (agentledger_job_runs_total{job}, _failures_total, _last_run_timestamp_seconds,
  _next_run_timestamp_seconds, _running) and outbox dispatcher (agentledger_outbox_attempts_total,
  _delivered_total, _in_flight, agentledger_outbox_breaker_open_hosts);
- the indexer's own counters when this process runs it (indexer.metrics, registered by the runtime).

With a token configured (AGENTLEDGER_METRICS_TOKEN), /metrics needs `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import random
import re
import time
from collections.abc import Iterator

from aiohttp import web
from aiohttp.typedefs import Middleware
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from api.errors import ApiError, Handler
from api.http import DISPATCHER, JOBS, SERVICES
from core import figures
from core.store.committer import GroupCommitter

__all__ = ["METRICS", "REQUEST_ID", "ROUTES", "Metrics", "add_metrics_routes", "observer"]

ACCESS = logging.getLogger("agentledger.access")
REQUEST_ID_HEADER = "X-Request-Id"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: The request id of a request (the caller's X-Request-Id or Request-Id when well formed, else new).
REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id", str)

# No *_created series: they double the output and no dashboard or alert of ours reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
WAIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class Metrics:
    """One registry per app: the request and group-commit instruments, and the scrape-time readers."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "agentledger_http_requests", "HTTP requests answered", ["method", "route", "status"], registry=r
        )
        self.latency = Histogram(
            "agentledger_http_request_duration_seconds",
            "Time from a request's arrival to its answer",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.group_size = Histogram(
            "agentledger_group_commit_size", "Writes per durable group commit", buckets=GROUP_BUCKETS, registry=r
        )
        self.group_wait = Histogram(
            "agentledger_group_commit_wait_seconds",
            "How long a group's oldest write waited, from submission to the end of its commit",
            buckets=WAIT_BUCKETS,
            registry=r,
        )
        self.group_commit = Histogram(
            "agentledger_group_commit_seconds",
            "Time of the COMMIT (fsync) of a group",
            buckets=WAIT_BUCKETS,
            registry=r,
        )
        # labels() looks its child up under a lock on every call: one lookup per label set, kept here.
        self._counted: dict[tuple[str, str, int], Counter] = {}
        self._timed: dict[tuple[str, str], Histogram] = {}

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        counted = self._counted.get((method, route, status))
        if counted is None:
            counted = self._counted[(method, route, status)] = self.requests.labels(method, route, str(status))
        counted.inc()
        timed = self._timed.get((method, route))
        if timed is None:
            timed = self._timed[(method, route)] = self.latency.labels(method, route)
        timed.observe(seconds)

    def observe_group(self, size: int, wait: float, commit: float) -> None:
        self.group_size.observe(size)
        self.group_wait.observe(wait)
        self.group_commit.observe(commit)

    def watch(self, writer: GroupCommitter) -> None:
        writer.observer = self.observe_group


METRICS: web.AppKey[Metrics] = web.AppKey("metrics", Metrics)
_TOKEN: web.AppKey[str] = web.AppKey("metrics_token", str)


def _route(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return "unmatched" if resource is None else resource.canonical


def _request_id(request: web.Request) -> str:
    given = request.headers.get(REQUEST_ID_HEADER) or request.headers.get("Request-Id")
    if given is not None and _REQUEST_ID_RE.fullmatch(given):
        return given
    # 128 bits from the process's PRNG: an id, not a secret (uuid4 and os.urandom make a syscall per request).
    return f"{random.getrandbits(128):032x}"


def observer(metrics: Metrics, *, access_log: bool) -> Middleware:
    """The outermost middleware: times and counts every answer (errors included) and, with
    `access_log`, logs one line per request: method, route template, status, latency, request id."""

    @web.middleware
    async def observe(request: web.Request, handler: Handler) -> web.StreamResponse:
        start = time.perf_counter()
        request[REQUEST_ID] = rid = _request_id(request)
        status = 500
        try:
            resp = await handler(request)
            status = resp.status
            return resp
        except web.HTTPException as exc:
            status = exc.status
            raise
        except asyncio.CancelledError:
            status = 499  # the client went away
            raise
        finally:
            elapsed = time.perf_counter() - start
            route = _route(request)
            metrics.observe_request(request.method, route, status, elapsed)
            if access_log:
                ACCESS.info(
                    "%s %s %d",
                    request.method,
                    route,
                    status,
                    extra={
                        "method": request.method,
                        "route": route,
                        "status": status,
                        "latency_ms": round(elapsed * 1000, 3),
                        "request_id": rid,
                    },
                )

    return observe


async def _echo_request_id(request: web.Request, response: web.StreamResponse) -> None:
    rid = request.get(REQUEST_ID)
    if rid is not None and REQUEST_ID_HEADER not in response.headers:
        response.headers[REQUEST_ID_HEADER] = rid


# ---- figures read at scrape time ---------------------------------------------------------------------


class ServiceCollector:
    """Figures of the database and of this process's jobs, read when Prometheus scrapes."""

    def __init__(self, app: web.Application) -> None:
        self.app = app

    def describe(self) -> list[Metric]:
        return []  # read at scrape time only (the registry must not collect while the app is built)

    def collect(self) -> Iterator[Metric]:
        app = self.app
        runner = app.get(JOBS)
        if runner is not None:
            yield from self._jobs(runner.figures())
        dispatcher = app.get(DISPATCHER)
        if dispatcher is not None:
            s = dispatcher.status()
            yield CounterMetricFamily(
                "agentledger_outbox_attempts", "Delivery attempts by this process's dispatcher", value=s["attempts"]
            )
            yield CounterMetricFamily(
                "agentledger_outbox_delivered", "Deliveries this process's dispatcher completed", value=s["delivered"]
            )
            yield GaugeMetricFamily(
                "agentledger_outbox_in_flight", "Deliveries being attempted now", value=s["inFlight"]
            )
            yield GaugeMetricFamily(
                "agentledger_outbox_breaker_open_hosts",
                "Hosts this process's circuit breaker holds now",
                value=len(s["heldHosts"]),
            )

    @staticmethod
    def database(conn: object, chain_id: int | None) -> Iterator[Metric]:
        """The figures read from the database (at a scrape, inside the reads' seam: see metrics_handler)."""
        now = time.time()
        if chain_id is not None:
            ix = figures.indexer(conn, chain_id)  # type: ignore[arg-type]
            if ix.seen is not None:
                for name, text, value in (
                    ("head_block", "The node's head as the indexer last saw it", ix.head),
                    ("applied_block", "The last block the indexer applied", ix.seen),
                    ("final_block", "The last block the indexer treats as final", ix.final),
                    ("lag_blocks", "Blocks between the head and the last block applied", ix.lag),
                    ("checkpoint_timestamp_seconds", "When the indexer last wrote its checkpoint", ix.updated_at),
                ):
                    yield GaugeMetricFamily(f"agentledger_indexer_{name}", text, value=value)
            a = figures.anchors(conn, chain_id, limit=1)  # type: ignore[arg-type]
            yield GaugeMetricFamily(
                "agentledger_anchors", "Checkpoints of the audit log anchored on-chain", value=a.count
            )
            yield GaugeMetricFamily(
                "agentledger_anchored_entries", "Audit log entries the latest anchor covers", value=a.anchored_size
            )
            yield GaugeMetricFamily("agentledger_audit_log_entries", "Entries in the audit log", value=a.log_size)
            if a.recent:
                yield GaugeMetricFamily(
                    "agentledger_anchor_last_block", "Block of the latest anchor", value=a.recent[0].anchor.block_number
                )
        o = figures.outbox(conn, now, limit=10_000)  # type: ignore[arg-type]
        c = o.counts
        yield GaugeMetricFamily(
            "agentledger_outbox_pending", "Deliveries waiting to be sent (outbox depth)", value=c.pending
        )
        yield GaugeMetricFamily(
            "agentledger_outbox_held", "Pending deliveries the circuit breaker holds back", value=c.held
        )
        yield GaugeMetricFamily(
            "agentledger_outbox_held_hosts",
            "Hosts whose deliveries are held back",
            value=sum(1 for h in o.hosts if h.held),
        )
        yield GaugeMetricFamily(
            "agentledger_outbox_dead_letters", "Deliveries that gave up (dead letters)", value=c.dead_letters
        )
        yield GaugeMetricFamily(
            "agentledger_outbox_oldest_pending_age_seconds",
            "Age of the oldest pending delivery",
            value=0 if c.oldest_pending_at is None else max(0.0, now - c.oldest_pending_at),
        )

    @staticmethod
    def _jobs(figures: dict[str, tuple[int, int, float | None, float | None, bool]]) -> Iterator[Metric]:
        runs = CounterMetricFamily("agentledger_job_runs", "Runs of each background job", labels=["job"])
        failures = CounterMetricFamily("agentledger_job_failures", "Failed runs of each background job", labels=["job"])
        last = GaugeMetricFamily(
            "agentledger_job_last_run_timestamp_seconds", "When each job last finished", labels=["job"]
        )
        nxt = GaugeMetricFamily("agentledger_job_next_run_timestamp_seconds", "When each job runs next", labels=["job"])
        running = GaugeMetricFamily("agentledger_job_running", "1 while the job runs", labels=["job"])
        for name, (n, failed, finished, next_run, busy) in sorted(figures.items()):
            runs.add_metric([name], n)
            failures.add_metric([name], failed)
            if finished is not None:
                last.add_metric([name], finished)
            if next_run is not None:
                nxt.add_metric([name], next_run)
            running.add_metric([name], 1 if busy else 0)
        yield from (runs, failures, last, nxt, running)


# ---- the route ---------------------------------------------------------------------------------------


class _Read:
    """Metrics already read, as a registry for generate_latest."""

    def __init__(self, found: list[Metric]) -> None:
        self._found = found

    def collect(self) -> list[Metric]:
        return self._found


async def metrics_handler(request: web.Request) -> web.Response:
    token = request.app.get(_TOKEN)
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode("utf-8", "replace"), f"Bearer {token}".encode()):
            raise ApiError(
                401,
                "invalid_metrics_token",
                "/metrics needs 'Authorization: Bearer <AGENTLEDGER_METRICS_TOKEN>'",
                param="Authorization",
                headers={"WWW-Authenticate": 'Bearer realm="agentledger-metrics"'},
            )
    body = generate_latest(request.app[METRICS].registry)
    services = request.app.get(SERVICES)
    if services is not None and services.has_database:  # the database's figures, read off the loop on PostgreSQL
        chain_id = services.chain_id
        found = await services.reads.run(lambda conn: list(ServiceCollector.database(conn, chain_id)))
        body += generate_latest(_Read(found))  # type: ignore[arg-type]
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST, "Cache-Control": "no-store"})


#: Not part of the JSON API (a Prometheus endpoint with its own token): not in the operation table.
ROUTES: frozenset[tuple[str, str]] = frozenset({("GET", "/metrics")})


def add_metrics_routes(app: web.Application, metrics: Metrics, *, token: str = "") -> None:
    """Serve /metrics from `metrics` (the one the observer middleware fills), read the service's
    figures at each scrape, and put a request id on every response."""
    app[METRICS] = metrics
    app[_TOKEN] = token
    metrics.registry.register(ServiceCollector(app))  # type: ignore[arg-type]
    app.on_response_prepare.append(_echo_request_id)
    app.router.add_get("/metrics", metrics_handler)
