"""Completing a checkout session: the four-step funding saga.

    0. the indexer is not halted (core.indexing: 503 indexer_halted otherwise, nothing written);
       the payer's consent: its EIP-712 signature of rules.checkout_typed_data (the gateway's
       Funding struct: job id, buyer, provider token, total in micro-USDC, work deadline; domain
       chain id + gateway), else 400 missing/invalid_payment_signature or 401
       payment_signature_mismatch, nothing written. The gateway checks the same signature on-chain,
       so the operator key alone cannot move anyone's allowance;
    1. one writer transaction: incomplete -> complete_in_progress with job id rules.job_id_for
       (a concurrent complete gets 409 session_in_progress);
    2. the buyer's USDC balance and allowance to the gateway cover the total, else 422 and the
       session goes back to incomplete;
    3. PaymentGateway.fund(jobId, buyer, providerToken, total, deadline, signature) with the operator
       key, deadline = rules.work_deadline (the session's expiry + the longest tier's hours, the value
       the buyer signed); right before it one read re-checks
       that the session is still complete_in_progress with this job id and payer (else 409
       session_changed); from step 1 until the send's outcome is known the job id is in
       Checkout.funding, which the stuck-session sweep skips;
    4. one writer transaction: core.checkout.orders.create_order (session completed, history,
       audit, webhook), marked as funded by a receipt that is not final yet: should the funding
       transaction not be in the chain once its block is final (a reorg), the order follower's
       reconciliation rule fails the order. If it fails after step 3 succeeded the answer is 503 order_pending and the
       order follower creates the order from the final JobFunded event (exactly once: the job id
       is unique).

Each step's failure leaves a state a retry, the sweep or the follower can finish. `Completion`
carries one call through the steps: `fund()` does 0-3 (the chain), `record(conn)` does 4 inside
the transaction that also stores the answer under the caller's Idempotency-Key.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from web3 import Web3

from core import errors, indexing, instance, signatures
from core.checkout import orders, rules, sessions
from core.checkout.context import Checkout
from core.errors import ServiceError
from core.jsontext import decode_json
from core.keys import Caller
from core.money import usdc_text
from core.operator import USDC, ChainUnavailable, ContractReverted, SendUncertain, TransactionFailed, tx_hash_of
from core.store import Conn
from core.store import checkout as store
from core.store.checkout import ProviderRow, SessionRow
from core.store.orders import OrderRow

log = logging.getLogger("agentledger.checkout")

SIGNATURE_PARAM = "$.payment_data.instrument.credential.signature"


@dataclass(frozen=True)
class Payment:
    """What a complete call carries: buyer fields to merge, the paying address and its signature."""

    buyer: dict[str, Any] | None
    payer: str  # EIP-55
    signature: str


@dataclass
class SagaHooks:
    """Test seams (None in production): hold a complete after step 1, crash right after the funding
    receipt, fail step 4's transaction."""

    before_funding: Callable[[], Awaitable[None]] | None = None
    after_funding: Callable[[], None] | None = None
    before_order: Callable[[], None] | None = None


def parse_payment(data: dict[str, Any]) -> Payment:
    """The payment of a decoded complete body; 400 with the spec's codes (and ours for the signature)."""
    buyer = data.get("buyer")
    if buyer is not None and not isinstance(buyer, dict):
        raise ServiceError(400, "invalid_field", "buyer must be an object", param="$.buyer")
    payment = data.get("payment_data")
    if not isinstance(payment, dict):
        raise ServiceError(400, "missing_payment_data", "payment_data is required", param="$.payment_data")
    handler = payment.get("handler_id")
    if handler != rules.PAYMENT_HANDLER_ID:
        raise ServiceError(
            400,
            "unsupported_payment_handler",
            f"payment_data.handler_id must be {rules.PAYMENT_HANDLER_ID!r}",
            param="$.payment_data.handler_id",
        )
    instrument = payment.get("instrument")
    credential = instrument.get("credential") if isinstance(instrument, dict) else None
    token = credential.get("token") if isinstance(credential, dict) else None
    param = "$.payment_data.instrument.credential.token"
    if token is None or token == "":
        raise ServiceError(
            400, "missing_address", "the buyer's 0x address is required as the credential token", param=param
        )
    if not isinstance(token, str) or not rules.valid_address(token):
        raise ServiceError(
            400, "invalid_address", "the credential token must be 0x followed by 40 hex digits", param=param
        )
    signature = credential.get("signature") if isinstance(credential, dict) else None
    if signature is None or signature == "":
        raise ServiceError(
            400,
            "missing_payment_signature",
            "the payer's EIP-712 signature of the session's typed_data (its Funding consent) is required",
            param=SIGNATURE_PARAM,
        )
    if not isinstance(signature, str) or not rules.valid_signature(signature):
        raise ServiceError(
            400,
            "invalid_payment_signature",
            "the payment signature must be 0x followed by 130 hex digits (65 bytes)",
            param=SIGNATURE_PARAM,
        )
    if buyer is not None:
        extra = set(buyer) - {"email", "first_name", "last_name"}
        if extra:
            raise ServiceError(400, "invalid_field", f"unknown buyer field {sorted(extra)[0]}", param="$.buyer")
        for k, v in buyer.items():
            if v is not None and (not isinstance(v, str) or len(v) > 254):
                raise ServiceError(400, "invalid_field", f"buyer.{k} must be a short string", param=f"$.buyer.{k}")
    return Payment(buyer, Web3.to_checksum_address(token), signature)


def check_payer(conn: Conn, ctx: Checkout, s: SessionRow, payer: str, signature: str) -> None:
    """401 unless `payer` signed (EIP-712) this session's Funding consent as it stands: job id,
    provider token, total and work deadline. The gateway checks the same signature, so the service
    can pull no USDC from anyone who approved the gateway without their consent to this job.
    Reads the provider through `conn`; otherwise pure (it may run in a read's or the writer's thread)."""
    provider = store.get_provider(conn, s.provider_uuid)
    typed = rules.checkout_typed_data(
        chain_id=ctx.chain_id,
        gateway=ctx.operator.contract("PaymentGateway").address,
        session_id=s.id,
        buyer=payer,
        provider_token_id=provider.token_id if provider and provider.token_id is not None else 0,
        amount=s.total,
        deadline=rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items]),
    )
    signer = signatures.typed_signer(typed, signature)
    if signer != payer:  # None: a well-formed signature of nobody (no key recovers from it)
        raise ServiceError(
            401,
            "payment_signature_mismatch",
            "the signature is not the credential token's EIP-712 signature of this session's Funding consent "
            "(job id, provider, total and deadline; see the payment handler's config.typed_data)",
            param=SIGNATURE_PARAM,
        )


def order_pending(tx: str | None) -> ServiceError:
    return ServiceError(
        503,
        "order_pending",
        f"the job was funded on-chain ({tx}) but the order could not be recorded yet; it will be created from the "
        "funding event: GET the session again shortly",
        type_="service_error",
    )


def _short(code: str, what: str, have: int, need: int) -> ServiceError:
    return ServiceError(
        422,
        code,
        f"the buyer's USDC {what} is {usdc_text(have)}, the session needs {usdc_text(need)}; "
        "fix it and complete again, with a new Idempotency-Key if you sent one (the session is still incomplete)",
        param="$.payment_data.instrument.credential.token",
    )


def _fund_error(exc: ContractReverted) -> ServiceError:
    if exc.error_name in ("ERC20InsufficientAllowance", "ERC20InsufficientBalance"):
        code = "insufficient_allowance" if "Allowance" in exc.error_name else "insufficient_balance"
        return ServiceError(
            422,
            code,
            f"the gateway could not pull the USDC ({exc.error_name}); fix it and complete again, with a new"
            " Idempotency-Key if you sent one",
            param="$.payment_data",
        )
    if exc.error_name == "AgentPaused":
        return ServiceError(
            409,
            "provider_paused",
            "the provider's agent is paused (listed for sale); try later, with a new Idempotency-Key if you sent one",
        )
    log.warning("gateway refused fund: %s", exc)
    return ServiceError(
        502, "funding_failed", f"the gateway refused to fund the job ({exc.error_name})", type_="service_error"
    )


def _chain_unavailable(exc: BaseException) -> ServiceError:
    log.warning("chain node unavailable: %s", exc)
    return errors.chain_unavailable()


class Completion:
    """One complete call of `session_id` by `caller` with request `body`, carried through the steps."""

    def __init__(
        self, ctx: Checkout, caller: Caller, session_id: str, body: bytes, now: float, hooks: SagaHooks
    ) -> None:
        self.ctx, self.caller, self.session_id, self.body, self.now, self.hooks = (
            ctx,
            caller,
            session_id,
            body,
            now,
            hooks,
        )
        self.payment = Payment(None, "", "")  # parsed in step 0
        self.session: SessionRow | None = None
        self.provider: ProviderRow | None = None
        self.deadline = 0
        self.funding_tx: str | None = None
        self.funding_block: int | None = None
        self._signed_total: int | None = None  # the total the signature was checked against, before step 1

    # ---- steps 0-3: the chain ---------------------------------------------------------------------

    async def fund(self) -> None:
        """Steps 0-3. Raises ServiceError (the session back to incomplete when nothing was sent)."""
        ctx = self.ctx
        self.payment = parse_payment(decode_json(self.body))  # a 400 here is stored under the key
        session_id, key_hash, now, payment = self.session_id, self.caller.key_hash, self.now, self.payment

        def first_pass(conn: Conn) -> int | None:
            indexing.require_running(conn, ctx.chain_id)  # the order would follow a halted index: 503
            # Step 0, first pass: the signature check (a few ms of ECDSA recovery) runs here, outside the
            # writer's transaction; step 1 re-checks only if the total it finds differs.
            pre = store.get_session(conn, session_id)
            if (
                pre is not None
                and secrets.compare_digest(pre.key_hash, key_hash)
                and pre.status == "incomplete"
                and not rules.is_expired(pre.status, pre.expires_at, now)
            ):
                check_payer(conn, ctx, pre, payment.payer, payment.signature)
                return pre.total
            return None

        self._signed_total = await ctx.reads.run(first_pass)
        s, provider = await ctx.writer.run(self._begin)  # step 1
        self.session, self.provider = s, provider
        assert s.job_id is not None
        ctx.funding.add(s.job_id)  # the sweep leaves this session alone until the send is over
        try:
            if self.hooks.before_funding is not None:
                await self.hooks.before_funding()
            await self._check_funds(s)  # step 2
            await self._send_fund(s, provider)  # step 3
        finally:
            ctx.funding.discard(s.job_id)
        if self.hooks.after_funding is not None:
            self.hooks.after_funding()

    def _begin(self, conn: Conn) -> tuple[SessionRow, ProviderRow]:
        s = sessions.owned_session(conn, self.caller, self.session_id, self.now)
        sessions.require_incomplete(s)
        if self._signed_total != s.total:  # not checked yet, or the cart changed since: check here
            check_payer(conn, self.ctx, s, self.payment.payer, self.payment.signature)
        buyer = dict(s.buyer)
        buyer.update({k: v for k, v in (self.payment.buyer or {}).items() if v is not None})
        email = buyer.get("email")
        if not email:
            raise ServiceError(400, "missing_email", "buyer.email is required to complete", param="$.buyer.email")
        if not rules.valid_email(email):
            raise ServiceError(400, "invalid_email", "buyer.email is not a valid e-mail address", param="$.buyer.email")
        provider = store.get_provider(conn, s.provider_uuid)
        assert provider is not None and provider.token_id is not None
        job_id = rules.job_id_for(self.session_id)
        if not store.begin_complete(
            conn,
            self.session_id,
            job_id=job_id,
            buyer_address=self.payment.payer,
            buyer=buyer,
            now=self.now,
            owner=instance.current(),  # a restart after our crash settles it at once (core.checkout.sweep)
        ):
            raise ServiceError(409, "session_in_progress", "the checkout session is being completed", replayable=False)
        started = store.get_session(conn, self.session_id)
        assert started is not None
        return started, provider

    async def _abort(self, error: ServiceError) -> ServiceError:
        """Nothing was sent: the session goes back to incomplete, and `error` is the answer."""
        ctx = self.ctx
        await ctx.writer.run(lambda conn: store.abort_complete(conn, self.session_id, ctx.clock()))
        return error

    async def _check_funds(self, s: SessionRow) -> None:
        op = self.ctx.operator
        payer = self.payment.payer
        try:
            balance = int(await op.call(USDC, "balanceOf", payer))
            allowance = int(await op.call(USDC, "allowance", payer, op.contract("PaymentGateway").address))
        except (ChainUnavailable, ContractReverted) as exc:
            raise await self._abort(_chain_unavailable(exc)) from exc
        if balance < s.total:
            raise await self._abort(_short("insufficient_balance", "balance", balance, s.total))
        if allowance < s.total:
            raise await self._abort(_short("insufficient_allowance", "allowance to the gateway", allowance, s.total))
        self.deadline = rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items])  # as signed

    async def _send_fund(self, s: SessionRow, provider: ProviderRow) -> None:
        assert s.job_id is not None and provider.token_id is not None
        session_id = self.session_id  # still ours? (a sweep elsewhere may reset it)
        current = await self.ctx.reads.run(lambda conn: store.get_session(conn, session_id))
        if current is None or (current.status, current.job_id, current.buyer_address) != (
            "complete_in_progress",
            s.job_id,
            s.buyer_address,
        ):
            raise ServiceError(409, "session_changed", "the checkout session changed while being completed; GET it")
        try:
            receipt = await self.ctx.operator.transact(
                "PaymentGateway",
                "fund",
                bytes.fromhex(s.job_id[2:]),
                self.payment.payer,
                provider.token_id,
                s.total,
                self.deadline,
                bytes.fromhex(self.payment.signature[2:]),  # the buyer's consent, checked again on-chain
            )
        except ContractReverted as exc:
            if exc.error_name == "BadBuyerSignature":  # the session changed after the signature was checked
                raise await self._abort(
                    ServiceError(
                        401,
                        "payment_signature_mismatch",
                        "the session changed since it was signed: sign its typed_data again",
                        param=SIGNATURE_PARAM,
                    )
                ) from exc
            if exc.error_name == "JobExists":  # funded by an earlier attempt: the follower records it
                raise ServiceError(
                    503,
                    "order_pending",
                    "the job is already funded; the order is being recorded",
                    type_="service_error",
                ) from exc
            raise await self._abort(_fund_error(exc)) from exc
        except (ChainUnavailable, TransactionFailed) as exc:
            raise await self._abort(_chain_unavailable(exc)) from exc
        except SendUncertain as exc:  # may be mined: stay in progress; the follower or the sweep settles it
            log.warning("session %s: funding outcome unknown: %s", self.session_id, exc)
            raise ServiceError(
                503,
                "funding_unconfirmed",
                "the funding transaction's outcome is unknown; GET the session again shortly",
                type_="service_error",
            ) from exc
        self.funding_tx = tx_hash_of(receipt)
        self.funding_block = int(receipt["blockNumber"])  # not final yet: the order follower settles it

    # ---- step 4: the order ----------------------------------------------------------------------

    def record(self, conn: Conn) -> OrderRow:
        """Step 4, inside the transaction that stores the answer: the order (history, audit, webhook)."""
        s, provider = self.session, self.provider
        assert s is not None and provider is not None and self.funding_tx is not None and s.job_id is not None
        assert provider.token_id is not None
        try:
            if self.hooks.before_order is not None:
                self.hooks.before_order()
            order = orders.create_order(
                conn,
                session_id=self.session_id,
                job_id=s.job_id,
                provider_uuid=provider.agent_uuid,
                provider_token_id=provider.token_id,
                buyer_address=self.payment.payer,
                amount=s.total,
                deadline=self.deadline,
                funding_tx=self.funding_tx,
                now=self.now,
                funding_block=self.funding_block,
                funding_final=False,
            )
        except Exception as exc:
            log.exception("session %s: funded in %s but the order was not recorded", self.session_id, self.funding_tx)
            raise order_pending(self.funding_tx) from exc
        return order

    def after_failure(self, exc: BaseException) -> ServiceError | None:
        """The answer when the saga failed past step 3 (the job is funded, the order not recorded):
        503 order_pending, healed by the follower; None when nothing was funded."""
        if self.funding_tx is None:
            return None
        log.exception("session %s: funded in %s, commit failed", self.session_id, self.funding_tx, exc_info=exc)
        return order_pending(self.funding_tx)
