"""The A2A endpoint over real HTTP, a real database and a real anvil, driven by the official clients:
the a2a-sdk (Python) and @a2a-js/sdk (Node 22) discover the card, send a hire message, stream its
status and read the artifact, on the JSON-RPC and the HTTP+JSON bindings. A failing provider gives a
failed task and charges nothing; an unknown service, a missing key and another account's wallet give
the errors A2A names; one message id sent twice (over both bindings, from two keys of one account, to
two processes) runs one hire; a task is read back with GetTask from another process and cannot be
canceled; the request rules hold on the new paths."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.errors import A2AClientError
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from aiohttp import web
from google.protobuf import json_format

from core.anvil import Anvil
from core.keys import hash_api_key, new_api_key
from core.store import wallets as wallet_store
from tests.integration.chainkit import System
from tests.integration.hire_kit import Harness, build_app, ledger_kinds, run

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "tools/mcp/node_modules/.bin/node"
JS_SDK = ROOT / "tools/mcp/node_modules/@a2a-js/sdk/dist"
JS_CLIENT = Path(__file__).parent / "a2a_js_client.mjs"
BINDINGS = ("JSONRPC", "HTTP+JSON")
RPC = "/api/a2a/rpc"
V1 = {"A2A-Version": "1.0"}


def add_key(
    h: Harness, agent_uuid: str, *, agent_scoped: bool = False, scopes: str | None = None, cap: int | None = None
) -> str:
    """Another key of the account of agent `agent_uuid` (scoped to that agent when `agent_scoped`)."""
    key = new_api_key()
    agent = wallet_store.agent_by_uuid(h.db, agent_uuid)
    assert agent is not None
    scoped = agent_uuid if agent_scoped else None
    wallet_store.insert_api_key(
        h.db, hash_api_key(key), agent.account_id, scoped, None, 0, scopes=scopes, daily_cap=cap
    )
    return key


def hire_data(caller: str | None, topic: str = "coffee", **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"serviceType": "keyword_research", "input": {"topic": topic}, **extra}
    if caller is not None:
        data["callerWallet"] = caller
    return data


def hire_message(data: dict[str, Any], message_id: str | None = None) -> pb.Message:
    message = pb.Message(message_id=message_id or uuid.uuid4().hex, role=pb.ROLE_USER)
    message.parts.add(text="hire, please")
    json_format.ParseDict({"data": data}, message.parts.add())
    return message


@asynccontextmanager
async def client(h: Harness, key: str | None, binding: str, *, streaming: bool = True) -> AsyncIterator[Any]:
    """The a2a-sdk's client of the service, made from its card, on `binding`, sending `key` as its Bearer."""
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        card = await A2ACardResolver(http, h.base).get_agent_card()
        config = ClientConfig(httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding])
        yield ClientFactory(config).create(card)


async def send(c: Any, message: pb.Message) -> list[pb.StreamResponse]:
    return [e async for e in c.send_message(pb.SendMessageRequest(message=message))]


def output_of(task: pb.Task) -> Any:
    (artifact,) = task.artifacts
    (part,) = artifact.parts
    assert part.media_type == "application/json"
    return json.loads(part.text)


# ---- hire by message -----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_python_client_hires_streams_and_reads_the_task(
    system: System, tmp_path: Path, anvil: Anvil, binding: str
) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller(100)  # balance 98
        async with client(h, key, binding) as c:
            got = await send(c, hire_message(hire_data(caller, maxPrice=2.5)))
            assert [e.WhichOneof("payload") for e in got] == [
                "task",
                "status_update",
                "artifact_update",
                "status_update",
            ]
            task = got[0].task
            assert task.id.startswith("hire_") and task.status.state == pb.TASK_STATE_SUBMITTED
            assert got[1].status_update.status.state == pb.TASK_STATE_WORKING
            keywords = {"keywords": ["coffee tips", "best coffee"]}
            assert json.loads(got[2].artifact_update.artifact.parts[0].text) == keywords
            assert got[3].status_update.status.state == pb.TASK_STATE_COMPLETED
            # the hire's rules: 2 charged to the caller, the provider paid through the earn split, audited
            assert await h.balance(key, caller) == 96
            assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000)]
            assert await h.balance(p.key, p.wallet) == Decimal("1.96")
            audit = await h.call("GET", f"/api/a2a/hire/{task.id}/audit")
            assert [e["payload"]["to_state"] for e in audit.body["entries"]] == [
                "reserved",
                "output_committed",
                "charged",
            ]
            # read back from the database
            read = await c.get_task(pb.GetTaskRequest(id=task.id))
            assert read.status.state == pb.TASK_STATE_COMPLETED and read.context_id == task.context_id
            assert output_of(read) == keywords
            assert read.metadata["amountCharged"] == "2" and read.metadata["providerWallet"] == p.wallet
            assert read.metadata["auditUrl"] == f"{h.base}/api/a2a/hire/{task.id}/audit"
            assert read.history[0].parts[1].data.struct_value["serviceType"] == "keyword_research"
            with pytest.raises(TaskNotCancelableError):
                await c.cancel_task(pb.CancelTaskRequest(id=task.id))
        async with client(h, key, binding, streaming=False) as c:  # one answer: the final task
            (only,) = await send(c, hire_message(hire_data(caller, topic="tea")))
            assert only.task.status.state == pb.TASK_STATE_COMPLETED
            assert output_of(only.task) == {"keywords": ["tea tips", "best tea"]}
        assert await h.balance(key, caller) == 94

    run(tmp_path, system, anvil.rpc_url, body)


@pytest.mark.parametrize("binding", BINDINGS)
def test_js_client_hires_streams_and_reads_the_task(system: System, tmp_path: Path, anvil: Anvil, binding: str) -> None:
    async def body(h: Harness) -> None:
        await h.provider(system.users[0], system.users[1])
        agent_key, caller, caller_uuid = await h.caller(100)
        scoped = add_key(h, caller_uuid, agent_scoped=True)  # callerWallet defaults to its agent
        args = [str(JS_SDK), h.base, scoped, binding, json.dumps(hire_data(None, topic="tea"))]
        proc = await asyncio.create_subprocess_exec(
            str(NODE), str(JS_CLIENT), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        got = json.loads(out)
        assert got["stream"] == [
            ["task", "TASK_STATE_SUBMITTED"],
            ["statusUpdate", "TASK_STATE_WORKING"],
            ["artifactUpdate", None],
            ["statusUpdate", "TASK_STATE_COMPLETED"],
        ]
        assert json.loads(got["artifact"]) == json.loads(got["output"]) == {"keywords": ["tea tips", "best tea"]}
        assert got["state"] == "TASK_STATE_COMPLETED" and got["taskId"].startswith("hire_")
        assert await h.balance(agent_key, caller) == 96

    run(tmp_path, system, anvil.rpc_url, body)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_failing_provider_gives_a_failed_task_and_charges_nothing(
    system: System, tmp_path: Path, anvil: Anvil, binding: str
) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1], behaviour="error")
        key, caller, caller_uuid = await h.caller(100)
        async with client(h, key, binding) as c:
            got = await send(c, hire_message(hire_data(caller, providerWallet=p.wallet)))
            assert [e.WhichOneof("payload") for e in got] == ["task", "status_update", "status_update"]
            final = got[-1].status_update.status
            assert final.state == pb.TASK_STATE_FAILED
            failure = json_format.MessageToDict(final.message.parts[1].data)
            assert failure["code"] == "provider_error" and failure["amountCharged"] == "0"
            read = await c.get_task(pb.GetTaskRequest(id=got[0].task.id))
            assert read.status.state == pb.TASK_STATE_FAILED and not read.artifacts
        assert await h.balance(key, caller) == 98  # nothing charged
        assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000),
                                                   ("hire_release", 2_000_000)]  # fmt: skip
        args = [str(JS_SDK), h.base, key, binding, json.dumps(hire_data(caller, providerWallet=p.wallet))]
        proc = await asyncio.create_subprocess_exec(
            str(NODE), str(JS_CLIENT), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        js = json.loads(out)
        assert js["state"] == "TASK_STATE_FAILED" and js["artifact"] is None
        assert js["failure"]["code"] == "provider_error"
        assert await h.balance(key, caller) == 98

    run(tmp_path, system, anvil.rpc_url, body)


# ---- refusals ------------------------------------------------------------------------------------


def test_refusals_are_the_errors_a2a_names(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller(100)
        other_key, other_wallet, _ = await h.caller(100)
        for binding in BINDINGS:
            async with client(h, key, binding) as c:
                with pytest.raises(InvalidParamsError) as unknown:
                    await send(c, hire_message({**hire_data(caller), "serviceType": "no_such_service"}))
                assert unknown.value.data["code"] == "no_provider_available"
                with pytest.raises(InvalidParamsError) as named:
                    await send(c, hire_message(hire_data(caller, providerWallet=caller)))
                assert named.value.data["code"] == "service_not_found"
                with pytest.raises(InvalidParamsError) as theirs:  # as for a wallet that does not exist
                    await send(c, hire_message(hire_data(other_wallet, providerWallet=p.wallet)))
                assert theirs.value.data == {
                    "type": "invalid_request",
                    "code": "agent_not_found",
                    "message": f"no agent {other_wallet} for this API key",
                    "param": "callerWallet",
                }
                with pytest.raises(InvalidParamsError) as missing:  # an account key names its agent
                    await send(c, hire_message(hire_data(None)))
                assert missing.value.data["param"] == "callerWallet"
                with pytest.raises(TaskNotFoundError):
                    await c.get_task(pb.GetTaskRequest(id="hire_" + "0" * 24))
            async with client(h, None, binding) as anonymous:
                with pytest.raises(A2AClientError, match="401"):
                    await send(anonymous, hire_message(hire_data(caller)))
        # another account's task is not found, as one that does not exist
        async with client(h, key, "JSONRPC") as c:
            got = await send(c, hire_message(hire_data(caller)))
        async with client(h, other_key, "HTTP+JSON") as c:
            with pytest.raises(TaskNotFoundError):
                await c.get_task(pb.GetTaskRequest(id=got[0].task.id))
        assert await h.balance(key, caller) == 96 and await h.balance(other_key, other_wallet) == 98

        # on the wire: statuses and bodies of both bindings
        message = json_format.MessageToDict(hire_message({**hire_data(caller), "serviceType": "no_such_service"}))
        r = await h.call("POST", "/api/message:send", {"message": message}, key=key, headers=V1)
        assert r.status == 400 and r.body["error"]["status"] == "INVALID_ARGUMENT"
        (info,) = r.body["error"]["details"]
        assert info["reason"] == "INVALID_PARAMS" and info["metadata"]["code"] == "no_provider_available"
        envelope = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}
        r = await h.call("POST", RPC, envelope, key=key, headers=V1)
        assert r.status == 200 and r.body["id"] == 7 and r.body["error"]["code"] == -32602
        for path, payload in ((RPC, envelope), ("/api/message:send", {"message": message})):
            r = await h.call("POST", path, payload, headers=V1)
            assert r.status == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
        r = await h.call("POST", RPC, envelope, headers=V1)
        assert r.body["error"]["code"] == -32000 and r.body["error"]["data"][0]["metadata"]["code"] == "missing_api_key"
        r = await h.call("GET", "/api/tasks/hire_" + "0" * 24, key=key, headers=V1)
        assert r.status == 404 and r.body["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
        r = await h.call("POST", f"/api/tasks/{got[0].task.id}:cancel", key=key, headers=V1)
        assert r.status == 400 and r.body["error"]["details"][0]["reason"] == "TASK_NOT_CANCELABLE"
        # a read-only key may read, not hire
        reader = add_key(h, caller_uuid, scopes="read")
        r = await h.call("POST", "/api/message:send", {"message": message}, key=reader, headers=V1)
        assert r.status == 403 and r.body["error"]["status"] == "PERMISSION_DENIED"
        r = await h.call("GET", f"/api/tasks/{got[0].task.id}", key=reader, headers=V1)
        assert r.status == 200 and r.body["status"]["state"] == "TASK_STATE_COMPLETED"
        # a key's daily cap holds: 1 USDC a day cannot hire at 2
        capped = add_key(h, caller_uuid, cap=1_000_000)
        async with client(h, capped, "JSONRPC") as c:
            with pytest.raises(InvalidParamsError) as over:
                await send(c, hire_message(hire_data(caller)))
            assert over.value.data["code"] == "daily_cap_exceeded"
        assert await h.balance(key, caller) == 96

    run(tmp_path, system, anvil.rpc_url, body)


def test_request_rules_hold_on_both_bindings(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller(100)
        message = json_format.MessageToDict(hire_message(hire_data(caller, providerWallet=p.wallet)))
        rest = json.dumps({"message": message})
        rpc = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}})
        twice = ('"serviceType": "keyword_research"', '"serviceType": "keyword_research", "serviceType": "x"')
        control = ('"topic": "coffee"', '"topic": "cof\\u0000fee"')
        headers = {**V1, "Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        async with aiohttp.ClientSession() as session:
            for old, new in (twice, control):
                assert old in rest
                async with session.post(
                    h.base + "/api/message:send", data=rest.replace(old, new), headers=headers
                ) as r:
                    got = await r.json()
                    assert r.status == 400 and got["error"]["details"][0]["reason"] == "INVALID_REQUEST", got
                    expected = "duplicate_key" if new is twice[1] else "invalid_string"
                    assert got["error"]["details"][0]["metadata"]["code"] == expected
                async with session.post(h.base + RPC, data=rpc.replace(old, new), headers=headers) as r:
                    got = await r.json()
                    assert r.status == 200 and got["error"]["code"] == -32600, got
                    assert got["error"]["data"][0]["metadata"]["code"] == expected
            # number bounds: maxPrice with more than 6 decimals, or negative, is the hire's 422 as InvalidParams
            for bad in ("2.0000001", "-1"):
                payload = rest.replace('"serviceType"', f'"maxPrice": {bad}, "serviceType"')
                async with session.post(h.base + "/api/message:send", data=payload, headers=headers) as r:
                    got = await r.json()
                    assert r.status == 400 and got["error"]["details"][0]["metadata"]["param"] == "maxPrice", got
            big = b" " * (1024 * 1024 + 1)  # past the 1 MiB cap: as the SDK answers one, per binding
            async with session.post(h.base + RPC, data=io.BytesIO(big), headers=headers) as r:
                got = await r.json()
                assert r.status == 200 and got["error"]["code"] == -32600, got
                assert got["error"]["data"][0]["metadata"]["code"] == "body_too_large"
            async with session.post(h.base + "/api/message:send", data=io.BytesIO(big), headers=headers) as r:
                assert r.status == 413
            async with session.post(h.base + RPC, data=b"{" * 10 + b"x", headers=headers) as r:
                got = await r.json()
                assert got["error"]["code"] in (-32700, -32600)
        assert await h.balance(key, caller) == 98  # nothing ran

    run(tmp_path, system, anvil.rpc_url, body)


# ---- at most once per message id -----------------------------------------------------------------


def test_one_message_id_runs_one_hire_in_any_process(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, caller_uuid = await h.caller(100)
        second_key = add_key(h, caller_uuid)  # a second key of the same account
        message = hire_message(hire_data(caller, providerWallet=p.wallet))
        async with client(h, key, "JSONRPC") as c:
            first = await send(c, message)
        task_id = first[0].task.id
        async with client(h, second_key, "HTTP+JSON", streaming=False) as c:
            (again,) = await send(c, message)
        assert again.task.id == task_id and again.task.status.state == pb.TASK_STATE_COMPLETED
        # another process on the same database: the same task, read and sent again
        app, db = build_app(h.db_path, system, h.rpc_url, h.clock)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        try:
            other = Harness(h.session, f"http://{host}:{port}", *(getattr(h, f) for f in (
                "db", "db_path", "clock", "system", "rpc_url", "app", "hire", "provider_server")))  # fmt: skip
            async with client(other, second_key, "JSONRPC") as c:
                read = await c.get_task(pb.GetTaskRequest(id=task_id))
                assert output_of(read) == {"keywords": ["coffee tips", "best coffee"]}
                replay = await send(c, message)
                assert replay[0].task.id == task_id and replay[-1].task.status.state == pb.TASK_STATE_COMPLETED
                # the same message id asking for another hire is refused
                changed = hire_message(hire_data(caller, topic="tea", providerWallet=p.wallet), message.message_id)
                with pytest.raises(InvalidParamsError) as conflict:
                    await send(c, changed)
                assert conflict.value.data["code"] == "idempotency_conflict"
        finally:
            await runner.cleanup()
            db.close()
        assert h.provider_server.calls[task_id] == 1
        assert await h.balance(key, caller) == 96  # one charge
        assert ledger_kinds(h.db, caller_uuid) == [("earn", 98_000_000), ("hire_reserve", -2_000_000)]

    run(tmp_path, system, anvil.rpc_url, body)


def test_concurrent_sends_of_one_message_run_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """While a message's hire runs, the same message again (other binding) and a SubscribeToTask both
    follow that one run to its end."""

    async def body(h: Harness) -> None:
        h.provider_server.gate = asyncio.Event()  # the provider answers when the test says
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller(100)
        message = hire_message(hire_data(caller, providerWallet=p.wallet))
        async with (
            client(h, key, "HTTP+JSON", streaming=False) as c1,
            client(h, key, "JSONRPC") as c2,
            client(h, key, "HTTP+JSON") as c3,
        ):
            first = asyncio.create_task(send(c1, message))
            while not h.provider_server.calls:
                await asyncio.sleep(0.02)
            (job_id,) = h.provider_server.calls
            second = asyncio.create_task(send(c2, message))  # while the first one runs
            subscribed = asyncio.create_task(_collect(c3.subscribe(pb.SubscribeToTaskRequest(id=job_id))))
            await asyncio.sleep(0.3)
            h.provider_server.gate.set()
            (one,), two, three = await first, await second, await subscribed
            with pytest.raises(UnsupportedOperationError):  # it has ended: nothing more to follow
                await _collect(c3.subscribe(pb.SubscribeToTaskRequest(id=job_id)))
        assert one.task.id == two[0].task.id == job_id and one.task.status.state == pb.TASK_STATE_COMPLETED
        # the second send and the subscriber follow the task they found running to its end
        for events in (two, three):
            assert [e.WhichOneof("payload") for e in events] == ["task", "artifact_update", "status_update"]
            assert events[0].task.status.state == pb.TASK_STATE_WORKING
            assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        assert h.provider_server.calls[job_id] == 1
        assert await h.balance(key, caller) == 96
        # returnImmediately: the task as soon as its job is reserved, working; GetTask sees it end
        h.provider_server.gate = asyncio.Event()
        message = json_format.MessageToDict(hire_message(hire_data(caller, providerWallet=p.wallet)))
        payload = {"message": message, "configuration": {"returnImmediately": True}}
        r = await h.call("POST", "/api/message:send", payload, key=key, headers=V1)
        assert r.status == 200 and r.body["task"]["status"]["state"] == "TASK_STATE_WORKING", r.body
        h.provider_server.gate.set()
        async with client(h, key, "JSONRPC") as c:
            state = pb.TASK_STATE_WORKING
            while state == pb.TASK_STATE_WORKING:
                await asyncio.sleep(0.05)
                state = (await c.get_task(pb.GetTaskRequest(id=r.body["task"]["id"]))).status.state
        assert state == pb.TASK_STATE_COMPLETED and await h.balance(key, caller) == 94

    run(tmp_path, system, anvil.rpc_url, body)


async def _collect(stream: Any) -> list[Any]:
    return [e async for e in stream]


def test_list_tasks_pages_through_the_key_s_tasks(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        fails = await h.provider(system.users[2], system.users[3], behaviour="error")
        key, caller, caller_uuid = await h.caller(100)
        _, sibling, _ = await h.register(key=key, name="sibling")
        await h.fund(key, sibling, 10)
        other_key, other_wallet, _ = await h.caller(100)
        made = []
        async with client(h, key, "JSONRPC", streaming=False) as c:
            for topic, wallet, provider in (("a", caller, p), ("b", caller, fails), ("c", sibling, p)):
                message = hire_message(hire_data(wallet, topic=topic, providerWallet=provider.wallet))
                if topic == "a":
                    message.context_id = "ctx-1"
                (event,) = await send(c, message)
                made.append(event.task.id)
        async with client(h, other_key, "JSONRPC", streaming=False) as c:
            await send(c, hire_message(hire_data(other_wallet, providerWallet=p.wallet)))
        newest_first = list(reversed(made))
        async with client(h, key, "JSONRPC") as c, client(h, key, "HTTP+JSON") as c2:
            page = await c.list_tasks(pb.ListTasksRequest(page_size=2))
            assert [t.id for t in page.tasks] == newest_first[:2] and page.total_size == 3 and page.next_page_token
            rest = await c2.list_tasks(pb.ListTasksRequest(page_size=2, page_token=page.next_page_token))
            assert [t.id for t in rest.tasks] == newest_first[2:] and not rest.next_page_token
            ctx = await c2.list_tasks(pb.ListTasksRequest(context_id="ctx-1"))
            assert [t.id for t in ctx.tasks] == [made[0]]
            failed = await c.list_tasks(pb.ListTasksRequest(status=pb.TASK_STATE_FAILED))
            assert [t.id for t in failed.tasks] == [made[1]]
            with pytest.raises(InvalidParamsError):
                await c.list_tasks(pb.ListTasksRequest(page_token="not-a-token"))
        async with client(h, add_key(h, caller_uuid, agent_scoped=True), "HTTP+JSON") as c:  # its agent's only
            mine = await c.list_tasks(pb.ListTasksRequest())
            assert [t.id for t in mine.tasks] == newest_first[1:]
        async with client(h, other_key, "JSONRPC") as c:
            theirs = await c.list_tasks(pb.ListTasksRequest())
            assert len(theirs.tasks) == 1 and theirs.tasks[0].id not in made

    run(tmp_path, system, anvil.rpc_url, body)


def test_a_0_3_client_hires_at_the_legacy_card_s_url(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """agent.json (A2A 0.3.0) sends pre-1.0 clients to the JSON-RPC URL, which takes 0.3's method names."""

    async def body(h: Harness) -> None:
        p = await h.provider(system.users[0], system.users[1])
        key, caller, _ = await h.caller(100)
        legacy = await h.call("GET", "/.well-known/agent.json")
        assert legacy.body["url"] == h.base + RPC
        message = {"kind": "message", "messageId": uuid.uuid4().hex, "role": "user",
                   "parts": [{"kind": "data", "data": hire_data(caller, providerWallet=p.wallet)}]}  # fmt: skip
        envelope = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
        r = await h.call("POST", RPC, envelope, key=key)  # no A2A-Version: 0.3
        assert r.status == 200 and r.body["result"]["kind"] == "task", r.body
        task = r.body["result"]
        assert task["status"]["state"] == "completed"
        assert json.loads(task["artifacts"][0]["parts"][0]["text"]) == {"keywords": ["coffee tips", "best coffee"]}
        r = await h.call("POST", RPC, {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}},
                         key=key)  # fmt: skip
        assert r.body["result"]["status"]["state"] == "completed"
        assert await h.balance(key, caller) == 96

    run(tmp_path, system, anvil.rpc_url, body)
