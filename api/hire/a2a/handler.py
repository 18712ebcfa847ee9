"""The A2A operations over hire jobs: the a2a-sdk's RequestHandler, implemented by this service.

A message is a hire: its one data part is the body of POST /api/a2a/hire ({serviceType, input,
maxPrice?, providerWallet?, webhookUrl?, webhookSecret?}) with `callerWallet` optional, defaulting to the
agent of an agent-scoped key. The hire runs through the same code as that route (api.hire.routes.
hire_reply, under api.policy.invoke: scope spend, the key's daily cap), so money, audit, reputation
and the request rules are the route's. The task is the hire job: its id is the job's, its state the
job's (reserved: working, charged: completed with the provider's output as the artifact, released:
failed with the hire's error, nothing charged). A refusal before any job exists (unknown service, a
wallet the key may not act for, short balance, a malformed part) is an A2A error, not a task.

At most once per message: the message id is the hire's idempotency key, scoped to the key's account
(two keys of one account sending one message id run one hire), and the task row (core.store.hire.
a2a_tasks, written in the job's reservation transaction) answers every later send of that message id,
in any process, with the same task, whatever the age of the idempotency key.

The a2a-sdk's default handler does not fit here: its task store and event queues live in one process
and it makes a new task for every message; a hire must be at most once per message id across
processes and its task must be readable from any of them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf import json_format

from api.errors import answer_unexpected
from api.hire import routes
from api.hire.operations import OPERATIONS
from api.operation import Call, Operation, Reply
from api.policy import invoke
from core.errors import ServiceError
from core.hire import rules
from core.hire.standard import IdemKey
from core.idempotency import body_digest
from core.jsontext import encode
from core.keys import Caller
from core.money import usdc_text
from core.services import Services
from core.store import Conn
from core.store import hire as store
from core.store import wallets as wallet_store
from core.store.hire import A2aTaskRow, JobRow

__all__ = ["BASE_URL", "BODY", "CALLER", "HireHandler"]

#: What the host (api.hire.a2a.host) puts in each call's context: the authenticated key, the request
#: body as core.jsontext.decode_json read it (numbers exact; protobuf's Struct would make them floats)
#: and the base of published links.
CALLER = "agentledger.caller"
BODY = "agentledger.body"
BASE_URL = "agentledger.base_url"

log = logging.getLogger("agentledger.a2a")

_HIRE: Operation = next(op for op in OPERATIONS if op.operation_id == "hireAgent")
#: The idempotency scope of a message id: its account (not the key, as the REST route's is).
_SCOPE = "{account} a2a"
_STATES = {"reserved": pb.TASK_STATE_WORKING, "charged": pb.TASK_STATE_COMPLETED, "released": pb.TASK_STATE_FAILED}
_PAGE_SIZE, _MAX_PAGE_SIZE = 50, 100
_TERMINAL = frozenset({pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED})
#: How often a send of a message already running elsewhere looks at its job, and for how long at most.
_POLL_SECONDS = 0.2
_WAIT_SECONDS = rules.MAX_SLA_SECONDS + 30


def a2a_error(exc: ServiceError) -> A2AError:
    """A refusal as the A2A error the spec names for it: a server fault is InternalError, anything the
    caller can fix (a field, a wallet it may not act for, the balance, the cap) InvalidParamsError; the
    service's own error shape rides along as its data (ErrorInfo metadata over HTTP+JSON)."""
    data = {k: str(v) for k, v in exc.shape().items() if v is not None}
    message = f"{exc.code}: {exc.message}"
    if exc.status >= 500:
        return InternalError(message, data)
    return InvalidParamsError(message, data)


@dataclass
class _Run:
    """A hire this process runs for a message: its task (the job) once reserved, the hire itself."""

    task_id: str
    hire: asyncio.Task[Reply]


class HireHandler(RequestHandler):
    def __init__(self, services: Services) -> None:
        self._services = services
        #: Hires under way: a client that goes away (or a stream it closes) never stops one (a hire
        #: cancelled mid-run would keep the caller's money reserved until the next start).
        self._running: set[asyncio.Task[Reply]] = set()

    def _finished(self, hire: asyncio.Task[Reply]) -> None:
        self._running.discard(hire)
        failure = None if hire.cancelled() else hire.exception()  # (retrieved: a refusal is _start's to answer)
        if failure is not None and not isinstance(failure, ServiceError):
            log.error("an A2A hire failed (a reservation it made is settled by the start-up recovery): %r", failure)

    async def close(self) -> None:
        """Let the hires under way finish (each is bounded by its provider's SLA)."""
        await asyncio.gather(*self._running, return_exceptions=True)

    # ---- sending ---------------------------------------------------------------------------------

    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> pb.Task:
        started = await self._start(params, context)
        if isinstance(started, _Run):
            if not params.configuration.return_immediately:
                await asyncio.wait({started.hire})
            task_id = started.task_id
        else:
            task_id = started.id
            if not params.configuration.return_immediately:
                await self._until_final(task_id)
        return await self._task(task_id, context, _history(params))

    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        started = await self._start(params, context)
        if isinstance(started, _Run):
            task = await self._task(started.task_id, context, _history(params))
            submitted = pb.Task(id=task.id, context_id=task.context_id, history=task.history)
            submitted.status.state = pb.TASK_STATE_SUBMITTED  # as reserved, whatever the provider did since
            submitted.metadata.CopyFrom(task.metadata)
            submitted.metadata["amountCharged"] = "0"
            yield submitted
            yield pb.TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)
            )
            await asyncio.wait({started.hire})
        else:  # this message ran (or runs) already: its task as it stands, then its end
            task = started
            yield task
            if task.status.state in _TERMINAL:
                return
            await self._until_final(task.id)
        async for event in self._end(task.id, context):
            yield event

    async def _end(self, task_id: str, context: ServerCallContext) -> AsyncGenerator[Any]:
        """The last events of a stream: the task's artifact, then its final status."""
        final = await self._task(task_id, context, 0)
        for artifact in final.artifacts:
            yield pb.TaskArtifactUpdateEvent(
                task_id=final.id, context_id=final.context_id, artifact=artifact, last_chunk=True
            )
        yield pb.TaskStatusUpdateEvent(task_id=final.id, context_id=final.context_id, status=final.status)

    async def _start(self, params: pb.SendMessageRequest, context: ServerCallContext) -> _Run | pb.Task:
        """The hire of the message, started (once its job is reserved), or the task this message id made
        already. A refusal raises its A2A error."""
        caller = _caller(context)
        message = params.message
        if not message.message_id:
            raise InvalidParamsError("message.messageId is required: it makes the hire at most once")
        if message.task_id:
            raise UnsupportedOperationError("a hire task takes no further message: send a new message to hire again")
        hire_body = await self._hire_body(caller, context)
        body = encode(hire_body).encode()
        digest = body_digest(body)
        services = self._services
        found = await services.reads.run(
            lambda db: store.a2a_task_of_message(db, caller.account_id, message.message_id)
        )
        if found is not None:
            return await self._existing(found, digest, context)
        context_id = message.context_id or uuid.uuid4().hex
        stored = pb.Message()
        stored.CopyFrom(message)
        stored.context_id = context_id
        stored_json = json_format.MessageToJson(stored, indent=None)

        def record(conn: Conn, job: JobRow) -> None:
            row = A2aTaskRow(
                job.id, caller.account_id, message.message_id, digest, context_id, stored_json, job.created_at
            )
            store.insert_a2a_task(conn, row)

        loop = asyncio.get_running_loop()
        reserved: asyncio.Future[str] = loop.create_future()

        def started(job: JobRow) -> None:
            if not reserved.done():
                reserved.set_result(job.id)

        idem = IdemKey(_SCOPE.format(account=caller.account_id), message.message_id, digest)

        async def run(services: Services, call: Call) -> Reply:
            return await routes.hire_reply(services, call, idem, record=record, started=started)

        call = Call(
            caller,
            "A2A SendMessage",
            body=body,
            idempotency_key=message.message_id,
            base_url=context.state.get(BASE_URL, ""),
        )
        hire = asyncio.create_task(invoke(services, replace(_HIRE, run=run), call))
        self._running.add(hire)
        hire.add_done_callback(self._finished)
        await asyncio.wait((hire, reserved), return_when=asyncio.FIRST_COMPLETED)
        if reserved.done():
            return _Run(reserved.result(), hire)
        reserved.cancel()
        try:
            reply = hire.result()
        except ServiceError as exc:
            if exc.code != "idempotency_in_flight":
                raise a2a_error(exc) from exc
            reply = None  # another process runs this message: its task was recorded with the claim
        except Exception as exc:  # the database out of reach, or a bug: never its text to the client
            raise a2a_error(answer_unexpected(exc, "A2A SendMessage")) from exc
        if reply is not None and reply.status >= 400:  # a refusal stored under this message id, replayed
            _refuse(reply)
        found = await services.reads.run(
            lambda db: store.a2a_task_of_message(db, caller.account_id, message.message_id)
        )
        if found is None:
            raise InternalError("the message's task is not recorded")
        return await self._existing(found, digest, context)

    async def _hire_body(self, caller: Caller, context: ServerCallContext) -> dict[str, Any]:
        """The message's one data part as it was sent (exact numbers), with callerWallet defaulted."""
        body = context.state.get(BODY) or {}
        raw = body.get("params") if "jsonrpc" in body else body
        message = raw.get("message") if isinstance(raw, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        data = [p["data"] for p in parts if isinstance(p, dict) and "data" in p] if isinstance(parts, list) else []
        if len(data) != 1 or not isinstance(data[0], dict):
            raise InvalidParamsError(
                "a message is a hire: one data part {serviceType, input, maxPrice?, providerWallet?, callerWallet?}",
                {"type": "invalid_request", "code": "invalid_message", "param": "message.parts"},
            )
        hire = dict(data[0])
        if "callerWallet" not in hire:
            agent_id = caller.agent_id
            agent = (
                None
                if agent_id is None
                else await self._services.reads.run(lambda db: wallet_store.agent_by_uuid(db, agent_id))
            )
            if agent is None:
                raise InvalidParamsError(
                    "callerWallet: an account key names the hiring agent's wallet in the data part",
                    {"type": "invalid_request", "code": "missing_field", "param": "callerWallet"},
                )
            hire["callerWallet"] = agent.wallet
        return hire

    async def _existing(self, row: A2aTaskRow, digest: str, context: ServerCallContext) -> pb.Task:
        if row.request_sha256 != digest:
            raise a2a_error(
                ServiceError(
                    422,
                    "idempotency_conflict",
                    "this message id was sent with another hire",
                    param="message.messageId",
                )
            )
        return await self._task(row.id, context, None)

    async def _until_final(self, task_id: str) -> None:
        """Wait for a task another process (or an earlier send) runs to end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _WAIT_SECONDS
        while loop.time() < deadline:
            job = await self._services.reads.run(lambda db: store.get_job(db, task_id))
            if job is None or job.status != "reserved":
                return
            await asyncio.sleep(_POLL_SECONDS)

    # ---- reading and cancelling ----------------------------------------------------------------------

    async def _task(self, task_id: str, context: ServerCallContext, history_length: int | None) -> pb.Task:
        """The task as it stands, to a caller that may read it (TaskNotFoundError otherwise: a task of
        another account is answered as one that does not exist)."""
        caller, base = _caller(context), context.state.get(BASE_URL, "")

        def read(db: Conn) -> pb.Task:
            row = store.a2a_task(db, task_id)
            job = None if row is None else store.get_job(db, task_id)
            if row is None or job is None or not caller.may_act_for(row.account_id, job.caller_uuid or ""):
                raise TaskNotFoundError(f"no task {task_id} for this API key")
            provider = wallet_store.agent_by_uuid(db, job.provider_uuid)
            return task_of(row, job, "" if provider is None else provider.wallet, history_length, base)

        return await self._services.reads.run(read)

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task:
        length = params.history_length if params.HasField("history_length") else None
        return await self._task(params.id, context, length)

    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        """The task as it stands, then its end (a task that has ended has no updates: UnsupportedOperation,
        as A2A says)."""
        task = await self._task(params.id, context, None)
        if task.status.state in _TERMINAL:
            raise UnsupportedOperationError(f"task {task.id} has ended: read it with GetTask")
        yield task
        await self._until_final(task.id)
        async for event in self._end(task.id, context):
            yield event

    async def on_cancel_task(self, params: pb.CancelTaskRequest, context: ServerCallContext) -> pb.Task:
        task = await self._task(params.id, context, 0)
        state = pb.TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower()
        raise TaskNotCancelableError(
            f"task {task.id} is {state}: a hire cannot be canceled (its provider is called as the task starts, "
            "and it ends completed or failed, nothing charged)"
        )

    # ---- what this endpoint does not offer ------------------------------------------------------------

    async def on_list_tasks(self, params: pb.ListTasksRequest, context: ServerCallContext) -> pb.ListTasksResponse:
        """The caller's tasks (its account's; an agent-scoped key's agent's), last updated first, a page at
        a time (pageToken: the last task's update time and id)."""
        caller, base = _caller(context), context.state.get(BASE_URL, "")
        size = params.page_size if params.HasField("page_size") else _PAGE_SIZE
        if not 1 <= size <= _MAX_PAGE_SIZE:
            raise InvalidParamsError(f"pageSize: 1 to {_MAX_PAGE_SIZE}")
        before = None
        if params.page_token:
            when, _, task_id = params.page_token.rpartition("~")
            try:
                before = (float(when), task_id)
            except ValueError:
                raise InvalidParamsError("pageToken: not a token this service gave") from None
        statuses = None
        if params.status != pb.TASK_STATE_UNSPECIFIED:
            statuses = tuple(job for job, state in _STATES.items() if state == params.status)
            if not statuses:  # a state no hire task is in (submitted only streams, never stays)
                return pb.ListTasksResponse(page_size=size)
        after = (
            params.status_timestamp_after.ToNanoseconds() / 1e9 if params.HasField("status_timestamp_after") else None
        )
        history = params.history_length if params.HasField("history_length") else None

        def read(db: Conn) -> pb.ListTasksResponse:
            rows, total = store.a2a_tasks_page(
                db,
                account_id=caller.account_id,
                caller_uuid=caller.agent_id,
                context_id=params.context_id or None,
                statuses=statuses,
                updated_after=after,
                before=before,
                limit=size,
            )
            out = pb.ListTasksResponse(page_size=size, total_size=total)
            for row, job in rows:
                provider = wallet_store.agent_by_uuid(db, job.provider_uuid)
                out.tasks.append(task_of(row, job, "" if provider is None else provider.wallet, history, base))
            if len(rows) == size:
                last = rows[-1][1]
                out.next_page_token = f"{last.updated_at!r}~{last.id}"
            return out

        return await self._services.reads.run(read)

    async def on_create_task_push_notification_config(
        self, params: pb.TaskPushNotificationConfig, context: ServerCallContext
    ) -> NoReturn:
        raise PushNotificationNotSupportedError()

    async def on_get_task_push_notification_config(
        self, params: pb.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> NoReturn:
        raise PushNotificationNotSupportedError()

    async def on_list_task_push_notification_configs(
        self, params: pb.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> NoReturn:
        raise PushNotificationNotSupportedError()

    async def on_delete_task_push_notification_config(
        self, params: pb.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> NoReturn:
        raise PushNotificationNotSupportedError()

    async def on_get_extended_agent_card(
        self, params: pb.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> NoReturn:
        raise UnsupportedOperationError("this agent has no extended card")


def _caller(context: ServerCallContext) -> Caller:
    caller = context.state.get(CALLER)
    assert isinstance(caller, Caller), "the host authenticates every call"
    return caller


def _history(params: pb.SendMessageRequest) -> int | None:
    config = params.configuration
    return config.history_length if config.HasField("history_length") else None


def _refuse(reply: Reply) -> NoReturn:
    shape = json.loads(reply.body)
    raise a2a_error(
        ServiceError(reply.status, shape.get("code", "refused"), shape.get("message", ""), param=shape.get("param"))
    )


def task_of(row: A2aTaskRow, job: JobRow, provider_wallet: str, history_length: int | None, base: str) -> pb.Task:
    """The A2A task of a hire job: state, the output as the artifact (exact JSON text: the bytes its
    outputSha256 is of), or the failure's error shape in the status message."""
    state = _STATES.get(job.status, pb.TASK_STATE_WORKING)
    charged = job.status == "charged"
    task = pb.Task(id=row.id, context_id=row.context_id)
    task.status.state = state
    task.status.timestamp.FromNanoseconds(int(job.updated_at * 1e9))
    task.metadata.update(
        {
            "jobId": job.id,
            "serviceType": job.service_type,
            "providerWallet": provider_wallet,
            "amountCharged": usdc_text(job.amount if charged else 0),
            "auditUrl": f"{base}/api/a2a/hire/{job.id}/audit",
        }
    )
    if charged and job.output is not None:
        artifact = task.artifacts.add(artifact_id=f"{job.id}-output", name="output")
        artifact.parts.add(text=job.output, media_type="application/json")
        artifact.metadata.update({"outputSha256": job.output_sha256 or "", "outputCid": job.output_cid or ""})
    if state == pb.TASK_STATE_FAILED:
        code, message = job.error_code or "provider_error", (job.error_message or "the provider failed")
        shape = {
            "type": "service_error" if code == "hire_interrupted" else "provider_error",
            "code": code,
            "message": message + "; nothing was charged",
            "jobId": job.id,
            "amountCharged": "0",
        }
        status_message = task.status.message
        status_message.message_id = f"{job.id}-failure"
        status_message.role = pb.ROLE_AGENT
        status_message.task_id, status_message.context_id = row.id, row.context_id
        status_message.parts.add(text=f"{code}: {shape['message']}")
        json_format.ParseDict({"data": shape}, status_message.parts.add())
    if history_length != 0:
        json_format.Parse(row.message, task.history.add())
    return task
