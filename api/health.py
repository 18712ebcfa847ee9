"""`GET /healthz`: liveness, the chain view, the database, the indexer's progress, the process's long-lived
parts and the background jobs.

It answers within about a second whatever is down: the node and the database are asked at once, each
within a bound, and a database that does not answer in time is reported `down` (the process goes on
answering 503 database_unavailable meanwhile) rather than making the check wait or fail. `status` is
`ok` only when the database answers, the index is synced and every part of the process works;
`degraded` otherwise (an alert fires on anything but `ok`: deploy/)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import aiohttp
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from api.errors import ApiError
from api.http import services_of
from api.operation import Call, Operation, Reply
from api.policy import mount
from core import indexing
from core.figures import BEHIND_BLOCKS
from core.isotime import iso_utc
from core.jobs import JobRunner
from core.leases import holders, indexer_lease_name, is_this_process, job_lease_name, service_lease_name
from core.liveness import Liveness
from core.networks import network_for
from core.services import Services
from core.store import Conn, StoreError, unavailable
from core.store.projections import get_tip, tip_updated_at

#: The indexer is "behind" when the node's head is more than BEHIND_BLOCKS past what it applied (the
#: operator's figures' threshold), or when it is behind at all and its checkpoint has not moved for this
#: many seconds (a stalled indexer a few blocks back is not synced: nothing it has not applied is released).
STALLED_SECONDS = 30.0
#: Seconds /healthz waits for the database before it reports it down.
DATABASE_WAIT = 0.8


@dataclass
class ChainProbe:
    """The HTTP client /healthz asks the node with: a part of the app's Services, its session opened
    and closed with the app."""

    session: aiohttp.ClientSession | None = None


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IndexerView(_Response):
    state: Literal["starting", "behind", "synced", "halted"]
    seen: int | None
    final: int | None
    behind: int | None
    reason: Annotated[
        str | SkipJsonSchema[None],
        Field(description="why it halted (with state halted only)", json_schema_extra=_no_default),
    ] = None
    haltedAt: Annotated[str | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None
    leader: bool = Field(description="this process follows the chain (it holds the indexer's lease)")
    holder: str | None = Field(description="the process holding the indexer's lease (null: none at the moment)")


class DatabaseView(_Response):
    state: Literal["up", "down"] = Field(description="down: it did not answer within a second (calls answer 503)")
    error: Annotated[str | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None


class PartView(_Response):
    """A long-lived part of the process: the group committer (writer), the indexer, the outbox
    dispatcher, the job leases."""

    state: Literal["ok", "failing"]
    recoveries: int = Field(description="times it recovered after failing (a reconnection, a lease taken again)")
    failingForSeconds: Annotated[float | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None
    lastError: Annotated[str | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None


class JobView(BaseModel):
    """One background job or service: its state, schedule, last run, next run, last error, counts; with
    a database, `leader` (this process holds its lease and runs it) and `holder` (the process that does)."""

    model_config = ConfigDict(extra="allow")
    state: str


class HealthResponse(_Response):
    status: Literal["ok", "degraded"]
    backend: Annotated[
        Literal["sqlite", "postgresql"] | SkipJsonSchema[None],
        Field(description="the database the service runs on", json_schema_extra=_no_default),
    ] = None
    chainId: int
    network: str
    latestBlock: int
    deployBlock: int
    usdc: str
    contracts: dict[str, str]
    database: Annotated[DatabaseView | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None
    indexer: Annotated[IndexerView | SkipJsonSchema[None], Field(json_schema_extra=_no_default)] = None
    parts: Annotated[
        dict[str, PartView] | SkipJsonSchema[None],
        Field(description="this process's long-lived parts by name", json_schema_extra=_no_default),
    ] = None
    jobs: Annotated[
        dict[str, JobView] | SkipJsonSchema[None],
        Field(
            description="this process's background jobs (sweeps, outbox dispatcher, anchorer) by name",
            json_schema_extra=_no_default,
        ),
    ] = None


async def _rpc_batch(session: aiohttp.ClientSession, url: str, calls: list[tuple[str, list[Any]]]) -> list[Any]:
    payload = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(calls)]
    async with session.post(url, json=payload, timeout=aiohttp.ClientTimeout(total=5)) as resp:
        replies = await resp.json()
    by_id = {r["id"]: r for r in replies}
    out = []
    for i in range(len(calls)):
        reply = by_id.get(i, {})
        if "result" not in reply:
            raise RuntimeError(f"RPC error: {reply.get('error')}")
        out.append(reply["result"])
    return out


async def run_healthz(services: Services, call: Call) -> Reply:
    """Liveness plus the chain view: chain id, latest block and every deployed address; the database, the
    indexer, the process's parts and its jobs (module docstring). The parts and jobs are those create_app
    registered in `services` (a process with a database)."""
    dep = services.deployment
    session = services.part(ChainProbe).session
    assert session is not None, "the probe's session opens with the app"
    chain = asyncio.ensure_future(_rpc_batch(session, services.rpc_url, [("eth_chainId", []), ("eth_blockNumber", [])]))
    now = services.clock()
    stored = asyncio.ensure_future(_stored_view(services, dep.chain_id, now)) if services.has_database else None
    try:
        chain_id_hex, block_hex = await chain
    except (TimeoutError, aiohttp.ClientError, RuntimeError, ValueError) as exc:
        if stored is not None:
            stored.cancel()
        raise ApiError(
            503, "chain_unavailable", f"the JSON-RPC node does not answer: {type(exc).__name__}", type_="service_error"
        ) from exc
    chain_id = int(chain_id_hex, 16)
    if chain_id != dep.chain_id:
        raise ApiError(
            503,
            "chain_mismatch",
            f"node reports chain {chain_id}, deployment is for {dep.chain_id}",
            type_="service_error",
        )
    latest = int(block_hex, 16)
    body: dict[str, Any] = {
        "status": "ok",
        "chainId": chain_id,
        "network": network_for(chain_id).name,
        "latestBlock": latest,
        "deployBlock": dep.deploy_block,
        "usdc": dep.usdc,
        "contracts": dep.contracts,
    }
    held: dict[str, str] | None = None
    if stored is not None:
        body["backend"] = services.reads.kind
        found = await stored
        if isinstance(found, str):
            body["database"] = {"state": "down", "error": found}
            body["status"] = "degraded"
        else:
            body["database"] = {"state": "up"}
            held, tip = found
            body["indexer"] = indexer_view(tip, latest, held.get(indexer_lease_name(chain_id)), now)
            if body["indexer"]["state"] != "synced":
                body["status"] = "degraded"
    liveness, runner = services.find(Liveness), services.find(JobRunner)
    if liveness is not None:
        body["parts"] = liveness.view()
        if not liveness.ok():
            body["status"] = "degraded"
    if runner is not None:
        body["jobs"] = jobs_view(runner, held)
    return Reply(200, json.dumps(body).encode())


async def _stored_view(services: Services, chain_id: int, now: float) -> tuple[dict[str, str], TipView] | str:
    """The leases' holders and the indexer's checkpoint, or why the database did not answer in time."""

    def read(db: Conn) -> tuple[dict[str, str], TipView]:
        return holders(db, now), tip_view(db, chain_id)

    try:
        return await asyncio.wait_for(services.reads.run(read), DATABASE_WAIT)
    except TimeoutError:
        return f"no answer within {DATABASE_WAIT} s"
    except StoreError as exc:
        if unavailable(exc):
            return type(exc).__name__
        raise


def jobs_view(runner: JobRunner, held: dict[str, str] | None) -> dict[str, dict[str, Any]]:
    """The runner's status, each job and service with its lease's holder (when the leases are known)."""
    out = runner.status()
    if held is not None:
        for job in runner.jobs:
            out[job.name]["holder"] = held.get(job_lease_name(job.name))
        for service in runner.services:
            out[service.name]["holder"] = held.get(service_lease_name(service.name))
    return out


@dataclass(frozen=True)
class TipView:
    """What the store says of the indexer: its checkpoint (seen, final, when it last moved) and its halt."""

    seen: int | None
    final: int | None
    moved_at: float | None
    halt: indexing.Halt | None


def tip_view(db: Conn, chain_id: int) -> TipView:
    tip = get_tip(db, chain_id)
    if tip is None:
        return TipView(None, None, None, None)
    return TipView(tip[0], tip[3], tip_updated_at(db, chain_id), indexing.halt_of(db, chain_id))


def indexer_view(tip: TipView, latest: int, holder: str | None, now: float) -> dict[str, Any]:
    """What the indexer has applied ("seen") and treats as final, and how far behind it is: `behind`
    past BEHIND_BLOCKS, or when behind at all with a checkpoint that has not moved for STALLED_SECONDS;
    `halted` (with the reason) when it waits for an operator, whichever process runs it; which process
    leads it (`holder` of its lease) and whether that is this one (`leader`)."""
    lead = {"leader": is_this_process(holder), "holder": holder}
    if tip.seen is None:
        return {"state": "starting", "seen": None, "final": None, "behind": None, **lead}
    behind = max(0, latest - tip.seen)
    stalled = behind > 0 and tip.moved_at is not None and now - tip.moved_at > STALLED_SECONDS
    view: dict[str, Any] = {
        "state": "behind" if behind > BEHIND_BLOCKS or stalled else "synced",
        "seen": tip.seen,
        "final": tip.final,
        "behind": behind,
        **lead,
    }
    if tip.halt is not None:
        view.update(state="halted", reason=tip.halt.reason, haltedAt=iso_utc(tip.halt.since))
    return view


def add_health_routes(app: web.Application) -> None:
    """GET /healthz, answered from the app's Services (a database, a Liveness and a JobRunner among its
    parts add the indexer, the parts and the jobs)."""
    probe = services_of(app).provide(ChainProbe())

    async def session(_app: web.Application) -> Any:
        probe.session = aiohttp.ClientSession()
        yield
        await probe.session.close()

    app.cleanup_ctx.append(session)
    mount(app, OPERATIONS)


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/healthz",
        "healthz",
        "Liveness and the chain view",
        HealthResponse,
        auth="none",
        errors={503: ("chain_unavailable", "chain_mismatch")},
        tags=("service",),
        run=run_healthz,
        open_world=True,
        uses_database=False,
    ),
]
