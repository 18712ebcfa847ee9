"""Running a job at its provider: an HTTPS JSON endpoint, or an A2A agent.

HTTPS: one POST of `{"jobId", "serviceType", "input"}` (the input as RFC 8785 JSON) signed like
the service's webhooks, with the Standard Webhooks headers (`webhook-id` = the job id,
`webhook-timestamp`, `webhook-signature`; key: the service's signing secret, whose "whsec_" form
any Standard Webhooks library takes) and `X-Service-Signature`. The answer must be a 2xx whose
body is the output as JSON, within the service's SLA and MAX_OUTPUT_BYTES; redirects are not
followed and every connection goes through the SSRF rules (core.egress, checked after DNS).

A2A: the agent card is fetched from the published URL (capped, SSRF-checked), the job is sent as
one A2A message (a data part holding the input; metadata jobId and serviceType) with the a2a-sdk
client over the same egress session, and the task's last artifact is the output (its data part; or
its text, read as JSON when it is JSON and as a string otherwise). The task must end `completed`
within the SLA.

Either way the output must satisfy the service's output schema. A run never raises: it returns an
Outcome, failed with one of core.hire.rules.FAILURES' codes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx

from core import egress
from core.hire import rules, schemas
from core.hire.context import USER_AGENT, Hire
from core.store.hire import ServiceRow

log = logging.getLogger("agentledger.hire")

#: An agent card larger than this is refused.
MAX_CARD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Outcome:
    ok: bool
    response_ms: int
    #: The output's RFC 8785 bytes (what is hashed, committed and answered), when ok.
    output: bytes | None = None
    error_code: str | None = None
    error_message: str | None = None


def _fail(started: float, code: str, message: str) -> Outcome:
    return Outcome(False, _ms(started), None, code, message[:500])


def _ms(started: float) -> int:
    return max(0, int((time.monotonic() - started) * 1000))


def _finish(started: float, service: ServiceRow, value: Any) -> Outcome:
    """Check and canonicalise an answer: the output schema, then its RFC 8785 bytes."""
    value = rules.output_value(value)
    try:
        schemas.check(service.output_schema, value)
    except schemas.SchemaMismatch as exc:
        where = f" at {exc.path}" if exc.path else ""
        return _fail(started, "output_schema_mismatch", f"the output fails the output schema{where}: {exc}")
    try:
        data = rules.canonical(value)
    except ValueError as exc:
        return _fail(started, "provider_invalid_output", f"the output has no canonical JSON form: {exc}")
    if len(data) > rules.MAX_OUTPUT_BYTES:
        return _fail(
            started, "provider_response_too_large", f"the output is larger than {rules.MAX_OUTPUT_BYTES} bytes"
        )
    return Outcome(True, _ms(started), data)


async def run(ctx: Hire, service: ServiceRow, job_id: str, input_bytes: bytes) -> Outcome:
    """Run one job at `service`'s provider within its SLA."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(service.sla_seconds):
            if service.runner == "a2a":
                return await _run_a2a(ctx, service, job_id, input_bytes, started)
            return await _run_https(ctx, service, job_id, input_bytes, started)
    except TimeoutError:
        return _fail(started, "provider_timeout", f"no answer within the service's SLA of {service.sla_seconds} s")


# ---- HTTPS ---------------------------------------------------------------------------------------


def request_body(service: ServiceRow, job_id: str, input_bytes: bytes) -> bytes:
    """The exact bytes POSTed (and signed): the input is spliced in as its canonical JSON."""
    head = json.dumps({"jobId": job_id, "serviceType": service.service_type}, separators=(",", ":"))
    return head[:-1].encode() + b',"input":' + input_bytes + b"}"


async def _run_https(ctx: Hire, service: ServiceRow, job_id: str, input_bytes: bytes, started: float) -> Outcome:
    body = request_body(service, job_id, input_bytes)
    now = int(time.time())  # the receiver checks it against its own wall clock (replay protection)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Accept-Encoding": "identity",
        "X-Service-Signature": egress.sign_service(body, service.signing_secret),
        **egress.standard_headers(job_id, now, body, service.signing_secret),
    }
    try:
        egress.check_url_static(service.endpoint, ctx.services.allow_private)
        async with ctx.http().post(service.endpoint, data=body, headers=headers, allow_redirects=False) as resp:
            raw = await egress.read_capped(resp, rules.MAX_OUTPUT_BYTES)
            if raw is None:
                return _fail(
                    started, "provider_response_too_large", f"the answer passed {rules.MAX_OUTPUT_BYTES} bytes"
                )
            if not 200 <= resp.status < 300:
                return _fail(started, "provider_error", f"the provider answered HTTP {resp.status}")
    except egress.WebhookURLError as exc:
        return _fail(started, "provider_refused_target", str(exc))
    except (aiohttp.ClientConnectionError, OSError) as exc:
        return _fail(started, "provider_unreachable", f"{type(exc).__name__}: {exc}")
    except aiohttp.ClientError as exc:
        return _fail(started, "provider_error", f"{type(exc).__name__}: {exc}")
    try:
        value = rules.parse_output(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return _fail(started, "provider_invalid_output", f"the answer is not JSON: {exc}")
    return _finish(started, service, value)


async def probe(ctx: Hire, service: ServiceRow, timeout: float = 5.0) -> str | None:
    """A health probe: None when the provider answers, else why not. HTTPS: any answer below 500 to a
    HEAD of the endpoint; A2A: its agent card fetched and parsed."""
    try:
        async with asyncio.timeout(timeout):
            if service.runner == "a2a":
                await _fetch_card(ctx, service.endpoint)
                return None
            egress.check_url_static(service.endpoint, ctx.services.allow_private)
            async with ctx.http().head(service.endpoint, allow_redirects=False) as resp:
                return None if resp.status < 500 else f"HTTP {resp.status}"
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except (egress.WebhookURLError, aiohttp.ClientError, OSError, _CardError) as exc:
        return f"{type(exc).__name__}: {exc}"


# ---- A2A -----------------------------------------------------------------------------------------


class _CardError(Exception):
    pass


def _client(ctx: Hire, cap: int) -> tuple[httpx.AsyncClient, egress.HttpxTransport]:
    transport = egress.HttpxTransport(ctx.http(), cap)
    # no per-request timeout here: every run is bounded by the SLA (asyncio.timeout in run)
    client = httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        timeout=None,  # noqa: S113
    )
    return client, transport


async def _fetch_card(ctx: Hire, url: str) -> Any:
    from a2a.client.card_resolver import parse_agent_card  # the a2a-sdk is heavy: imported on first use

    egress.check_url_static(url, ctx.services.allow_private)
    client, _transport = _client(ctx, MAX_CARD_BYTES)
    async with client:
        try:
            resp = await client.get(url)
        except egress.TooLarge as exc:
            raise _CardError(f"the agent card is larger than {MAX_CARD_BYTES} bytes") from exc
        except httpx.HTTPError as exc:
            raise _CardError(f"the agent card could not be fetched: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            raise _CardError(f"the agent card URL answered HTTP {resp.status_code}")
        try:
            return parse_agent_card(resp.json())
        except Exception as exc:  # not JSON, not a card
            raise _CardError(f"not an A2A agent card: {exc}") from exc


def _part_value(part: Any) -> Any:
    from a2a.helpers.proto_helpers import get_data_parts

    if part.HasField("data"):
        return get_data_parts([part])[0]
    if part.HasField("text"):
        try:
            return rules.parse_output(part.text.encode())
        except (ValueError, UnicodeDecodeError, RecursionError):
            return part.text
    raise ValueError("the artifact has neither a data nor a text part")


async def _run_a2a(ctx: Hire, service: ServiceRow, job_id: str, input_bytes: bytes, started: float) -> Outcome:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.helpers.proto_helpers import new_data_part
    from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, TaskState

    try:
        card = await _fetch_card(ctx, service.endpoint)
    except _CardError as exc:
        return _fail(started, "provider_unreachable", str(exc))
    except egress.WebhookURLError as exc:
        return _fail(started, "provider_refused_target", str(exc))
    client, transport = _client(ctx, rules.MAX_OUTPUT_BYTES + MAX_CARD_BYTES)
    message = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[new_data_part(json.loads(input_bytes), media_type="application/json")],
        metadata={"jobId": job_id, "serviceType": service.service_type},
    )
    last: Any = None
    try:
        async with client:
            a2a = ClientFactory(ClientConfig(httpx_client=client, streaming=False)).create(card)
            async for event in a2a.send_message(SendMessageRequest(message=message)):
                last = event
    except Exception as exc:  # the a2a-sdk wraps transport errors in its own
        if transport.too_large:
            return _fail(started, "provider_response_too_large", f"the answer passed {rules.MAX_OUTPUT_BYTES} bytes")
        if isinstance(exc, egress.WebhookURLError) or isinstance(exc.__cause__, egress.WebhookURLError):
            return _fail(started, "provider_refused_target", str(exc))
        return _fail(started, "provider_error", f"the A2A call failed: {type(exc).__name__}: {exc}")
    if last is None:
        return _fail(started, "provider_error", "the A2A agent answered nothing")
    try:
        if last.HasField("message"):
            value = _part_value(last.message.parts[-1])
        else:
            task = last.task
            if task.status.state != TaskState.TASK_STATE_COMPLETED:
                return _fail(started, "provider_error", f"the A2A task ended {TaskState.Name(task.status.state)}")
            if not task.artifacts or not task.artifacts[-1].parts:
                return _fail(started, "provider_invalid_output", "the completed A2A task has no artifact")
            value = _part_value(task.artifacts[-1].parts[-1])
    except (ValueError, IndexError) as exc:
        return _fail(started, "provider_invalid_output", str(exc))
    return _finish(started, service, value)
