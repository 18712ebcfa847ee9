"""AgentLedger (sync) and AsyncAgentLedger (async): one API over httpx, same methods, same rules.

Retries. Every call is retried at most ``retries`` times, with capped exponential backoff and
jitter, or after the server's ``Retry-After`` when it gives one (a wait longer than
``max_retry_wait`` is not slept through: the error is raised instead). What is retried:

- connection failures before the request was sent (connect errors/timeouts), for every call;
- 429, for every call (the server refused it before doing anything);
- lost responses (reset, read timeout), 5xx and 409 ``idempotency_in_flight``, only for calls
  that are safe to repeat: GETs, and POSTs sent with an ``Idempotency-Key``.

Every value-moving POST (earn, earn_batch, spend, compound, record_run, remember,
update_brain, register on an account key, log_decision, the checkout session calls, link_provider,
create_item, publish_service and the drop's recording calls) gets an ``Idempotency-Key`` (uuid4)
generated once per logical call and reused on every retry, so the server applies it at most once and answers a
retry with the stored response (``result.replayed`` is then True). Pass ``idempotency_key=`` to
choose it yourself, e.g. to retry from another process after a crash. ``register`` without an
API key and ``create_key`` return a secret once and are never replayed by the server, so they
are retried only when the request certainly did not reach it; so are calls carrying a signature the
service accepts once (provider order actions, uploads and completions, the drop's claim).

Calls of several steps (and the chain steps signed with the caller's own key) are written once as
flows (agentledger_sdk._flows), which each client drives with its own I/O (``_drive``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from agentledger_sdk import _errors as errors
from agentledger_sdk import _escrow as chain
from agentledger_sdk import _flows as flows
from agentledger_sdk._flows import Call as _Call
from agentledger_sdk._flows import Flow, Rpc, Sleep
from agentledger_sdk._flows import new_key as _key
from agentledger_sdk._models import (
    AgentBalance,
    AmountLike,
    ApiKey,
    BatchEarnResult,
    CheckoutSession,
    CompoundResult,
    DecisionLogged,
    Deployment,
    EarnResult,
    EntryVerification,
    EscrowResult,
    EscrowStatus,
    HireAudit,
    HireResult,
    Identity,
    Memory,
    MemoryPage,
    NetworkStats,
    ProviderOrderPage,
    Registration,
    Registry,
    Result,
    RunRecord,
    SpendResult,
    dumps,
    loads,
    parse_memory_write,
    to_decimal,
)
from agentledger_sdk._version import __version__

__all__ = ["DEFAULT_BASE_URL", "AgentLedger", "AsyncAgentLedger"]

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
AGENTS = "/api/agents"
A2A = "/api/a2a"
DROP = "/api/a2a/drop"
PROVIDERS = "/api/acp/providers"

R = TypeVar("R", bound=Result)
T = TypeVar("T")


def _payment(p: Any) -> dict[str, Any]:
    if isinstance(p, Mapping):
        wallet = p.get("agentId", p.get("wallet"))
        amount, source = p.get("amount"), p.get("source")
    else:  # (wallet, amount, source)
        wallet, amount, *rest = p
        source = rest[0] if rest else None
    if not isinstance(wallet, str):
        raise TypeError("each payment needs a wallet ('agentId' or 'wallet')")
    if not isinstance(source, str):
        raise TypeError("each payment needs its source (where the earning came from)")
    return {"agentId": wallet, "amount": to_decimal(amount), "source": source}


class _Base:
    """Request building, retry decisions and response interpretation shared by both clients."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_wait = max_retry_wait

    # ---- the calls (shared by both clients) ------------------------------------------------

    def _register(self, name: str, specialty: str, referral_code: str | None, idem: str | None) -> _Call:
        body: dict[str, Any] = {"name": name, "specialty": specialty}
        if referral_code is not None:
            body["referralCode"] = referral_code
        if self.api_key is None:  # a new account and key: the server refuses to replay it
            if idem is not None:
                raise ValueError("idempotency_key needs an API key: keyless registration cannot be replayed")
            return _Call("POST", f"{AGENTS}/register", Registration.parse, dumps(body), unsafe=True)
        return _Call("POST", f"{AGENTS}/register", Registration.parse, dumps(body), idempotency_key=_key(idem))

    def _earn(self, wallet: str, amount: AmountLike, source: str, idem: str | None) -> _Call:
        if not isinstance(source, str):
            raise TypeError("source (where the earning came from) is required")
        body: dict[str, Any] = {"agentId": wallet, "amount": to_decimal(amount), "source": source}
        return _Call("POST", f"{AGENTS}/earn", EarnResult.parse, dumps(body), idempotency_key=_key(idem))

    def _earn_batch(self, payments: Iterable[Any], idem: str | None) -> _Call:
        body = {"payments": [_payment(p) for p in payments]}
        return _Call("POST", f"{AGENTS}/earn/batch", BatchEarnResult.parse, dumps(body), idempotency_key=_key(idem))

    def _record_run(self, wallet: str, success: bool, niche: str | None, idem: str | None) -> _Call:
        if not isinstance(success, bool):
            raise TypeError("success must be a bool")
        body: dict[str, Any] = {"agentId": wallet, "success": success}
        if niche is not None:
            body["niche"] = niche
        return _Call("POST", f"{AGENTS}/runs", RunRecord.parse, dumps(body), idempotency_key=_key(idem))

    def _get_agent(self, wallet: str) -> _Call:
        return _Call("GET", f"{AGENTS}/balance", AgentBalance.parse, params={"agentId": wallet})

    def _spend(self, wallet: str, amount: AmountLike, destination: str, idem: str | None) -> _Call:
        body = {"agentId": wallet, "amount": to_decimal(amount), "destination": destination}
        return _Call("POST", f"{AGENTS}/spend", SpendResult.parse, dumps(body), idempotency_key=_key(idem))

    def _compound(self, wallet: str, reinvest_percent: int, idem: str | None) -> _Call:
        if isinstance(reinvest_percent, bool) or not isinstance(reinvest_percent, int):
            raise TypeError("reinvest_percent must be an int from 1 to 100")
        body = {"agentId": wallet, "reinvestPercent": reinvest_percent}
        return _Call("POST", f"{AGENTS}/compound", CompoundResult.parse, dumps(body), idempotency_key=_key(idem))

    def _remember(self, wallet: str, key: str, value: Any, idem: str | None) -> _Call:
        body = {"agentId": wallet, "key": key, "value": value}
        return _Call("POST", f"{AGENTS}/memory", parse_memory_write, dumps(body), idempotency_key=_key(idem))

    def _memories(self, wallet: str, query: str | None, limit: int | None, cursor: str | None) -> _Call:
        params = {"agentId": wallet}
        if query is not None:
            params["query"] = query
        if limit is not None:
            params["limit"] = str(int(limit))
        if cursor is not None:
            params["cursor"] = cursor
        return _Call("GET", f"{AGENTS}/memory", MemoryPage.parse, params=params)

    def _brain(self, wallet: str) -> _Call:
        return _Call("GET", f"{AGENTS}/brain", Result.parse, params={"agentId": wallet})

    def _update_brain(
        self,
        wallet: str,
        action: str,
        niche: str,
        price: AmountLike,
        revenue: AmountLike | None,
        name: str | None,
        idem: str | None,
    ) -> _Call:
        body: dict[str, Any] = {"agentId": wallet, "action": action, "niche": niche}
        body["price"] = to_decimal(price, "price")
        if revenue is not None:
            body["revenue"] = to_decimal(revenue, "revenue")
        if name is not None:
            body["name"] = name
        return _Call("POST", f"{AGENTS}/brain", Result.parse, dumps(body), idempotency_key=_key(idem))

    def _network(self) -> _Call:
        return _Call("GET", f"{AGENTS}/network", NetworkStats.parse)

    def _identity(self, wallet: str) -> _Call:
        return _Call("GET", f"{AGENTS}/identity", Identity.parse, params={"agentId": wallet})

    def _create_key(self, email: str, mcp_toolsets: str | None) -> _Call:
        body: dict[str, Any] = {"email": email}
        if mcp_toolsets is not None:
            body["mcpToolsets"] = mcp_toolsets
        return _Call("POST", "/api/keys", ApiKey.parse, dumps(body), unsafe=True)

    # ---- hire -----------------------------------------------------------------------------------

    def _hire(
        self,
        caller_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        provider_wallet: str | None,
        max_price: AmountLike | None,
        webhook_url: str | None,
        webhook_secret: str | None,
        idem: str | None,
    ) -> _Call:
        body: dict[str, Any] = {"callerWallet": caller_wallet, "serviceType": service_type, "input": dict(input)}
        if provider_wallet is not None:
            body["providerWallet"] = provider_wallet
        if max_price is not None:
            body["maxPrice"] = to_decimal(max_price, "max_price")
        if webhook_url is not None:
            body["webhookUrl"] = webhook_url
        if webhook_secret is not None:
            body["webhookSecret"] = webhook_secret
        return _Call("POST", f"{A2A}/hire", HireResult.parse, dumps(body), idempotency_key=_key(idem), retry_5xx=False)

    def _registry(
        self,
        service_type: str | None,
        wallet: str | None,
        max_price: AmountLike | None,
        min_score: float | int | None,
        escrow: bool | None,
        healthy: bool | None,
        limit: int | None,
        cursor: str | None,
    ) -> _Call:
        params: dict[str, str] = {}
        if service_type is not None:
            params["serviceType"] = service_type
        if wallet is not None:
            params["wallet"] = wallet
        if max_price is not None:
            params["maxPrice"] = format(to_decimal(max_price, "max_price"), "f")
        if min_score is not None:
            params["minScore"] = str(min_score)
        if escrow is not None:
            params["escrow"] = "true" if escrow else "false"
        if healthy is not None:
            params["healthy"] = "true" if healthy else "false"
        if limit is not None:
            params["limit"] = str(int(limit))
        if cursor is not None:
            params["cursor"] = cursor
        return _Call("GET", f"{A2A}/registry", Registry.parse, params=params)

    def _escrow_status(self, job_id: str) -> _Call:
        return _Call("GET", f"{A2A}/escrow", EscrowStatus.parse, params={"jobId": job_id})

    def _hire_audit(self, job_id: str) -> _Call:
        return _Call("GET", f"{A2A}/hire/{quote(job_id, safe='')}/audit", HireAudit.parse)

    def _escrow_post(
        self,
        account: Any,
        terms: chain.Terms,
        job_id: str,
        tx_hash: str,
        provider_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        extra: Mapping[str, Any],
    ) -> _Call:
        """The POST, freshly signed (a signed message is accepted once: every attempt signs anew)."""
        ts = int(time.time())
        message = chain.escrow_message(
            chain_id=terms.chain_id,
            escrow=terms.escrow,
            job_id=job_id,
            input_sha=chain.input_sha256(input),
            timestamp=ts,
        )
        body = {
            "escrowJobId": job_id,
            "txHash": tx_hash,
            "serviceType": service_type,
            "input": dict(input),
            "providerWallet": provider_wallet,
            "timestamp": ts,
            "signature": chain.sign_message(account, message),
            **extra,
        }
        return _Call("POST", f"{A2A}/escrow", EscrowResult.parse, dumps(body), unsafe=True)

    def _escrow_hire(
        self,
        provider_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        account: Any,
        rpc_url: str,
        job_id: str | None,
        webhook_url: str | None,
        webhook_secret: str | None,
        receipt_timeout: float,
    ) -> Flow[EscrowResult]:
        """The escrow hire, once for both clients: terms from the registry checked on-chain, approve (if
        the allowance is short) and createJob, then the signed POST, retried with a fresh signature."""
        acct = chain.account_of(account)
        page: Registry = yield self._registry(service_type, provider_wallet, None, None, True, None, None, None)
        terms = _terms(page, provider_wallet, service_type)
        job = (job_id or chain.new_job_id()).lower()
        price = yield from flows.call_uint(rpc_url, terms.escrow, _price_of(terms.token_id))
        sla = yield from flows.call_uint(rpc_url, terms.escrow, _sla_of(terms.token_id))
        _same_terms(terms, price, sla)
        yield from flows.approve_at_least(
            rpc_url, acct, terms.usdc, terms.escrow, terms.price, terms.chain_id, receipt_timeout
        )
        create = _create_job(job, provider_wallet, terms)
        tx = yield from flows.transact(rpc_url, acct, terms.escrow, create, terms.chain_id, receipt_timeout)
        extra = _webhook(webhook_url, webhook_secret)
        attempt = 0
        while True:
            try:
                out: EscrowResult = yield self._escrow_post(
                    acct, terms, job, tx, provider_wallet, service_type, input, extra
                )
                return dataclasses.replace(out, create_tx=tx)
            except errors.AgentLedgerError as exc:
                delay = self._escrow_retry(exc, attempt)
                if delay is None:
                    raise
            yield Sleep(delay)
            attempt += 1

    # ---- the ownership marketplace (drop), under /api/a2a/drop ------------------------------

    def _drop_listings(
        self,
        listing_id: str | None,
        agent_id: str | None,
        status: str | None,
        state: str | None,
        page: int | None,
        per_page: int | None,
    ) -> _Call:
        if state is not None:
            warnings.warn("drop_listings(state=) is deprecated: pass status=", DeprecationWarning, stacklevel=3)
            status = status or state
        params: dict[str, str] = {}
        for name, value in (("listingId", listing_id), ("agentId", agent_id), ("status", status)):
            if value is not None:
                params[name] = value
        if page is not None:
            params["page"] = str(int(page))
        if per_page is not None:
            params["perPage"] = str(int(per_page))
        return _Call("GET", DROP, Result.parse, params=params)

    def _drop_post(self, path: str, body: dict[str, Any], idem: str | None, *, unsafe: bool = False) -> _Call:
        clean = {k: v for k, v in body.items() if v is not None}
        if unsafe:  # not deduplicated by the server: retried only when certainly not sent
            return _Call("POST", f"{DROP}/{path}", Result.parse, dumps(clean), unsafe=True)
        return _Call("POST", f"{DROP}/{path}", Result.parse, dumps(clean), idempotency_key=_key(idem))

    def _drop_statement(self, agent_id: str, seller_address: str) -> _Call:
        body = {"agentId": agent_id, "sellerAddress": seller_address}  # signs, stores nothing: safe to retry
        return _Call("POST", f"{DROP}/statement", Result.parse, dumps(body))

    def _drop_claim(self, agent_id: str, owner_address: str, timestamp: int, signature: str) -> _Call:
        body = {"agentId": agent_id, "ownerAddress": owner_address, "timestamp": timestamp, "signature": signature}
        return _Call("POST", f"{DROP}/claim", Result.parse, dumps(body), unsafe=True)

    # the provider's side of escrow checkout (its key: the agent's or its account's)

    def _set_provider_webhook(self, wallet: str, url: str) -> _Call:
        path = f"{PROVIDERS}/{quote(wallet, safe='')}/webhook"
        return _Call("POST", path, Result.parse, dumps({"url": url}))

    def _delete_provider_webhook(self, wallet: str) -> _Call:
        return _Call("DELETE", f"{PROVIDERS}/{quote(wallet, safe='')}/webhook", Result.parse)

    def _provider_orders(self, wallet: str, status: str | None, limit: int | None, cursor: str | None) -> _Call:
        params: dict[str, str] = {}
        if status is not None:
            params["status"] = status
        if limit is not None:
            params["limit"] = str(int(limit))
        if cursor is not None:
            params["cursor"] = cursor
        path = f"{PROVIDERS}/{quote(wallet, safe='')}/orders"
        return _Call("GET", path, ProviderOrderPage.parse, params=params)

    # ---- transport-independent pieces ------------------------------------------------------

    def _headers(self, call: _Call) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": f"agentledger-sdk-python/{__version__}"}
        if call.body is not None:
            h["Content-Type"] = call.content_type or "application/json"
        if call.headers:
            h.update(call.headers)
        if self.api_key is not None:
            h["Authorization"] = f"Bearer {self.api_key}"
        if call.idempotency_key is not None:
            h[IDEMPOTENCY_HEADER] = call.idempotency_key
        return h

    def _backoff(self, attempt: int) -> float:
        return min(self.max_backoff, self.backoff * 2.0**attempt) * random.uniform(0.5, 1.0)

    def _delay_after_error(self, call: _Call, attempt: int, exc: Exception) -> float | None:
        """Seconds to wait before retrying after `exc`, or None to raise it."""
        if attempt >= self.retries:
            return None
        if isinstance(exc, errors.TransportError):
            cause = exc.__cause__
            not_sent = isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))
            return self._backoff(attempt) if not_sent or call.repeatable else None
        if not isinstance(exc, errors.AgentLedgerError) or exc.status is None:
            return None
        retryable = exc.status == 429 or (
            call.repeatable
            and (
                (exc.status >= 500 and call.retry_5xx)
                or (exc.status == 409 and exc.code in ("idempotency_in_flight", "job_in_progress"))
            )
        )
        if not retryable:
            return None
        wait = exc.retry_after
        if wait is None:
            return self._backoff(attempt)
        return wait if wait <= self.max_retry_wait else None

    def _escrow_retry(self, exc: errors.AgentLedgerError, attempt: int) -> float | None:
        """Seconds before POSTing an escrow job again (re-signed), or None to raise: the service runs
        a job id at most once, so a lost answer, a 5xx or a job still running are all retried."""
        if attempt >= self.retries:
            return None
        again = isinstance(exc, errors.TransportError) or (
            exc.status is not None
            and (exc.status >= 500 or (exc.status == 409 and exc.code in ("job_in_progress", "transaction_not_found")))
        )
        if not again:
            return None
        wait = exc.retry_after
        return self._backoff(attempt) if wait is None else min(wait, self.max_retry_wait)

    def _transport_error(self, call: _Call, exc: httpx.TransportError) -> errors.TransportError:
        cls = errors.TimeoutError if isinstance(exc, httpx.TimeoutException) else errors.ConnectionError
        what = f"{call.method} {call.path}"
        err = cls(
            f"{what}: {type(exc).__name__}: {exc or 'no response'}",
            type="transport_error",
            code="timeout" if cls is errors.TimeoutError else "connection_error",
            idempotency_key=call.idempotency_key,
        )
        err.__cause__ = exc
        return err

    def _interpret(self, call: _Call, response: httpx.Response) -> Result:
        if response.status_code >= 400 or response.status_code < 200:
            raise errors.error_from_response(
                response.status_code, response.headers, response.content, call.idempotency_key
            )
        try:
            data = loads(response.content) if response.content else {}
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise errors.AgentLedgerError(
                "the server's response is not a JSON object",
                status=response.status_code,
                type="service_error",
                code="invalid_response",
                headers=response.headers,
                idempotency_key=call.idempotency_key,
            )
        replayed = response.headers.get(REPLAYED_HEADER, "").lower() == "true"
        return call.parse(data, replayed)


class AgentLedger(_Base):
    """Synchronous client. Use as a context manager, or call close().

    >>> from decimal import Decimal
    >>> with AgentLedger("http://127.0.0.1:8080", api_key="aglk_...") as al:   # doctest: +SKIP
    ...     r = al.earn("agl_0123456789ab", Decimal("12.5"), source="gumroad")
    ...     r.owner_cut, r.agent_cut, r.service_cut, al.get_agent("agl_0123456789ab").total_earned

    Amounts are decimal.Decimal in results and Decimal, int or decimal strings in arguments;
    floats are refused (TypeError). Failures raise agentledger_sdk.AgentLedgerError subclasses.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            max_retry_wait=max_retry_wait,
        )
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, transport=transport)
        self._chain = httpx.Client(timeout=timeout)  # the caller's chain node (JSON-RPC)
        self._sleep: Callable[[float], None] = time.sleep

    def __enter__(self) -> AgentLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()
        self._chain.close()

    def _send(self, call: _Call) -> Any:
        attempt = 0
        while True:
            try:
                try:
                    response = self._http.request(
                        call.method, call.path, content=call.body, params=call.params, headers=self._headers(call)
                    )
                except httpx.TransportError as exc:
                    raise self._transport_error(call, exc) from exc
                return self._interpret(call, response)
            except errors.AgentLedgerError as exc:
                delay = self._delay_after_error(call, attempt, exc)
                if delay is None:
                    raise
            self._sleep(delay)
            attempt += 1

    def _drive(self, flow: Flow[T]) -> T:
        """Run a flow (agentledger_sdk._flows) to its end with blocking I/O."""
        reply: Any = None
        failure: errors.AgentLedgerError | None = None
        while True:
            try:
                step = flow.send(reply) if failure is None else flow.throw(failure)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            reply, failure = None, None
            try:
                if isinstance(step, _Call):
                    reply = self._send(step)
                elif isinstance(step, Rpc):
                    reply = self._rpc(step)
                else:
                    self._sleep(step.seconds)
            except errors.AgentLedgerError as exc:
                failure = exc

    def _rpc(self, step: Rpc) -> Any:
        try:
            response = self._chain.post(step.url, json=_rpc_body(step))
        except httpx.TransportError as exc:
            raise _rpc_transport_error(step, exc) from exc
        return _rpc_result(step, response)

    # ---- decisions, checkout (buyer and provider), the drop's signed steps, hire services ----------

    def deployment(self) -> Deployment:
        """The chain the service runs on (GET /healthz): ``chain_id``, ``usdc``, ``contracts``."""
        return self._drive(flows.deployment())

    def log_decision(
        self,
        agent_uuid: str,
        event_type: str,
        content_hash: str,
        model_id: str,
        model_version: str,
        *,
        evidence: Iterable[Any] | None = None,
        correlation_ref: str | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        idempotency_key: str | None = None,
    ) -> DecisionLogged:
        """Log a decision (hashes only) to the agent's tamper-evident log. ``event_type``: routine, high_stakes or
        critical (which needs ``evidence``: ``(type, sha256)`` pairs or ``{type, sha256}``)."""
        return self._drive(
            flows.log_decision(
                agent_uuid,
                event_type,
                content_hash,
                model_id,
                model_version,
                evidence,
                correlation_ref,
                webhook_url,
                webhook_secret,
                idempotency_key,
            )
        )

    def verify_entry(
        self, audit_id: int, *, expected: DecisionLogged | None = None, rpc_url: str | None = None
    ) -> EntryVerification:
        """Fetch an audit entry's verification and recheck it here: payload, chain and leaf hashes recomputed as
        /methodology says, the inclusion proof walked to its root (and, with ``rpc_url``, an anchored root read from
        the chain). ``ok`` / ``problems``."""
        return self._drive(flows.verify_entry(audit_id, expected, rpc_url))

    def verify_decision(self, logged: DecisionLogged, *, rpc_url: str | None = None) -> EntryVerification:
        """verify_entry of a decision just logged, also checking its chain and content hashes are the ones logged."""
        return self._drive(flows.verify_entry(logged.audit_id, logged, rpc_url))

    def create_checkout_session(
        self,
        items: Iterable[Any],
        *,
        buyer: Mapping[str, Any] | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        """Checkout step 1: a session for ``items`` (item ids, ``(item_id, quantity)`` or ACP line items); ``buyer``
        e.g. ``{"email": ...}``."""
        return self._drive(flows.create_checkout_session(items, buyer, webhook_url, idempotency_key))

    def get_checkout_session(self, session_id: str) -> CheckoutSession:
        return self._drive(flows.get_checkout_session(session_id))

    def update_checkout_session(
        self,
        session_id: str,
        *,
        items: Iterable[Any] | None = None,
        buyer: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        return self._drive(flows.update_checkout_session(session_id, items, buyer, idempotency_key))

    def cancel_checkout_session(self, session_id: str, *, idempotency_key: str | None = None) -> CheckoutSession:
        return self._drive(flows.cancel_checkout_session(session_id, idempotency_key))

    def approve_checkout(self, session: CheckoutSession | str, *, account: Any, rpc_url: str) -> str | None:
        """Checkout step 2: the payer's own USDC approve of the gateway for the total, signed here (None: the allowance
        already covers it)."""
        return self._drive(flows.approve_checkout(session, account, rpc_url))

    def complete_checkout_session(
        self,
        session: CheckoutSession | str,
        *,
        account: Any,
        buyer: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        """Checkout step 3: sign the session's EIP-712 Funding consent with ``account`` (the payer) and complete: the
        gateway job is funded, ``order`` created."""
        return self._drive(flows.complete_checkout_session(session, account, buyer, idempotency_key))

    def get_order(self, order_id: str) -> Result:
        """Checkout step 4: an order (status, history, audit_chain; line items and buyer details for the right key)."""
        return self._drive(flows.get_order(order_id))

    def link_provider(
        self,
        wallet: str,
        *,
        self_account: Any,
        owner_address: str,
        referrer_token_id: int | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Link an agent as a provider: its self wallet (``self_account``) signs, the service mints its agent NFT to
        ``owner_address``."""
        return self._drive(flows.link_provider(wallet, self_account, owner_address, referrer_token_id, idempotency_key))

    def create_item(
        self,
        wallet: str,
        title: str,
        tier: str = "standard",
        *,
        price: AmountLike | None = None,
        item_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Publish a catalogue item (tiers standard, rush, deep)."""
        return self._drive(flows.create_item(wallet, title, tier, price, item_id, idempotency_key))

    def acknowledge_order(self, order_id: str, *, account: Any) -> Result:
        """Provider: acknowledge an order (signed by the self wallet ``account``)."""
        return self._drive(flows.order_action(order_id, "acknowledge", account, None))

    def start_order(self, order_id: str, *, account: Any) -> Result:
        """Provider: start work on an order."""
        return self._drive(flows.order_action(order_id, "start", account, None))

    def fail_order(self, order_id: str, *, account: Any, reason: str | None = None) -> Result:
        """Provider: give up an order (``reason`` is public)."""
        return self._drive(flows.order_action(order_id, "fail", account, reason))

    def upload_deliverable(
        self,
        order_id: str,
        *,
        account: Any,
        content: Any = None,
        data: bytes | None = None,
        filename: str = "deliverable",
        media_type: str = "application/octet-stream",
    ) -> Result:
        """Provider: upload the deliverable, JSON ``content`` or raw ``data``, its SHA-256 signed in the headers; the
        answer's ``cid``."""
        return self._drive(flows.upload_deliverable(order_id, account, content, data, filename, media_type))

    def complete_order(self, order_id: str, *, account: Any, cid: str, job_id: str | None = None) -> Result:
        """Provider: attest completion of ``cid``; the service submits the gateway release."""
        return self._drive(flows.complete_order(order_id, account, cid, job_id))

    def drop_mint_agent(
        self, agent_id: str, *, self_account: Any, owner_address: str, idempotency_key: str | None = None
    ) -> Result:
        """Mint the agent's NFT to ``owner_address`` (the self wallet signs)."""
        return self._drive(flows.drop_mint_agent(agent_id, self_account, owner_address, idempotency_key))

    def drop_list_agent(
        self,
        agent_id: str,
        *,
        account: Any,
        rpc_url: str,
        asking_price: AmountLike,
        floor_price: AmountLike,
        accept_offers: bool = True,
        duration: int = 0,
        seller_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """List the agent NFT ``account`` owns: statement, approve, AgentMarketplace.list (signed here), recorded."""
        return self._drive(
            flows.drop_list_agent(
                agent_id,
                account,
                rpc_url,
                asking_price,
                floor_price,
                accept_offers,
                duration,
                seller_email,
                idempotency_key,
            )
        )

    def drop_make_offer(
        self,
        listing_id: str,
        price: AmountLike,
        *,
        account: Any,
        rpc_url: str | None = None,
        nonce: int | None = None,
        deadline: int | None = None,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """An EIP-712 Offer of ``price`` USDC signed by ``account``; with ``rpc_url`` the marketplace is approved for
        it first."""
        return self._drive(
            flows.drop_make_offer(listing_id, account, price, rpc_url, nonce, deadline, buyer_email, idempotency_key)
        )

    def drop_accept_offer(
        self, listing_id: str, offer_id: str, *, account: Any, rpc_url: str, idempotency_key: str | None = None
    ) -> Result:
        """The seller accepts an offer on-chain (acceptOffer, signed here) and records it."""
        return self._drive(flows.drop_accept_offer(listing_id, offer_id, account, rpc_url, idempotency_key))

    def drop_claim_agent(self, agent_id: str, *, account: Any) -> Result:
        """Claim a bought agent as its NFT's new owner ``account``; the answer's api_key is shown once."""
        return self._drive(flows.drop_claim_agent(agent_id, account))

    def publish_service(
        self,
        wallet: str,
        service_type: str,
        price: AmountLike,
        *,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any],
        url: str,
        runner: str = "https",
        sla_seconds: int | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        rotate_secret: bool = False,
        idempotency_key: str | None = None,
    ) -> Result:
        """Publish (or replace) a service for hire at ``url``; ``signingSecret`` is shown once."""
        return self._drive(
            flows.publish_service(
                wallet,
                service_type,
                price,
                description,
                input_schema,
                output_schema,
                url,
                runner,
                sla_seconds,
                webhook_url,
                webhook_secret,
                rotate_secret,
                idempotency_key,
            )
        )

    def services(self, wallet: str | None = None) -> Result:
        """The provider agent's own services."""
        return self._drive(flows.services(wallet))

    def withdraw_service(self, service_type: str, *, wallet: str | None = None) -> Result:
        return self._drive(flows.withdraw_service(service_type, wallet))

    def reputation(
        self, wallet: str, service_type: str, *, limit: int | None = None, cursor: str | None = None
    ) -> Result:
        """A service's reputation and the settled jobs it came from."""
        return self._drive(flows.reputation(wallet, service_type, limit, cursor))

    def set_escrow_price(self, wallet: str, price: AmountLike, sla_seconds: int, *, account: Any, rpc_url: str) -> str:
        """AgentEscrow.setPrice for the provider's token, sent by ``account`` (its self wallet or owner)."""
        return self._drive(flows.set_escrow_price(wallet, price, sla_seconds, account, rpc_url))

    # ---- the wallet API --------------------------------------------------------------------

    def register(
        self, name: str, specialty: str, referral_code: str | None = None, *, idempotency_key: str | None = None
    ) -> Registration:
        """Register an agent. Without an API key this creates an account: the result's
        ``api_key`` (shown once) is then also adopted by this client for its next calls."""
        r: Registration = self._send(self._register(name, specialty, referral_code, idempotency_key))
        if self.api_key is None and r.api_key:
            self.api_key = r.api_key
        return r

    def earn(self, wallet: str, amount: AmountLike, source: str, *, idempotency_key: str | None = None) -> EarnResult:
        """Report an earning of ``amount`` USDC for ``wallet``; applied at most once however often retried."""
        result: EarnResult = self._send(self._earn(wallet, amount, source, idempotency_key))
        return result

    def earn_batch(self, payments: Iterable[Any], *, idempotency_key: str | None = None) -> BatchEarnResult:
        """Several earnings in one atomic call (all applied or none). Each payment is a mapping
        ``{"agentId" | "wallet", "amount", "source"}`` or a tuple ``(wallet, amount, source)``."""
        result: BatchEarnResult = self._send(self._earn_batch(payments, idempotency_key))
        return result

    def record_run(
        self, wallet: str, success: bool, niche: str | None = None, *, idempotency_key: str | None = None
    ) -> RunRecord:
        """Count one run (success or failure) for the agent today, under ``run:YYYY-MM-DD:niche``."""
        result: RunRecord = self._send(self._record_run(wallet, success, niche, idempotency_key))
        return result

    def get_agent(self, wallet: str) -> AgentBalance:
        """The agent's balance, total_earned (totalEarned), total_transactions and memory_entries."""
        result: AgentBalance = self._send(self._get_agent(wallet))
        return result

    def spend(
        self, wallet: str, amount: AmountLike, destination: str, *, idempotency_key: str | None = None
    ) -> SpendResult:
        """Spend from the agent's balance; more than the balance raises InvalidRequest (422)."""
        result: SpendResult = self._send(self._spend(wallet, amount, destination, idempotency_key))
        return result

    def compound(
        self, wallet: str, reinvest_percent: int = 20, *, idempotency_key: str | None = None
    ) -> CompoundResult:
        """Move ``reinvest_percent`` % (int, 1-100) of the spendable balance into the reinvested bucket."""
        result: CompoundResult = self._send(self._compound(wallet, reinvest_percent, idempotency_key))
        return result

    def remember(self, wallet: str, key: str, value: Any, *, idempotency_key: str | None = None) -> Memory:
        """Store ``value`` (any JSON; Decimals are sent as numbers) under ``key`` in the agent's memory."""
        result: Memory = self._send(self._remember(wallet, key, value, idempotency_key))
        return result

    def memories(
        self, wallet: str, query: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> MemoryPage:
        result: MemoryPage = self._send(self._memories(wallet, query, limit, cursor))
        return result

    def brain(self, wallet: str) -> Result:
        result: Result = self._send(self._brain(wallet))
        return result

    def update_brain(
        self,
        wallet: str,
        action: str,
        niche: str,
        price: AmountLike,
        revenue: AmountLike | None = None,
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record a product ``listed`` or ``sold`` in ``niche`` at ``price`` (POST /brain); ``name`` names
        the product (the brain's topProducts)."""
        result: Result = self._send(self._update_brain(wallet, action, niche, price, revenue, name, idempotency_key))
        return result

    def network(self) -> NetworkStats:
        result: NetworkStats = self._send(self._network())
        return result

    def identity(self, wallet: str) -> Identity:
        result: Identity = self._send(self._identity(wallet))
        return result

    def create_key(self, email: str, mcp_toolsets: str | None = None) -> ApiKey:
        """Self-serve API key for ``email`` (one per email: 409 email_has_key after), shown once;
        ``mcp_toolsets``: the MCP toolsets its sessions get by default (e.g. "wallet,hire")."""
        result: ApiKey = self._send(self._create_key(email, mcp_toolsets))
        return result

    # ---- agent-to-agent hire -------------------------------------------------------------------

    def hire(
        self,
        caller_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        *,
        provider_wallet: str | None = None,
        max_price: AmountLike | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        idempotency_key: str | None = None,
    ) -> HireResult:
        """Standard hire, charged to ``caller_wallet``'s balance (the best-scored healthy provider of
        ``service_type`` unless ``provider_wallet`` is named). Runs at most once per idempotency key;
        a failed run raises ServerError (502/504, nothing charged) and is not retried."""
        call = self._hire(
            caller_wallet, service_type, input, provider_wallet, max_price, webhook_url, webhook_secret, idempotency_key
        )
        result: HireResult = self._send(call)
        return result

    def registry(
        self,
        service_type: str | None = None,
        *,
        wallet: str | None = None,
        max_price: AmountLike | None = None,
        min_score: float | int | None = None,
        escrow: bool | None = None,
        healthy: bool | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Registry:
        """One page of the registry, best reputation first (``next_cursor`` for the next)."""
        call = self._registry(service_type, wallet, max_price, min_score, escrow, healthy, limit, cursor)
        result: Registry = self._send(call)
        return result

    def escrow_status(self, job_id: str) -> EscrowStatus:
        """AgentEscrow.jobStatus of ``job_id`` (locked, released, refunded, not_found)."""
        result: EscrowStatus = self._send(self._escrow_status(job_id))
        return result

    def hire_audit(self, job_id: str) -> HireAudit:
        """The audit stream of a hire job, standard (``hire_...``) or escrow (``0x...``): every move in
        order with its hashes; ``broken_link()`` rechecks the chain locally."""
        result: HireAudit = self._send(self._hire_audit(job_id))
        return result

    def escrow_hire(
        self,
        provider_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        *,
        account: Any,
        rpc_url: str,
        job_id: str | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        receipt_timeout: float = 120.0,
    ) -> EscrowResult:
        """Escrow hire with the caller's own key (``account``: a private key or an eth-account
        LocalAccount): the price and SLA from the registry, checked on-chain; approve (if the allowance
        is short) and createJob, each waited for; then POST /api/a2a/escrow signed by the same key,
        retried with a fresh signature until the service answers (it runs a job id once)."""
        return self._drive(
            self._escrow_hire(
                provider_wallet,
                service_type,
                input,
                account,
                rpc_url,
                job_id,
                webhook_url,
                webhook_secret,
                receipt_timeout,
            )
        )

    # ---- the drop (ownership marketplace): see README "The ownership marketplace" ------------

    def drop_listings(
        self,
        *,
        listing_id: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
        state: str | None = None,
    ) -> Result:
        """One listing (``listing_id``, with its offers and sales), an agent's latest, or a page of
        listings of ``status`` (active by default; ``state`` is its deprecated name)."""
        return self._send(self._drop_listings(listing_id, agent_id, status, state, page, per_page))  # type: ignore[no-any-return]

    def drop_mint(
        self,
        agent_id: str,
        owner_address: str,
        self_wallet: str,
        timestamp: int,
        signature: str,
        *,
        idempotency_key: str | None = None,
    ) -> Result:
        """Mint the agent's NFT (the self wallet signs the mint message, EIP-191)."""
        body = {
            "agentId": agent_id,
            "ownerAddress": owner_address,
            "selfWallet": self_wallet,
            "timestamp": timestamp,
            "signature": signature,
        }
        return self._send(self._drop_post("mint", body, idempotency_key))  # type: ignore[no-any-return]

    def drop_statement(self, agent_id: str, seller_address: str) -> Result:
        """The operator-signed EarningsStatement ``seller_address`` passes to AgentMarketplace.list
        (``statement`` fields, ``signature``; good for one listing, 10 minutes)."""
        return self._send(self._drop_statement(agent_id, seller_address))  # type: ignore[no-any-return]

    def drop_list(
        self,
        agent_id: str,
        tx_hash: str,
        asking_price: AmountLike,
        accept_offers: bool,
        *,
        seller_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record the on-chain listing ``tx_hash`` (AgentMarketplace.list) of the agent."""
        body = {
            "agentId": agent_id,
            "txHash": tx_hash,
            "askingPriceUsdc": to_decimal(asking_price),
            "acceptOffers": accept_offers,
            "sellerEmail": seller_email,
        }
        return self._send(self._drop_post("list", body, idempotency_key))  # type: ignore[no-any-return]

    def drop_offer(
        self,
        listing_id: str,
        offer_price: AmountLike,
        buyer_address: str,
        nonce: int,
        deadline: int,
        signature: str,
        *,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Put the buyer's signed EIP-712 Offer in the book."""
        body = {
            "listingId": listing_id,
            "offerPriceUsdc": to_decimal(offer_price),
            "buyerAddress": buyer_address,
            "nonce": nonce,
            "deadline": deadline,
            "signature": signature,
            "buyerEmail": buyer_email,
        }
        return self._send(self._drop_post("offer", body, idempotency_key))  # type: ignore[no-any-return]

    def drop_accept(
        self,
        listing_id: str,
        buy_now: bool,
        tx_hash: str,
        *,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record a commit: the buyer's buy() (buy_now) or the seller's acceptOffer()."""
        body = {"listingId": listing_id, "buyNow": buy_now, "txHash": tx_hash, "buyerEmail": buyer_email}
        return self._send(self._drop_post("accept", body, idempotency_key))  # type: ignore[no-any-return]

    def drop_cancel(self, listing_id: str, tx_hash: str, *, idempotency_key: str | None = None) -> Result:
        """Record the seller's on-chain cancel."""
        body = {"listingId": listing_id, "txHash": tx_hash}
        return self._send(self._drop_post("cancel", body, idempotency_key))  # type: ignore[no-any-return]

    def drop_claim(self, agent_id: str, owner_address: str, timestamp: int, signature: str) -> Result:
        """Claim a bought agent (the new NFT owner's EIP-191 signature); the answer's api_key is shown once."""
        return self._send(self._drop_claim(agent_id, owner_address, timestamp, signature))  # type: ignore[no-any-return]

    def drop_watch(
        self,
        agent_id: str,
        *,
        email: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Watch an agent: e-mails, or listing.state_changed webhooks (the secret comes back once)."""
        body = {"agentId": agent_id, "email": email, "webhookUrl": webhook_url}
        return self._send(self._drop_post("watch", body, idempotency_key, unsafe=True))  # type: ignore[no-any-return]

    # ---- the provider's side of escrow checkout ----------------------------------------------

    def set_provider_webhook(self, wallet: str, url: str) -> Result:
        """Where the provider agent ``wallet`` hears of its orders (``order.created``, then
        ``job.state_changed``); the result's ``webhook_secret`` (shown once) signs them."""
        result: Result = self._send(self._set_provider_webhook(wallet, url))
        return result

    def delete_provider_webhook(self, wallet: str) -> Result:
        result: Result = self._send(self._delete_provider_webhook(wallet))
        return result

    def provider_orders(
        self, wallet: str, status: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> ProviderOrderPage:
        """One page of the provider's orders, newest first (``next_cursor`` for the next; None: last)."""
        result: ProviderOrderPage = self._send(self._provider_orders(wallet, status, limit, cursor))
        return result


class AsyncAgentLedger(_Base):
    """Asynchronous client with the same methods as AgentLedger (each a coroutine)."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            max_retry_wait=max_retry_wait,
        )
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, transport=transport)
        self._chain = httpx.AsyncClient(timeout=timeout)  # the caller's chain node (JSON-RPC)

    async def __aenter__(self) -> AsyncAgentLedger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._chain.aclose()

    async def _send(self, call: _Call) -> Any:
        attempt = 0
        while True:
            try:
                try:
                    response = await self._http.request(
                        call.method, call.path, content=call.body, params=call.params, headers=self._headers(call)
                    )
                except httpx.TransportError as exc:
                    raise self._transport_error(call, exc) from exc
                return self._interpret(call, response)
            except errors.AgentLedgerError as exc:
                delay = self._delay_after_error(call, attempt, exc)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
            attempt += 1

    async def _drive(self, flow: Flow[T]) -> T:
        """Run a flow (agentledger_sdk._flows) to its end with awaits."""
        reply: Any = None
        failure: errors.AgentLedgerError | None = None
        while True:
            try:
                step = flow.send(reply) if failure is None else flow.throw(failure)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            reply, failure = None, None
            try:
                if isinstance(step, _Call):
                    reply = await self._send(step)
                elif isinstance(step, Rpc):
                    reply = await self._rpc(step)
                else:
                    await asyncio.sleep(step.seconds)
            except errors.AgentLedgerError as exc:
                failure = exc

    async def _rpc(self, step: Rpc) -> Any:
        try:
            response = await self._chain.post(step.url, json=_rpc_body(step))
        except httpx.TransportError as exc:
            raise _rpc_transport_error(step, exc) from exc
        return _rpc_result(step, response)

    # ---- decisions, checkout (buyer and provider), the drop's signed steps, hire services ----------

    async def deployment(self) -> Deployment:
        """The chain the service runs on (GET /healthz): ``chain_id``, ``usdc``, ``contracts``."""
        return await self._drive(flows.deployment())

    async def log_decision(
        self,
        agent_uuid: str,
        event_type: str,
        content_hash: str,
        model_id: str,
        model_version: str,
        *,
        evidence: Iterable[Any] | None = None,
        correlation_ref: str | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        idempotency_key: str | None = None,
    ) -> DecisionLogged:
        """Log a decision (hashes only) to the agent's tamper-evident log. ``event_type``: routine, high_stakes or
        critical (which needs ``evidence``: ``(type, sha256)`` pairs or ``{type, sha256}``)."""
        return await self._drive(
            flows.log_decision(
                agent_uuid,
                event_type,
                content_hash,
                model_id,
                model_version,
                evidence,
                correlation_ref,
                webhook_url,
                webhook_secret,
                idempotency_key,
            )
        )

    async def verify_entry(
        self, audit_id: int, *, expected: DecisionLogged | None = None, rpc_url: str | None = None
    ) -> EntryVerification:
        """Fetch an audit entry's verification and recheck it here: payload, chain and leaf hashes recomputed as
        /methodology says, the inclusion proof walked to its root (and, with ``rpc_url``, an anchored root read from
        the chain). ``ok`` / ``problems``."""
        return await self._drive(flows.verify_entry(audit_id, expected, rpc_url))

    async def verify_decision(self, logged: DecisionLogged, *, rpc_url: str | None = None) -> EntryVerification:
        """verify_entry of a decision just logged, also checking its chain and content hashes are the ones logged."""
        return await self._drive(flows.verify_entry(logged.audit_id, logged, rpc_url))

    async def create_checkout_session(
        self,
        items: Iterable[Any],
        *,
        buyer: Mapping[str, Any] | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        """Checkout step 1: a session for ``items`` (item ids, ``(item_id, quantity)`` or ACP line items); ``buyer``
        e.g. ``{"email": ...}``."""
        return await self._drive(flows.create_checkout_session(items, buyer, webhook_url, idempotency_key))

    async def get_checkout_session(self, session_id: str) -> CheckoutSession:
        return await self._drive(flows.get_checkout_session(session_id))

    async def update_checkout_session(
        self,
        session_id: str,
        *,
        items: Iterable[Any] | None = None,
        buyer: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        return await self._drive(flows.update_checkout_session(session_id, items, buyer, idempotency_key))

    async def cancel_checkout_session(self, session_id: str, *, idempotency_key: str | None = None) -> CheckoutSession:
        return await self._drive(flows.cancel_checkout_session(session_id, idempotency_key))

    async def approve_checkout(self, session: CheckoutSession | str, *, account: Any, rpc_url: str) -> str | None:
        """Checkout step 2: the payer's own USDC approve of the gateway for the total, signed here (None: the allowance
        already covers it)."""
        return await self._drive(flows.approve_checkout(session, account, rpc_url))

    async def complete_checkout_session(
        self,
        session: CheckoutSession | str,
        *,
        account: Any,
        buyer: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CheckoutSession:
        """Checkout step 3: sign the session's EIP-712 Funding consent with ``account`` (the payer) and complete: the
        gateway job is funded, ``order`` created."""
        return await self._drive(flows.complete_checkout_session(session, account, buyer, idempotency_key))

    async def get_order(self, order_id: str) -> Result:
        """Checkout step 4: an order (status, history, audit_chain; line items and buyer details for the right key)."""
        return await self._drive(flows.get_order(order_id))

    async def link_provider(
        self,
        wallet: str,
        *,
        self_account: Any,
        owner_address: str,
        referrer_token_id: int | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Link an agent as a provider: its self wallet (``self_account``) signs, the service mints its agent NFT to
        ``owner_address``."""
        return await self._drive(
            flows.link_provider(wallet, self_account, owner_address, referrer_token_id, idempotency_key)
        )

    async def create_item(
        self,
        wallet: str,
        title: str,
        tier: str = "standard",
        *,
        price: AmountLike | None = None,
        item_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Publish a catalogue item (tiers standard, rush, deep)."""
        return await self._drive(flows.create_item(wallet, title, tier, price, item_id, idempotency_key))

    async def acknowledge_order(self, order_id: str, *, account: Any) -> Result:
        """Provider: acknowledge an order (signed by the self wallet ``account``)."""
        return await self._drive(flows.order_action(order_id, "acknowledge", account, None))

    async def start_order(self, order_id: str, *, account: Any) -> Result:
        """Provider: start work on an order."""
        return await self._drive(flows.order_action(order_id, "start", account, None))

    async def fail_order(self, order_id: str, *, account: Any, reason: str | None = None) -> Result:
        """Provider: give up an order (``reason`` is public)."""
        return await self._drive(flows.order_action(order_id, "fail", account, reason))

    async def upload_deliverable(
        self,
        order_id: str,
        *,
        account: Any,
        content: Any = None,
        data: bytes | None = None,
        filename: str = "deliverable",
        media_type: str = "application/octet-stream",
    ) -> Result:
        """Provider: upload the deliverable, JSON ``content`` or raw ``data``, its SHA-256 signed in the headers; the
        answer's ``cid``."""
        return await self._drive(flows.upload_deliverable(order_id, account, content, data, filename, media_type))

    async def complete_order(self, order_id: str, *, account: Any, cid: str, job_id: str | None = None) -> Result:
        """Provider: attest completion of ``cid``; the service submits the gateway release."""
        return await self._drive(flows.complete_order(order_id, account, cid, job_id))

    async def drop_mint_agent(
        self, agent_id: str, *, self_account: Any, owner_address: str, idempotency_key: str | None = None
    ) -> Result:
        """Mint the agent's NFT to ``owner_address`` (the self wallet signs)."""
        return await self._drive(flows.drop_mint_agent(agent_id, self_account, owner_address, idempotency_key))

    async def drop_list_agent(
        self,
        agent_id: str,
        *,
        account: Any,
        rpc_url: str,
        asking_price: AmountLike,
        floor_price: AmountLike,
        accept_offers: bool = True,
        duration: int = 0,
        seller_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """List the agent NFT ``account`` owns: statement, approve, AgentMarketplace.list (signed here), recorded."""
        return await self._drive(
            flows.drop_list_agent(
                agent_id,
                account,
                rpc_url,
                asking_price,
                floor_price,
                accept_offers,
                duration,
                seller_email,
                idempotency_key,
            )
        )

    async def drop_make_offer(
        self,
        listing_id: str,
        price: AmountLike,
        *,
        account: Any,
        rpc_url: str | None = None,
        nonce: int | None = None,
        deadline: int | None = None,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """An EIP-712 Offer of ``price`` USDC signed by ``account``; with ``rpc_url`` the marketplace is approved for
        it first."""
        return await self._drive(
            flows.drop_make_offer(listing_id, account, price, rpc_url, nonce, deadline, buyer_email, idempotency_key)
        )

    async def drop_accept_offer(
        self, listing_id: str, offer_id: str, *, account: Any, rpc_url: str, idempotency_key: str | None = None
    ) -> Result:
        """The seller accepts an offer on-chain (acceptOffer, signed here) and records it."""
        return await self._drive(flows.drop_accept_offer(listing_id, offer_id, account, rpc_url, idempotency_key))

    async def drop_claim_agent(self, agent_id: str, *, account: Any) -> Result:
        """Claim a bought agent as its NFT's new owner ``account``; the answer's api_key is shown once."""
        return await self._drive(flows.drop_claim_agent(agent_id, account))

    async def publish_service(
        self,
        wallet: str,
        service_type: str,
        price: AmountLike,
        *,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any],
        url: str,
        runner: str = "https",
        sla_seconds: int | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        rotate_secret: bool = False,
        idempotency_key: str | None = None,
    ) -> Result:
        """Publish (or replace) a service for hire at ``url``; ``signingSecret`` is shown once."""
        return await self._drive(
            flows.publish_service(
                wallet,
                service_type,
                price,
                description,
                input_schema,
                output_schema,
                url,
                runner,
                sla_seconds,
                webhook_url,
                webhook_secret,
                rotate_secret,
                idempotency_key,
            )
        )

    async def services(self, wallet: str | None = None) -> Result:
        """The provider agent's own services."""
        return await self._drive(flows.services(wallet))

    async def withdraw_service(self, service_type: str, *, wallet: str | None = None) -> Result:
        return await self._drive(flows.withdraw_service(service_type, wallet))

    async def reputation(
        self, wallet: str, service_type: str, *, limit: int | None = None, cursor: str | None = None
    ) -> Result:
        """A service's reputation and the settled jobs it came from."""
        return await self._drive(flows.reputation(wallet, service_type, limit, cursor))

    async def set_escrow_price(
        self, wallet: str, price: AmountLike, sla_seconds: int, *, account: Any, rpc_url: str
    ) -> str:
        """AgentEscrow.setPrice for the provider's token, sent by ``account`` (its self wallet or owner)."""
        return await self._drive(flows.set_escrow_price(wallet, price, sla_seconds, account, rpc_url))

    async def register(
        self, name: str, specialty: str, referral_code: str | None = None, *, idempotency_key: str | None = None
    ) -> Registration:
        r: Registration = await self._send(self._register(name, specialty, referral_code, idempotency_key))
        if self.api_key is None and r.api_key:
            self.api_key = r.api_key
        return r

    async def earn(
        self, wallet: str, amount: AmountLike, source: str, *, idempotency_key: str | None = None
    ) -> EarnResult:
        result: EarnResult = await self._send(self._earn(wallet, amount, source, idempotency_key))
        return result

    async def earn_batch(self, payments: Iterable[Any], *, idempotency_key: str | None = None) -> BatchEarnResult:
        result: BatchEarnResult = await self._send(self._earn_batch(payments, idempotency_key))
        return result

    async def record_run(
        self, wallet: str, success: bool, niche: str | None = None, *, idempotency_key: str | None = None
    ) -> RunRecord:
        result: RunRecord = await self._send(self._record_run(wallet, success, niche, idempotency_key))
        return result

    async def get_agent(self, wallet: str) -> AgentBalance:
        result: AgentBalance = await self._send(self._get_agent(wallet))
        return result

    async def spend(
        self, wallet: str, amount: AmountLike, destination: str, *, idempotency_key: str | None = None
    ) -> SpendResult:
        result: SpendResult = await self._send(self._spend(wallet, amount, destination, idempotency_key))
        return result

    async def compound(
        self, wallet: str, reinvest_percent: int = 20, *, idempotency_key: str | None = None
    ) -> CompoundResult:
        result: CompoundResult = await self._send(self._compound(wallet, reinvest_percent, idempotency_key))
        return result

    async def remember(self, wallet: str, key: str, value: Any, *, idempotency_key: str | None = None) -> Memory:
        result: Memory = await self._send(self._remember(wallet, key, value, idempotency_key))
        return result

    async def memories(
        self, wallet: str, query: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> MemoryPage:
        result: MemoryPage = await self._send(self._memories(wallet, query, limit, cursor))
        return result

    async def brain(self, wallet: str) -> Result:
        result: Result = await self._send(self._brain(wallet))
        return result

    async def update_brain(
        self,
        wallet: str,
        action: str,
        niche: str,
        price: AmountLike,
        revenue: AmountLike | None = None,
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record a product ``listed`` or ``sold`` in ``niche`` at ``price`` (POST /brain); ``name`` names
        the product (the brain's topProducts)."""
        result: Result = await self._send(
            self._update_brain(wallet, action, niche, price, revenue, name, idempotency_key)
        )
        return result

    async def network(self) -> NetworkStats:
        result: NetworkStats = await self._send(self._network())
        return result

    async def identity(self, wallet: str) -> Identity:
        result: Identity = await self._send(self._identity(wallet))
        return result

    async def create_key(self, email: str, mcp_toolsets: str | None = None) -> ApiKey:
        result: ApiKey = await self._send(self._create_key(email, mcp_toolsets))
        return result

    async def hire(
        self,
        caller_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        *,
        provider_wallet: str | None = None,
        max_price: AmountLike | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        idempotency_key: str | None = None,
    ) -> HireResult:
        call = self._hire(
            caller_wallet, service_type, input, provider_wallet, max_price, webhook_url, webhook_secret, idempotency_key
        )
        result: HireResult = await self._send(call)
        return result

    async def registry(
        self,
        service_type: str | None = None,
        *,
        wallet: str | None = None,
        max_price: AmountLike | None = None,
        min_score: float | int | None = None,
        escrow: bool | None = None,
        healthy: bool | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Registry:
        call = self._registry(service_type, wallet, max_price, min_score, escrow, healthy, limit, cursor)
        result: Registry = await self._send(call)
        return result

    async def escrow_status(self, job_id: str) -> EscrowStatus:
        result: EscrowStatus = await self._send(self._escrow_status(job_id))
        return result

    async def hire_audit(self, job_id: str) -> HireAudit:
        result: HireAudit = await self._send(self._hire_audit(job_id))
        return result

    async def escrow_hire(
        self,
        provider_wallet: str,
        service_type: str,
        input: Mapping[str, Any],
        *,
        account: Any,
        rpc_url: str,
        job_id: str | None = None,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        receipt_timeout: float = 120.0,
    ) -> EscrowResult:
        return await self._drive(
            self._escrow_hire(
                provider_wallet,
                service_type,
                input,
                account,
                rpc_url,
                job_id,
                webhook_url,
                webhook_secret,
                receipt_timeout,
            )
        )

    # ---- the drop (ownership marketplace): see README "The ownership marketplace" ------------

    async def drop_listings(
        self,
        *,
        listing_id: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
        state: str | None = None,
    ) -> Result:
        """One listing (``listing_id``, with its offers and sales), an agent's latest, or a page of
        listings of ``status`` (active by default; ``state`` is its deprecated name)."""
        return await self._send(self._drop_listings(listing_id, agent_id, status, state, page, per_page))  # type: ignore[no-any-return]

    async def drop_mint(
        self,
        agent_id: str,
        owner_address: str,
        self_wallet: str,
        timestamp: int,
        signature: str,
        *,
        idempotency_key: str | None = None,
    ) -> Result:
        """Mint the agent's NFT (the self wallet signs the mint message, EIP-191)."""
        body = {
            "agentId": agent_id,
            "ownerAddress": owner_address,
            "selfWallet": self_wallet,
            "timestamp": timestamp,
            "signature": signature,
        }
        return await self._send(self._drop_post("mint", body, idempotency_key))  # type: ignore[no-any-return]

    async def drop_statement(self, agent_id: str, seller_address: str) -> Result:
        """The operator-signed EarningsStatement ``seller_address`` passes to AgentMarketplace.list
        (``statement`` fields, ``signature``; good for one listing, 10 minutes)."""
        return await self._send(self._drop_statement(agent_id, seller_address))  # type: ignore[no-any-return]

    async def drop_list(
        self,
        agent_id: str,
        tx_hash: str,
        asking_price: AmountLike,
        accept_offers: bool,
        *,
        seller_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record the on-chain listing ``tx_hash`` (AgentMarketplace.list) of the agent."""
        body = {
            "agentId": agent_id,
            "txHash": tx_hash,
            "askingPriceUsdc": to_decimal(asking_price),
            "acceptOffers": accept_offers,
            "sellerEmail": seller_email,
        }
        return await self._send(self._drop_post("list", body, idempotency_key))  # type: ignore[no-any-return]

    async def drop_offer(
        self,
        listing_id: str,
        offer_price: AmountLike,
        buyer_address: str,
        nonce: int,
        deadline: int,
        signature: str,
        *,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Put the buyer's signed EIP-712 Offer in the book."""
        body = {
            "listingId": listing_id,
            "offerPriceUsdc": to_decimal(offer_price),
            "buyerAddress": buyer_address,
            "nonce": nonce,
            "deadline": deadline,
            "signature": signature,
            "buyerEmail": buyer_email,
        }
        return await self._send(self._drop_post("offer", body, idempotency_key))  # type: ignore[no-any-return]

    async def drop_accept(
        self,
        listing_id: str,
        buy_now: bool,
        tx_hash: str,
        *,
        buyer_email: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Record a commit: the buyer's buy() (buy_now) or the seller's acceptOffer()."""
        body = {"listingId": listing_id, "buyNow": buy_now, "txHash": tx_hash, "buyerEmail": buyer_email}
        return await self._send(self._drop_post("accept", body, idempotency_key))  # type: ignore[no-any-return]

    async def drop_cancel(self, listing_id: str, tx_hash: str, *, idempotency_key: str | None = None) -> Result:
        """Record the seller's on-chain cancel."""
        body = {"listingId": listing_id, "txHash": tx_hash}
        return await self._send(self._drop_post("cancel", body, idempotency_key))  # type: ignore[no-any-return]

    async def drop_claim(self, agent_id: str, owner_address: str, timestamp: int, signature: str) -> Result:
        """Claim a bought agent (the new NFT owner's EIP-191 signature); the answer's api_key is shown once."""
        return await self._send(self._drop_claim(agent_id, owner_address, timestamp, signature))  # type: ignore[no-any-return]

    async def drop_watch(
        self,
        agent_id: str,
        *,
        email: str | None = None,
        webhook_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Watch an agent: e-mails, or listing.state_changed webhooks (the secret comes back once)."""
        body = {"agentId": agent_id, "email": email, "webhookUrl": webhook_url}
        return await self._send(self._drop_post("watch", body, idempotency_key, unsafe=True))  # type: ignore[no-any-return]

    async def set_provider_webhook(self, wallet: str, url: str) -> Result:
        result: Result = await self._send(self._set_provider_webhook(wallet, url))
        return result

    async def delete_provider_webhook(self, wallet: str) -> Result:
        result: Result = await self._send(self._delete_provider_webhook(wallet))
        return result

    async def provider_orders(
        self, wallet: str, status: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> ProviderOrderPage:
        result: ProviderOrderPage = await self._send(self._provider_orders(wallet, status, limit, cursor))
        return result


# ---- the chain side of escrow_hire ------------------------------------------------------------------


def _terms(page: Registry, wallet: str, service_type: str) -> chain.Terms:
    try:
        return chain.terms_from_registry(page.raw, wallet, service_type)[1]
    except LookupError as exc:
        raise errors.AgentLedgerError(str(exc), type="invalid_request", code="escrow_unavailable") from exc


def _price_of(token_id: int) -> str:
    return chain.calldata("priceOf(uint256)", ["uint256"], [token_id])


def _sla_of(token_id: int) -> str:
    return chain.calldata("slaOf(uint256)", ["uint256"], [token_id])


def _create_job(job_id: str, wallet: str, terms: chain.Terms) -> str:
    return chain.calldata(
        "createJob(bytes32,string,uint256,uint64)",
        ["bytes32", "string", "uint256", "uint64"],
        [bytes.fromhex(job_id[2:]), wallet, terms.price, terms.sla],
    )


def _same_terms(terms: chain.Terms, price: int, sla: int) -> None:
    if price != terms.price or sla != terms.sla:
        raise errors.AgentLedgerError(
            "the registry's price or SLA is not the chain's (it is indexing a change): retry shortly",
            type="invalid_request",
            code="escrow_terms_changed",
        )


def _webhook(url: str | None, secret: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if url is not None:
        out["webhookUrl"] = url
    if secret is not None:
        out["webhookSecret"] = secret
    return out


def _rpc_body(step: Rpc) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": step.method, "params": step.params}


def _rpc_transport_error(step: Rpc, exc: httpx.TransportError) -> errors.TransportError:
    return errors.ConnectionError(
        f"{step.method} at {step.url}: {type(exc).__name__}: {exc}", type="chain_error", code="rpc_unreachable"
    )


def _rpc_result(step: Rpc, response: httpx.Response) -> Any:
    try:
        reply = response.json()
    except ValueError as exc:
        raise errors.AgentLedgerError(
            f"{step.method}: the node's answer is not JSON (HTTP {response.status_code})",
            type="chain_error",
            code="rpc_error",
        ) from exc
    if not isinstance(reply, dict) or "error" in reply:
        raise _rpc_error(step.method, reply.get("error") if isinstance(reply, dict) else reply)
    return reply.get("result")


def _rpc_error(method: str, error: Any) -> errors.AgentLedgerError:
    message = error.get("message", str(error)) if isinstance(error, Mapping) else str(error)
    return errors.AgentLedgerError(f"{method}: {message}", type="chain_error", code="rpc_error", body=error)
