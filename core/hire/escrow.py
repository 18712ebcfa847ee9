"""Escrow hire: the caller's USDC is locked in AgentEscrow; the service runs the job and, as the
escrow's oracle, releases it through the payout path (97/1/2, referral 0.5%) or refunds it.

POST /api/a2a/escrow, after the caller's createJob is mined:
1. The caller's EIP-191 signature of rules.escrow_message (chain, escrow contract, job id, SHA-256 of
   the input, a timestamp within 300 s) recovers to an address; the signed message is used once.
2. A job this service already knows is never run again: its caller gets the stored result (the
   signature must be the job's on-chain caller's); while it runs, 409 job_in_progress.
3. `txHash`'s receipt must hold AgentEscrow's JobCreated for the job id; its caller must be the
   signer and its provider token the named provider's; the job must still be locked on-chain.
   These are the caller's mistakes: refused, nothing moves (the caller may POST again).
4. The provider's side must hold: the lock equals the on-chain price as indexed (priceOf) and the
   service's price, the provider is not paused, and the job has at least the service's SLA plus
   RELEASE_MARGIN_SECONDS left before it expires. Otherwise the job is refunded at once.
5. The job row (`running`) and the signature's use commit in one transaction whose primary key is
   the job id: two POSTs at once run the job once.
6. On success the output's SHA-256 and CID are committed to the audit chain (`releasing`), then the
   oracle release is sent through the operator's nonce sequence; on failure (`refunding`) the refund.
   A release or refund that is not mined is retried by the `hire-settle` job until it is (the answer
   says `settlement: "pending"`); a restart finds `running` jobs (cut off: refunded) and `releasing`
   ones (released once: the chain is read before anything is sent again).
7. `released`/`refunded` become final, and count for reputation, when the follower sees the event
   in a final block (core.hire.follower).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from web3 import Web3
from web3.exceptions import TransactionNotFound, Web3RPCError

from core import errors, instance, signatures
from core.errors import ServiceError
from core.hire import moves, rules, runners, services, standard
from core.hire.context import Hire
from core.hire.runners import Outcome
from core.jsontext import usdc
from core.money import split
from core.operator import ChainUnavailable, ContractReverted, SendUncertain, TransactionFailed, tx_hash_of
from core.store import Conn
from core.store import audit as audit_store
from core.store import checkout as checkout_store
from core.store import hire as store
from core.store.hire import JobRow, ServiceRow

log = logging.getLogger("agentledger.hire")

JOB_CREATED_TOPIC = "0x" + Web3.keccak(text="JobCreated(bytes32,address,uint256,uint256,uint64)").hex().removeprefix(
    "0x"
)
#: AgentEscrow.Status
LOCKED, RELEASED, REFUNDED = 1, 2, 3
#: A request's own release or refund attempt owns the job this long before the settle job may retry it.
OWN_ATTEMPT_SECONDS = 120.0


@dataclass(frozen=True)
class EscrowRequest:
    job_id: str  # 0x + 64 lowercase hex
    tx_hash: str
    service_type: str
    input: Any
    provider_wallet: str
    timestamp: int
    signature: str
    webhook_url: str | None
    webhook_secret: str | None


def _unavailable(exc: BaseException) -> ServiceError:
    log.warning("chain node unavailable: %s", exc)  # the text may carry the RPC URL: log only
    return errors.chain_unavailable()


async def escrow_hire(ctx: Hire, req: EscrowRequest) -> dict[str, Any]:
    """Run (once) or read the escrow job; the answer's JSON object."""
    now = ctx.clock()
    input_bytes, input_sha = rules.input_digest(req.input)
    signatures.require_fresh(req.timestamp, now)
    message = rules.escrow_message(
        chain_id=ctx.chain_id,
        escrow=ctx.escrow_address,
        job_id=req.job_id,
        input_sha256=input_sha,
        timestamp=req.timestamp,
    )
    signer = signatures.recovered(message, req.signature)
    known = await ctx.reads.run(lambda conn: store.get_job(conn, req.job_id))
    if known is not None:
        return await _known(ctx, known, signer, message, now)
    caller, token_id = await _verify_receipt(ctx, req)
    if signer != caller:
        raise ServiceError(
            401, "signature_mismatch", f"the signature is not the job's on-chain caller's ({caller})", param="signature"
        )
    service = await ctx.reads.run(lambda conn: _hired(conn, req, token_id))
    standard.check_input(service, req.input)
    onchain = await _chain_job(ctx, req.job_id)
    status, expires_at, amount = int(onchain[2]), int(onchain[1]), int(onchain[4])
    if status != LOCKED:
        raise ServiceError(409, "escrow_not_locked", "the escrow job is no longer locked on-chain", param="escrowJobId")
    refusal = await _provider_side(ctx, service, amount, expires_at)
    agent = await ctx.reads.run(lambda conn: store.chain_agent(conn, token_id))
    self_dealing = agent is not None and caller in (agent.owner, agent.self_wallet)
    job = _new_job(req, service, caller, token_id, amount, expires_at, input_sha, self_dealing, refusal, now)
    extra = {"amount": str(amount), "caller": caller, "input_sha256": input_sha, "tx_hash": req.tx_hash}
    accept = _accept(job, signatures.digest(message), extra, refusal, now)
    await _work(ctx, job, service, accept, refusal, input_bytes)
    return await ctx.reads.run(lambda conn: view(conn, _job(conn, job.id), with_output=True))


def _hired(conn: Conn, req: EscrowRequest, token_id: int) -> ServiceRow:
    """The active service the escrow job hires: 422 provider_mismatch when the named provider is not the
    job's token, 404 service_not_found."""
    provider = checkout_store.provider_by_wallet(conn, req.provider_wallet)
    if provider is None or provider.token_id != token_id:
        raise _provider_mismatch(token_id, req.provider_wallet)
    service = store.get_service(conn, provider.agent_uuid, req.service_type)
    if service is None or not service.active:
        raise ServiceError(
            404,
            "service_not_found",
            f"{req.provider_wallet} offers no {req.service_type} service",
            param="serviceType",
        )
    return service


def _new_job(
    req: EscrowRequest,
    service: ServiceRow,
    caller: str,
    token_id: int,
    amount: int,
    expires_at: int,
    input_sha: str,
    self_dealing: bool,
    refusal: tuple[str, str] | None,
    now: float,
) -> JobRow:
    """The job row of a verified lock: running, or refunding at once when `refusal` (the provider's side)."""
    return JobRow(
        id=req.job_id,
        kind=rules.ESCROW,
        status="running" if refusal is None else "refunding",
        provider_uuid=service.provider_uuid,
        provider_token_id=token_id,
        service_type=service.service_type,
        caller_uuid=None,
        caller_address=caller,
        self_dealing=self_dealing,
        amount=amount,
        held_owner=None,
        held_self=None,
        input_sha256=input_sha,
        idem_scope=None,
        idem_key=None,
        idem_attempt=None,
        outcome=None if refusal is None else "refused",
        output=None,
        output_sha256=None,
        output_cid=None,
        error_code=None if refusal is None else refusal[0],
        error_message=None if refusal is None else refusal[1],
        response_ms=None,
        created_tx=req.tx_hash,
        expires_at=expires_at,
        settle_tx=None,
        settle_attempts=0,
        settle_error=None,
        next_settle_at=None if refusal is None else now + OWN_ATTEMPT_SECONDS,
        final=False,
        caller_webhook_url=req.webhook_url,
        caller_webhook_secret=req.webhook_secret,
        created_at=now,
        updated_at=now,
        owner=instance.current(),  # this process runs it (see settle.recover)
    )


def _accept(
    job: JobRow, digest: str, extra: dict[str, Any], refusal: tuple[str, str] | None, now: float
) -> Callable[[Conn], bool]:
    """The job's first transaction: the signature used once, the job, its first moves; False when another
    request accepted it first."""

    def accept(conn: Conn) -> bool:
        if store.get_job(conn, job.id) is not None:
            return False
        signatures.use_once(conn, digest, now)
        store.insert_job(conn, job)
        moves.record(conn, job, None, "running", now, extra)
        if refusal is not None:
            moves.record(conn, job, "running", "refunding", now, {"error_code": refusal[0]})
        return True

    return accept


async def _work(
    ctx: Hire,
    job: JobRow,
    service: ServiceRow,
    accept: Callable[[Conn], bool],
    refusal: tuple[str, str] | None,
    input_bytes: bytes,
) -> None:
    """Accept the job, run it at the provider (unless refused), then settle it on-chain; the settle job
    leaves it alone meanwhile (ctx.busy)."""
    ctx.busy.add(job.id)
    try:
        if not await ctx.writer.run(accept):
            raise _in_progress()
        ctx.services.wake()
        if refusal is None:
            if ctx.seams.before_run is not None:
                await ctx.seams.before_run(job.id)
            outcome = await _run(ctx, service, job.id, input_bytes)
            await ctx.writer.run(_ran(job, outcome, ctx.clock()))
            ctx.services.wake()
            if outcome.ok and ctx.seams.after_output is not None:
                ctx.seams.after_output(job.id)
        await settle(ctx, job.id)
    finally:
        ctx.busy.discard(job.id)


def _job(conn: Conn, job_id: str) -> JobRow:
    found = store.get_job(conn, job_id)
    assert found is not None
    return found


def _in_progress() -> ServiceError:
    return ServiceError(
        409,
        "job_in_progress",
        "this escrow job is running; POST again (with a fresh signature) for its result",
        param="escrowJobId",
        replayable=False,
        headers={"Retry-After": "1"},
    )


async def _known(ctx: Hire, job: JobRow, signer: str, message: str, now: float) -> dict[str, Any]:
    if signer != job.caller_address:
        raise ServiceError(
            401, "signature_mismatch", "the signature is not the job's on-chain caller's", param="signature"
        )
    digest = signatures.digest(message)
    await ctx.writer.run(lambda conn: signatures.use_once(conn, digest, now))
    if job.status == "running":
        raise _in_progress()
    return {**await ctx.reads.run(lambda conn: view(conn, job, with_output=True)), "replayed": True}


async def _run(ctx: Hire, service: ServiceRow, job_id: str, input_bytes: bytes) -> Outcome:
    try:
        return await runners.run(ctx, service, job_id, input_bytes)
    except Exception as exc:  # a bug must not keep the caller's money locked
        log.exception("escrow job %s: the runner failed", job_id)
        return Outcome(False, 0, None, "provider_error", f"the runner failed: {type(exc).__name__}")


def _ran(job: JobRow, outcome: Outcome, now: float) -> Any:
    """Record the run: the output committed (releasing) or the failure (refunding)."""
    digests = None if outcome.output is None else rules.output_digests(outcome.output)

    def work(conn: Conn) -> None:
        if outcome.ok:
            assert outcome.output is not None and digests is not None
            sha, cid = digests
            store.update_job(
                conn,
                job.id,
                ("running",),
                status="releasing",
                outcome="success",
                output=outcome.output.decode(),
                output_sha256=sha,
                output_cid=cid,
                response_ms=outcome.response_ms,
                next_settle_at=now + OWN_ATTEMPT_SECONDS,
                updated_at=now,
            )
            moves.record(
                conn,
                job,
                "running",
                "output_committed",
                now,
                {"output_sha256": sha, "output_cid": cid, "response_ms": outcome.response_ms},
            )
            moves.record(conn, job, "output_committed", "releasing", now, notify_provider=False)
            store.record_health(conn, job.provider_uuid, job.service_type, True, None, now)
        else:
            code = outcome.error_code or "provider_error"
            store.update_job(
                conn,
                job.id,
                ("running",),
                status="refunding",
                outcome="failure",
                error_code=code,
                error_message=outcome.error_message,
                response_ms=outcome.response_ms,
                next_settle_at=now + OWN_ATTEMPT_SECONDS,
                updated_at=now,
            )
            moves.record(conn, job, "running", "refunding", now, {"error_code": code})
            if rules.provider_fault(code):
                store.record_health(conn, job.provider_uuid, job.service_type, False, outcome.error_message, now)

    return work


# ---- checks against the chain -------------------------------------------------------------------


async def _verify_receipt(ctx: Hire, req: EscrowRequest) -> tuple[str, int]:
    """(caller, provider token) of the JobCreated log for req.job_id in req.tx_hash's receipt."""
    w3 = ctx.operator.w3
    try:
        receipt = await asyncio.to_thread(w3.eth.get_transaction_receipt, req.tx_hash)  # type: ignore[arg-type]
    except TransactionNotFound as exc:
        raise ServiceError(
            409, "transaction_not_found", "no receipt for txHash (not mined yet?)", param="txHash", replayable=False
        ) from exc
    except (Web3RPCError, OSError) as exc:
        raise _unavailable(exc) from exc
    if receipt["status"] != 1:
        raise ServiceError(422, "transaction_failed", "txHash reverted", param="txHash")
    escrow = ctx.escrow_address.lower()
    for entry in receipt["logs"]:
        topics = ["0x" + bytes(t).hex() for t in entry["topics"]]
        if (
            str(entry["address"]).lower() == escrow
            and len(topics) == 4
            and topics[0] == JOB_CREATED_TOPIC
            and topics[1] == req.job_id
        ):
            return Web3.to_checksum_address("0x" + topics[2][-40:]), int(topics[3], 16)
    raise ServiceError(
        422, "job_not_in_transaction", "txHash holds no AgentEscrow JobCreated for escrowJobId", param="txHash"
    )


async def _chain_job(ctx: Hire, job_id: str) -> Any:
    """AgentEscrow.getJob: (caller, expiresAt, status, providerTokenId, amount)."""
    try:
        return await ctx.operator.call("AgentEscrow", "getJob", bytes.fromhex(job_id[2:]))
    except ChainUnavailable as exc:
        raise _unavailable(exc) from exc


@dataclass(frozen=True)
class LockedJob:
    """An escrow job as AgentEscrow holds it (getJob): what a release would pay, and to which token."""

    caller: str
    amount: int
    token_id: int
    expires_at: int
    locked: bool


async def locked_job(ctx: Hire, job_id: str) -> LockedJob:
    """AgentEscrow.getJob of `job_id`, read from the chain (a quote of an escrow hire)."""
    caller, expires_at, status, token_id, amount = await _chain_job(ctx, job_id)
    return LockedJob(
        Web3.to_checksum_address(caller), int(amount), int(token_id), int(expires_at), int(status) == LOCKED
    )


def provider_token(conn: Conn, provider_wallet: str) -> int | None:
    """The agent NFT of a linked provider (None: not linked)."""
    provider = checkout_store.provider_by_wallet(conn, provider_wallet)
    return None if provider is None else provider.token_id


async def quote(ctx: Hire, job_id: str, provider_wallet: str) -> tuple[LockedJob, ServiceError | None]:
    """What an escrow hire of `job_id` at `provider_wallet` would release (the job as locked on-chain),
    and why it would be refused as things stand: the job is not locked, or it hires another provider.
    Nothing is verified beyond that."""
    locked = await locked_job(ctx, job_id)
    if not locked.locked:
        return locked, ServiceError(
            409, "escrow_not_locked", "the escrow job is not locked on-chain", param="escrowJobId"
        )
    if locked.token_id != await ctx.reads.run(lambda db: provider_token(db, provider_wallet)):
        return locked, _provider_mismatch(locked.token_id, provider_wallet)
    return locked, None


def _provider_mismatch(token_id: int, provider_wallet: str) -> ServiceError:
    return ServiceError(
        422,
        "provider_mismatch",
        f"the escrow job hires token {token_id}, not {provider_wallet}",
        param="providerWallet",
    )


def require_deployed(ctx: Hire) -> None:
    """404 escrow_not_deployed on a deployment without AgentEscrow."""
    if not ctx.has_escrow():
        raise ServiceError(404, "escrow_not_deployed", "this deployment has no AgentEscrow contract")


#: AgentEscrow's grace after a job's SLA before anyone may refund it (the contract's constant).
SETTLEMENT_GRACE_SECONDS = 3600


def contract_json(ctx: Hire) -> dict[str, Any] | None:
    """The escrow contract as the registry shows it (None without one)."""
    if not ctx.has_escrow():
        return None
    return {
        "chainId": ctx.chain_id,
        "address": ctx.escrow_address,
        "usdc": str(ctx.operator.contract("USDC").address),
        "settlementGraceSeconds": SETTLEMENT_GRACE_SECONDS,
    }


async def _provider_side(ctx: Hire, service: ServiceRow, amount: int, expires_at: int) -> tuple[str, str] | None:
    """Why a verified lock cannot be worked on for reasons of the provider's side (refunded at once)."""

    def refusal(conn: Conn) -> tuple[str, str] | None:
        agent = store.chain_agent(conn, service.token_id)
        if agent is None or agent.hire_price != amount or service.price != amount:
            return "price_mismatch", "the lock does not equal the provider's on-chain price and the service's price"
        if agent.paused or services.provider_paused(conn, service):
            return "provider_paused", "the provider is paused (listed for sale)"
        return None

    refused = await ctx.reads.run(refusal)
    if refused is not None:
        return refused
    try:
        chain_now = await ctx.operator.block_timestamp()
    except ChainUnavailable as exc:
        raise _unavailable(exc) from exc
    if chain_now + service.sla_seconds + rules.RELEASE_MARGIN_SECONDS > expires_at:
        return "escrow_expiring", "the escrow job expires before the service's SLA and the release could pass"
    return None


# ---- release and refund (the request's own attempt and the settle job's retries) ----------------


async def settle(ctx: Hire, job_id: str) -> None:
    """Send what the job's status calls for (release for `releasing`, refund for `refunding`) unless
    the chain shows it done; record what the chain did. Failures are recorded for the settle job."""
    job = await ctx.reads.run(lambda conn: store.get_job(conn, job_id))
    if job is None or job.status not in ("releasing", "refunding"):
        return
    op = ctx.operator
    key = bytes.fromhex(job.id[2:])
    try:
        onchain = await op.call("AgentEscrow", "getJob", key)
        status, expires_at = int(onchain[2]), int(onchain[1])
        if status == RELEASED:
            await _closed(ctx, job, "released", None)
            return
        if status == REFUNDED:
            await _closed(ctx, job, "refunded", None)
            return
        expired = await op.block_timestamp() > expires_at
        if job.status == "releasing" and not expired:
            receipt = await op.transact("AgentEscrow", "release", key)
            if ctx.seams.after_release is not None:
                ctx.seams.after_release(job.id)
            await _closed(ctx, job, "released", tx_hash_of(receipt))
        else:  # refunding, or a release too late: the USDC goes back to the caller
            receipt = await op.transact("AgentEscrow", "reclaim" if expired else "refund", key)
            await _closed(ctx, job, "refunded", tx_hash_of(receipt))
    except ContractReverted as exc:
        if exc.error_name in ("NotLocked", "Expired", "NotExpired"):  # the chain moved meanwhile: look again
            await _pending(ctx, job, f"{exc.error_name}: looking again", delay=0.0)
        else:  # e.g. NoSelfWallet (the payout path fails closed), EnforcedPause
            await _pending(ctx, job, f"the escrow refused: {exc.error_name}")
    except (ChainUnavailable, SendUncertain, TransactionFailed) as exc:
        log.warning("escrow job %s: %s not confirmed: %s", job.id, job.status, exc)
        await _pending(ctx, job, f"{type(exc).__name__}: not confirmed")


def backoff(attempts: int) -> float:
    """Seconds before the settle job's next attempt: 15 s doubling to 10 min."""
    return float(min(600, 15 * 2 ** max(0, attempts - 1)))


async def _pending(ctx: Hire, job: JobRow, error: str, delay: float | None = None) -> None:
    now = ctx.clock()

    def work(conn: Conn) -> None:
        current = store.get_job(conn, job.id)
        if current is None:
            return
        attempts = current.settle_attempts + 1
        store.update_job(
            conn,
            job.id,
            ("releasing", "refunding"),
            settle_attempts=attempts,
            settle_error=error[:500],
            next_settle_at=now + (backoff(attempts) if delay is None else delay),
            updated_at=now,
        )

    await ctx.writer.run(work)


async def _closed(ctx: Hire, job: JobRow, to_status: str, tx: str | None) -> None:
    now = ctx.clock()
    await ctx.writer.run(lambda conn: record_closed(conn, job.id, to_status, tx, now))
    ctx.services.wake()


def record_closed(conn: Conn, job_id: str, to_status: str, tx: str | None, now: float) -> bool:
    """Record the release or refund this process saw mined (`to_status` released/refunded): False when
    the job is no longer being settled (the escrow follower recorded the event first).

    The job is read FOR UPDATE: on PostgreSQL the follower may settle it in a transaction beside this
    one, and whichever comes second waits and then sees the first's move (without the lock both read
    `releasing` and the second recorded the move again; core.hire.follower reads it the same way)."""
    current = store.get_job(conn, job_id)
    if current is None or current.status not in ("releasing", "refunding"):
        return False
    settle_tx = tx or current.settle_tx or store.escrow_closed_tx(conn, job_id)
    extra: dict[str, Any] = {"amount": str(current.amount), "tx_hash": settle_tx}
    columns: dict[str, Any] = {"status": to_status, "settle_tx": settle_tx, "settle_error": None, "updated_at": now}
    if to_status == "refunded" and current.outcome == "success":
        columns["error_code"] = "release_expired"
        columns["error_message"] = "the job expired on-chain before its release was mined; the caller was refunded"
        extra["error_code"] = "release_expired"
    if not store.update_job(conn, job_id, (current.status,), **columns):
        return False  # unreachable under the row lock; never a second move
    moves.record(conn, current, current.status, to_status, now, extra)
    return True


# ---- what the caller sees -------------------------------------------------------------------------


def view(conn: Conn, job: JobRow, *, with_output: bool) -> dict[str, Any]:
    """The escrow job as POST /escrow answers it: output (to its caller only), release or refund."""
    provider = checkout_store.get_provider(conn, job.provider_uuid)
    success = job.outcome == "success" and job.status in ("releasing", "released")
    settled = job.status in ("released", "refunded")
    out: dict[str, Any] = {
        "success": success,
        "jobId": job.id,
        "status": job.status,
        "serviceType": job.service_type,
        "providerWallet": None if provider is None else provider.wallet,
        "amountUsdc": usdc(job.amount),
        "inputSha256": job.input_sha256,
        "responseMs": job.response_ms,
        "settlement": job.status if settled else "pending",
        "final": job.final,
        # its latest move's entry, as a standard hire names its settling one (the stream: moves.stream_json)
        "auditId": audit_store.last_entry_id(conn, moves.stream(job.id)),
    }
    if success:
        agent = store.chain_agent(conn, job.provider_token_id)
        s = split(job.amount, agent is not None and agent.referrer_token_id is not None)
        out.update(
            {
                "output": job.output if with_output else None,
                "outputSha256": job.output_sha256,
                "outputCid": job.output_cid,
                "releaseTx": job.settle_tx if job.status == "released" else None,
                "earnSplit": {
                    "ownerCut": usdc(s.owner_cut),
                    "agentCut": usdc(s.agent_cut),
                    "serviceCut": usdc(s.service_cut),
                    "referralCut": usdc(s.referral_cut),
                },
            }
        )
    else:
        out.update(
            {
                "error": job.error_code,
                "message": job.error_message,
                "refundTx": job.settle_tx if job.status == "refunded" else None,
            }
        )
        if job.outcome == "success":  # committed, then refunded (expired before its release was mined)
            out["outputSha256"] = job.output_sha256
    if not settled and job.settle_error:
        out["settlementError"] = job.settle_error
    return out


async def status(ctx: Hire, job_id: str) -> dict[str, Any]:
    """GET /escrow: AgentEscrow.jobStatus, read from the chain."""
    try:
        s, caller, amount, released, refunded = await ctx.operator.call(
            "AgentEscrow", "jobStatus", bytes.fromhex(job_id[2:])
        )
    except ChainUnavailable as exc:
        raise _unavailable(exc) from exc
    out: dict[str, Any] = {
        "jobId": job_id,
        "status": str(s),
        "caller": None if s == "not_found" else Web3.to_checksum_address(caller),
        "amountUsdc": usdc(int(amount)),
        "released": bool(released),
        "refunded": bool(refunded),
    }
    job = await ctx.reads.run(lambda conn: store.get_job(conn, job_id))
    if job is not None:
        out["service"] = {
            "status": job.status,
            "settlement": job.status if job.final else "pending",
            "final": job.final,
        }
    return out
