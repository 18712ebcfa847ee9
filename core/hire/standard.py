"""Standard hire: charged to the calling agent's balance, no wallet, no chain.

1. One transaction claims the Idempotency-Key (when given), picks the provider, checks the input
   against the service's input schema and RESERVES the price: a `hire_reserve` ledger row takes it
   out of the caller's spendable balance (self part first, as spend does), so no spend and no other
   hire can use it; the balance update refuses an overdraft in its WHERE clause, and every write goes
   through the one group committer, so 100 hires at once on one balance never overdraw it. The job
   row (status `reserved`) and its audit entry and webhooks (the provider learns of the job) commit
   with it.
2. The provider is called (core.hire.runners), outside any transaction.
3. One transaction settles: on success the output's SHA-256 and CID are committed to the audit chain,
   then the provider is paid through the earn split (core.wallets.earn: 97/1/2, referral 0.5%) and
   the reservation stays as the charge (`charged`); on failure (timeout, error, output failing the
   output schema, ...) a `hire_release` ledger row gives the reservation back (`released`) and the
   answer is the failure with its code. The answer is stored under the key in the same transaction.

A crash between 1 and 3 leaves the job `reserved` and the key in flight: the start-up recovery
(core.hire.settle.recover) gives the reservation back and stores a `hire_interrupted` answer under
the key, so the job is never run twice for one key and never charged twice; nothing else takes a
hire's key over while its job is reserved.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core import idempotency, instance, wallets
from core.errors import ServiceError
from core.hire import moves, reputation, rules, runners, schemas, services
from core.hire.context import Hire
from core.hire.runners import Outcome
from core.idempotency import Answer, InFlight
from core.jsontext import encode, usdc
from core.money import split, usdc_text
from core.store import Conn
from core.store import hire as store
from core.store import idempotency as idem_store
from core.store import wallets as wallet_store
from core.store.hire import JobRow, ServiceRow
from core.store.wallets import AgentRow, LedgerEntry

log = logging.getLogger("agentledger.hire")


@dataclass(frozen=True)
class HireRequest:
    caller: AgentRow
    service_type: str
    input: Any
    provider_wallet: str | None
    max_price: int | None
    webhook_url: str | None
    webhook_secret: str | None


@dataclass(frozen=True)
class IdemKey:
    scope: str
    key: str
    body_sha256: str


@dataclass(frozen=True)
class _Reserved:
    job: JobRow
    service: ServiceRow
    input_bytes: bytes


def choose(conn: Conn, req: HireRequest) -> ServiceRow:
    """The service that runs the job: the named provider's, or the best-scored healthy one."""
    if req.provider_wallet is not None:
        service = store.service_by_wallet(conn, req.provider_wallet, req.service_type)
        if service is None or not service.active:
            raise ServiceError(
                404,
                "service_not_found",
                f"{req.provider_wallet} offers no {req.service_type} service",
                param="providerWallet",
            )
    else:
        candidates = store.registry_page(
            conn,
            service_type=req.service_type,
            wallet=None,
            max_price=req.max_price,
            min_score=None,
            escrow_only=False,
            healthy_only=True,
            after=None,
            limit=2,
        )
        chosen = [row[0] for row in candidates if row[0].provider_uuid != req.caller.uuid]
        if not chosen:
            raise ServiceError(
                404,
                "no_provider_available",
                f"no healthy, unpaused provider offers {req.service_type}"
                + ("" if req.max_price is None else f" at {usdc_text(req.max_price)} USDC or less"),
                param="serviceType",
            )
        service = chosen[0]
    if service.provider_uuid == req.caller.uuid:
        raise ServiceError(422, "self_hire", "an agent cannot hire itself", param="providerWallet")
    agent = store.chain_agent(conn, service.token_id)
    if (agent is not None and agent.paused) or services.provider_paused(conn, service):
        raise ServiceError(409, "provider_paused", "the provider is paused (listed for sale)", param="providerWallet")
    if req.max_price is not None and service.price > req.max_price:
        raise ServiceError(
            422,
            "price_above_max",
            f"the service costs {usdc_text(service.price)} USDC, more than maxPrice",
            param="maxPrice",
        )
    return service


def check_caller(conn: Conn, caller: AgentRow) -> None:
    """409 agent_paused for a caller listed for sale: a hire is a spend (core.wallets.check_not_paused)."""
    try:
        wallets.check_not_paused(conn, caller)
    except wallets.WalletError as exc:
        raise ServiceError(409, exc.code, exc.message, param="callerWallet") from exc


def _short(balance: int, amount: int) -> ServiceError | None:
    """422 insufficient_balance when `balance` cannot cover a hire of `amount`."""
    if amount <= balance:
        return None
    return ServiceError(
        422,
        "insufficient_balance",
        f"balance {usdc_text(balance)} USDC cannot cover the hire's {usdc_text(amount)} USDC",
        param="callerWallet",
    )


@dataclass(frozen=True)
class Priced:
    """What a standard hire would charge as things stand: the service it picks, the caller's balance
    and why the hire would be refused now (None: it would run)."""

    service: ServiceRow
    balance: int
    refusal: ServiceError | None


def price(conn: Conn, req: HireRequest) -> Priced:
    """A standard hire's quote (nothing is reserved): the named provider's service, else the one the
    automatic choice picks now; refused as things stand when the caller is paused (listed for sale) or
    its balance is short."""
    service = choose(conn, req)
    balance = wallet_store.get_balance(conn, req.caller.uuid).balance
    try:
        check_caller(conn, req.caller)
    except ServiceError as exc:
        return Priced(service, balance, exc)
    return Priced(service, balance, _short(balance, service.price))


def check_input(service: ServiceRow, value: Any) -> tuple[bytes, str]:
    """(canonical bytes, SHA-256) of an input the service's input schema accepts; 400 otherwise."""
    data, digest = rules.input_digest(value)
    try:
        schemas.check(service.input_schema, json.loads(data))
    except schemas.SchemaMismatch as exc:
        raise ServiceError(
            422, "input_schema_mismatch", f"input fails the service's input schema: {exc}", param="input" + exc.path
        ) from exc
    return data, digest


def _conflict() -> ServiceError:
    return ServiceError(
        422,
        "idempotency_conflict",
        "this Idempotency-Key was used with a different request body",
        param=idempotency.HEADER,
    )


#: Called in the reservation's transaction with the job it inserted (a transport's own record of it).
Record = Callable[[Conn, JobRow], None]
#: Called once the reservation has committed, before the provider is called.
Started = Callable[[JobRow], None]


def _reserve_tx(ctx: Hire, req: HireRequest, idem: IdemKey | None, now: float, record: Record | None) -> Any:
    def work(conn: Conn) -> _Reserved | Answer | ServiceError:
        attempt = secrets.token_hex(16) if idem is not None else None
        if idem is not None and attempt is not None:
            idem_store.purge(conn, now - idempotency.RETENTION_SECONDS)
            # claimed first, in this transaction: of concurrent hires with one key, one claims it
            row = idem_store.claim(conn, idem.scope, idem.key, idem.body_sha256, attempt, now)
            if row is not None:
                if row.body_sha256 != idem.body_sha256:
                    raise _conflict()
                if row.status == "in_flight":
                    raise InFlight()  # finished by its run or by the start-up recovery, never taken over
                return Answer(row.response_status or 200, row.response_body or b"", replayed=True)
        try:
            check_caller(conn, req.caller)
            service = choose(conn, req)
            input_bytes, input_sha = check_input(service, req.input)
            job_id = rules.new_job_id()
            held_owner, held_self = _hold(conn, req.caller, service.price, job_id, now)
        except ServiceError as exc:
            if idem is not None and attempt is not None:
                if exc.replayable and exc.status < 500:
                    shape = json.dumps(exc.shape()).encode()
                    idem_store.finish(conn, idem.scope, idem.key, attempt, exc.status, shape)
                else:  # "not now": no answer to store, the key stays free for a retry
                    idem_store.release(conn, idem.scope, idem.key, attempt)
            return exc
        provider = wallet_store.agent_by_uuid(conn, service.provider_uuid)
        assert provider is not None
        job = JobRow(
            id=job_id,
            kind=rules.STANDARD,
            status="reserved",
            provider_uuid=service.provider_uuid,
            provider_token_id=service.token_id,
            service_type=service.service_type,
            caller_uuid=req.caller.uuid,
            caller_address=None,
            self_dealing=provider.account_id == req.caller.account_id,
            amount=service.price,
            held_owner=held_owner,
            held_self=held_self,
            input_sha256=input_sha,
            idem_scope=None if idem is None else idem.scope,
            idem_key=None if idem is None else idem.key,
            idem_attempt=attempt,
            outcome=None,
            output=None,
            output_sha256=None,
            output_cid=None,
            error_code=None,
            error_message=None,
            response_ms=None,
            created_tx=None,
            expires_at=None,
            settle_tx=None,
            settle_attempts=0,
            settle_error=None,
            next_settle_at=None,
            final=False,
            caller_webhook_url=req.webhook_url,
            caller_webhook_secret=req.webhook_secret,
            created_at=now,
            updated_at=now,
            owner=instance.current(),  # this process runs it (see settle.recover)
        )
        store.insert_job(conn, job)
        if record is not None:
            record(conn, job)
        moves.record(
            conn,
            job,
            None,
            "reserved",
            now,
            {"amount": str(service.price), "input_sha256": input_sha, "caller": req.caller.wallet},
        )
        return _Reserved(job, service, input_bytes)

    return work


def _hold(conn: Conn, caller: AgentRow, amount: int, job_id: str, now: float) -> tuple[int, int]:
    """Reserve `amount` on the caller's balance (self part first); 422 insufficient_balance."""
    bal = wallet_store.get_balance(conn, caller.uuid)
    short = _short(bal.balance, amount)
    if short is not None:
        raise short
    from_self = min(amount, bal.self_balance)
    entry = LedgerEntry(caller.uuid, "hire_reserve", -(amount - from_self), -from_self, f"hire:{job_id}")
    try:
        wallet_store.append_ledger(conn, entry, now)
    except wallet_store.Overdraft as exc:  # not reachable after the check above, which runs in the same transaction
        raise ServiceError(422, "insufficient_balance", str(exc), param="callerWallet") from exc
    return amount - from_self, from_self


def give_back(conn: Conn, job: JobRow, now: float) -> None:
    """The `hire_release` ledger row returning a reservation's parts."""
    entry = LedgerEntry(
        job.caller_uuid or "", "hire_release", job.held_owner or 0, job.held_self or 0, f"hire:{job.id}"
    )
    wallet_store.append_ledger(conn, entry, now)


async def hire(
    ctx: Hire, req: HireRequest, idem: IdemKey | None, *, record: Record | None = None, started: Started | None = None
) -> Answer:
    """Run one standard hire; the answer (stored under the key) or a refusal (ServiceError). `record` and
    `started` let a transport keep its own record of the job and learn when it runs (the A2A tasks)."""
    now = ctx.clock()
    got: _Reserved | Answer | ServiceError = await ctx.writer.run(_reserve_tx(ctx, req, idem, now, record))
    if isinstance(got, Answer):
        return got
    if isinstance(got, ServiceError):
        raise got
    ctx.services.wake()
    reserved: _Reserved = got
    if started is not None:
        started(reserved.job)
    if ctx.seams.before_run is not None:
        await ctx.seams.before_run(reserved.job.id)
    try:
        outcome = await runners.run(ctx, reserved.service, reserved.job.id, reserved.input_bytes)
    except Exception as exc:  # a bug must not keep the caller's money reserved
        log.exception("hire %s: the runner failed", reserved.job.id)
        outcome = Outcome(False, 0, None, "provider_error", f"the runner failed: {type(exc).__name__}")
    try:  # the digests are computed here, outside the writer's transaction
        answer: Answer = await ctx.writer.run(_settle_tx(reserved, outcome, ctx.clock()))
    except wallets.WalletError as exc:  # the provider's total cannot grow: give the reservation back
        log.error("hire %s: the provider cannot be paid: %s", reserved.job.id, exc.message)
        answer = await ctx.writer.run(
            _settle_tx(
                reserved, Outcome(False, outcome.response_ms, None, "provider_cannot_be_paid", exc.message), ctx.clock()
            )
        )
    ctx.services.wake()
    return answer


def _settle_tx(reserved: _Reserved, outcome: Outcome, now: float) -> Any:
    digests = None if outcome.output is None else rules.output_digests(outcome.output)

    def work(conn: Conn) -> Answer:
        job = store.get_job(conn, reserved.job.id)
        assert job is not None
        if job.status != "reserved":  # settled by someone else (cannot happen in one process): say so
            raise InFlight()
        if outcome.ok:
            assert digests is not None
            status, body = charge(conn, job, reserved.service.wallet, outcome, digests, now)
        else:
            status, body = fail(conn, job, reserved.service.wallet, outcome, now)
        if job.idem_scope is not None and job.idem_key is not None and job.idem_attempt is not None:
            idem_store.finish(conn, job.idem_scope, job.idem_key, job.idem_attempt, status, body)
        return Answer(status, body)

    return work


def charge(
    conn: Conn, job: JobRow, provider_wallet: str, outcome: Outcome, digests: tuple[str, str], now: float
) -> tuple[int, bytes]:
    """Commit the output, pay the provider through the earn split, keep the reservation as the charge."""
    assert outcome.output is not None
    output_sha, cid = digests
    store.update_job(
        conn,
        job.id,
        ("reserved",),
        status="charged",
        outcome="success",
        output=outcome.output.decode(),
        output_sha256=output_sha,
        output_cid=cid,
        response_ms=outcome.response_ms,
        updated_at=now,
    )
    moves.record(
        conn,
        job,
        "reserved",
        "output_committed",
        now,
        {"output_sha256": output_sha, "output_cid": cid, "response_ms": outcome.response_ms},
    )
    provider = wallet_store.agent_by_uuid(conn, job.provider_uuid)
    assert provider is not None
    earned = wallets.earn(conn, provider, job.amount, f"hire:{job.id}", now)
    entry = moves.record(
        conn,
        job,
        "output_committed",
        "charged",
        now,
        {
            "amount": str(job.amount),
            "owner_cut": str(earned.owner_cut),
            "agent_cut": str(earned.agent_cut),
            "service_cut": str(earned.service_cut),
            "referral_cut": str(earned.referral_cut),
            "provider_ledger_id": earned.ledger_id,
        },
    )
    reputation.add_sample(conn, job=job, success=True, response_ms=outcome.response_ms, audit_id=entry.id, now=now)
    store.record_health(conn, job.provider_uuid, job.service_type, True, None, now)
    caller_balance = wallet_store.get_balance(conn, job.caller_uuid or "")
    payload = {
        "success": True,
        "jobId": job.id,
        "output": outcome.output.decode(),
        "outputSha256": output_sha,
        "outputCid": cid,
        "providerWallet": provider_wallet,
        "serviceType": job.service_type,
        "amountCharged": usdc(job.amount),
        "responseMs": outcome.response_ms,
        "earnSplit": _split_json(job.amount, earned.referral_cut > 0),
        "balance": usdc(caller_balance.balance),
        "auditId": entry.id,
    }
    return 200, encode(payload).encode()


def _split_json(amount: int, referred: bool) -> dict[str, Any]:
    s = split(amount, referred)
    return {
        "ownerCut": usdc(s.owner_cut),
        "agentCut": usdc(s.agent_cut),
        "serviceCut": usdc(s.service_cut),
        "referralCut": usdc(s.referral_cut),
    }


def fail(conn: Conn, job: JobRow, provider_wallet: str, outcome: Outcome, now: float) -> tuple[int, bytes]:
    """Give the reservation back; the answer is the failure (nothing charged)."""
    code = outcome.error_code or "provider_error"
    message = outcome.error_message or "the provider failed"
    interrupted = code == "hire_interrupted"
    store.update_job(
        conn,
        job.id,
        ("reserved",),
        status="released",
        outcome="interrupted" if interrupted else "failure",
        error_code=code,
        error_message=message,
        response_ms=outcome.response_ms,
        updated_at=now,
    )
    give_back(conn, job, now)
    entry = moves.record(conn, job, "reserved", "released", now, {"amount": str(job.amount), "error_code": code})
    if rules.provider_fault(code):
        reputation.add_sample(conn, job=job, success=False, response_ms=outcome.response_ms, audit_id=entry.id, now=now)
        store.record_health(conn, job.provider_uuid, job.service_type, False, f"{code}: {message}", now)
    err = ServiceError(
        rules.failure_status(code),
        code,
        message + "; nothing was charged",
        type_="service_error" if interrupted else "provider_error",
        extra={
            "jobId": job.id,
            "providerWallet": provider_wallet,
            "amountCharged": usdc(0),
            "responseMs": outcome.response_ms,
            "auditId": entry.id,
        },
    )
    return err.status, encode(err.shape()).encode()
