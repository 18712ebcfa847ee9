"""AgentLedger (sync) and AsyncAgentLedger (async): one API over httpx, same methods, same rules.

Retries. Every call is retried at most ``retries`` times, with capped exponential backoff and
jitter, or after the server's ``Retry-After`` when it gives one (a wait longer than
``max_retry_wait`` is not slept through: the error is raised instead). What is retried:

- connection failures before the request was sent (connect errors/timeouts), for every call;
- 429, for every call (the server refused it before doing anything);
- lost responses (reset, read timeout), 5xx and 409 ``idempotency_in_flight``, only for calls
  that are safe to repeat: GETs, and POSTs sent with an ``Idempotency-Key``.

Every value-moving POST (earn, earn_batch, spend, compound, record_run, remember,
update_brain, and register on an account key) gets an ``Idempotency-Key`` (uuid4) generated once
per logical call and reused on every retry, so the server applies it at most once and answers a
retry with the stored response (``result.replayed`` is then True). Pass ``idempotency_key=`` to
choose it yourself, e.g. to retry from another process after a crash. ``register`` without an
API key and ``create_key`` return a secret once and are never replayed by the server, so they
are retried only when the request certainly did not reach it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from agentledger_sdk import _errors as errors
from agentledger_sdk import _escrow as chain
from agentledger_sdk._models import (
    AgentBalance,
    AmountLike,
    ApiKey,
    BatchEarnResult,
    CompoundResult,
    EarnResult,
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

__all__ = ["DEFAULT_BASE_URL", "AgentLedger", "AsyncAgentLedger"]

__version__ = "0.1.0"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
AGENTS = "/api/agents"
A2A = "/api/a2a"
#: Seconds between receipt polls of the caller's own escrow transactions.
RECEIPT_POLL = 0.2
DROP = "/api/a2a/drop"
PROVIDERS = "/api/acp/providers"

R = TypeVar("R", bound=Result)


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    parse: Callable[[Mapping[str, Any], bool], Result]
    body: bytes | None = None
    params: Mapping[str, str] | None = None
    idempotency_key: str | None = None
    #: True for POSTs the server does not deduplicate: retried only when certainly not sent.
    unsafe: bool = False
    #: False when a 5xx is a final answer (a hire whose provider failed: the key replays it anyway).
    retry_5xx: bool = True

    @property
    def repeatable(self) -> bool:
        return not self.unsafe and (self.method in ("GET", "DELETE") or self.idempotency_key is not None)


def _key(given: str | None) -> str:
    return given if given is not None else str(uuid.uuid4())


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
            h["Content-Type"] = "application/json"
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
        self._sleep: Callable[[float], None] = time.sleep

    def __enter__(self) -> AgentLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

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
        acct = chain.account_of(account)
        page = self.registry(service_type, wallet=provider_wallet, escrow=True)
        terms = _terms(page, provider_wallet, service_type)
        job = (job_id or chain.new_job_id()).lower()
        with httpx.Client(timeout=self.timeout) as http:
            rpc = _SyncRpc(http, rpc_url, receipt_timeout)
            _check_terms(terms, rpc.call_uint, acct.address)
            allowance = rpc.call_uint(terms.usdc, _allowance(acct.address, terms.escrow))
            if allowance < terms.price:
                rpc.transact(acct, terms.usdc, _approve(terms.escrow, terms.price), terms.chain_id)
            tx = rpc.transact(acct, terms.escrow, _create_job(job, provider_wallet, terms), terms.chain_id)
        extra = _webhook(webhook_url, webhook_secret)
        attempt = 0
        while True:
            try:
                out: EscrowResult = self._send(
                    self._escrow_post(acct, terms, job, tx, provider_wallet, service_type, input, extra)
                )
                return dataclasses.replace(out, create_tx=tx)
            except errors.AgentLedgerError as exc:
                delay = self._escrow_retry(exc, attempt)
                if delay is None:
                    raise
            self._sleep(delay)
            attempt += 1

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

    async def __aenter__(self) -> AsyncAgentLedger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

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
        acct = chain.account_of(account)
        page = await self.registry(service_type, wallet=provider_wallet, escrow=True)
        terms = _terms(page, provider_wallet, service_type)
        job = (job_id or chain.new_job_id()).lower()
        async with httpx.AsyncClient(timeout=self.timeout) as http:
            rpc = _AsyncRpc(http, rpc_url, receipt_timeout)
            price = await rpc.call_uint(terms.escrow, _price_of(terms.token_id))
            sla = await rpc.call_uint(terms.escrow, _sla_of(terms.token_id))
            _same_terms(terms, price, sla)
            allowance = await rpc.call_uint(terms.usdc, _allowance(acct.address, terms.escrow))
            if allowance < terms.price:
                await rpc.transact(acct, terms.usdc, _approve(terms.escrow, terms.price), terms.chain_id)
            tx = await rpc.transact(acct, terms.escrow, _create_job(job, provider_wallet, terms), terms.chain_id)
        extra = _webhook(webhook_url, webhook_secret)
        attempt = 0
        while True:
            try:
                out: EscrowResult = await self._send(
                    self._escrow_post(acct, terms, job, tx, provider_wallet, service_type, input, extra)
                )
                return dataclasses.replace(out, create_tx=tx)
            except errors.AgentLedgerError as exc:
                delay = self._escrow_retry(exc, attempt)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
            attempt += 1

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


def _allowance(owner: str, spender: str) -> str:
    return chain.calldata("allowance(address,address)", ["address", "address"], [owner, spender])


def _approve(spender: str, amount: int) -> str:
    return chain.calldata("approve(address,uint256)", ["address", "uint256"], [spender, amount])


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


def _check_terms(terms: chain.Terms, call_uint: Callable[[str, str], int], _caller: str) -> None:
    _same_terms(
        terms, call_uint(terms.escrow, _price_of(terms.token_id)), call_uint(terms.escrow, _sla_of(terms.token_id))
    )


def _webhook(url: str | None, secret: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if url is not None:
        out["webhookUrl"] = url
    if secret is not None:
        out["webhookSecret"] = secret
    return out


def _rpc_error(method: str, error: Any) -> errors.AgentLedgerError:
    message = error.get("message", str(error)) if isinstance(error, Mapping) else str(error)
    return errors.AgentLedgerError(f"{method}: {message}", type="chain_error", code="rpc_error", body=error)


class _SyncRpc:
    """Plain JSON-RPC over httpx for the caller's own transactions (its key signs them locally)."""

    def __init__(self, http: httpx.Client, url: str, receipt_timeout: float) -> None:
        self.http, self.url, self.receipt_timeout = http, url, receipt_timeout

    def request(self, method: str, params: list[Any]) -> Any:
        reply = self.http.post(self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
        if "error" in reply:
            raise _rpc_error(method, reply["error"])
        return reply["result"]

    def call_uint(self, to: str, data: str) -> int:
        return chain.decode_uint(self.request("eth_call", [{"to": to, "data": data}, "latest"]))

    def transact(self, account: Any, to: str, data: str, chain_id: int) -> str:
        sender = account.address
        nonce = int(self.request("eth_getTransactionCount", [sender, "pending"]), 16)
        gas = int(self.request("eth_estimateGas", [{"from": sender, "to": to, "data": data}]), 16)
        price = int(self.request("eth_gasPrice", []), 16)
        raw = chain.signed_tx(
            account, to=to, data=data, nonce=nonce, gas=chain.with_margin(gas), gas_price=price, chain_id=chain_id
        )
        tx_hash = str(self.request("eth_sendRawTransaction", [raw]))
        deadline = time.monotonic() + self.receipt_timeout
        while True:
            receipt = self.request("eth_getTransactionReceipt", [tx_hash])
            if receipt is not None:
                if int(receipt["status"], 16) != 1:
                    raise errors.AgentLedgerError(
                        f"transaction {tx_hash} reverted", type="chain_error", code="transaction_failed"
                    )
                return tx_hash
            if time.monotonic() > deadline:
                raise errors.TimeoutError(f"no receipt for {tx_hash}", type="chain_error", code="timeout")
            time.sleep(RECEIPT_POLL)


class _AsyncRpc:
    def __init__(self, http: httpx.AsyncClient, url: str, receipt_timeout: float) -> None:
        self.http, self.url, self.receipt_timeout = http, url, receipt_timeout

    async def request(self, method: str, params: list[Any]) -> Any:
        resp = await self.http.post(self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        reply = resp.json()
        if "error" in reply:
            raise _rpc_error(method, reply["error"])
        return reply["result"]

    async def call_uint(self, to: str, data: str) -> int:
        return chain.decode_uint(await self.request("eth_call", [{"to": to, "data": data}, "latest"]))

    async def transact(self, account: Any, to: str, data: str, chain_id: int) -> str:
        sender = account.address
        nonce = int(await self.request("eth_getTransactionCount", [sender, "pending"]), 16)
        gas = int(await self.request("eth_estimateGas", [{"from": sender, "to": to, "data": data}]), 16)
        price = int(await self.request("eth_gasPrice", []), 16)
        raw = chain.signed_tx(
            account, to=to, data=data, nonce=nonce, gas=chain.with_margin(gas), gas_price=price, chain_id=chain_id
        )
        tx_hash = str(await self.request("eth_sendRawTransaction", [raw]))
        deadline = time.monotonic() + self.receipt_timeout
        while True:
            receipt = await self.request("eth_getTransactionReceipt", [tx_hash])
            if receipt is not None:
                if int(receipt["status"], 16) != 1:
                    raise errors.AgentLedgerError(
                        f"transaction {tx_hash} reverted", type="chain_error", code="transaction_failed"
                    )
                return tx_hash
            if time.monotonic() > deadline:
                raise errors.TimeoutError(f"no receipt for {tx_hash}", type="chain_error", code="timeout")
            await asyncio.sleep(RECEIPT_POLL)
